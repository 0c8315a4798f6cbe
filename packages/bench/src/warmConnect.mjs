// Warm connect over HTTP: in one process, after a first connect (cold: JIT, lazy modules, the first socket),
// connects and closes a client again and again and reports the median time of a connect (up to the client being
// usable) and of a connect followed by one call, and the client's mean CPU per round (connect, call, close). A
// client's import and its first connect are not counted.
//   node packages/bench/src/warmConnect.mjs [--clients conduit,conduit-shared,conduit-app,sdk-v2,sdk-v2-agent,raw] [--era legacy|modern]
//        [--times 30]
// `conduit` builds `NodeHttpClient.layerUndici` per connect, as a program that builds one client layer does: an
// undici `Agent` per connect, so every connect opens new sockets. `conduit-shared` gives each connect
// `layerUndiciNoDispatcher` over undici's global dispatcher, whose kept-alive sockets outlive the client, as
// the SDKs' fetch does. `conduit-app` holds that HTTP client in one runtime made once and builds only the client's
// and the transport's layers per connect (conduit.mjs `inApp`), as a program that connects to servers as it needs
// them does, the way the SDKs' `fetch` is there before any client. `sdk-v2-agent` gives SDK v2 an undici `Agent` of
// its own per connect (closed with the client), the like-for-like of `conduit`.
import { buildConduit } from "./buildConduit.mjs"
import { now, textOf } from "./clients/common.mjs"
import { flag, option } from "./args.mjs"
import { startHttpServer } from "./httpServer.mjs"

const clients = option("clients", "conduit,conduit-shared,conduit-app,sdk-v2,raw").split(",")
const era = option("era", "legacy")
const times = Number(option("times", "30"))
const modules = {
  raw: "./clients/raw.mjs",
  conduit: "./clients/conduit.mjs",
  "conduit-shared": "./clients/conduit.mjs",
  "conduit-app": "./clients/conduit.mjs",
  "conduit-promise": "./clients/conduitPromise.mjs",
  "conduit-promise-client": "./clients/conduitPromiseClient.mjs",
  "sdk-v2": "./clients/sdkV2.mjs",
  "sdk-v2-agent": "./clients/sdkV2.mjs",
  "sdk-v1": "./clients/sdkV1.mjs"
}

if (clients.some((name) => name.startsWith("conduit")) && !flag("no-build")) buildConduit()
const { server, port, url } = await startHttpServer()
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1]

for (const name of clients) {
  const adapter = await import(modules[name])
  await adapter.load("http")
  const app = name === "conduit-app" ? await adapter.inApp("http") : undefined
  const connect = app?.connect ?? adapter.connect
  const connectOnly = []
  const withCall = []
  let cpu
  for (let i = 0; i <= times; i++) {
    // the client's CPU over the warm rounds (connect, call and close), which the host's load moves less than
    // the wall-clock medians
    if (i === 1) cpu = process.cpuUsage()
    const start = now()
    const connection = await connect({ transport: "http", era, url, sharedDispatcher: name === "conduit-shared",
      ownAgent: name === "sdk-v2-agent"
    })
    const connected = now()
    const result = await connection.call("echo", { text: "x" })
    const called = now()
    if (textOf(result) !== "x") throw new Error(`${name}: echo returned something else`)
    await connection.close()
    // the first connect is the cold one
    if (i > 0) {
      connectOnly.push(connected - start)
      withCall.push(called - start)
    }
  }
  const used = process.cpuUsage(cpu)
  await app?.dispose()
  process.stdout.write(
    `${name} ${era}: warm connect ${median(connectOnly).toFixed(2)} ms (median of ${times}; least ${
      Math.min(...connectOnly).toFixed(2)
    }), connect + first call ${median(withCall).toFixed(2)} ms, CPU per connect + call + close ${
      ((used.user + used.system) / 1000 / times).toFixed(2)
    } ms\n`
  )
}
server.kill("SIGTERM")
process.exit(0)
