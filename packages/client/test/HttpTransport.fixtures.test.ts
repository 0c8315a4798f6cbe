/**
 * What real servers cannot be made to do, played by scripted `node:http` servers on 127.0.0.1: expired sessions,
 * broken streams, 5xx storms, malformed answers, hostile endpoints, cancellation as the server sees it.
 */
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/testing/TestClock"
import type * as Http from "node:http"
import type * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Common from "./fixtures/http/common.js"
import * as Scripted from "./fixtures/http/scripted.js"
import { makeCapture } from "./utils/capture.js"
import { awaitSleep, stillAsleep, withSleepLog } from "./utils/clock.js"
import { eventually } from "./utils/eventually.js"
import { turn } from "./utils/fibers.js"

const textOf = (result: McpSchema.CallToolResult) =>
  result.content.flatMap((block) => (block.type === "text" && "text" in block ? [block.text] : [])).join("")

const posts = (seen: ReadonlyArray<Scripted.Seen>, method: string) =>
  seen.filter((entry) => entry.method === "POST" && Scripted.methodOf(entry) === method)

/** Starts a call and waits until the server reported progress on it (so it is running). */
const startCall = (client: McpClient.McpClientService, name: string) =>
  Effect.gen(function*() {
    let started: (() => void) | undefined
    const running = Effect.callback<void>((resume) => {
      started = () => resume(Effect.void)
    })
    const fiber = yield* Effect.forkChild(
      client.callTool({ name }, { onProgress: () => Effect.sync(() => started?.()), timeout: "30 seconds" })
    )
    yield* running
    return fiber
  })

describe("legacy session expiry", () => {
  it.live("a 404 on a live session: a new session, one re-send, the caller never sees it", () =>
    Effect.gen(function*() {
      let calls = 0
      const server = yield* Scripted.mcpServer("legacy", {
        request: (seen, res, method) => {
          if (method !== "tools/call") return Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
          calls++
          if (calls === 1) return void res.writeHead(404).end()
          const text = `answered in ${String(seen.headers["mcp-session-id"])}`
          Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), Scripted.textResult(text)))
        }
      })
      const { client, recorder } = yield* Common.connect({ url: server.url })
      const result = yield* client.callTool({ name: "echo", arguments: {} })
      assert.strictEqual(textOf(result), "answered in session-2")

      const calls_ = posts(server.seen, "tools/call")
      assert.deepStrictEqual(calls_.map((entry) => entry.headers["mcp-session-id"]), ["session-1", "session-2"])
      assert.strictEqual(Scripted.idOf(calls_[0]!), Scripted.idOf(calls_[1]!))
      const initializations = posts(server.seen, "initialize")
      assert.deepStrictEqual(initializations.map((entry) => entry.headers["mcp-session-id"]), [undefined, undefined])
      const received = yield* recorder.received
      assert.deepStrictEqual(received.filter((event) => event._tag === "SessionExpired").length, 1)
      // only the era probe failed (a legacy server refuses it)
      assert.deepStrictEqual(
        received.flatMap((event) => event._tag === "RequestFailed" ? [event.id] : []),
        [1]
      )
      yield* Common.assertSentMessagesValid(recorder, (yield* client.session).protocolVersion)
    }).pipe(Effect.scoped))

  it.live("a second 404: the request fails with a typed SessionExpired that does not reveal the id", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy", {
        request: (seen, res, method) =>
          method === "tools/call"
            ? void res.writeHead(404).end()
            : Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
      })
      const { client } = yield* Common.connect({ url: server.url })
      const error = yield* Effect.flip(client.callTool({ name: "echo", arguments: {} }))
      assert.strictEqual(error._tag, "SessionExpired")
      if (error._tag === "SessionExpired") {
        assert.notInclude(error.sessionId, "session-2")
        assert.notInclude(error.message, "session-2")
      }
      assert.strictEqual(posts(server.seen, "tools/call").length, 2)
      assert.strictEqual(posts(server.seen, "initialize").length, 2)
      // the connection itself is fine
      assert.strictEqual((yield* client.session).era, "legacy")
    }).pipe(Effect.scoped))

  it.live("a 404 to a notification sent in the session starts a new session for what follows", () =>
    Effect.gen(function*() {
      let forgotten = false
      const server = yield* Scripted.scripted((seen, res) => {
        const method = Scripted.methodOf(seen)
        const id = Scripted.idOf(seen)
        if (seen.method !== "POST") return void res.writeHead(405).end()
        if (method === "server/discover") return void res.writeHead(400).end()
        if (method === "initialize") {
          const count = posts(server.seen, "initialize").length
          return Scripted.sendJson(res, 200, Scripted.success(id, Scripted.initializeResult()), {
            "mcp-session-id": `session-${count}`
          })
        }
        // the server forgets session-1 as the cancellation comes
        if (method === "notifications/cancelled") forgotten = true
        if (forgotten && seen.headers["mcp-session-id"] === "session-1") return void res.writeHead(404).end()
        if (method === "tools/call" && Scripted.isObject(seen.body) && Scripted.isObject(seen.body.params) &&
          seen.body.params.name === "slow") return // never answered
        if (id === undefined) return void res.writeHead(202).end()
        Scripted.sendJson(res, 200, Scripted.success(id, Scripted.textResult(String(seen.headers["mcp-session-id"]))))
      })
      const { client } = yield* Common.connect({ url: server.url })
      // a call interrupted: its notifications/cancelled is answered 404
      yield* Effect.ignore(client.callTool({ name: "slow" }, { timeout: "100 millis" }))
      yield* eventually(() => posts(server.seen, "initialize").length === 2, "a second initialize")
      const result = yield* client.callTool({ name: "echo", arguments: {} })
      assert.strictEqual(textOf(result), "session-2")
    }).pipe(Effect.scoped))

  it.live("a 404 to the GET stream of a session it served before starts a new session", () =>
    Effect.gen(function*() {
      let gets = 0
      const server = yield* Scripted.mcpServer("legacy", {
        request: (seen, res) =>
          // once forgotten, session-1 is unknown to every request too
          gets > 1 && seen.headers["mcp-session-id"] === "session-1"
            ? void res.writeHead(404).end()
            : Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), Scripted.textResult(
              String(seen.headers["mcp-session-id"])
            ))),
        get: (seen, res) => {
          gets++
          // the first GET of session-1 opens and ends; the next one finds the session gone
          if (seen.headers["mcp-session-id"] === "session-1" && gets > 1) return void res.writeHead(404).end()
          Scripted.startSse(res)
          if (seen.headers["mcp-session-id"] === "session-1") res.end("retry: 10\n\n")
        }
      })
      const { client } = yield* Common.connect({ url: server.url })
      yield* eventually(() => posts(server.seen, "initialize").length === 2, "a second initialize")
      const result = yield* client.callTool({ name: "echo", arguments: {} })
      assert.strictEqual(textOf(result), "session-2")
      yield* eventually(
        () => server.seen.some((entry) => entry.method === "GET" && entry.headers["mcp-session-id"] === "session-2"),
        "a GET stream in the new session"
      )
    }).pipe(Effect.scoped))

  it.live("a first GET answered 404 is a server without a GET stream: no new session", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy", { get: (_, res) => void res.writeHead(404).end() })
      const capture = makeCapture()
      yield* Effect.gen(function*() {
        yield* Common.connect({ url: server.url })
        yield* eventually(() => server.seen.some((entry) => entry.method === "GET"), "the GET")
        // the GET stream has given up (it starts nothing after this)
        yield* eventually(
          () => capture.logs.some((line) => line.includes("the GET stream found no session")),
          "the GET stream's verdict"
        )
      }).pipe(capture.observe)
      assert.strictEqual(posts(server.seen, "initialize").length, 1)
    }).pipe(Effect.scoped))
})

describe("broken streams", () => {
  it.live("a legacy response stream dropped mid-response is resumed with Last-Event-ID", () =>
    Effect.gen(function*() {
      let callId: unknown
      let breakStream: (() => void) | undefined
      const server = yield* Scripted.mcpServer("legacy", {
        request: (seen, res, method) => {
          if (method !== "tools/call") return Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
          callId = Scripted.idOf(seen)
          Scripted.startSse(res)
          res.write("id: ev-1\nretry: 20\ndata:\n\n")
          Scripted.sseMessage(res, Scripted.progress(Scripted.progressToken(seen), 1), "ev-2")
          // the connection breaks before the answer, once the client has the progress
          breakStream = () => res.destroy()
        },
        get: (seen, res) => {
          if (seen.headers["last-event-id"] === undefined) return void res.writeHead(405).end()
          Scripted.startSse(res)
          Scripted.sseMessage(res, Scripted.success(callId, Scripted.textResult("resumed")), "ev-3")
          res.end()
        }
      })
      const { client, recorder } = yield* Common.connect({ url: server.url })
      const reports: Array<number> = []
      const result = yield* client.callTool({ name: "slow" }, {
        onProgress: (report) =>
          Effect.sync(() => {
            reports.push(report.progress)
            breakStream?.()
          })
      })
      assert.strictEqual(textOf(result), "resumed")
      assert.deepStrictEqual(reports, [1])
      const resumed = server.seen.filter((entry) =>
        entry.method === "GET" && entry.headers["last-event-id"] !== undefined
      )
      assert.strictEqual(resumed.length, 1)
      assert.strictEqual(resumed[0]!.headers["last-event-id"], "ev-2")
      assert.strictEqual(resumed[0]!.headers["mcp-session-id"], "session-1")
      assert.strictEqual(resumed[0]!.headers["mcp-protocol-version"], Scripted.LEGACY)
      yield* Common.assertSentMessagesValid(recorder, Scripted.LEGACY)
    }).pipe(Effect.scoped))

  it.live("a legacy stream without event ids cannot be resumed: the request fails at once", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy", {
        request: (seen, res) => {
          Scripted.startSse(res)
          Scripted.sseMessage(res, Scripted.progress(Scripted.progressToken(seen), 1))
          Scripted.breakAfter(res, ": and now the connection breaks\n\n")
        }
      })
      const { client } = yield* Common.connect({ url: server.url })
      const error = yield* Effect.flip(client.callTool({ name: "slow" }, { timeout: "30 seconds" }))
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") assert.strictEqual(error.reason, "StreamEnded")
      assert.isFalse(server.seen.some((entry) => entry.headers["last-event-id"] !== undefined))
    }).pipe(Effect.scoped))

  it.live("a modern response stream dropped before the answer fails the request at once with a typed error", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern", {
        request: (seen, res) => {
          Scripted.startSse(res)
          Scripted.sseMessage(res, Scripted.progress(Scripted.progressToken(seen), 1), "1")
          Scripted.breakAfter(res, ": and now the connection breaks\n\n")
        }
      })
      const { client } = yield* Common.connect({ url: server.url })
      const error = yield* Effect.flip(client.callTool({ name: "slow" }, { timeout: "30 seconds" }))
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") assert.strictEqual(error.reason, "StreamEnded")
      // modern streams are never resumed, and a tool call is not issued again (it may have run)
      assert.isFalse(server.seen.some((entry) => entry.method === "GET"))
      assert.strictEqual(posts(server.seen, "tools/call").length, 1)
      assert.include(error.message, "may have run")
    }).pipe(Effect.scoped))

  for (const era of ["modern", "legacy"] as const) {
    it.live(`${era}: a list request lost with its stream is issued again with a new id, once`, () =>
      Effect.gen(function*() {
        let lists = 0
        const server = yield* Scripted.mcpServer(era, {
          request: (seen, res, method) => {
            if (method !== "tools/list") return Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
            lists++
            Scripted.startSse(res)
            // the first stream (without event ids: a legacy one cannot be resumed) breaks before the answer
            if (lists === 1) return Scripted.breakAfter(res, ": the answer never comes\n\n")
            Scripted.sseMessage(res, Scripted.success(Scripted.idOf(seen), { tools: [{ name: "echo", inputSchema: {
              type: "object"
            } }] }))
            res.end()
          }
        })
        const { client } = yield* Common.connect({ url: server.url })
        const tools = yield* client.listTools()
        assert.deepStrictEqual(tools.map((tool) => tool.name), ["echo"])
        const sent = posts(server.seen, "tools/list")
        assert.strictEqual(sent.length, 2)
        assert.notStrictEqual(Scripted.idOf(sent[0]!), Scripted.idOf(sent[1]!))
        assert.isFalse(server.seen.some((entry) => entry.headers["last-event-id"] !== undefined))
      }).pipe(Effect.scoped))
  }

  it.live("a list request whose JSON answer breaks off is issued again with a new id", () =>
    Effect.gen(function*() {
      let lists = 0
      const server = yield* Scripted.mcpServer("modern", {
        request: (seen, res, method) => {
          if (method !== "tools/list") return Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
          lists++
          if (lists === 1) {
            res.writeHead(200, { "content-type": "application/json" })
            return Scripted.breakAfter(res, "{\"jsonrpc\":\"2.0\",")
          }
          Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), { tools: [] }))
        }
      })
      const { client } = yield* Common.connect({ url: server.url })
      assert.deepStrictEqual(yield* client.listTools(), [])
      const sent = posts(server.seen, "tools/list")
      assert.strictEqual(sent.length, 2)
      assert.notStrictEqual(Scripted.idOf(sent[0]!), Scripted.idOf(sent[1]!))
    }).pipe(Effect.scoped))

  it.live("a list request whose second stream is lost as well fails with StreamEnded", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern", {
        request: (seen, res, method) => {
          if (method !== "tools/list") return Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
          Scripted.startSse(res)
          res.end(": no answer\n\n")
        }
      })
      const { client } = yield* Common.connect({ url: server.url })
      const error = yield* Effect.flip(client.listTools())
      assert.strictEqual(error._tag === "TransportError" ? error.reason : error._tag, "StreamEnded")
      assert.strictEqual(posts(server.seen, "tools/list").length, 2)
    }).pipe(Effect.scoped))

  it.live("a modern stream that ends cleanly without the answer fails the request at once", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern", {
        request: (_, res) => {
          Scripted.startSse(res)
          res.end(": nothing\n\n")
        }
      })
      const { client } = yield* Common.connect({ url: server.url })
      const error = yield* Effect.flip(client.callTool({ name: "x" }, { timeout: "30 seconds" }))
      assert.strictEqual(error._tag === "TransportError" ? error.reason : error._tag, "StreamEnded")
    }).pipe(Effect.scoped))
})

describe("5xx storms", () => {
  it.effect("the server's retry is waited in full before the GET stream is opened again, even past maxRetryDelay", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy", {
        get: (_, res) => {
          Scripted.startSse(res)
          // the first stream asks for 3 s between reconnections, then ends
          if (server.seen.filter((entry) => entry.method === "GET").length === 1) res.end("retry: 3000\n\n")
        }
      })
      const gets = () => server.seen.filter((entry) => entry.method === "GET").length
      yield* Common.connect({ url: server.url, maxRetryDelay: "1 second" })
      yield* eventually(() => gets() === 1, "the first GET")
      const wake = yield* awaitSleep("3 seconds")
      yield* TestClock.adjust("2999 millis")
      // the GET stream still sleeps: it cannot have sent anything
      assert.isTrue(yield* stillAsleep(wake))
      assert.strictEqual(gets(), 1, "no GET before the server's 3 s")
      yield* TestClock.adjust("1 millis")
      yield* eventually(() => gets() === 2, "the second GET")
    }).pipe(Effect.scoped, withSleepLog))
  it.effect("a GET stream refused with 503 reconnects with exponential backoff, never in a tight loop", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy", { get: (_, res) => void res.writeHead(503).end() })
      const gets = () => server.seen.filter((entry) => entry.method === "GET").length
      yield* Common.connect({ url: server.url, maxRetryDelay: "1 second" })
      yield* eventually(() => gets() === 1, "the first GET")
      for (const [delay, expected] of [[250, 2], [500, 3], [1000, 4], [1000, 5]] as const) {
        const wake = yield* awaitSleep(`${delay} millis`)
        yield* TestClock.adjust(`${delay - 1} millis`)
        assert.isTrue(yield* stillAsleep(wake))
        assert.strictEqual(gets(), expected - 1, `no GET before ${delay} ms`)
        yield* TestClock.adjust("1 millis")
        yield* eventually(() => gets() === expected, `GET number ${expected}`)
      }
    }).pipe(Effect.scoped, withSleepLog))

  it.live("requests refused with 5xx fail one by one with HttpStatus; the transport does not retry them", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern", {
        request: (_, res) => {
          res.writeHead(503, { "content-type": "text/plain" })
          res.end("overloaded")
        }
      })
      const { client } = yield* Common.connect({ url: server.url })
      const errors = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => Effect.flip(client.callTool({ name: `t${i}` })),
        { concurrency: 5 }
      )
      for (const error of errors) {
        assert.strictEqual(error._tag, "TransportError")
        if (error._tag === "TransportError") {
          assert.strictEqual(error.reason, "HttpStatus")
          assert.strictEqual(error.status, 503)
          assert.strictEqual(error.body, "overloaded")
        }
      }
      assert.strictEqual(posts(server.seen, "tools/call").length, 20)
    }).pipe(Effect.scoped))
})

describe("malformed answers", () => {
  const modernAnswering = (answer: (res: Http.ServerResponse) => void) =>
    Scripted.mcpServer("modern", { request: (_, res) => answer(res) })

  it.live("a body that is not JSON is a typed Read error carrying the body", () =>
    Effect.gen(function*() {
      const server = yield* modernAnswering((res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end("this is { not json")
      })
      const { client } = yield* Common.connect({ url: server.url })
      const error = yield* Effect.flip(client.callTool({ name: "x" }))
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") {
        assert.strictEqual(error.reason, "Read")
        assert.strictEqual(error.body, "this is { not json")
      }
    }).pipe(Effect.scoped))

  it.live("JSON that holds no answer to the request is a typed Read error", () =>
    Effect.gen(function*() {
      const server = yield* modernAnswering((res) => Scripted.sendJson(res, 200, Scripted.success(999, {})))
      const { client } = yield* Common.connect({ url: server.url })
      const error = yield* Effect.flip(client.callTool({ name: "x" }))
      assert.strictEqual(error._tag === "TransportError" ? error.reason : error._tag, "Read")
    }).pipe(Effect.scoped))

  it.live("a wrong content type is a typed Read error naming it", () =>
    Effect.gen(function*() {
      const server = yield* modernAnswering((res) => {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        res.end("<html>login</html>")
      })
      const { client } = yield* Common.connect({ url: server.url })
      const error = yield* Effect.flip(client.callTool({ name: "x" }))
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") {
        assert.strictEqual(error.reason, "Read")
        assert.strictEqual(error.contentType, "text/html; charset=utf-8")
        assert.include(error.detail, "text/html")
      }
    }).pipe(Effect.scoped))

  it.live("a connection reset in the middle of a JSON body loses the call: a typed StreamEnded error", () =>
    Effect.gen(function*() {
      const server = yield* modernAnswering((res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": "1000" })
        Scripted.breakAfter(res, "{\"jsonrpc\":\"2.0\",")
      })
      const { client } = yield* Common.connect({ url: server.url })
      const error = yield* Effect.flip(client.callTool({ name: "x" }, { timeout: "30 seconds" }))
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") {
        assert.strictEqual(error.reason, "StreamEnded")
        assert.include(error.detail, "broke off")
      }
    }).pipe(Effect.scoped))

  it.live("an oversized event is refused (FrameTooLarge)", () =>
    Effect.gen(function*() {
      const server = yield* modernAnswering((res) => {
        Scripted.startSse(res)
        res.end(`data: ${"x".repeat(5000)}\n\n`)
      })
      const { client } = yield* Common.connect({ url: server.url, maxEventBytes: 1024 })
      const error = yield* Effect.flip(client.callTool({ name: "x" }))
      assert.strictEqual(error._tag === "TransportError" ? error.reason : error._tag, "FrameTooLarge")
    }).pipe(Effect.scoped))

  it.live("a JSON-RPC error in a modern 4xx answer (HeaderMismatch) reaches the caller as McpError", () =>
    Effect.gen(function*() {
      const server = yield* modernAnswering((res) =>
        Scripted.sendJson(res, 400, Scripted.failure(null, -32020, "Header mismatch: Mcp-Name"))
      )
      const { client } = yield* Common.connect({ url: server.url })
      const error = yield* Effect.flip(client.callTool({ name: "x" }))
      assert.strictEqual(error._tag, "McpError")
      if (error._tag === "McpError") assert.strictEqual(error.code, -32020)
    }).pipe(Effect.scoped))
})

describe("HTTP+SSE endpoint", () => {
  const hostileServer = (other: string) =>
    Scripted.scripted((seen, res) => {
      if (seen.method === "GET") {
        Scripted.startSse(res)
        res.write(`event: endpoint\ndata: ${other}/messages?session=1\n\n`)
        return
      }
      res.writeHead(404).end()
    })

  it.live("an endpoint on another origin is refused during the fallback; nothing is sent there", () =>
    Effect.gen(function*() {
      const other = yield* Scripted.scripted((_, res) => void res.writeHead(202).end())
      const server = yield* hostileServer(other.url)
      const { exit } = yield* Common.tryConnect({ url: `${server.url}/sse` })
      const error = Common.failureOf(exit)
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") assert.include(error.detail, "another origin")
      assert.deepStrictEqual(other.seen, [])
    }).pipe(Effect.scoped))

  it.live("an endpoint on another origin is refused with the sse binding too", () =>
    Effect.gen(function*() {
      const other = yield* Scripted.scripted((_, res) => void res.writeHead(202).end())
      const server = yield* hostileServer(other.url)
      const { exit } = yield* Common.tryConnect({ url: `${server.url}/sse`, binding: "sse" })
      const error = Common.failureOf(exit)
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") {
        assert.strictEqual(error.reason, "Connect")
        assert.include(error.detail, "another origin")
      }
      assert.deepStrictEqual(other.seen, [])
      assert.deepStrictEqual(server.seen.map((entry) => entry.method), ["GET"])
    }).pipe(Effect.scoped))
})

describe("cancellation as the server sees it", () => {
  it.live("legacy: the server receives notifications/cancelled for the right id, then the stream closes", () =>
    Effect.gen(function*() {
      let streamClosed = false
      const server = yield* Scripted.mcpServer("legacy", {
        request: (seen, res, method) => {
          if (method !== "tools/call") return Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
          Scripted.startSse(res)
          Scripted.sseMessage(res, Scripted.progress(Scripted.progressToken(seen), 0))
          res.on("close", () => (streamClosed = true))
        }
      })
      const { client, recorder } = yield* Common.connect({ url: server.url })
      const fiber = yield* startCall(client, "hang")
      yield* Fiber.interrupt(fiber)
      const callId = Scripted.idOf(posts(server.seen, "tools/call")[0]!)
      yield* eventually(() => posts(server.seen, "notifications/cancelled").length === 1, "notifications/cancelled")
      const cancelled = posts(server.seen, "notifications/cancelled")[0]!
      assert.isTrue(Scripted.isObject(cancelled.body) && Scripted.isObject(cancelled.body.params))
      if (Scripted.isObject(cancelled.body) && Scripted.isObject(cancelled.body.params)) {
        assert.strictEqual(cancelled.body.params.requestId, callId)
      }
      assert.strictEqual(cancelled.headers["mcp-session-id"], "session-1")
      yield* eventually(() => streamClosed, "the stream to close")
      yield* Common.assertSentMessagesValid(recorder, Scripted.LEGACY)
    }).pipe(Effect.scoped))

  it.live("modern: the response stream is closed and nothing is sent", () =>
    Effect.gen(function*() {
      let streamClosed = false
      const server = yield* Scripted.mcpServer("modern", {
        request: (seen, res) => {
          Scripted.startSse(res)
          Scripted.sseMessage(res, Scripted.progress(Scripted.progressToken(seen), 0))
          res.on("close", () => (streamClosed = true))
        }
      })
      const { client } = yield* Common.connect({ url: server.url })
      const fiber = yield* startCall(client, "hang")
      // the interruption returns once the call's cancellation ran: whatever it sent has been sent
      yield* Fiber.interrupt(fiber)
      yield* eventually(() => streamClosed, "the stream to close")
      assert.deepStrictEqual(posts(server.seen, "notifications/cancelled"), [])
    }).pipe(Effect.scoped))
})

describe("legacy streams", () => {
  it.live("a server request on a POST stream is related to its request; the answer is POSTed in the session", () =>
    Effect.gen(function*() {
      let answerCall: (() => void) | undefined
      const server = yield* Scripted.mcpServer("legacy", {
        request: (seen, res, method) => {
          if (method !== "tools/call") return void res.writeHead(202).end()
          Scripted.startSse(res)
          Scripted.sseMessage(res, { jsonrpc: "2.0", id: "srv-1", method: "ping" })
          answerCall = () => {
            Scripted.sseMessage(res, Scripted.success(Scripted.idOf(seen), Scripted.textResult("done")))
            res.end()
          }
        }
      })
      const { client, recorder } = yield* Common.connect({ url: server.url })
      const call = yield* Effect.forkChild(client.callTool({ name: "asks" }))
      // the call is answered once the server has the answer to its ping
      yield* eventually(
        () => server.seen.some((entry) => Scripted.isObject(entry.body) && entry.body.id === "srv-1"),
        "the answer to the server's ping"
      )
      answerCall?.()
      const result = yield* Fiber.join(call)
      assert.strictEqual(textOf(result), "done")
      const callId = Scripted.idOf(posts(server.seen, "tools/call")[0]!)
      const request = (yield* recorder.received).find((event) => event._tag === "ServerRequest")
      assert.isTrue(request !== undefined && request._tag === "ServerRequest" && request.related === callId)
      const answer = server.seen.find((entry) => Scripted.isObject(entry.body) && entry.body.id === "srv-1")!
      assert.deepStrictEqual(answer.body, { jsonrpc: "2.0", id: "srv-1", result: {} })
      assert.strictEqual(answer.headers["mcp-session-id"], "session-1")
    }).pipe(Effect.scoped))

  it.live("the GET stream delivers notifications and unrelated server requests", () =>
    Effect.gen(function*() {
      let getStream: Http.ServerResponse | undefined
      const server = yield* Scripted.mcpServer("legacy", {
        get: (_, res) => {
          getStream = res
          Scripted.startSse(res)
        },
        request: (_, res) => void res.writeHead(202).end()
      })
      const { recorder } = yield* Common.connect({ url: server.url })
      yield* eventually(() => getStream !== undefined, "the GET stream")
      const get = server.seen.find((entry) => entry.method === "GET")!
      assert.strictEqual(get.headers["mcp-session-id"], "session-1")
      assert.strictEqual(get.headers["mcp-protocol-version"], Scripted.LEGACY)
      assert.strictEqual(get.headers.accept, "text/event-stream")
      Scripted.sseMessage(getStream!, {
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", data: "hello" }
      })
      Scripted.sseMessage(getStream!, { jsonrpc: "2.0", id: 77, method: "ping" })
      yield* eventually(
        () => server.seen.some((entry) => Scripted.isObject(entry.body) && entry.body.id === 77),
        "the answer to the server's ping"
      )
      const received = yield* recorder.received
      const request = received.find((event) => event._tag === "ServerRequest")
      assert.isTrue(request !== undefined && request._tag === "ServerRequest" && request.related === undefined)
      assert.isTrue(
        received.some((event) => event._tag === "Notification" && event.message.method === "notifications/message")
      )
    }).pipe(Effect.scoped))

  it.live("a JSON-RPC batch answer (2025-03-26) is accepted", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy", {
        initialize: (seen, res) =>
          Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), Scripted.initializeResult("2025-03-26")), {
            "mcp-session-id": "s"
          }),
        request: (seen, res) =>
          Scripted.sendJson(res, 200, [
            { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "before" } },
            Scripted.success(Scripted.idOf(seen), Scripted.textResult("batched"))
          ])
      })
      const { client, recorder } = yield* Common.connect({ url: server.url }, { protocolVersion: "2025-03-26" })
      const result = yield* client.callTool({ name: "x" })
      assert.strictEqual(textOf(result), "batched")
      // 2025-03-26 servers get no MCP-Protocol-Version header
      assert.isUndefined(posts(server.seen, "tools/call")[0]!.headers["mcp-protocol-version"])
      yield* Common.assertSentMessagesValid(recorder, "2025-03-26")
    }).pipe(Effect.scoped))

  it.live("the session is deleted when the connection closes", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy")
      yield* Effect.scoped(Common.connect({ url: server.url }))
      const deletes = server.seen.filter((entry) => entry.method === "DELETE")
      assert.strictEqual(deletes.length, 1)
      assert.strictEqual(deletes[0]!.headers["mcp-session-id"], "session-1")
    }).pipe(Effect.scoped))
})

describe("credentials", () => {
  it.live("a 401 on a call is an AuthError; the bearer token is sent but never appears in the error", () =>
    Effect.gen(function*() {
      const token = "s3cr3t-token-value"
      const server = yield* Scripted.mcpServer("modern", {
        request: (_, res) => {
          res.writeHead(401, { "www-authenticate": `Bearer error="invalid_token", error_description="expired"` })
          res.end()
        }
      })
      const { client } = yield* Common.connect({ url: server.url, bearerToken: Redacted.make(token) })
      const error = yield* Effect.flip(client.callTool({ name: "x" }))
      assert.strictEqual(error._tag, "AuthError")
      if (error._tag === "AuthError") {
        assert.strictEqual(error.status, 401)
        assert.deepStrictEqual(error.challenges, [
          { scheme: "Bearer", params: { error: "invalid_token", error_description: "expired" } }
        ])
      }
      assert.notInclude(JSON.stringify(error), token)
      assert.notInclude(String(error), token)
      for (const entry of server.seen) assert.strictEqual(entry.headers.authorization, `Bearer ${token}`)
    }).pipe(Effect.scoped))

  it.live("custom headers go with every request", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy")
      yield* Effect.scoped(Common.connect({ url: server.url, headers: { "X-Api-Key": "k1" } }))
      assert.isAbove(server.seen.length, 3)
      for (const entry of server.seen) assert.strictEqual(entry.headers["x-api-key"], "k1")
    }).pipe(Effect.scoped))
})


describe("kept-alive connections closed by the server", () => {
  /**
   * A server that, once armed, closes the connection a request comes in on when that connection served a request
   * before: a server closing an idle kept-alive connection just as the client reuses it.
   */
  const closingReused = (era: "legacy" | "modern", httpClient?: Layer.Layer<HttpClient.HttpClient>) =>
    Effect.gen(function*() {
      // `armed`: how many requests to close; `anyConnection`: close them on fresh connections too
      const state = { armed: 0, anyConnection: false, closed: 0 }
      const server = yield* Scripted.mcpServer(era, {
        request: (seen, res, method) => {
          const socket = res.socket
          if (state.armed > 0 && socket !== null && (state.anyConnection || socket.bytesWritten > 0)) {
            state.armed--
            state.closed++
            return void socket.destroy()
          }
          const result = method === "tools/list"
            ? { tools: [{ name: "echo", inputSchema: { type: "object" } }] }
            : method === "tools/call"
            ? Scripted.textResult("done")
            : {}
          Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), result))
        }
      })
      const { client } = yield* Common.connect({ url: server.url }, {}, httpClient)
      // a request answered in full, then a few turns of the event loop: its connection is back in the client's pool,
      // idle and kept alive, so the next request reuses a connection
      yield* client.ping()
      for (let i = 0; i < 5; i++) yield* turn
      state.armed = 1
      return { client, server, state }
    })

  for (const era of ["modern", "legacy"] as const) {
    it.live(`${era}: a list request is sent once more, on another connection, and succeeds`, () =>
      Effect.gen(function*() {
        const { client, server, state } = yield* closingReused(era)
        const tools = yield* client.listTools()
        assert.deepStrictEqual(tools.map((tool) => tool.name), ["echo"])
        assert.strictEqual(state.closed, 1)
        const lists = posts(server.seen, "tools/list")
        assert.strictEqual(lists.length, 2)
        assert.strictEqual(Scripted.idOf(lists[0]!), Scripted.idOf(lists[1]!))
        if (era === "legacy") {
          assert.deepStrictEqual(lists.map((entry) => entry.headers["mcp-session-id"]), ["session-1", "session-1"])
        }
      }).pipe(Effect.scoped))
  }

  it.live("over fetch too (its error wraps undici's): a list request is sent once more and succeeds", () =>
    Effect.gen(function*() {
      const { client, server, state } = yield* closingReused("modern", FetchHttpClient.layer)
      const tools = yield* client.listTools()
      assert.deepStrictEqual(tools.map((tool) => tool.name), ["echo"])
      assert.strictEqual(state.closed, 1)
      assert.strictEqual(posts(server.seen, "tools/list").length, 2)
    }).pipe(Effect.scoped))

  it.live("a tool call is not sent again (it may have reached the server): it fails with a Connect error", () =>
    Effect.gen(function*() {
      const { client, server, state } = yield* closingReused("modern")
      const error = yield* Effect.flip(client.callTool({ name: "echo", arguments: {} }))
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") assert.strictEqual(error.reason, "Connect")
      assert.strictEqual(state.closed, 1)
      assert.strictEqual(posts(server.seen, "tools/call").length, 1)
      // the client goes on over a new connection
      const result = yield* client.callTool({ name: "echo", arguments: {} })
      assert.strictEqual(textOf(result), "done")
    }).pipe(Effect.scoped))

  it.live("a list request whose second connection is closed too fails with a Connect error (one re-send only)", () =>
    Effect.gen(function*() {
      const { client, server, state } = yield* closingReused("modern")
      // the re-send goes out on a fresh connection: close that one as well
      state.armed = 2
      state.anyConnection = true
      const error = yield* Effect.flip(client.listTools())
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") assert.strictEqual(error.reason, "Connect")
      assert.strictEqual(state.closed, 2)
      assert.strictEqual(posts(server.seen, "tools/list").length, 2)
    }).pipe(Effect.scoped))
})
