// The connections a client opens to an HTTP server, and what each costs when a new connection is not free: the
// benchmark server behind a TCP proxy on 127.0.0.1 that holds every new connection for `--handshake` ms before
// its first byte goes through (a model of the TCP and TLS handshakes of a remote server: 20 ms is two round
// trips of 10 ms). Every round starts on an empty connection pool (the first connect of a program to a server):
// `conduit` builds `NodeHttpClient.layerUndici` per connect (an undici `Agent` per layer, as the README's
// example does), the others get a new global undici `Agent` before each round (SDK v2's `fetch` uses it).
// Reports, per client and era, the connections opened by the connect, by the first call after it and by the
// close, and the median times of each.
//   node packages/bench/src/connectSockets.mjs [--clients conduit,sdk-v2,raw] [--era legacy|modern]
//        [--handshake 20] [--times 15] [--no-build]
import diagnostics from "node:diagnostics_channel"
import * as net from "node:net"
import { Agent, setGlobalDispatcher } from "undici"
import { flag, option } from "./args.mjs"
import { buildConduit } from "./buildConduit.mjs"
import { now, textOf } from "./clients/common.mjs"
import { startHttpServer } from "./httpServer.mjs"

const clients = option("clients", "conduit,sdk-v2,raw").split(",")
const era = option("era", "legacy")
const handshakeMs = Number(option("handshake", "20"))
const times = Number(option("times", "15"))
const modules = { conduit: "./clients/conduit.mjs", "sdk-v2": "./clients/sdkV2.mjs", raw: "./clients/raw.mjs" }

if (clients.includes("conduit") && !flag("no-build")) buildConduit()
const { server, port } = await startHttpServer()

// the proxy: every accepted connection waits `handshakeMs` before its bytes flow either way
let opened = 0
const proxy = net.createServer((socket) => {
  opened++
  socket.pause()
  const upstream = net.connect(port, "127.0.0.1")
  const close = () => (socket.destroy(), upstream.destroy())
  socket.on("error", close)
  upstream.on("error", close)
  socket.on("close", close)
  upstream.on("close", close)
  setTimeout(() => {
    socket.pipe(upstream)
    upstream.pipe(socket)
    socket.resume()
  }, handshakeMs)
})
await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve))
const url = `http://127.0.0.1:${proxy.address().port}/mcp`
// (the raw client counts its own connections through undici's channel, for a check of the proxy's count)
let undiciConnected = 0
diagnostics.subscribe("undici:client:connected", () => undiciConnected++)

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1]

for (const name of clients) {
  const adapter = await import(modules[name])
  await adapter.load("http")
  const rows = { connect: [], call: [], close: [], sockets: [] }
  // the first round (imports, JIT) is not counted
  for (let i = 0; i <= times; i++) {
    const agent = new Agent()
    setGlobalDispatcher(agent)
    opened = 0
    const start = now()
    const connection = await adapter.connect({ transport: "http", era, url })
    const connected = now()
    const atConnect = opened
    const result = await connection.call("echo", { text: "x" })
    if (textOf(result) !== "x") throw new Error(`${name}: echo returned something else`)
    const called = now()
    const atCall = opened
    await connection.close()
    const closed = now()
    await agent.close()
    if (i === 0) continue
    rows.connect.push(connected - start)
    rows.call.push(called - connected)
    rows.close.push(closed - called)
    rows.sockets.push(`${atConnect}/${atCall - atConnect}/${opened - atCall}`)
  }
  const counts = [...new Set(rows.sockets)].join(" ")
  process.stdout.write(
    `${name} ${era} (handshake ${handshakeMs} ms): connections opened by connect/first call/close ${counts}; ` +
      `connect ${median(rows.connect).toFixed(1)} ms, first call ${median(rows.call).toFixed(1)} ms, close ${
        median(rows.close).toFixed(1)
      } ms (medians of ${times})\n`
  )
}
proxy.close()
server.kill("SIGTERM")
process.exit(0)
