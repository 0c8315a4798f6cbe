// The floor of the Effect 4 stack: a bare Effect 4 program making the benchmark's JSON-RPC exchange, with no MCP
// logic (no validation, no negotiation, no cancellation), the way raw.mjs makes it with Node alone. What an Effect
// MCP client costs above this is its own; what this costs above raw is the platform's.
//   stdio: the server spawned through `effect/process/ChildProcess` (the `ChildProcessSpawner` of `NodeServices`),
//          requests offered to a Queue that a fiber writes to the child's stdin Sink, a fiber reading its stdout
//          Stream and splitting lines, each call an `Effect.callback` resumed by its answer;
//   HTTP:  `effect/http/HttpClient` over `NodeHttpClient.layerUndici`, one POST per request, its body read with
//          `response.text` (as platformFloor.mjs measures it in one process).
// Both eras: legacy `initialize` (and a session over HTTP), modern `server/discover` and `_meta` on each request.
import { clientInfo, LEGACY, MODERN } from "./common.mjs"
import { fiberDrivers } from "./drivers.mjs"

let Effect
let ManagedRuntime
let Scope
let Queue
let Stream
let Exit
let ChildProcess
let HttpClient
let HttpClientRequest
let platform

export const load = async (transport) => {
  const start = performance.now()
  ;[Effect, ManagedRuntime, Scope, Exit] = await Promise.all([
    import("effect/Effect"),
    import("effect/ManagedRuntime"),
    import("effect/Scope"),
    import("effect/Exit")
  ])
  if (transport === "stdio") {
    ;[Queue, Stream, ChildProcess, platform] = await Promise.all([
      import("effect/Queue"),
      import("effect/Stream"),
      import("effect/process/ChildProcess"),
      import("@effect/platform-node/NodeServices")
    ])
  } else {
    ;[HttpClient, HttpClientRequest, platform] = await Promise.all([
      import("effect/http/HttpClient"),
      import("effect/http/HttpClientRequest"),
      import("@effect/platform-node/NodeHttpClient")
    ])
  }
  const elapsed = performance.now() - start
  return { importLibMs: elapsed, importMs: elapsed }
}

const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": clientInfo,
  "io.modelcontextprotocol/clientCapabilities": {}
}
const paramsFor = (era, params) => era === "modern" ? { ...params, _meta: modernMeta } : params

class JsonRpcError extends Error {}
const resultOf = (message) =>
  message.error !== undefined
    ? Effect.fail(new JsonRpcError(`JSON-RPC error ${message.error.code}: ${message.error.message}`))
    : Effect.succeed(message.result)

// the exchange both transports share: the handshake of the era, then the calls
const session = async (era, run, request, notify) => {
  if (era === "legacy") {
    await run(request("initialize", { protocolVersion: LEGACY, capabilities: {}, clientInfo }))
    await run(notify("notifications/initialized"))
  } else {
    await run(request("server/discover", {}))
  }
  const call = (name, args) => request("tools/call", { name, arguments: args })
  return {
    listTools: () => run(request("tools/list", {})),
    call: (name, args) => run(call(name, args)),
    ...fiberDrivers(Effect, run, call)
  }
}

const connectStdio = async ({ era, command, args }) => {
  const runtime = ManagedRuntime.make(platform.layer)
  const run = (effect) => runtime.runPromise(effect)
  const scope = await run(Scope.make())
  const pending = new Map()
  let nextId = 1
  const { queue, handle } = await run(Effect.gen(function*() {
    const handle = yield* ChildProcess.make(command, args, { stderr: "inherit", forceKillAfter: 2_000 })
    const queue = yield* Queue.unbounded()
    yield* Stream.fromQueue(queue).pipe(Stream.encodeText, Stream.run(handle.stdin), Effect.forkScoped)
    let parts = []
    const onLine = (line) => {
      if (line.length === 0) return
      const message = JSON.parse(line)
      const resume = pending.get(message.id)
      if (resume === undefined) return
      pending.delete(message.id)
      resume(resultOf(message))
    }
    yield* handle.stdout.pipe(
      Stream.runForEach((bytes) =>
        Effect.sync(() => {
          const chunk = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
          let start = 0
          let index
          while ((index = chunk.indexOf(0x0a, start)) !== -1) {
            if (parts.length === 0) {
              onLine(chunk.toString("utf8", start, index))
            } else {
              parts.push(chunk.subarray(start, index))
              onLine(Buffer.concat(parts).toString("utf8"))
              parts = []
            }
            start = index + 1
          }
          if (start < chunk.length) parts.push(chunk.subarray(start))
        })
      ),
      Effect.forkScoped
    )
    return { queue, handle }
  }).pipe(Scope.provide(scope)))
  const write = (message) => Queue.offerUnsafe(queue, `${JSON.stringify(message)}\n`)
  const request = (method, params) =>
    Effect.callback((resume) => {
      const id = nextId++
      pending.set(id, resume)
      write({ jsonrpc: "2.0", id, method, params: paramsFor(era, params) })
    })
  const notify = (method) => Effect.sync(() => write({ jsonrpc: "2.0", method }))
  const connection = await session(era, run, request, notify)
  return {
    ...connection,
    // stdin ends, the server exits on it; then the scope kills what is left
    close: async () => {
      await run(Queue.end(queue))
      await run(Effect.timeoutOption(handle.exitCode, 2_000))
      await run(Scope.close(scope, Exit.void))
      await runtime.dispose()
    }
  }
}

const connectHttp = async ({ era, url }) => {
  const runtime = ManagedRuntime.make(platform.layerUndici)
  const run = (effect) => runtime.runPromise(effect)
  const client = await run(HttpClient.HttpClient)
  let nextId = 1
  let sessionId
  const headersFor = (method, name) => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }
    if (era === "modern") {
      headers["mcp-protocol-version"] = MODERN
      headers["mcp-method"] = method
      if (name !== undefined) headers["mcp-name"] = name
    } else if (sessionId !== undefined) {
      headers["mcp-session-id"] = sessionId
      headers["mcp-protocol-version"] = LEGACY
    }
    return headers
  }
  const post = (method, message, name) =>
    client.execute(
      HttpClientRequest.post(url).pipe(
        HttpClientRequest.setHeaders(headersFor(method, name)),
        HttpClientRequest.bodyText(JSON.stringify(message), "application/json")
      )
    )
  const request = (method, params) =>
    Effect.suspend(() =>
      post(method, { jsonrpc: "2.0", id: nextId++, method, params: paramsFor(era, params) }, params?.name)
    ).pipe(
      Effect.flatMap((response) =>
        Effect.flatMap(response.text, (text) => {
          if (response.status !== 200) return Effect.fail(new Error(`HTTP ${response.status}: ${text.slice(0, 200)}`))
          if (method === "initialize") sessionId = response.headers["mcp-session-id"]
          return resultOf(JSON.parse(text))
        })
      )
    )
  const notify = (method) => Effect.flatMap(post(method, { jsonrpc: "2.0", method }), (response) => response.text)
  const connection = await session(era, run, request, notify)
  return {
    ...connection,
    close: async () => {
      if (sessionId !== undefined) {
        await run(Effect.flatMap(
          client.execute(HttpClientRequest.delete(url).pipe(HttpClientRequest.setHeaders({ "mcp-session-id": sessionId }))),
          (response) => response.text
        ))
      }
      await runtime.dispose()
    }
  }
}

export const connect = (options) => options.transport === "stdio" ? connectStdio(options) : connectHttp(options)
