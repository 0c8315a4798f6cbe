// Conduit 0.2 on Effect 3 (@conduit-mcp/client 0.2.1, the last release for Effect 3), as installed by
// prepareConduit02.mjs in packages/bench/.conduit02 with effect 3.22, @effect/platform 0.97 and
// @effect/platform-node 0.108. Every module comes from that directory (its `resolve.mjs` resolves bare specifiers
// there), never from the workspace's Effect 4. The layers and drivers are those of conduit.mjs on Effect 3's
// names: `NodeContext` over stdio, `NodeHttpClient.layerUndici` over HTTP, the calls as fibers of one program.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { clientInfo } from "./common.mjs"
import { fiberDrivers } from "./drivers.mjs"

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../.conduit02")

let lib
let platform
let Effect
let Layer
let ManagedRuntime

export const load = async (transport) => {
  if (!fs.existsSync(path.join(dir, "ready.json"))) {
    throw new Error(`conduit-0.2 is not installed in ${dir}: run node packages/bench/src/prepareConduit02.mjs`)
  }
  const { resolve } = await import(pathToFileURL(path.join(dir, "resolve.mjs")).href)
  const from = (specifier) => import(resolve(specifier))
  const start = performance.now()
  const [McpClient, Transport] = await Promise.all([
    from("@conduit-mcp/client/McpClient"),
    from(transport === "stdio" ? "@conduit-mcp/client/StdioTransport" : "@conduit-mcp/client/HttpTransport")
  ])
  lib = transport === "stdio" ? { McpClient, StdioTransport: Transport } : { McpClient, HttpTransport: Transport }
  const libDone = performance.now()
  ;[Effect, Layer, ManagedRuntime] = await Promise.all([
    from("effect/Effect"),
    from("effect/Layer"),
    from("effect/ManagedRuntime")
  ])
  platform = await from(
    transport === "stdio" ? "@effect/platform-node/NodeContext" : "@effect/platform-node/NodeHttpClient"
  )
  return { importLibMs: libDone - start, importMs: performance.now() - start }
}

export const connect = async ({ transport, era, command, args, url }) => {
  const transportLayer = transport === "stdio"
    ? lib.StdioTransport.layer({ command, args }).pipe(Layer.provide(platform.layer))
    : lib.HttpTransport.layer({ url: new URL(url) }).pipe(Layer.provide(platform.layerUndici))
  const runtime = ManagedRuntime.make(lib.McpClient.layer({ era, clientInfo }).pipe(Layer.provide(transportLayer)))
  const client = await runtime.runPromise(lib.McpClient.McpClient)
  const call = (name, args, timeoutMs) =>
    client.callTool({ name, arguments: args }, timeoutMs === undefined ? undefined : { timeout: timeoutMs })
  return {
    listTools: () => runtime.runPromise(client.listTools()),
    call: (name, args, timeoutMs) => runtime.runPromise(call(name, args, timeoutMs)),
    ...fiberDrivers(Effect, (effect) => runtime.runPromise(effect), (name, args) => call(name, args)),
    close: () => runtime.dispose()
  }
}
