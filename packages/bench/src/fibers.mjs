// Counts the fibers Conduit starts per call (every fiber started under the `Metric.FiberRuntimeMetrics` service
// reports its start to it), in-process against the stdio server: a cheap check of the hot path's structure that
// does not depend on the machine's load.
//   node packages/bench/src/fibers.mjs [--transport stdio|http] [--era legacy|modern] [--calls 2000] [--rounds 1]
//        [--prof [--top 40]]
// CONDUIT_BUILD_DIR and CONDUIT_SRC choose the build (see buildConduit.mjs), e.g. CONDUIT_SRC=worktree to measure
// uncommitted changes. --prof records a CPU profile of the calls at 64 in flight (in-process, through the
// inspector) and prints their self time by function. (Effect 3's op supervision, which counted the Effect
// operations per call, has no counterpart in Effect 4.)
import { spawn } from "node:child_process"
import * as inspector from "node:inspector"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { buildConduit, buildDir } from "./buildConduit.mjs"
import { flag, option } from "./args.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const era = option("era", "legacy")
const transport = option("transport", "stdio")
const calls = Number(option("calls", "2000"))
const rounds = Number(option("rounds", "1"))
const top = Number(option("top", "40"))
const profiling = flag("prof")
if (flag("ops")) throw new Error("--ops: Effect 4 has no op supervision (RuntimeFlags and Supervisor are gone)")

if (!flag("no-build")) buildConduit()
const lib = await import(pathToFileURL(path.join(buildDir, "index.js")).href)
const Effect = await import("effect/Effect")
const Layer = await import("effect/Layer")
const ManagedRuntime = await import("effect/ManagedRuntime")
const Metric = await import("effect/Metric")
const NodeServices = await import("@effect/platform-node/NodeServices")
const NodeHttpClient = await import("@effect/platform-node/NodeHttpClient")

const startHttpServer = () =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(here, "server.mjs"), "--http"], { stdio: ["ignore", "pipe", "inherit"] })
    child.stdout.once("data", (chunk) => {
      const { port } = JSON.parse(chunk.toString("utf8").split("\n")[0])
      resolve({ url: `http://127.0.0.1:${port}/mcp`, child })
    })
    child.on("error", reject)
  })
const server = transport === "http" ? await startHttpServer() : undefined
const transportLayer = server === undefined
  ? lib.StdioTransport.layer({ command: process.execPath, args: [path.join(here, "server.mjs"), "--stdio"] }).pipe(
    Layer.provide(NodeServices.layer)
  )
  : lib.HttpTransport.layer({ url: server.url }).pipe(Layer.provide(NodeHttpClient.layerUndici))

let started = 0
const counter = { recordFiberStart: () => started++, recordFiberEnd: () => {} }
// the client's own fibers (reader, writer, timers) are started under the counter as the layer is built, the
// callers' fibers as each measured effect runs under it
const layer = lib.McpClient.layer({ era }).pipe(
  Layer.provide(transportLayer),
  Layer.provide(Layer.succeed(Metric.FiberRuntimeMetrics, counter))
)
const runtime = ManagedRuntime.make(layer)
const client = await runtime.runPromise(lib.McpClient.McpClient)
const call = client.callTool({ name: "echo", arguments: { text: "hello" } })
const measure = async (label, effect) => {
  const before = started
  const cpu = process.cpuUsage()
  await runtime.runPromise(Effect.provideService(effect, Metric.FiberRuntimeMetrics, counter))
  const used = process.cpuUsage(cpu)
  // with concurrency, one fiber per element is the caller's, not the library's
  process.stdout.write(
    `${label}: ${((started - before) / calls).toFixed(2)} fibers per call (incl. the caller's), ` +
      `${((used.user + used.system) / calls).toFixed(1)} µs CPU per call\n`
  )
}
// 64 worker fibers calling in a loop, as the benchmark's driver does
const many = Effect.suspend(() => {
  let started = 0
  const worker = Effect.suspend(() => {
    if (started >= calls) return Effect.void
    started++
    return Effect.andThen(call, worker)
  })
  return Effect.all(Array.from({ length: 64 }, () => worker), { concurrency: "unbounded", discard: true })
})
await measure("warm-up, 64 in flight", many)
for (let round = 0; round < rounds; round++) {
  await measure("64 in flight", many)
  await measure("sequential", Effect.repeat(call, { times: calls - 1 }))
}
if (profiling) {
  const session = new inspector.Session()
  session.connect()
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result)))
    )
  await post("Profiler.enable")
  await post("Profiler.setSamplingInterval", { interval: 100 })
  await post("Profiler.start")
  await measure("64 in flight (profiled)", many)
  const { profile } = await post("Profiler.stop")
  session.disconnect()
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
  const self = new Map()
  const byFile = new Map()
  const where = (url) => {
    if (url === "") return "(native)"
    const nm = url.lastIndexOf("/node_modules/")
    if (nm !== -1) return url.slice(nm + 14)
    const build = url.indexOf("/.build/")
    return build !== -1 ? url.slice(build + 8) : url
  }
  for (const id of profile.samples) {
    const frame = nodes.get(id).callFrame
    const key = `${frame.functionName || "(anonymous)"}  ${where(frame.url)}:${frame.lineNumber + 1}`
    self.set(key, (self.get(key) ?? 0) + 1)
    byFile.set(where(frame.url), (byFile.get(where(frame.url)) ?? 0) + 1)
  }
  const total = profile.samples.length
  const print = (map) =>
    [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).forEach(([k, v]) =>
      process.stdout.write(`${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}\n`)
    )
  process.stdout.write(`\n${total} samples. Self time by file:\n`)
  print(byFile)
  process.stdout.write("\nSelf time by function:\n")
  print(self)
}
await runtime.dispose()
server?.child.kill("SIGTERM")
