// Counts the fibers Conduit starts per call (a Supervisor sees every start), in-process against the stdio
// server: a cheap check of the hot path's structure that does not depend on the machine's load.
//   node packages/bench/src/fibers.mjs [--transport stdio|http] [--era legacy|modern] [--calls 2000]
import { spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { buildConduit } from "./buildConduit.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const argv = process.argv.slice(2)
const option = (name, fallback) => {
  const at = argv.indexOf(`--${name}`)
  return at === -1 ? fallback : argv[at + 1]
}
const era = option("era", "legacy")
const transport = option("transport", "stdio")
const calls = Number(option("calls", "2000"))

if (!argv.includes("--no-build")) buildConduit()
const lib = await import(pathToFileURL(path.join(here, "../.build/client/index.js")).href)
const Effect = await import("effect/Effect")
const Layer = await import("effect/Layer")
const ManagedRuntime = await import("effect/ManagedRuntime")
const Supervisor = await import("effect/Supervisor")
const NodeContext = await import("@effect/platform-node/NodeContext")
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
    Layer.provide(NodeContext.layer)
  )
  : lib.HttpTransport.layer({ url: server.url }).pipe(Layer.provide(NodeHttpClient.layerUndici))

let started = 0
class Counter extends Supervisor.AbstractSupervisor {
  value = Effect.sync(() => started)
  onStart() {
    started++
  }
}
const counter = new Counter()
const layer = lib.McpClient.layer({ era }).pipe(
  Layer.provide(transportLayer),
  Layer.provide(Supervisor.addSupervisor(counter))
)
const runtime = ManagedRuntime.make(layer)
const client = await runtime.runPromise(lib.McpClient.McpClient)
const call = client.callTool({ name: "echo", arguments: { text: "hello" } })
const measure = async (label, effect) => {
  const before = started
  const cpu = process.cpuUsage()
  await runtime.runPromise(effect)
  const used = process.cpuUsage(cpu)
  // one fiber per runPromise and, with concurrency, one per element are the caller's, not the library's
  process.stdout.write(
    `${label}: ${((started - before) / calls).toFixed(2)} fibers per call (incl. the caller's), ` +
      `${((used.user + used.system) / calls).toFixed(1)} µs CPU per call\n`
  )
}
await measure("warm-up, 64 in flight", Effect.forEach(Array.from({ length: calls }), () => call, { concurrency: 64 }))
await measure("64 in flight", Effect.forEach(Array.from({ length: calls }), () => call, { concurrency: 64 }))
await measure("sequential", Effect.repeatN(call, calls - 1))
await runtime.dispose()
server?.child.kill("SIGTERM")
