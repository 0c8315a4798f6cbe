// Counts what a warm HTTP connect and close cost in Effect terms, in-process against the benchmark server: the
// fibers started (each reports its start to the `Metric.FiberRuntimeMetrics` service), per connect up to the client
// being usable and per close. (Effect 3's op supervision, which also counted the Effect operations run, has no
// counterpart in Effect 4.) Unlike the wall-clock medians of warmConnect.mjs, these counts do not move with the host's load.
//   node packages/bench/src/connectOps.mjs [--era legacy|modern] [--times 20] [--shared] [--no-build]
// --shared builds the HTTP layer over undici's global dispatcher instead of an `Agent` per connect. CONDUIT_SRC and
// CONDUIT_BUILD_DIR choose the build (see buildConduit.mjs).
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { buildConduit, buildDir } from "./buildConduit.mjs"
import { flag, option } from "./args.mjs"
import { startHttpServer } from "./httpServer.mjs"

const era = option("era", "legacy")
const times = Number(option("times", "20"))
const shared = flag("shared")

if (!flag("no-build")) buildConduit()
const built = (file) => pathToFileURL(path.join(buildDir, file)).href
const McpClient = await import(built("McpClient.js"))
const HttpTransport = await import(built("HttpTransport.js"))
const { Effect, Layer, Metric } = await import("effect")
const NodeHttpClient = await import("@effect/platform-node/NodeHttpClient")

const { server, port, url } = await startHttpServer()

let fibers = 0
const counter = { recordFiberStart: () => fibers++, recordFiberEnd: () => {} }
const http = shared
  ? NodeHttpClient.layerUndiciNoDispatcher.pipe(Layer.provide(NodeHttpClient.dispatcherLayerGlobal))
  : NodeHttpClient.layerUndici
const clientLayer = McpClient.layer({ era, clientInfo: { name: "conduit-bench", version: "1.0.0" } }).pipe(
  Layer.provide(HttpTransport.layer({ url }).pipe(Layer.provide(http)))
)
const totals = { connect: 0, close: 0 }
const once = Effect.scoped(Effect.gen(function*() {
  const start = fibers
  // a fresh build each time (Effect 4 shares a built layer value across builds otherwise)
  yield* Layer.build(Layer.fresh(clientLayer))
  totals.connect += fibers - start
  const closing = { at: 0 }
  yield* Effect.addFinalizer(() => Effect.sync(() => (closing.at = fibers)))
  return closing
}))
const run = () =>
  Effect.runPromise(Effect.provideService(once, Metric.FiberRuntimeMetrics, counter)).then((closing) => {
    // (the finalizer above runs first among the layer's: what follows it is the close)
    totals.close += fibers - closing.at
  })
for (let i = 0; i < 5; i++) await run()
totals.connect = 0
totals.close = 0
for (let i = 0; i < times; i++) await run()
const per = (f) => `${(f / times).toFixed(1)} fibers`
process.stdout.write(
  `${era}${shared ? " (shared dispatcher)" : ""}: connect ${per(totals.connect)}; close ${per(totals.close)}\n`
)
server.kill("SIGTERM")
process.exit(0)
