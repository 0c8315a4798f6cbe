// Conduit through its promise client (`McpPromiseClient`): the same client and layers as conduit.mjs, made with
// `McpPromiseClient.make`, every call a promise issued from the promise pool the SDK clients use (common.mjs
// `manyWith` and `sequenceWith`). The usual calls take the client's fast path without a fiber per call; compare
// conduitPromise.mjs, a `runtime.runPromise` per call.
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { clientInfo } from "./common.mjs"

const buildDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../..",
  process.env.CONDUIT_BUILD_DIR ?? ".build/client"
)
const built = (file) => pathToFileURL(path.join(buildDir, file)).href

let lib
let platform
let Layer

export const load = async (transport) => {
  const start = performance.now()
  const [McpClient, McpPromiseClient, Transport] = await Promise.all([
    import(built("McpClient.js")),
    import(built("McpPromiseClient.js")),
    import(built(transport === "stdio" ? "StdioTransport.js" : "HttpTransport.js"))
  ])
  lib = { McpClient, McpPromiseClient, Transport }
  const libDone = performance.now()
  Layer = await import("effect/Layer")
  platform = transport === "stdio"
    ? await import("@effect/platform-node/NodeContext")
    : await import("@effect/platform-node/NodeHttpClient")
  return { importLibMs: libDone - start, importMs: performance.now() - start }
}

const httpLayer = (sharedDispatcher) =>
  sharedDispatcher
    ? platform.layerUndiciWithoutDispatcher.pipe(Layer.provide(platform.dispatcherLayerGlobal))
    : platform.layerUndici

export const connect = async ({ transport, era, command, args, url, sharedDispatcher = false }) => {
  const transportLayer = transport === "stdio"
    ? lib.Transport.layer({ command, args }).pipe(Layer.provide(platform.layer))
    : lib.Transport.layer({ url: new URL(url) }).pipe(Layer.provide(httpLayer(sharedDispatcher)))
  const client = await lib.McpPromiseClient.make(
    lib.McpClient.layer({ era, clientInfo }).pipe(Layer.provide(transportLayer))
  )
  return {
    listTools: () => client.listTools(),
    call: (name, args, timeoutMs) =>
      client.callTool({ name, arguments: args }, timeoutMs === undefined ? undefined : { timeout: timeoutMs }),
    close: () => client.close()
  }
}
