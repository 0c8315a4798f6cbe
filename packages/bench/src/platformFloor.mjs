// What an HTTP call costs below Conduit: `effect/http`'s HttpClient alone (no MCP client), posting the
// benchmark's legacy `tools/call` to the benchmark server at 64 in flight, against undici's Pool as the raw
// client does it. Prints the client's CPU per call (the least and the median of 8 rounds of 5 000 calls) and,
// with --fibers, the fibers each call starts. Conduit's own cost over HTTP is what it adds on top of this floor.
//   node packages/bench/src/platformFloor.mjs [--client raw|undici|node|fetch] [--read text|stream|source] [--no-span] [--scope] [--fibers]
//        [--rounds 8] [--calls 5000] (a warm-up of 4 000 calls first; fewer for a check that it runs)
// --read stream reads the body through `response.stream` pulled chunk by chunk (as Conduit reads a body from an
// HTTP client of an unknown shape); text reads it in one piece (`response.text`, unbounded); source reads the
// undici or node:http body Readable under the response in one wait, as Conduit does for the platform's clients. --no-span turns the
// HTTP client's own span off (the `HttpClient.TracerDisabledWhen` reference). --scope sends each request through
// `HttpClient.withScope` (aborted when its Scope closes).
import { flag, option } from "./args.mjs"
import { startHttpServer } from "./httpServer.mjs"

const which = option("client", "undici")
const read = option("read", "text")
const countOps = flag("fibers")
const rounds = Number(option("rounds", "8"))
const perRound = Number(option("calls", "5000"))

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
  const [Cause, Effect, ManagedRuntime, Metric, Stream, HttpClient, HttpClientRequest, NodeHttpClient] = await Promise.all([
    import("effect/Cause"),
    import("effect/Effect"),
    import("effect/ManagedRuntime"),
    import("effect/Metric"),
    import("effect/Stream"),
    import("effect/http/HttpClient"),
    import("effect/http/HttpClientRequest"),
    import("@effect/platform-node/NodeHttpClient")
  ])
  const clientLayer = which === "fetch"
    ? (await import("effect/http/FetchHttpClient")).layer
    : which === "node"
    ? NodeHttpClient.layerNodeHttp
    : NodeHttpClient.layerUndici
  // Effect 4 has no op supervision: --fibers counts the fibers each request starts instead (every fiber started
  // under the `Metric.FiberRuntimeMetrics` service reports to it)
  let fibers = 0
  const counter = { recordFiberStart: () => fibers++, recordFiberEnd: () => {} }
  opsSoFar = () => fibers
  const runtime = ManagedRuntime.make(clientLayer)
  let client = await runtime.runPromise(HttpClient.HttpClient)
  // --scope: each request aborted when its Scope closes (`HttpClient.withScope`), as Conduit's exchanges are
  if (flag("scope")) client = HttpClient.withScope(client)
  const utf8 = new TextDecoder()
  // as Conduit pulls a body of unknown length (httpResponse.ts `forEachChunk`): the stream's pull, chunk by chunk,
  // until its `Cause.Done`
  const readStream = (response) =>
    Effect.flatMap(Stream.toPull(response.stream), (pull) => {
      const parts = []
      const next = Effect.matchEffect(pull, {
        onFailure: (error) =>
          Cause.isDone(error) ? Effect.sync(() => parts.map((part) => utf8.decode(part)).join("")) : Effect.fail(error),
        onSuccess: (chunks) => {
          for (const part of chunks) parts.push(part)
          return next
        }
      })
      return next
    })
  // the Readable under the response (undici: `source.body`; node:http: `source`), read to its end
  const readSource = (response) =>
    Effect.callback((resume) => {
      const source = response.source
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
  const noSpan = flag("no-span")
  const post = (body) => {
    let effect = client.execute(
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
    // --no-span: the HTTP client's own span off (`HttpClient.TracerDisabledWhen`)
    if (noSpan) effect = Effect.provideService(effect, HttpClient.TracerDisabledWhen, () => true)
    if (countOps) effect = Effect.provideService(effect, Metric.FiberRuntimeMetrics, counter)
    return effect
  }
  await runtime.runPromise(post(initialize))
  call = () => runtime.runPromise(post(toolCall()))
}

const calls = async (count) => {
  let left = count
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (left-- > 0) await call()
  }))
}
await calls(Math.min(4_000, perRound))
const perCall = []
for (let round = 0; round < rounds; round++) {
  const before = process.cpuUsage()
  await calls(perRound)
  const used = process.cpuUsage(before)
  perCall.push((used.user + used.system) / perRound)
}
perCall.sort((a, b) => a - b)
let opsLine = ""
if (countOps && opsSoFar !== undefined) {
  const before = opsSoFar()
  await calls(1_000)
  opsLine = `, ${((opsSoFar() - before) / 1_000).toFixed(1)} fibers started per call`
}
process.stdout.write(
  `${which}${
    which === "raw"
      ? ""
      : `, read ${read}${flag("no-span") ? ", no span" : ""}${flag("scope") ? ", withScope" : ""}`
  }: ` +
    `${perCall[0].toFixed(0)} µs CPU per call (least of ${rounds} rounds), median ${perCall[rounds >> 1].toFixed(0)}${opsLine}\n`
)
server.kill("SIGTERM")
process.exit(0)
