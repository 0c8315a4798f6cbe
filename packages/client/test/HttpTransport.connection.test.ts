/**
 * The HTTP transport's connection seen directly (without the client) and from the outside: what it reports,
 * which headers it lets through, what it reconnects, and that no secret reaches an error, a log or a span.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as TestClock from "effect/testing/TestClock"
import type * as Http from "node:http"
import * as McpClient from "../src/McpClient.js"
import * as Transport from "../src/Transport.js"
import * as Common from "./fixtures/http/common.js"
import * as Scripted from "./fixtures/http/scripted.js"
import { makeCapture } from "./utils/capture.js"
import { eventually } from "./utils/eventually.js"

/** Opens a raw connection of the HTTP transport; its events go to a queue. */
const open = (options: Parameters<typeof Common.transport>[0]) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(Common.transport(options))
    const transport = Context.get(context, Transport.Transport)
    const events = yield* Queue.unbounded<Transport.TransportEvent>()
    const connection = yield* transport.connect((event) => Queue.offer(events, event))
    return { connection, events }
  })

const modernRequest = (id: number, method: string, params: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0" as const,
  id,
  method,
  params: {
    ...params,
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}
    }
  }
})

describe("the HTTP connection", () => {
  it.live("connects without I/O and reports origin, target and binding", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern")
      const { connection } = yield* open({ url: `${server.url}/mcp?x=1` })
      assert.strictEqual(connection.info.binding, "streamable-http")
      assert.strictEqual(connection.info.origin, server.url)
      assert.strictEqual(connection.info.target, `${server.url}/mcp?x=1`)
      assert.isUndefined(connection.info.era)
      assert.deepStrictEqual(server.seen, [])
    }).pipe(Effect.scoped))

  it.live("caller-supplied headers: only safe Mcp-Param-* headers pass, owned headers are never replaced", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern", {
        request: (seen, res) => Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
      })
      const { connection, events } = yield* open({ url: server.url, bearerToken: Redacted.make("mine") })
      yield* connection.request(modernRequest(1, "tools/call", { name: "t", arguments: {} }), {
        headers: {
          "Mcp-Param-Region": "eu-west-3",
          "Mcp-Param-City": "=?base64?WsO8cmljaA==?=",
          "Mcp-Param-Evil": "a\r\nX-Injected: 1",
          "Authorization": "Bearer stolen",
          "Mcp-Name": "other",
          "MCP-Protocol-Version": "1999-01-01"
        }
      })
      const event = yield* Queue.take(events)
      assert.strictEqual(event._tag, "Response")
      const headers = server.seen[0]!.headers
      assert.strictEqual(headers["mcp-param-region"], "eu-west-3")
      assert.strictEqual(headers["mcp-param-city"], "=?base64?WsO8cmljaA==?=")
      assert.isUndefined(headers["mcp-param-evil"])
      assert.isUndefined(headers["x-injected"])
      assert.strictEqual(headers.authorization, "Bearer mine")
      assert.strictEqual(headers["mcp-name"], "t")
      assert.strictEqual(headers["mcp-protocol-version"], "2026-07-28")
    }).pipe(Effect.scoped))

  it.live("a probe refused with a JSON-RPC error body is reported in detail for the classifier", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern", {
        probe: (seen, res) => Scripted.sendJson(res, 404, Scripted.failure(Scripted.idOf(seen), -32601, "nope"))
      })
      const { connection, events } = yield* open({ url: server.url })
      yield* connection.request({ ...modernRequest(1, "server/discover"), id: "probe-1" }, { probe: true })
      const event = yield* Queue.take(events)
      assert.strictEqual(event._tag, "RequestFailed")
      if (event._tag === "RequestFailed" && event.error._tag === "TransportError") {
        assert.strictEqual(event.id, "probe-1")
        assert.strictEqual(event.error.reason, "HttpStatus")
        assert.strictEqual(event.error.status, 404)
        assert.strictEqual(event.error.contentType, "application/json")
        assert.include(event.error.body, "-32601")
      } else {
        assert.fail(`unexpected ${event._tag}`)
      }
    }).pipe(Effect.scoped))

  it.live("an HTTP+SSE stream that closes reports Closed; the client reconnects straight to a new stream", () =>
    Effect.gen(function*() {
      const streams: Array<Http.ServerResponse> = []
      const server = yield* Scripted.scripted((seen, res) => {
        if (seen.method === "GET") {
          streams.push(res)
          Scripted.startSse(res)
          res.write(`event: endpoint\ndata: /messages?stream=${streams.length}\n\n`)
          return
        }
        if (seen.url === "/sse") return void res.writeHead(405).end()
        res.writeHead(202).end()
        const method = Scripted.methodOf(seen)
        const stream = streams[Number(seen.url.slice(-1)) - 1]!
        if (method === "initialize") {
          Scripted.sseMessage(stream, Scripted.success(Scripted.idOf(seen), Scripted.initializeResult("2024-11-05")))
        } else if (method === "ping") {
          Scripted.sseMessage(stream, Scripted.success(Scripted.idOf(seen), {}))
        }
      })
      const transport = yield* Layer.build(Common.transport({ url: `${server.url}/sse` }))
      const client = yield* McpClient.make({ ...Common.clientOptions, reconnect: Schedule.spaced("50 millis") }).pipe(
        Effect.provide(transport)
      )
      assert.strictEqual((yield* client.session).transport.binding, "sse")
      streams[0]!.end()
      yield* eventually(() => streams.length === 2, "a second stream")
      yield* client.ping()
      const session = yield* client.session
      assert.strictEqual(session.transport.binding, "sse")
      const summary = server.seen.map((entry) =>
        `${entry.method} ${entry.url} ${Scripted.methodOf(entry) ?? ""}`.trim()
      )
      // the second connection knows the binding: no probe, no POST to the SSE URL
      assert.deepStrictEqual(summary.slice(summary.lastIndexOf("GET /sse")), [
        "GET /sse",
        "POST /messages?stream=2 initialize",
        "POST /messages?stream=2 notifications/initialized",
        "POST /messages?stream=2 ping"
      ])
    }).pipe(Effect.scoped))
})

describe("a URL where nothing serves MCP", () => {
  it.live("fails with one message that says the status once and points at the path, in each era", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.scripted((_seen, res) =>
        void res.writeHead(404, { "content-type": "text/html" }).end("<html><body>Not Found</body></html>")
      )
      const messages: Array<string> = []
      for (const era of [undefined, "modern"] as const) {
        const transport = yield* Layer.build(Common.transport({ url: server.url }))
        const error = yield* Effect.flip(McpClient.make({ ...Common.clientOptions, era }).pipe(Effect.provide(transport)))
        messages.push(error.message)
      }
      assert.deepStrictEqual(messages, [
        "http transport: HttpStatus: the server refused initialize with HTTP 404, and the HTTP+SSE fallback failed: " +
        "the server answered the HTTP+SSE GET with HTTP 404 (nothing serves MCP at this URL: check its path)",
        "http transport: HttpStatus: the server answered server/discover with HTTP 404 " +
        "(nothing serves MCP at this URL: check its path)"
      ])
    }).pipe(Effect.scoped))
})

describe("a legacy session's GET stream", () => {
  // The GET takes a new connection while the first call rides the kept-alive one: unless the call waits, a server
  // that answers the GET late (here 300 ms) has no stream for what that call sets off.
  it.live("is answered before the session's first request is sent", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const server = yield* Scripted.mcpServer("legacy", {
        get: (_seen, res) => {
          setTimeout(() => {
            order.push("GET answered")
            Scripted.startSse(res)
          }, 300)
        },
        request: (seen, res, method) => {
          order.push(method)
          Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
        }
      })
      const transport = yield* Layer.build(Common.transport({ url: server.url }))
      const client = yield* McpClient.make({ ...Common.clientOptions, era: "legacy" }).pipe(Effect.provide(transport))
      yield* client.ping()
      assert.deepStrictEqual(order, ["GET answered", "ping"])
    }).pipe(Effect.scoped))

  it.effect("that the server holds unanswered delays the first request by 2 seconds at most", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy", {
        get: () => {}, // never answered
        request: (seen, res) => Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
      })
      const transport = yield* Layer.build(Common.transport({ url: server.url }))
      const connected = yield* McpClient.make({ ...Common.clientOptions, era: "legacy" }).pipe(
        Effect.provide(transport),
        Effect.forkChild
      )
      yield* eventually(() => server.seen.some((seen) => seen.method === "GET"), "the GET")
      yield* TestClock.adjust("1999 millis")
      assert.isUndefined(connected.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      const client = yield* Fiber.join(connected)
      yield* client.ping()
    }).pipe(Effect.scoped))
})

/**
 * Opens a raw connection whose delivery dies on every notification, as a bug would (the client's own delivery
 * never dies: it drops what it cannot handle), runs `start`, and answers the Closed event that follows.
 */
const closedByDefect = (
  options: Parameters<typeof Common.transport>[0],
  start: (connection: Transport.TransportConnection) => Effect.Effect<void, unknown>
) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(Common.transport(options))
    const events = yield* Queue.unbounded<Transport.TransportEvent>()
    const connection = yield* Context.get(context, Transport.Transport).connect((event) =>
      event._tag === "Notification"
        ? Effect.die(new Error("a bug in delivering a notification"))
        : Queue.offer(events, event).pipe(Effect.asVoid)
    )
    yield* start(connection)
    return yield* Queue.take(events).pipe(
      Effect.repeat({ until: (event) => event._tag === "Closed" }),
      Effect.timeoutOrElse({ duration: "5 seconds", orElse: () => Effect.fail("no Closed event") }),
      Effect.orDie
    )
  })

const serverLog = { jsonrpc: "2.0", method: "notifications/message", params: { level: "info" } }

describe("a defect while delivering", () => {
  it.live("on the HTTP+SSE stream closes the connection with a Read error", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.scripted((seen, res) => {
        if (seen.method === "GET") {
          Scripted.startSse(res)
          res.write(`event: endpoint\ndata: /messages\n\n`)
          Scripted.sseMessage(res, serverLog)
          return
        }
        res.writeHead(202).end()
      })
      // the first message sent opens the stream
      const closed = yield* closedByDefect({ url: server.url, binding: "sse" }, (connection) =>
        connection.notify({ jsonrpc: "2.0", method: "notifications/initialized" }))
      assert.isTrue(closed._tag === "Closed" && closed.error.reason === "Read")
    }).pipe(Effect.scoped))

  it.live("on a legacy session's GET stream closes the connection with a Read error", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy", {
        get: (_seen, res) => {
          Scripted.startSse(res)
          Scripted.sseMessage(res, serverLog)
        }
      })
      // the session in place opens the GET stream
      const closed = yield* closedByDefect({ url: server.url }, (connection) =>
        connection.setSession({ era: "legacy", protocolVersion: "2025-11-25" }))
      assert.isTrue(closed._tag === "Closed" && closed.error.reason === "Read")
    }).pipe(Effect.scoped))
})

describe("cancellation", () => {
  it.live("a modern call made from an uninterruptible region is still aborted on the wire when it times out", () =>
    Effect.gen(function*() {
      let abandoned = false
      const server = yield* Scripted.mcpServer("modern", {
        request: (seen, res, method) => {
          if (method !== "tools/call") {
            return Scripted.sendJson(res, 200, Scripted.failure(Scripted.idOf(seen), -32601, "Method not found"))
          }
          // never answered: only the client's abort ends this request
          res.on("close", () => (abandoned = !res.writableEnded))
        }
      })
      const { client } = yield* Common.connect({ url: server.url })
      const error = yield* Effect.flip(
        Effect.uninterruptible(client.callTool({ name: "slow" }, { timeout: "100 millis" }))
      )
      assert.strictEqual(error._tag, "RequestTimeout")
      yield* eventually(() => abandoned, "the HTTP request to be aborted")
    }).pipe(Effect.scoped))
})

describe("x-mcp-header", () => {
  it.live("a modern tools/list leaves out a tool with an invalid declaration, with a warning", () =>
    Effect.gen(function*() {
      const tools = [
        { name: "good", inputSchema: { type: "object", properties: { r: { type: "string", "x-mcp-header": "R" } } } },
        { name: "float", inputSchema: { type: "object", properties: { n: { type: "number", "x-mcp-header": "N" } } } },
        {
          name: "nested-in-items",
          inputSchema: {
            type: "object",
            properties: { list: { type: "array", items: { type: "string", "x-mcp-header": "L" } } }
          }
        },
        { name: "plain", inputSchema: { type: "object" } }
      ]
      const server = yield* Scripted.mcpServer("modern", {
        request: (seen, res, method) =>
          method === "tools/list"
            ? Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), { tools }))
            : Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), Scripted.textResult("ok")))
      })
      const warnings: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel === "Warn") warnings.push(String(message))
      })
      const listed = yield* Effect.gen(function*() {
        const { client } = yield* Common.connect({ url: server.url })
        const listed = yield* client.listTools()
        yield* client.callTool({ name: "good", arguments: { r: "v" } })
        return listed
      }).pipe(Effect.scoped, Effect.provide(Logger.layer([logger])))
      assert.deepStrictEqual(listed.map((tool) => tool.name), ["good", "plain"])
      assert.strictEqual(warnings.filter((warning) => warning.includes("left out tool")).length, 2)
      assert.isTrue(warnings.some((warning) => warning.includes("float")))
      const call = server.seen.find((entry) => Scripted.methodOf(entry) === "tools/call")!
      assert.strictEqual(call.headers["mcp-param-r"], "v")
    }).pipe(Effect.scoped))
})

describe("HeaderMismatch", () => {
  const declared = {
    name: "q",
    inputSchema: { type: "object", properties: { r: { type: "string", "x-mcp-header": "R" } } }
  }
  const listing = (seen: Scripted.Seen, res: Http.ServerResponse) => {
    const params = Scripted.isObject(seen.body) && Scripted.isObject(seen.body.params) ? seen.body.params : {}
    const page = params.cursor === "page-2"
      ? { tools: [declared] }
      : { tools: [{ name: "other", inputSchema: { type: "object" } }], nextCursor: "page-2" }
    Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), page))
  }

  it.live("refreshes the tool list across pages and re-sends the call once with the headers", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern", {
        request: (seen, res, method) => {
          if (method === "tools/list") return listing(seen, res)
          if (seen.headers["mcp-param-r"] !== "v") {
            return Scripted.sendJson(res, 400, Scripted.failure(Scripted.idOf(seen), -32020, "Header mismatch"))
          }
          Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), Scripted.textResult("accepted")))
        }
      })
      const { client } = yield* Common.connect({ url: server.url })
      const result = yield* client.callTool({ name: "q", arguments: { r: "v" } })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "accepted" }])
      const methods = server.seen.map((entry) => Scripted.methodOf(entry))
      assert.deepStrictEqual(methods, ["server/discover", "tools/call", "tools/list", "tools/list", "tools/call"])
      const lists = server.seen.filter((entry) => Scripted.methodOf(entry) === "tools/list")
      for (const list of lists) {
        assert.isString(Scripted.idOf(list))
        assert.strictEqual(list.headers["mcp-protocol-version"], "2026-07-28")
      }
    }).pipe(Effect.scoped))

  it.live("a second HeaderMismatch reaches the caller", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern", {
        request: (seen, res, method) =>
          method === "tools/list"
            ? listing(seen, res)
            : Scripted.sendJson(res, 400, Scripted.failure(Scripted.idOf(seen), -32020, "Header mismatch"))
      })
      const { client } = yield* Common.connect({ url: server.url })
      const error = yield* Effect.flip(client.callTool({ name: "q", arguments: { r: "v" } }))
      assert.strictEqual(error._tag === "McpError" ? error.code : error._tag, -32020)
      const calls = server.seen.filter((entry) => Scripted.methodOf(entry) === "tools/call")
      assert.strictEqual(calls.length, 2)
      assert.strictEqual(calls[1]!.headers["mcp-param-r"], "v")
    }).pipe(Effect.scoped))
})

describe("trace context", () => {
  it.live("under a caller's span a request carries its traceparent; with Effect's own tracer and no span, none", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern", {
        request: (seen, res) => Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
      })
      const { connection, events } = yield* open({ url: server.url })
      yield* connection.request(modernRequest(1, "tools/list"), {})
      assert.strictEqual((yield* Queue.take(events))._tag, "Response")
      const caller = yield* Effect.gen(function*() {
        yield* connection.request(modernRequest(2, "tools/list"), {})
        assert.strictEqual((yield* Queue.take(events))._tag, "Response")
        return yield* Effect.currentSpan
      }).pipe(Effect.withSpan("caller"))
      const [untraced, traced] = server.seen.map((entry) => entry.headers.traceparent)
      assert.isUndefined(untraced, "nothing records a span: no trace context is made up")
      const [version, traceId, spanId] = String(traced).split("-")
      assert.strictEqual(version, "00")
      assert.strictEqual(traceId, caller.traceId, "the caller's trace")
      assert.notStrictEqual(spanId, caller.spanId, "the HTTP client's span, a child of the caller's")
    }).pipe(Effect.scoped))

  it.live("under a tracer that records spans, a connect is a span of its own", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern", {
        request: (seen, res) => Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
      })
      const capture = makeCapture()
      yield* capture.observe(open({ url: server.url }))
      const at = capture.spans.indexOf("HttpTransport.connect")
      assert.isAtLeast(at, 0, "the connect's span")
      assert.include(capture.spans[at + 1], "server.address")
    }).pipe(Effect.scoped))
})

describe("secrets", () => {
  it.live("the bearer token and the session id never reach an error, a log or a span", () =>
    Effect.gen(function*() {
      const token = "tok-9f8e7d6c5b4a"
      const sessionId = "sid-0123456789abcdef"
      let calls = 0
      const server = yield* Scripted.mcpServer("legacy", {
        initialize: (seen, res) =>
          Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), Scripted.initializeResult()), {
            "mcp-session-id": sessionId
          }),
        request: (seen, res, method) => {
          if (method === "ping") return void res.writeHead(401, { "www-authenticate": "Bearer" }).end()
          if (method !== "tools/call") return Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
          calls++
          res.writeHead(404).end()
        }
      })
      const capture = makeCapture()
      const errors = yield* Effect.gen(function*() {
        const { client } = yield* Common.connect({ url: server.url, bearerToken: Redacted.make(token) })
        const expired = yield* Effect.flip(client.callTool({ name: "x" }))
        const refused = yield* Effect.flip(client.ping())
        return [expired, refused]
      }).pipe(Effect.scoped, capture.observe)
      assert.strictEqual(calls, 2)
      assert.deepStrictEqual(errors.map((error) => error._tag), ["SessionExpired", "AuthError"])
      // the secrets did go where they belong
      assert.isTrue(server.seen.some((entry) => entry.headers["mcp-session-id"] === sessionId))
      assert.isTrue(server.seen.every((entry) => entry.headers.authorization === `Bearer ${token}`))
      assert.isAbove(capture.spans.length, 0)
      assert.isAbove(capture.logs.length, 0)
      const everything = [...errors.map((error) => `${JSON.stringify(error)} ${String(error)}`), ...capture.seen]
      for (const text of everything) {
        assert.notInclude(text, token)
        assert.notInclude(text, sessionId)
      }
    }).pipe(Effect.scoped))
})
