// The tail of calls made one at a time over stdio, and what the slowest calls overlapped: in one process, after
// 2 000 calls at 64 in flight, runs of sequential calls, each reporting p50, p99 and max, the garbage collections
// during the run (V8's `gc` performance entries) and how many of the 20 slowest calls overlapped one.
//   taskset -c 0 node packages/bench/src/tail.mjs
//        [--client conduit-promise-client|conduit-promise|conduit-0.2|effect-mcp|floor|sdk-v2|sdk-v1|raw]
//        [--era legacy|modern] [--runs 3] [--calls 2000] [--no-build]
// Add node's --trace-opt to see what the JIT compiles during each run (a `run N` line is printed before each).
import * as path from "node:path"
import { PerformanceObserver } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { flag, option } from "./args.mjs"
import { buildConduit } from "./buildConduit.mjs"
import { manyWith, textOf } from "./clients/common.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const client = option("client", "conduit-promise-client")
const era = option("era", "legacy")
const runs = Number(option("runs", "3"))
const calls = Number(option("calls", "2000"))
const modules = {
  "conduit-promise-client": "./clients/conduitPromiseClient.mjs",
  "conduit-promise": "./clients/conduitPromise.mjs",
  "conduit-0.2": "./clients/conduit02.mjs",
  "effect-mcp": "./clients/effectMcp.mjs",
  floor: "./clients/floor.mjs",
  "sdk-v2": "./clients/sdkV2.mjs",
  "sdk-v1": "./clients/sdkV1.mjs",
  raw: "./clients/raw.mjs"
}
if (modules[client] === undefined) throw new Error(`unknown client ${client}`)
if (client.startsWith("conduit") && client !== "conduit-0.2" && !flag("no-build")) buildConduit()

const adapter = await import(modules[client])
await adapter.load("stdio")
const connection = await adapter.connect({
  transport: "stdio",
  era,
  command: process.execPath,
  args: [path.join(here, "server.mjs"), "--stdio"]
})
// as the benchmark's client does: a client that knows the tool's output schema takes its fast path
await connection.listTools()
const call = async () => {
  if (textOf(await connection.call("echo", { text: "hello" })) !== "hello") throw new Error("echo returned something else")
}
await manyWith(call, 2000, 64)

const collections = []
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) collections.push({ start: entry.startTime, end: entry.startTime + entry.duration })
})
observer.observe({ entryTypes: ["gc"] })
const us = (ms) => (ms * 1000).toFixed(0)

for (let run = 0; run < runs; run++) {
  console.log(`run ${run}`)
  const from = collections.length
  const starts = new Float64Array(calls)
  const ends = new Float64Array(calls)
  for (let i = 0; i < calls; i++) {
    starts[i] = performance.now()
    await call()
    ends[i] = performance.now()
  }
  // the entries of the run's last collections arrive on a later turn
  await new Promise((resolve) => setImmediate(resolve))
  const during = collections.slice(from)
  const latency = (i) => ends[i] - starts[i]
  const order = Array.from({ length: calls }, (_, i) => i).sort((a, b) => latency(a) - latency(b))
  const slowest = order.slice(-20)
  const overlapped = slowest.filter((i) => during.some((gc) => gc.start < ends[i] && gc.end > starts[i])).length
  const gcMs = during.reduce((sum, gc) => sum + gc.end - gc.start, 0)
  console.log(
    `${client} ${era} run ${run}: p50 ${us(latency(order[calls >> 1]))} µs, p99 ${
      us(latency(order[Math.floor(calls * 0.99)]))
    } µs, max ${us(latency(order[calls - 1]))} µs; ${during.length} collections (${
      gcMs.toFixed(1)
    } ms); ${overlapped} of the 20 slowest calls overlapped one`
  )
}
observer.disconnect()
await connection.close()
process.exit(0)
