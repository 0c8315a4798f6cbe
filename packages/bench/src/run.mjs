// The benchmark orchestrator: `npm run bench` (full: 5 rounds) or `npm run bench -- --quick` (1 round, fewer
// calls: about two minutes on a quiet machine).
//
// Every (transport, era) group runs each of its clients in a fresh process pinned to core 0 while the server
// runs pinned to core 1; clients are interleaved (A B C A B C …) over rounds so drift in the machine's load
// is spread over all of them. The result is a markdown table on stdout and in .bench-results/latest.md, and
// every number (each round's, the medians and the per-round ratios) in .bench-results/latest.json.
//
// Options: --quick, --rounds N, --clients a,b, --transports stdio,http, --eras legacy,modern, --out DIR,
// --no-pin (run without taskset), --verbose; --soak MINUTES runs each client (Conduit and raw by default) for
// that long at 64 in flight, sampling memory every 10 s (soak-latest.md / soak-latest.json).
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { buildConduit, hasModule } from "./buildConduit.mjs"
import { prepare as prepareConduit02 } from "./prepareConduit02.mjs"
import { evaluateTargets, formatTable, formatTargets, summarize } from "./report.mjs"
import { argv, flag, option } from "./args.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const serverScript = path.join(here, "server.mjs")
const clientScript = path.join(here, "client.mjs")

const list = (name, fallback) => option(name, fallback).split(",").filter((s) => s.length > 0)

const quick = flag("quick")
const verbose = flag("verbose")
const pin = !flag("no-pin")
const MiB = 1024 * 1024

const plans = {
  full: {
    rounds: 5,
    concurrency: 64,
    warmup: 2_000,
    sequential: 2_000,
    concurrent: 10_000,
    memoryAfter: 20_000,
    blobs: [[MiB, 5], [16 * MiB, 3]]
  },
  quick: {
    rounds: 1,
    concurrency: 64,
    warmup: 1_000,
    sequential: 1_000,
    concurrent: 5_000,
    memoryAfter: 10_000,
    blobs: [[MiB, 3], [16 * MiB, 1]]
  }
}
const soakMinutes = option("soak")
const plan = soakMinutes !== undefined
  ? { rounds: 1, concurrency: 64, soakSeconds: Number(soakMinutes) * 60, sampleSeconds: 10 }
  : { ...(quick ? plans.quick : plans.full) }
plan.rounds = Number(option("rounds", plan.rounds))

// Which clients speak which era. SDK v2 is pinned to 2026-07-28 for the modern era; SDK v1 is legacy only. Effect's
// McpClient speaks 2025-11-25 for the legacy era and 2026-07-28 for the modern one (the caller picks; effectMcp.mjs).
// `conduit-0.2` is the last release for Effect 3 (prepareConduit02.mjs installs it, with Effect 3, on demand);
// `floor` is a bare Effect 4 program making the same JSON-RPC exchange (clients/floor.mjs).
const allClients = [
  "conduit",
  "conduit-promise",
  "conduit-promise-client",
  "conduit-0.2",
  "effect-mcp",
  "sdk-v2",
  "sdk-v1",
  "floor",
  "raw"
]
// The shapes (transport × era) a client cannot run, with the reason the report prints as "n/a"
const cannotRun = {
  "sdk-v1": { "stdio/modern": "speaks the legacy era only", "http/modern": "speaks the legacy era only" }
}
const wantedClients = list("clients", soakMinutes !== undefined ? "conduit,raw" : allClients.join(","))
const unknown = wantedClients.filter((c) => !allClients.includes(c))
if (unknown.length > 0) throw new Error(`unknown client(s) ${unknown.join(", ")}; known: ${allClients.join(", ")}`)
const transports = list("transports", "stdio,http")
const eras = list("eras", "legacy,modern")
const outDir = path.resolve(option("out", path.join(here, "../.bench-results")))

const pinned = (core, command, args) => pin ? ["taskset", ["-c", String(core), command, ...args]] : [command, args]

const startHttpServer = () =>
  new Promise((resolve, reject) => {
    const [command, args] = pinned(1, process.execPath, [serverScript, "--http", "--port", "0"])
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] })
    let buffered = ""
    child.stdout.on("data", (chunk) => {
      buffered += chunk.toString("utf8")
      const line = buffered.split("\n")[0]
      if (buffered.includes("\n")) {
        const { port } = JSON.parse(line)
        resolve({ url: `http://127.0.0.1:${port}/mcp`, stop: () => stopChild(child) })
      }
    })
    child.on("error", reject)
    child.on("exit", (code) => reject(new Error(`the HTTP server exited with ${code}`)))
  })

const stopChild = (child) =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.on("exit", () => resolve())
    child.kill("SIGTERM")
    setTimeout(() => child.kill("SIGKILL"), 2_000).unref()
  })

const runClient = async (client, transport, era, resultFile) => {
  const serverArgs = pinned(1, process.execPath, [serverScript, "--stdio"])
  const server = transport === "http" ? await startHttpServer() : undefined
  try {
    const clientArgs = [
      "--expose-gc",
      clientScript,
      "--client",
      client,
      "--transport",
      transport,
      "--era",
      era,
      "--plan",
      JSON.stringify(plan),
      "--out",
      resultFile,
      ...(transport === "stdio"
        ? ["--command", serverArgs[0], "--args", JSON.stringify(serverArgs[1])]
        : ["--url", server.url])
    ]
    const [command, args] = pinned(0, process.execPath, clientArgs)
    const child = spawn(command, args, { stdio: ["ignore", "inherit", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (chunk) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-4_000)
      if (verbose) process.stderr.write(chunk)
    })
    const timeout = setTimeout(() => child.kill("SIGKILL"), (plan.soakSeconds ?? 0) * 1000 + 10 * 60_000)
    const code = await new Promise((resolve) => child.on("exit", (c, signal) => resolve(c ?? signal)))
    clearTimeout(timeout)
    if (code !== 0) return { error: `exit ${code}: ${stderr.trim().split("\n").slice(0, 3).join(" | ")}` }
    return JSON.parse(fs.readFileSync(resultFile, "utf8"))
  } finally {
    await server?.stop()
  }
}

const main = async () => {
  fs.mkdirSync(outDir, { recursive: true })
  const built = buildConduit()
  const conduitHttp = hasModule("HttpTransport")
  const groups = []
  for (const transport of transports) {
    for (const era of eras) {
      const wanted = allClients.filter((c) => wantedClients.includes(c))
        .filter((c) => !(c.startsWith("conduit") && c !== "conduit-0.2" && transport === "http" && !conduitHttp))
      const clients = wanted.filter((c) => cannotRun[c]?.[`${transport}/${era}`] === undefined)
      const notApplicable = Object.fromEntries(
        wanted.filter((c) => !clients.includes(c)).map((c) => [c, cannotRun[c][`${transport}/${era}`]])
      )
      if (clients.length > 0) groups.push({ transport, era, clients, notApplicable })
    }
  }
  // Conduit 0.2 on Effect 3, installed beside the workspace the first time it is asked for
  const conduit02 = groups.some((g) => g.clients.includes("conduit-0.2")) ? prepareConduit02() : undefined
  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    pinned: pin
  }
  process.stderr.write(
    `conduit bench: ${quick ? "quick" : "full"}, ${plan.rounds} round(s), Conduit built from ${built.source}; ` +
      `${groups.map((g) => `${g.transport}/${g.era}: ${g.clients.join(" ")}`).join("; ")}\n`
  )
  if (!conduitHttp && transports.includes("http")) {
    process.stderr.write("conduit bench: packages/client has no HttpTransport yet: Conduit is left out over HTTP\n")
  }
  const loadBefore = os.loadavg()
  const runs = []
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "conduit-bench-"))
  const started = Date.now()
  for (let round = 1; round <= plan.rounds; round++) {
    for (const group of groups) {
      for (const client of group.clients) {
        const file = path.join(tmp, `${round}-${group.transport}-${group.era}-${client}.json`)
        const result = await runClient(client, group.transport, group.era, file)
        runs.push({ round, transport: group.transport, era: group.era, client, ...result })
        const summary = result.error !== undefined
          ? `FAILED ${result.error}`
          : result.soak === true
          ? `${result.calls} calls, heap ${result.heapGrowthMiBPerMinute?.toFixed(3)} MiB/min, ` +
            `RSS ${result.rssGrowthMiBPerMinute?.toFixed(3)} MiB/min`
          : `cpu/10k ${result.cpuMsPer10k.toFixed(0)} ms, ${result.callsPerSecond.toFixed(0)} calls/s`
        process.stderr.write(`  round ${round} ${group.transport}/${group.era} ${client}: ${summary}\n`)
      }
    }
  }
  fs.rmSync(tmp, { recursive: true, force: true })
  if (soakMinutes !== undefined) return writeSoak(runs, groups, built, loadBefore, started)
  const medians = summarize(runs, groups)
  const targets = evaluateTargets(medians)
  const command = `npm run bench${argv.length > 0 ? ` -- ${argv.join(" ")}` : ""}`
  const report = {
    command,
    date: new Date().toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine,
    // other work on the machine shows here: wall times (calls/s, latency, import) suffer first
    loadAverage: { before: loadBefore, after: os.loadavg() },
    conduit: built.source,
    conduit02,
    plan,
    groups,
    medians,
    targets,
    runs
  }
  const load = (l) => l.map((x) => x.toFixed(1)).join(" ")
  const markdown = [
    `Command: \`${command}\` (${report.date}, ${report.durationSeconds} s, ${plan.rounds} round(s), ` +
    `Conduit at ${built.source}` +
    `${conduit02 === undefined ? "" : `, Conduit ${conduit02.client} on effect ${conduit02.effect} (commit ${conduit02.commit})`}` +
    `; ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}` +
    `${pin ? ", client on core 0, server on core 1" : ""}; load average ${load(loadBefore)} before, ` +
    `${load(report.loadAverage.after)} after)`,
    "",
    formatTable(medians, plan),
    "",
    formatTargets(targets),
    ""
  ].join("\n")
  const stamp = report.date.replace(/[:.]/g, "-")
  fs.writeFileSync(path.join(outDir, `bench-${stamp}.json`), JSON.stringify(report, null, 2))
  fs.writeFileSync(path.join(outDir, "latest.json"), JSON.stringify(report, null, 2))
  fs.writeFileSync(path.join(outDir, "latest.md"), markdown)
  process.stdout.write(`${markdown}\n`)
  process.stderr.write(`conduit bench: results in ${outDir}/latest.json and latest.md\n`)
  if (runs.some((r) => r.error !== undefined)) process.exitCode = 1
}

const writeSoak = (runs, groups, built, loadBefore, started) => {
  const command = `npm run bench -- ${argv.join(" ")}`
  const report = {
    command,
    date: new Date().toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    loadAverage: { before: loadBefore, after: os.loadavg() },
    conduit: built.source,
    plan,
    groups,
    runs
  }
  const f = (v, d = 1) => v === undefined ? "–" : v.toFixed(d)
  const rows = [
    "| transport | era | client | calls | calls/s | RSS MiB first → last | heap MiB first → last | RSS growth MiB/min | heap growth MiB/min |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...runs.map((r) => {
      if (r.error !== undefined) return `| ${r.transport} | ${r.era} | ${r.client} | failed: ${r.error} |`
      const first = r.samples[0]
      const last = r.samples[r.samples.length - 1]
      return `| ${r.transport} | ${r.era} | ${r.client} | ${r.calls} | ${f(r.callsPerSecond, 0)} | ` +
        `${f(first?.rssMiB)} → ${f(last?.rssMiB)} | ${f(first?.heapUsedMiB)} → ${f(last?.heapUsedMiB)} | ` +
        `${f(r.rssGrowthMiBPerMinute, 3)} | ${f(r.heapGrowthMiBPerMinute, 3)} |`
    })
  ]
  const markdown = [
    `Command: \`${command}\` (${report.date}, ${report.durationSeconds} s, Conduit at ${built.source}; growth is the ` +
    `least-squares slope of the samples taken every ${plan.sampleSeconds} s after the first minute)`,
    "",
    ...rows,
    ""
  ].join("\n")
  fs.writeFileSync(path.join(outDir, "soak-latest.json"), JSON.stringify(report, null, 2))
  fs.writeFileSync(path.join(outDir, "soak-latest.md"), markdown)
  process.stdout.write(`${markdown}\n`)
  if (runs.some((r) => r.error !== undefined)) process.exitCode = 1
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`)
  process.exit(1)
})
