// Conduit, loaded from the transpiled library (see buildConduit.mjs). Calls run the way an Effect program
// runs them: the drivers are Effect programs, each started once (64 in flight: 64 worker fibers).
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { clientInfo } from "./common.mjs"
import { fiberDrivers } from "./drivers.mjs"

// the build buildConduit.mjs wrote (CONDUIT_BUILD_DIR, relative to packages/bench, as there)
const buildDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../..",
  process.env.CONDUIT_BUILD_DIR ?? ".build/client"
)
const built = (file) => pathToFileURL(path.join(buildDir, file)).href

let lib
let platform
let Effect
let Layer
let ManagedRuntime

// A program that uses one transport imports `McpClient` and that transport's module (the entry point loads every
// module of the library: packages/bench/src/imports.mjs measures both).
// `extra`: more of the library's modules a client imports with these (by file name), counted as the library's
export const load = async (transport, extra = []) => {
  const start = performance.now()
  const [McpClient, Transport, ...more] = await Promise.all([
    import(built("McpClient.js")),
    import(built(transport === "stdio" ? "StdioTransport.js" : "HttpTransport.js")),
    ...extra.map((file) => import(built(file)))
  ])
  lib = transport === "stdio" ? { McpClient, StdioTransport: Transport } : { McpClient, HttpTransport: Transport }
  extra.forEach((file, i) => (lib[file.replace(/\.js$/, "")] = more[i]))
  const libDone = performance.now()
  ;[Effect, Layer, ManagedRuntime] = await Promise.all([
    import("effect/Effect"),
    import("effect/Layer"),
    import("effect/ManagedRuntime")
  ])
  platform = transport === "stdio"
    ? await import("@effect/platform-node/NodeServices")
    : await import("@effect/platform-node/NodeHttpClient")
  return { importLibMs: libDone - start, importMs: performance.now() - start }
}

// HTTP: `NodeHttpClient.layerUndici` makes an undici `Agent` (its own sockets) per layer built, so every connect
// opens new sockets; `sharedDispatcher` gives the layer undici's global dispatcher instead (the one Node's fetch
// uses, as the SDKs do), whose kept-alive sockets outlive each client
const httpLayer = (sharedDispatcher) =>
  sharedDispatcher
    ? platform.layerUndiciNoDispatcher.pipe(Layer.provide(platform.dispatcherLayerGlobal))
    : platform.layerUndici

// the client's layer over the transport, as a program that uses one transport builds it
export const clientLayer = ({ transport, era, command, args, url, sharedDispatcher = false }) => {
  const transportLayer = transport === "stdio"
    ? lib.StdioTransport.layer({ command, args }).pipe(Layer.provide(platform.layer))
    : lib.HttpTransport.layer({ url: new URL(url) }).pipe(Layer.provide(httpLayer(sharedDispatcher)))
  return lib.McpClient.layer({ era, clientInfo }).pipe(Layer.provide(transportLayer))
}

// the library's modules `load` imported
export const library = () => lib

// A program that holds its platform layer (over stdio `NodeServices`; over HTTP an `HttpClient` over undici's global
// dispatcher, which Node's fetch shares) in one runtime and connects to servers as it needs them, as a host of many
// servers does: each connect builds only the client's and the transport's layers, in a scope of its own.
export const inApp = async (transport) => {
  const [Context, Exit, Scope] = await Promise.all([import("effect/Context"), import("effect/Exit"), import("effect/Scope")])
  const runtime = ManagedRuntime.make(transport === "stdio" ? platform.layer : httpLayer(true))
  return {
    connect: async ({ era, command, args, url }) => {
      const scope = await runtime.runPromise(Scope.make())
      const transportLayer = transport === "stdio"
        ? lib.StdioTransport.layer({ command, args })
        : lib.HttpTransport.layer({ url: new URL(url) })
      const layer = lib.McpClient.layer({ era, clientInfo }).pipe(Layer.provide(transportLayer))
      const client = Context.get(await runtime.runPromise(Layer.buildWithScope(layer, scope)), lib.McpClient.McpClient)
      return {
        listTools: () => runtime.runPromise(client.listTools()),
        call: (name, args) => runtime.runPromise(client.callTool({ name, arguments: args })),
        close: () => runtime.runPromise(Scope.close(scope, Exit.void))
      }
    },
    dispose: () => runtime.dispose()
  }
}

export const connect = async (options) => {
  const runtime = ManagedRuntime.make(clientLayer(options))
  const client = await runtime.runPromise(lib.McpClient.McpClient)
  const call = (name, args, timeoutMs) =>
    client.callTool({ name, arguments: args }, timeoutMs === undefined ? undefined : { timeout: timeoutMs })
  return {
    listTools: () => runtime.runPromise(client.listTools()),
    call: (name, args, timeoutMs) => runtime.runPromise(call(name, args, timeoutMs)),
    // the same shape as the other clients' driver (common.mjs `manyWith`): `concurrency` workers, each making
    // calls one after the other while calls are left, as fibers of one Effect program
    ...fiberDrivers(Effect, (effect) => runtime.runPromise(effect), (name, args) => call(name, args)),
    close: () => runtime.dispose()
  }
}
