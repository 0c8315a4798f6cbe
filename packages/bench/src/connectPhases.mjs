// Where the wall-clock time of a warm HTTP connect goes, per client, in one process against the benchmark server:
// undici's diagnostics channels mark when the first request is created, when its headers are written, when the
// response's headers and its end arrive, so a connect splits into the client's own work before its first request,
// the exchanges (the server's answers, and between them a legacy handshake's own work) and the client's work after
// the last answer until the connect resolves.
//   node packages/bench/src/connectPhases.mjs [--clients conduit-app,sdk-v2,raw] [--era legacy|modern] [--times 400]
// The first quarter of the connects warms up and is not counted; medians of the rest. Conduit is built as
// warmConnect.mjs builds it (`conduit-app`: the application holds its HttpClient, each connect builds the client's
// and the transport's layers).
import dc from "node:diagnostics_channel"
import { buildConduit } from "./buildConduit.mjs"
import { flag, option } from "./args.mjs"
import { startHttpServer } from "./httpServer.mjs"

const clients = option("clients", "conduit-app,sdk-v2,raw").split(",")
const era = option("era", "modern")
const times = Number(option("times", "400"))
const modules = { "conduit-app": "./clients/conduit.mjs", "sdk-v2": "./clients/sdkV2.mjs", raw: "./clients/raw.mjs" }

if (clients.some((name) => name.startsWith("conduit")) && !flag("no-build")) buildConduit()
const { server, port, url } = await startHttpServer()

let marks = []
const mark = (name) => () => marks.push([name, performance.now()])
// (kept in variables: a channel whose subscriber is collected stops publishing to it)
const subscribed = [
  ["undici:request:create", mark("create")],
  ["undici:client:sendHeaders", mark("sent")],
  ["undici:request:headers", mark("headers")],
  ["undici:request:trailers", mark("end")]
]
for (const [channel, listener] of subscribed) dc.subscribe(channel, listener)

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1]
const first = (row, name) => row.marks.find(([n]) => n === name)?.[1]
const last = (row, name) => row.marks.findLast(([n]) => n === name)?.[1]

for (const name of clients) {
  const adapter = await import(modules[name])
  await adapter.load("http")
  const app = name === "conduit-app" ? await adapter.inApp("http") : undefined
  const connect = app?.connect ?? adapter.connect
  // (only what happened before the connect resolved: a legacy session's GET stream ends when the client closes)
  const rows = []
  for (let i = 0; i < times; i++) {
    marks = []
    const start = performance.now()
    const connection = await connect({ transport: "http", era, url, sharedDispatcher: true })
    const connected = performance.now()
    const row = { start, connected, marks: marks.filter(([, at]) => at <= connected) }
    await connection.close()
    if (i >= times >> 2) rows.push(row)
  }
  await app?.dispose()
  const ms = (f) => median(rows.map(f)).toFixed(2)
  process.stdout.write(
    `${name} ${era}: connect ${ms((r) => r.connected - r.start)} ms; of it: before the first request ${
      ms((r) => first(r, "create") - r.start)
    }, first request written ${ms((r) => first(r, "sent") - first(r, "create"))}, from the first request written to the last answer ${
      ms((r) => last(r, "end") - first(r, "sent"))
    } (requests: ${median(rows.map((r) => r.marks.filter(([n]) => n === "create").length))}), after the last answer ${
      ms((r) => r.connected - last(r, "end"))
    } (medians of ${rows.length})\n`
  )
}
server.kill("SIGTERM")
process.exit(0)
