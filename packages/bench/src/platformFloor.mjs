// What an HTTP call costs below Conduit: `@effect/platform`'s HttpClient alone (no MCP client), posting the
// benchmark's legacy `tools/call` to the benchmark server at 64 in flight, against undici's Pool as the raw
// client does it. Prints the client's CPU per call (the least and the median of 8 rounds of 5 000 calls) and,
// with --ops, the Effect operations per call. Conduit's own cost over HTTP is what it adds on top of this floor.
//   node packages/bench/src/platformFloor.mjs [--client raw|undici|node|fetch] [--read text|stream|source] [--no-span] [--scope] [--ops]
// --read stream reads the body through `response.stream` pulled chunk by chunk (as Conduit reads a body from an
// HTTP client of an unknown shape); text reads it in one piece (`response.text`, unbounded); source reads the
// undici or node:http body Readable under the response in one wait, as Conduit does for the platform's clients. --no-span turns the
// HTTP client's own span off (`HttpClient.withTracerDisabledWhen`). --scope sends each request through
// `HttpClient.withScope` (aborted when its Scope closes).
import { flag, option } from "./args.mjs"
import { startHttpServer } from "./httpServer.mjs"

const which = option("client", "undici")
const read = option("read", "text")
const countOps = flag("ops")

const { server, port, url } = await startHttpServer()
const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "floor", version: "1" } }
})
let nextId = 1
const toolCall = () =>
  JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name: "echo", arguments: { text: "hello" } } })
const accept = "application/json, text/event-stream"
let session
let call
let opsSoFar

if (which === "raw") {
  const undici = await import("undici")
  const pool = new undici.Pool(`http://127.0.0.1:${port}`, { connections: 64 })
  const post = async (body) => {
    const headers = { "content-type": "application/json", accept }
    if (session !== undefined) headers["mcp-session-id"] = session
    const response = await pool.request({ path: "/mcp", method: "POST", headers, body })
    session ??= response.headers["mcp-session-id"]
    return JSON.parse(await response.body.text())
  }
  await post(initialize)
  call = () => post(toolCall())
} else {
  const { Chunk, Channel, Effect, Either, Layer, ManagedRuntime, RuntimeFlags, Stream, Supervisor } = await import("effect")
  const HttpClient = await import("@effect/platform/HttpClient")
  const HttpClientRequest = await import("@effect/platform/HttpClientRequest")
  const NodeHttpClient = await import("@effect/platform-node/NodeHttpClient")
  const clientLayer = which === "fetch"
    ? (await import("@effect/platform/FetchHttpClient")).layer
    : which === "node"
    ? NodeHttpClient.layer
    : NodeHttpClient.layerUndici
  let ops = 0
  class Counter extends Supervisor.AbstractSupervisor {
    value = Effect.void
    onEffect() {
      ops++
    }
  }
  opsSoFar = () => ops
  const runtime = ManagedRuntime.make(
    countOps
      ? Layer.mergeAll(clientLayer, Supervisor.addSupervisor(new Counter()), RuntimeFlags.enableOpSupervision)
      : clientLayer
  )
  let client = await runtime.runPromise(HttpClient.HttpClient)
  if (flag("no-span")) client = HttpClient.withTracerDisabledWhen(client, () => true)
  // --scope: each request aborted when its Scope closes (`HttpClient.withScope`), as Conduit's exchanges are
  if (flag("scope")) client = HttpClient.withScope(client)
  const utf8 = new TextDecoder()
  // as Conduit pulls a body of unknown length: the stream's channel, chunk by chunk
  const readStream = (response) =>
    Effect.flatMap(Channel.toPull(Stream.toChannel(response.stream)), (pull) => {
      const parts = []
      const next = Effect.flatMap(pull, (pulled) => {
        if (Either.isLeft(pulled)) return Effect.sync(() => parts.map((part) => utf8.decode(part)).join(""))
        for (const part of Chunk.toReadonlyArray(pulled.right)) parts.push(part)
        return next
      })
      return next
    })
  // the Readable under the response (undici: `source.body`; node:http: `source`), read to its end
  const readSource = (response) =>
    Effect.async((resume) => {
      const source = (response.original ?? response).source
      const body = typeof source.read === "function" ? source : source.body
      const parts = []
      const onData = (chunk) => parts.push(chunk)
      const onEnd = () => {
        cleanup()
        resume(Effect.succeed(utf8.decode(parts.length === 1 ? parts[0] : Buffer.concat(parts))))
      }
      const onError = (error) => {
        cleanup()
        resume(Effect.fail(error))
      }
      const cleanup = () => {
        body.off("data", onData)
        body.off("end", onEnd)
        body.off("error", onError)
      }
      body.on("data", onData)
      body.on("end", onEnd)
      body.on("error", onError)
      return Effect.sync(() => {
        cleanup()
        body.destroy()
      })
    })
  const post = (body) =>
    client.execute(
      HttpClientRequest.post(url).pipe(
        HttpClientRequest.setHeaders(session === undefined ? { accept } : { accept, "mcp-session-id": session }),
        HttpClientRequest.bodyText(body, "application/json")
      )
    ).pipe(
      Effect.flatMap((response) => {
        session ??= response.headers["mcp-session-id"]
        return read === "stream"
          ? readStream(response)
          : read === "source"
          ? readSource(response)
          : response.text
      }),
      Effect.map((text) => JSON.parse(text)),
      Effect.scoped
    )
  await runtime.runPromise(post(initialize))
  call = () => runtime.runPromise(post(toolCall()))
}

const calls = async (count) => {
  let left = count
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (left-- > 0) await call()
  }))
}
await calls(4_000)
const perCall = []
for (let round = 0; round < 8; round++) {
  const before = process.cpuUsage()
  await calls(5_000)
  const used = process.cpuUsage(before)
  perCall.push((used.user + used.system) / 5_000)
}
perCall.sort((a, b) => a - b)
let opsLine = ""
if (countOps && opsSoFar !== undefined) {
  const before = opsSoFar()
  await calls(1_000)
  opsLine = `, ${((opsSoFar() - before) / 1_000).toFixed(0)} Effect operations per call (CPU numbers of an --ops run mean nothing)`
}
process.stdout.write(
  `${which}${
    which === "raw"
      ? ""
      : `, read ${read}${flag("no-span") ? ", no span" : ""}${flag("scope") ? ", withScope" : ""}`
  }: ` +
    `${perCall[0].toFixed(0)} µs CPU per call (least of 8 rounds), median ${perCall[4].toFixed(0)}${opsLine}\n`
)
server.kill("SIGTERM")
process.exit(0)
