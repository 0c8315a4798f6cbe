// One benchmarked client in its own process (the orchestrator pins it to one core). Measures, in order:
// import time, connect time, a warm-up, sequential latency (twice: the first run warms that path up), CPU time and throughput at a fixed number of calls
// in flight, memory after a fixed total of calls, then the time to receive large results. Writes its numbers
// as JSON to the file named by --out.
//
//   node --expose-gc client.mjs --client raw --transport stdio --era legacy --plan '<json>' --out result.json
//        [--command taskset --args '["-c","1","node","server.mjs","--stdio"]'] [--url http://127.0.0.1:N/mcp]
import * as fs from "node:fs"
import { manyWith, now, sequenceWith, textOf } from "./clients/common.mjs"

const started = now()

const option = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : process.argv[at + 1]
}

const clientName = option("client")
const transport = option("transport", "stdio")
const era = option("era", "legacy")
const plan = JSON.parse(option("plan"))
const out = option("out")
const command = option("command")
const args = JSON.parse(option("args", "[]"))
const url = option("url")

const modules = {
  raw: "./clients/raw.mjs",
  conduit: "./clients/conduit.mjs",
  "conduit-promise": "./clients/conduitPromise.mjs",
  "conduit-promise-client": "./clients/conduitPromiseClient.mjs",
  "sdk-v2": "./clients/sdkV2.mjs",
  "sdk-v1": "./clients/sdkV1.mjs",
  "effect-mcp": "./clients/effectMcp.mjs",
  "conduit-0.2": "./clients/conduit02.mjs",
  floor: "./clients/floor.mjs"
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

const gc = () => {
  if (typeof globalThis.gc === "function") {
    globalThis.gc()
    globalThis.gc()
  }
}

const main = async () => {
  const adapter = await import(modules[clientName])
  // CPU time of the import too: wall time suffers most when the machine is busy
  const importCpu = process.cpuUsage()
  const imports = await adapter.load(transport)
  const importCpuUsed = process.cpuUsage(importCpu)

  gc()
  const memoryAfterImport = process.memoryUsage()

  const connectStart = now()
  const connection = await adapter.connect({ transport, era, command, args, url })
  const connectMs = now() - connectStart
  await connection.listTools()

  const text = "The quick brown fox jumps over the lazy dog"
  const echoArgs = { text }
  const checkEcho = (got) => {
    if (got !== text) throw new Error(`echo returned ${JSON.stringify(got).slice(0, 100)}`)
  }
  const echo = () => connection.call("echo", echoArgs).then((result) => checkEcho(textOf(result)))
  const many = (n) =>
    connection.many !== undefined
      ? connection.many(n, plan.concurrency, "echo", echoArgs, checkEcho)
      : manyWith(echo, n, plan.concurrency)
  const sequence = (n) =>
    connection.sequence !== undefined ? connection.sequence(n, "echo", echoArgs, checkEcho) : sequenceWith(echo, n)

  // each phase's start on the monotonic clock, in µs (the clock of a `--cpu-prof` profile: profile.mjs uses them
  // to summarize only the measured phase)
  const marks = {}
  const phase = (name) => {
    marks[name] = Number(process.hrtime.bigint() / 1000n)
    if (process.env.BENCH_DEBUG) process.stderr.write(`${clientName}: ${name}\n`)
  }
  if (plan.soakSeconds !== undefined) return soak(connection, many, imports, connectMs)
  let calls = 0
  phase("warmup")
  await many(plan.warmup)
  calls += plan.warmup

  phase("sequential")
  const sequentialCpuBefore = process.cpuUsage()
  const latencies = await sequence(plan.sequential)
  const sequentialCpu = process.cpuUsage(sequentialCpuBefore)
  calls += plan.sequential

  // the same number again, once the first run has warmed the one-at-a-time path up: the first run also pays the
  // JIT's compilation of that path (the warm-up above runs calls at 64 in flight, which compiles other code), on
  // the one core the client is pinned to
  phase("sequential-steady")
  const steadyCpuBefore = process.cpuUsage()
  const steadyLatencies = await sequence(plan.sequential)
  const steadyCpu = process.cpuUsage(steadyCpuBefore)
  calls += plan.sequential

  phase("concurrent")
  gc()
  const cpuBefore = process.cpuUsage()
  const wallBefore = now()
  await many(plan.concurrent)
  const wall = now() - wallBefore
  const cpu = process.cpuUsage(cpuBefore)
  calls += plan.concurrent
  const cpuMicros = cpu.user + cpu.system

  phase("memory")
  if (plan.memoryAfter > calls) {
    await many(plan.memoryAfter - calls)
    calls = plan.memoryAfter
  }
  gc()
  const memory = process.memoryUsage()

  phase("blobs")
  const blobs = {}
  for (const [bytes, repeats] of plan.blobs) {
    const times = []
    for (let i = 0; i < repeats; i++) {
      const start = now()
      const result = await connection.call("blob", { bytes }, 600_000)
      const got = textOf(result).length
      times.push(now() - start)
      if (got !== bytes) throw new Error(`blob of ${bytes} bytes returned ${got}`)
    }
    blobs[bytes] = median(times)
  }

  await connection.close()

  return {
    marks,
    client: clientName,
    transport,
    era,
    importLibMs: imports.importLibMs,
    importMs: imports.importMs,
    importCpuMs: (importCpuUsed.user + importCpuUsed.system) / 1000,
    connectMs,
    sequentialP50Us: percentile(latencies, 50) * 1000,
    sequentialP99Us: percentile(latencies, 99) * 1000,
    sequentialCpuMsPer10k: ((sequentialCpu.user + sequentialCpu.system) / 1000) * (10_000 / plan.sequential),
    steadyP50Us: percentile(steadyLatencies, 50) * 1000,
    steadyP99Us: percentile(steadyLatencies, 99) * 1000,
    steadyCpuMsPer10k: ((steadyCpu.user + steadyCpu.system) / 1000) * (10_000 / plan.sequential),
    cpuMsPer10k: (cpuMicros / 1000) * (10_000 / plan.concurrent),
    cpuUserMsPer10k: (cpu.user / 1000) * (10_000 / plan.concurrent),
    callsPerSecond: plan.concurrent / (wall / 1000),
    memoryAfterCalls: calls,
    rssMiB: memory.rss / 1048576,
    heapUsedMiB: memory.heapUsed / 1048576,
    rssAfterImportMiB: memoryAfterImport.rss / 1048576,
    heapAfterImportMiB: memoryAfterImport.heapUsed / 1048576,
    blobMs: blobs,
    cpuTotalMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
    totalMs: now() - started
  }
}

/**
 * Soak: calls at `plan.concurrency` in flight for `plan.soakSeconds`, in slices of `plan.sampleSeconds`; after
 * each slice two forced GCs and a memory sample. Growth is the least-squares slope of heap and RSS over the
 * samples after the first minute (the warm-up of the JIT and of the pools).
 */
const soak = async (connection, many, imports, connectMs) => {
  const samples = []
  const start = now()
  let calls = 0
  while (now() - start < plan.soakSeconds * 1000) {
    const sliceStart = now()
    while (now() - sliceStart < plan.sampleSeconds * 1000) {
      await many(1_000)
      calls += 1_000
    }
    gc()
    const memory = process.memoryUsage()
    samples.push({
      seconds: (now() - start) / 1000,
      calls,
      rssMiB: memory.rss / 1048576,
      heapUsedMiB: memory.heapUsed / 1048576
    })
  }
  await connection.close()
  const settled = samples.filter((s) => s.seconds >= 60)
  const slope = (key) => {
    if (settled.length < 2) return undefined
    const n = settled.length
    const mx = settled.reduce((a, s) => a + s.seconds, 0) / n
    const my = settled.reduce((a, s) => a + s[key], 0) / n
    const sxy = settled.reduce((a, s) => a + (s.seconds - mx) * (s[key] - my), 0)
    const sxx = settled.reduce((a, s) => a + (s.seconds - mx) ** 2, 0)
    return (sxy / sxx) * 60
  }
  return {
    client: clientName,
    transport,
    era,
    soak: true,
    importLibMs: imports.importLibMs,
    connectMs,
    calls,
    callsPerSecond: calls / ((now() - start) / 1000),
    samples,
    rssGrowthMiBPerMinute: slope("rssMiB"),
    heapGrowthMiBPerMinute: slope("heapUsedMiB")
  }
}

main().then(
  (result) => {
    fs.writeFileSync(out, JSON.stringify(result))
    // some clients keep handles (timers, agents) after closing: the numbers are written, so end here
    process.exit(0)
  },
  (error) => {
    process.stderr.write(`${clientName} ${transport} ${era}: ${error?.stack ?? error}\n`)
    process.exit(1)
  }
)
