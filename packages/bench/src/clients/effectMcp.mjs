// Effect 4's own MCP client (`effect/ai/McpClient`), as its documentation builds it: `layerStdio` over the platform's
// `ChildProcessSpawner` (`NodeServices`), `layerHttp` over `NodeHttpClient.layerUndici`, in a ManagedRuntime; the
// calls run as fibers (drivers.mjs), as conduit.mjs runs Conduit's.
//
// It speaks one protocol revision chosen by the caller, 2025-11-25 or 2026-07-28 (no negotiation, no older
// revision): the bench's legacy era is 2025-11-25 (`initialize`), its modern era 2026-07-28 (`server/discover`).
// `callTool` takes a discovered tool, not a name: `listTools` (which the benchmark's client calls before any call)
// keeps the tools by name.
import { clientInfo } from "./common.mjs"
import { fiberDrivers } from "./drivers.mjs"

let McpClient
let McpProtocol
let Effect
let Layer
let ManagedRuntime
let ChildProcess
let platform

export const load = async (transport) => {
  const start = performance.now()
  ;[McpClient, McpProtocol] = await Promise.all([import("effect/ai/McpClient"), import("effect/ai/McpProtocol")])
  const libDone = performance.now()
  ;[Effect, Layer, ManagedRuntime] = await Promise.all([
    import("effect/Effect"),
    import("effect/Layer"),
    import("effect/ManagedRuntime")
  ])
  if (transport === "stdio") {
    ;[ChildProcess, platform] = await Promise.all([
      import("effect/process/ChildProcess"),
      import("@effect/platform-node/NodeServices")
    ])
  } else {
    platform = await import("@effect/platform-node/NodeHttpClient")
  }
  return { importLibMs: libDone - start, importMs: performance.now() - start }
}

// the default limit (16 MiB) would refuse the 16 MiB result with its envelope: use the limit Conduit has by default
const maxMessageBytes = 64 * 1024 * 1024

/** The protocol revision the bench's era maps to. */
export const protocolFor = (era) => era === "modern" ? McpProtocol.v2026_07_28 : McpProtocol.v2025_11_25

export const clientLayer = ({ transport, era, command, args, url }) => {
  const identity = { name: clientInfo.name, version: clientInfo.version, protocol: protocolFor(era), maxMessageBytes }
  return transport === "stdio"
    ? McpClient.layerStdio({ ...identity, command: ChildProcess.make(command, args) }).pipe(
      Layer.provide(platform.layer)
    )
    : McpClient.layerHttp({ ...identity, url }).pipe(Layer.provide(platform.layerUndici))
}

export const connect = async (options) => {
  const runtime = ManagedRuntime.make(clientLayer(options))
  const client = await runtime.runPromise(McpClient.McpClient)
  const tools = new Map()
  const toolNamed = (name) => {
    const tool = tools.get(name)
    if (tool === undefined) throw new Error(`effect-mcp: no tool ${name} listed (call listTools first)`)
    return tool
  }
  const call = (name, args, timeoutMs) =>
    client.callTool(
      { tool: toolNamed(name), arguments: args },
      timeoutMs === undefined ? undefined : { timeout: timeoutMs }
    )
  return {
    listTools: () =>
      runtime.runPromise(client.listTools()).then((list) => {
        for (const tool of list) tools.set(tool.name, tool)
        return { tools: list }
      }),
    call: (name, args, timeoutMs) => runtime.runPromise(call(name, args, timeoutMs)),
    ...fiberDrivers(Effect, (effect) => runtime.runPromise(effect), (name, args) => call(name, args)),
    close: () => runtime.dispose()
  }
}
