// Medians, per-round ratios, the targets, and their markdown.
const MiB = 1024 * 1024

/** The measures, how to read each from one run, and which way is better. */
export const metrics = {
  cpuMsPer10k: { read: (r) => r.cpuMsPer10k, lower: true },
  callsPerSecond: { read: (r) => r.callsPerSecond, lower: false },
  sequentialCpuMsPer10k: { read: (r) => r.sequentialCpuMsPer10k, lower: true },
  sequentialP50Us: { read: (r) => r.sequentialP50Us, lower: true },
  sequentialP99Us: { read: (r) => r.sequentialP99Us, lower: true },
  steadyCpuMsPer10k: { read: (r) => r.steadyCpuMsPer10k, lower: true },
  steadyP50Us: { read: (r) => r.steadyP50Us, lower: true },
  steadyP99Us: { read: (r) => r.steadyP99Us, lower: true },
  blob1MiBMs: { read: (r) => r.blobMs?.[MiB], lower: true },
  blob16MiBMs: { read: (r) => r.blobMs?.[16 * MiB], lower: true },
  rssMiB: { read: (r) => r.rssMiB, lower: true },
  heapUsedMiB: { read: (r) => r.heapUsedMiB, lower: true },
  rssAfterImportMiB: { read: (r) => r.rssAfterImportMiB, lower: true },
  heapAfterImportMiB: { read: (r) => r.heapAfterImportMiB, lower: true },
  connectMs: { read: (r) => r.connectMs, lower: true },
  importLibMs: { read: (r) => r.importLibMs, lower: true },
  importMs: { read: (r) => r.importMs, lower: true },
  importCpuMs: { read: (r) => r.importCpuMs, lower: true }
}

export const median = (values) => {
  const defined = values.filter((v) => typeof v === "number" && Number.isFinite(v)).sort((a, b) => a - b)
  if (defined.length === 0) return undefined
  const mid = defined.length >> 1
  return defined.length % 2 === 1 ? defined[mid] : (defined[mid - 1] + defined[mid]) / 2
}

// the references every client is compared with, each in the same round: the practical limit (raw), the floor of
// the Effect 4 stack (floor), the official SDK (SDK v2) and Effect's own MCP client (effect-mcp)
// and, for the port, Conduit 0.2 on Effect 3 (conduit-0.2)
export const references = {
  vsRaw: "raw",
  vsFloor: "floor",
  vsSdkV2: "sdk-v2",
  vsEffectMcp: "effect-mcp",
  vsConduit02: "conduit-0.2"
}

/**
 * Per group and client: the median of every measure over the rounds, and the median over rounds of the ratio
 * to each reference measured in the same round. A client the group cannot run (`group.notApplicable`: client →
 * reason) is listed with its reason and no numbers.
 */
export const summarize = (runs, groups) =>
  groups.map((group) => {
    const inGroup = runs.filter((r) => r.transport === group.transport && r.era === group.era && r.error === undefined)
    const byRound = (client, round) => inGroup.find((r) => r.client === client && r.round === round)
    const rounds = [...new Set(inGroup.map((r) => r.round))]
    const clients = group.clients.map((client) => {
      const own = inGroup.filter((r) => r.client === client)
      const medians = {}
      const ratios = Object.fromEntries(Object.keys(references).map((key) => [key, {}]))
      for (const [name, metric] of Object.entries(metrics)) {
        medians[name] = median(own.map(metric.read))
        const ratio = (reference) =>
          median(rounds.map((round) => {
            const mine = byRound(client, round)
            const theirs = byRound(reference, round)
            if (mine === undefined || theirs === undefined) return undefined
            const a = metric.read(mine)
            const b = metric.read(theirs)
            return typeof a === "number" && typeof b === "number" && b !== 0 ? a / b : undefined
          }))
        for (const [key, reference] of Object.entries(references)) ratios[key][name] = ratio(reference)
      }
      const failures = runs.filter((r) =>
        r.transport === group.transport && r.era === group.era && r.client === client && r.error !== undefined
      ).map((r) => `round ${r.round}: ${r.error}`)
      return { client, runs: own.length, medians, ...ratios, failures }
    })
    const notApplicable = Object.entries(group.notApplicable ?? {}).map(([client, reason]) => ({ client, reason }))
    return { transport: group.transport, era: group.era, clients, notApplicable }
  })

const find = (medians, transport, era, client) =>
  medians.find((g) => g.transport === transport && g.era === era)?.clients.find((c) => c.client === client)

/** Each target of the issue, per transport × era where it applies, with the measured ratio. */
export const evaluateTargets = (medians) => {
  const targets = []
  const add = (target, where, value, limit, met, unit = "×") =>
    targets.push({ target, where, value, limit, unit, met: value === undefined ? undefined : met(value, limit) })
  // a comparison the issue asks to report, with no limit
  const reference = (target, where, value) => targets.push({ target, where, value, unit: "×", reference: true })
  const atMost = (v, l) => v <= l
  const atLeast = (v, l) => v >= l
  for (const group of medians) {
    const where = `${group.transport}/${group.era}`
    const conduit = find(medians, group.transport, group.era, "conduit")
    if (conduit === undefined) continue
    add(
      `CPU per call vs raw (≤ ${group.transport === "stdio" ? "1.5" : "2"}×)`,
      where,
      conduit.vsRaw.cpuMsPer10k,
      group.transport === "stdio" ? 1.5 : 2,
      atMost
    )
    add("CPU per call vs SDK v2 (≤ 0.5×, i.e. ≥ 2× less)", where, conduit.vsSdkV2.cpuMsPer10k, 0.5, atMost)
    add("calls/s at 64 in flight vs SDK v2 (≥ 1×)", where, conduit.vsSdkV2.callsPerSecond, 1, atLeast)
    add("RSS after the calls vs raw (≤ 1.3×)", where, conduit.vsRaw.rssMiB, 1.3, atMost)
    reference("CPU per call vs Effect's McpClient", where, conduit.vsEffectMcp.cpuMsPer10k)
    reference("sequential CPU per call vs Effect's McpClient", where, conduit.vsEffectMcp.sequentialCpuMsPer10k)
    reference("CPU per call vs the Effect 4 floor", where, conduit.vsFloor.cpuMsPer10k)
    reference("RSS after the calls vs the Effect 4 floor", where, conduit.vsFloor.rssMiB)
    reference("CPU per call vs Conduit 0.2 on Effect 3", where, conduit.vsConduit02.cpuMsPer10k)
    reference("sequential CPU per call vs Conduit 0.2 on Effect 3", where, conduit.vsConduit02.sequentialCpuMsPer10k)
    if (group.transport === "stdio") {
      add("16 MiB result vs raw (≤ 1.5×)", where, conduit.vsRaw.blob16MiBMs, 1.5, atMost)
      const m = conduit.medians
      const growth = m.blob16MiBMs !== undefined && m.blob1MiBMs !== undefined
        ? m.blob16MiBMs / m.blob1MiBMs / 16
        : undefined
      add("16 MiB time / (16 × 1 MiB time): linear in size (≤ 1.5)", where, growth, 1.5, atMost)
    }
    // the shapes outside the fiber pool: one call at a time, and a promise host
    add("sequential CPU per call vs SDK v2 (≤ 0.8×)", where, conduit.vsSdkV2.sequentialCpuMsPer10k, 0.8, atMost)
    add("sequential p99 vs SDK v2 (≤ 1×)", where, conduit.vsSdkV2.sequentialP99Us, 1, atMost)
    // the same, measured by the second run of one-at-a-time calls (the target itself is read from the first)
    add("steady sequential CPU per call vs SDK v2 (reference)", where, conduit.vsSdkV2.steadyCpuMsPer10k, 0.8, atMost)
    add("steady sequential p99 vs SDK v2 (reference)", where, conduit.vsSdkV2.steadyP99Us, 1, atMost)
    for (const [client, label] of [["conduit-promise", "promise host"], ["conduit-promise-client", "McpPromiseClient"]]) {
      const promise = find(medians, group.transport, group.era, client)
      if (promise === undefined) continue
      add(`${label}: CPU per call vs SDK v2 (≤ 0.5×)`, where, promise.vsSdkV2.cpuMsPer10k, 0.5, atMost)
      add(
        `${label}: CPU per call vs raw (≤ ${group.transport === "stdio" ? "2" : "2.5"}×)`,
        where,
        promise.vsRaw.cpuMsPer10k,
        group.transport === "stdio" ? 2 : 2.5,
        atMost
      )
      add(`${label}: sequential CPU per call vs SDK v2 (≤ 0.8×)`, where, promise.vsSdkV2.sequentialCpuMsPer10k, 0.8, atMost)
      add(`${label}: steady sequential CPU per call vs SDK v2 (reference)`, where, promise.vsSdkV2.steadyCpuMsPer10k, 0.8, atMost)
    }
  }
  const imports = medians.flatMap((g) =>
    g.clients.filter((c) => c.client === "conduit").map((c) => c.medians.importLibMs)
  )
  add("import of McpClient + the transport (≤ 150 ms; the floor-relative targets: imports.mjs)", "all", median(imports), 150, atMost, "ms")
  return targets
}

const fixed = (digits) => (v) => v === undefined ? "–" : v.toFixed(digits)
const ratio = (v) => v === undefined ? "–" : `${v.toFixed(2)}×`
const names = {
  conduit: "Conduit",
  "conduit-promise": "Conduit (promise host)",
  "conduit-promise-client": "Conduit (McpPromiseClient)",
  "conduit-0.2": "Conduit 0.2 (Effect 3)",
  "effect-mcp": "Effect McpClient",
  "sdk-v2": "SDK v2",
  "sdk-v1": "SDK v1",
  floor: "Effect 4 floor",
  raw: "raw"
}

export const formatTable = (medians, plan) => {
  const header = [
    "transport",
    "era",
    "client",
    `CPU ms / 10k calls`,
    "× raw",
    "× floor",
    "× SDK v2",
    "× Effect MCP",
    "× Conduit 0.2",
    `calls/s @${plan.concurrency}`,
    "× SDK v2",
    "× Effect MCP",
    "seq CPU ms / 10k",
    "× SDK v2",
    "× Effect MCP",
    "× Conduit 0.2",
    "seq p50 µs",
    "seq p99 µs",
    "steady seq CPU ms / 10k",
    "× SDK v2",
    "× Effect MCP",
    "steady seq p50 / p99 µs",
    "1 MiB ms",
    "16 MiB ms",
    "16 MiB × raw",
    `RSS MiB @${plan.memoryAfter / 1000}k`,
    "× raw",
    "× floor",
    "heap MiB",
    "RSS / heap MiB after import",
    "connect ms",
    "import ms (lib / all)"
  ]
  const rows = [header, header.map(() => "---")]
  for (const group of medians) {
    for (const c of group.clients) {
      const m = c.medians
      // a ratio of a client to itself is 1; to a reference not in the run, "–"
      const vs = (key, metric) => c.client === references[key] ? "1" : ratio(c[key][metric])
      rows.push([
        group.transport,
        group.era,
        names[c.client] + (c.failures.length > 0 ? ` (${c.failures.length} failed)` : ""),
        fixed(0)(m.cpuMsPer10k),
        vs("vsRaw", "cpuMsPer10k"),
        vs("vsFloor", "cpuMsPer10k"),
        vs("vsSdkV2", "cpuMsPer10k"),
        vs("vsEffectMcp", "cpuMsPer10k"),
        vs("vsConduit02", "cpuMsPer10k"),
        fixed(0)(m.callsPerSecond),
        vs("vsSdkV2", "callsPerSecond"),
        vs("vsEffectMcp", "callsPerSecond"),
        fixed(0)(m.sequentialCpuMsPer10k),
        vs("vsSdkV2", "sequentialCpuMsPer10k"),
        vs("vsEffectMcp", "sequentialCpuMsPer10k"),
        vs("vsConduit02", "sequentialCpuMsPer10k"),
        fixed(0)(m.sequentialP50Us),
        fixed(0)(m.sequentialP99Us),
        fixed(0)(m.steadyCpuMsPer10k),
        vs("vsSdkV2", "steadyCpuMsPer10k"),
        vs("vsEffectMcp", "steadyCpuMsPer10k"),
        `${fixed(0)(m.steadyP50Us)} / ${fixed(0)(m.steadyP99Us)}`,
        fixed(1)(m.blob1MiBMs),
        fixed(0)(m.blob16MiBMs),
        vs("vsRaw", "blob16MiBMs"),
        fixed(1)(m.rssMiB),
        vs("vsRaw", "rssMiB"),
        vs("vsFloor", "rssMiB"),
        fixed(1)(m.heapUsedMiB),
        `${fixed(1)(m.rssAfterImportMiB)} / ${fixed(1)(m.heapAfterImportMiB)}`,
        fixed(1)(m.connectMs),
        `${fixed(0)(m.importLibMs)} / ${fixed(0)(m.importMs)}`
      ])
    }
    for (const { client, reason } of group.notApplicable ?? []) {
      rows.push([group.transport, group.era, names[client], `n/a: ${reason}`, ...header.slice(4).map(() => "n/a")])
    }
  }
  const failures = medians.flatMap((g) =>
    g.clients.flatMap((c) => c.failures.map((f) => `- ${g.transport}/${g.era} ${names[c.client]} ${f}`))
  )
  return [...rows.map((r) => `| ${r.join(" | ")} |`), ...(failures.length > 0 ? ["", ...failures] : [])].join("\n")
}

export const formatTargets = (targets) => {
  const rows = [["target", "where", "Conduit", "met"], ["---", "---", "---", "---"]]
  for (const t of targets) {
    const value = t.value === undefined ? "–" : t.unit === "ms" ? `${t.value.toFixed(0)} ms` : `${t.value.toFixed(2)}×`
    const met = t.value === undefined ? "not measured" : t.reference ? "(reference)" : t.met ? "met" : "NOT met"
    rows.push([t.target, t.where, value, met])
  }
  return rows.map((r) => `| ${r.join(" | ")} |`).join("\n")
}
