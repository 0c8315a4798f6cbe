// Memory a client costs beyond the code it loads, over stdio against the benchmark server, in this process:
//   node --expose-gc packages/bench/src/memory.mjs [--clients raw,sdk-v2,conduit,conduit-promise-client]
//        [--era legacy] [--connections 10] [--calls 10000]
// - Heap per connection: after a first connection (lazy modules, JIT), `--connections` more are opened, each
//   lists its tools and makes 200 calls; the heap after GC grows by this much per connection. Every adapter
//   builds its connection as the benchmark does (Conduit: a runtime and the platform's layer per connection);
//   `conduit-shared-platform` builds every client layer in one runtime over one `NodeServices`, as a program with
//   many servers does.
// - Allocation per call: bytes allocated per sequential call, garbage included (V8's sampling heap profiler with
//   collected objects kept, 1 KiB interval: an estimate), by file.
import * as inspector from "node:inspector/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { buildConduit } from "./buildConduit.mjs"
import { flag, option } from "./args.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const clients = option("clients", "raw,sdk-v2,conduit,conduit-shared-platform,conduit-promise-client").split(",")
const era = option("era", "legacy")
const connections = Number(option("connections", "10"))
const calls = Number(option("calls", "10000"))
const modules = {
  raw: "./clients/raw.mjs",
  "sdk-v2": "./clients/sdkV2.mjs",
  conduit: "./clients/conduit.mjs",
  "conduit-shared-platform": "./clients/conduit.mjs",
  "conduit-promise-client": "./clients/conduitPromiseClient.mjs"
}
if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc")
if (clients.some((name) => name.startsWith("conduit")) && !flag("no-build")) buildConduit()

const server = { command: process.execPath, args: [path.join(here, "server.mjs"), "--stdio"] }
const heapAfterGc = () => {
  for (let i = 0; i < 4; i++) globalThis.gc()
  return process.memoryUsage().heapUsed
}
const use = async (connection) => {
  await connection.listTools()
  for (let i = 0; i < 200; i++) await connection.call("echo", { text: "x" })
}

const perConnection = async (connect) => {
  const first = await connect()
  await use(first)
  const before = heapAfterGc()
  const opened = []
  for (let i = 0; i < connections; i++) {
    const connection = await connect()
    await use(connection)
    opened.push(connection)
  }
  const held = (heapAfterGc() - before) / connections
  for (const connection of opened) await connection.close()
  return { first, held }
}

const allocationPerCall = async (connection) => {
  for (let i = 0; i < 2_000; i++) await connection.call("echo", { text: "hello" })
  const session = new inspector.Session()
  session.connect()
  await session.post("HeapProfiler.enable")
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true
  })
  for (let i = 0; i < calls; i++) await connection.call("echo", { text: "hello" })
  const { profile } = await session.post("HeapProfiler.stopSampling")
  session.disconnect()
  const byFile = new Map()
  let total = 0
  const walk = (node) => {
    const url = node.callFrame.url
    const file = url === ""
      ? "(native)"
      : url.includes("/.build/")
      ? `conduit: ${url.split("/.build/")[1].split("/").slice(1).join("/")}`
      : url.includes("/node_modules/")
      ? url.slice(url.lastIndexOf("/node_modules/") + 14).replace("/dist/esm/", ": ")
      : url
    total += node.selfSize
    byFile.set(file, (byFile.get(file) ?? 0) + node.selfSize)
    for (const child of node.children) walk(child)
  }
  walk(profile.head)
  const top = [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 6)
  return { total: total / calls, top: top.map(([file, bytes]) => `${file} ${(bytes / calls / 1024).toFixed(1)}`) }
}

for (const name of clients) {
  const adapter = await import(modules[name])
  await adapter.load("stdio")
  // conduit.mjs `inApp`: every client layer built in one runtime over one NodeServices
  const shared = name === "conduit-shared-platform" ? await adapter.inApp("stdio") : undefined
  const connect = () => (shared?.connect ?? adapter.connect)({ transport: "stdio", era, ...server })
  const { first, held } = await perConnection(connect)
  const allocated = await allocationPerCall(first)
  await first.close()
  await shared?.dispose()
  process.stdout.write(
    `${name} ${era}: ${(held / 1024).toFixed(0)} KiB of heap held per connection (${connections} connections); ` +
      `~${(allocated.total / 1024).toFixed(1)} KiB allocated per sequential call; KiB per call by file: ` +
      `${allocated.top.join(", ")}\n`
  )
}
process.exit(0)
