/**
 * Era detection on HTTP, one test per row of the classification table of shared/docs/protocol.md §1.2.2 (and its
 * legacy steps), through the whole client: `McpClient` over `HttpTransport` against a scripted `node:http` server
 * that answers the `server/discover` probe with each status and body.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as McpClient from "../src/McpClient.js"
import * as Http from "./fixtures/http/common.js"
import * as Scripted from "./fixtures/http/scripted.js"

const probeAnswer = (status: number, body?: unknown, contentType = "application/json") =>
(seen: Scripted.Seen, res: import("node:http").ServerResponse) => {
  if (body === undefined) {
    res.writeHead(status).end()
  } else {
    res.writeHead(status, { "content-type": contentType })
    res.end(typeof body === "string" ? body : JSON.stringify(body))
  }
  void seen
}

const methodsSeen = (seen: ReadonlyArray<Scripted.Seen>) =>
  seen.map((entry) => `${entry.method} ${Scripted.methodOf(entry) ?? ""}`.trim())

describe("HTTP era detection (§1.2.2)", () => {
  it.live("2xx with a DiscoverResult as JSON: modern", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern")
      const { client, recorder } = yield* Http.connect({ url: server.url })
      const session = yield* client.session
      assert.strictEqual(session.era, "modern")
      assert.strictEqual(session.protocolVersion, Scripted.MODERN)
      assert.strictEqual(session.serverInfo?.name, Scripted.serverInfo.name)
      assert.deepStrictEqual(methodsSeen(server.seen), ["POST server/discover"])
      yield* Http.assertSentMessagesValid(recorder, session.protocolVersion)
    }).pipe(Effect.scoped))

  it.live("2xx with a DiscoverResult as an event stream: modern", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern", {
        probe: (seen, res) => {
          Scripted.startSse(res)
          res.write(": keep-alive\n\n")
          Scripted.sseMessage(res, Scripted.success(Scripted.idOf(seen), Scripted.discoverResult))
          res.end()
        }
      })
      const { client } = yield* Http.connect({ url: server.url })
      assert.strictEqual((yield* client.session).era, "modern")
      assert.deepStrictEqual(methodsSeen(server.seen), ["POST server/discover"])
    }).pipe(Effect.scoped))

  it.live("2xx carrying a JSON-RPC error: the stdio rules (-32601 means legacy)", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy", {
        probe: (seen, res) => Scripted.sendJson(res, 200, Scripted.failure(Scripted.idOf(seen), -32601, "no"))
      })
      const { client } = yield* Http.connect({ url: server.url })
      const session = yield* client.session
      assert.strictEqual(session.era, "legacy")
      assert.strictEqual(session.transport.binding, "streamable-http")
      assert.deepStrictEqual(methodsSeen(server.seen).slice(0, 3), [
        "POST server/discover",
        "POST initialize",
        "POST notifications/initialized"
      ])
    }).pipe(Effect.scoped))

  for (const status of [401, 403] as const) {
    it.live(`${status}: not evidence of either era; an AuthError with the parsed challenges`, () =>
      Effect.gen(function*() {
        const server = yield* Scripted.mcpServer("legacy", {
          probe: (_, res) => {
            res.writeHead(status, {
              "www-authenticate":
                `Bearer resource_metadata="https://as.example/prm", scope="tools:read", Basic realm="x"`
            })
            res.end()
          }
        })
        const { exit, recorder } = yield* Http.tryConnect({ url: server.url })
        const error = Http.failureOf(exit)
        assert.strictEqual(error._tag, "AuthError")
        if (error._tag === "AuthError") {
          assert.strictEqual(error.status, status)
          assert.deepStrictEqual(error.challenges, [
            { scheme: "Bearer", params: { resource_metadata: "https://as.example/prm", scope: "tools:read" } },
            { scheme: "Basic", params: { realm: "x" } }
          ])
        }
        assert.deepStrictEqual(yield* Http.sentMethods(recorder), ["server/discover"])
        assert.deepStrictEqual(methodsSeen(server.seen), ["POST server/discover"])
      }).pipe(Effect.scoped))
  }

  it.live("4xx with a recognised modern error (-32022 with data.supported): modern, the probe is resent", () =>
    Effect.gen(function*() {
      let probes = 0
      const server = yield* Scripted.mcpServer("modern", {
        probe: (seen, res) => {
          probes++
          if (probes === 1) {
            Scripted.sendJson(
              res,
              400,
              Scripted.failure(Scripted.idOf(seen), -32022, "Unsupported protocol version", {
                supported: [Scripted.MODERN],
                requested: Scripted.MODERN
              })
            )
          } else {
            Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), Scripted.discoverResult))
          }
        }
      })
      const { client } = yield* Http.connect({ url: server.url })
      assert.strictEqual((yield* client.session).era, "modern")
      assert.deepStrictEqual(methodsSeen(server.seen), ["POST server/discover", "POST server/discover"])
    }).pipe(Effect.scoped))

  const legacyRows: ReadonlyArray<readonly [string, number, unknown, string?]> = [
    ["400 with an empty body", 400, undefined],
    ["400 with a non-modern JSON-RPC error (-32000)", 400, Scripted.failure(null, -32000, "Bad Request: no session")],
    ["404 with an HTML body", 404, "<html><body>Cannot POST /mcp</body></html>", "text/html"],
    ["405 with an empty body", 405, undefined],
    ["404 with -32601 (decision 4: initialize, never HTTP+SSE)", 404, Scripted.failure(null, -32601, "Not found")]
  ]
  for (const [name, status, body, contentType] of legacyRows) {
    it.live(`other 4xx, ${name}: legacy, initialize follows`, () =>
      Effect.gen(function*() {
        const server = yield* Scripted.mcpServer("legacy", { probe: probeAnswer(status, body, contentType) })
        const { client, recorder } = yield* Http.connect({ url: server.url })
        const session = yield* client.session
        assert.strictEqual(session.era, "legacy")
        assert.strictEqual(session.protocolVersion, Scripted.LEGACY)
        assert.strictEqual(session.transport.binding, "streamable-http")
        assert.deepStrictEqual(methodsSeen(server.seen).slice(0, 3), [
          "POST server/discover",
          "POST initialize",
          "POST notifications/initialized"
        ])
        yield* Http.assertSentMessagesValid(recorder, session.protocolVersion)
      }).pipe(Effect.scoped))
  }

  for (const status of [400, 404, 405]) {
    it.live(`legacy step 2: initialize refused with ${status}, an endpoint event: HTTP+SSE`, () =>
      Effect.gen(function*() {
        let stream: import("node:http").ServerResponse | undefined
        const server = yield* Scripted.scripted((seen, res) => {
          if (seen.method === "GET") {
            stream = res
            Scripted.startSse(res)
            res.write("event: endpoint\ndata: /messages?session=abc\n\n")
            return
          }
          if (seen.url === "/mcp") {
            res.writeHead(status).end()
            return
          }
          // the endpoint: acknowledge, answer on the stream
          res.writeHead(202).end("Accepted")
          const method = Scripted.methodOf(seen)
          if (method === "initialize") {
            Scripted.sseMessage(stream!, Scripted.success(Scripted.idOf(seen), Scripted.initializeResult("2024-11-05")))
          } else if (method === "ping") {
            Scripted.sseMessage(stream!, Scripted.success(Scripted.idOf(seen), {}))
          }
        })
        const { client, recorder } = yield* Http.connect({ url: `${server.url}/mcp` })
        const session = yield* client.session
        assert.strictEqual(session.era, "legacy")
        assert.strictEqual(session.protocolVersion, "2024-11-05")
        assert.strictEqual(session.transport.binding, "sse")
        yield* client.ping()
        assert.deepStrictEqual(
          server.seen.map((entry) => `${entry.method} ${entry.url} ${Scripted.methodOf(entry) ?? ""}`.trim()),
          [
            "POST /mcp server/discover",
            "POST /mcp initialize",
            "GET /mcp",
            "POST /messages?session=abc initialize",
            "POST /messages?session=abc notifications/initialized",
            "POST /messages?session=abc ping"
          ]
        )
        yield* Http.assertSentMessagesValid(recorder, session.protocolVersion)
      }).pipe(Effect.scoped))
  }

  it.live("legacy step 3: initialize refused and no endpoint event: a connect error", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.scripted((_, res) => res.writeHead(404).end())
      const { exit } = yield* Http.tryConnect({ url: `${server.url}/mcp` })
      const error = Http.failureOf(exit)
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") {
        assert.strictEqual(error.reason, "HttpStatus")
        assert.strictEqual(error.status, 404)
        assert.include(error.detail, "HTTP+SSE fallback failed")
      }
      assert.deepStrictEqual(methodsSeen(server.seen), ["POST server/discover", "POST initialize", "GET"])
    }).pipe(Effect.scoped))

  for (const status of [500, 502, 503]) {
    it.live(`${status}: a transport error, not a verdict`, () =>
      Effect.gen(function*() {
        const server = yield* Scripted.mcpServer("legacy", {
          probe: probeAnswer(status, "upstream down", "text/plain")
        })
        const { exit } = yield* Http.tryConnect({ url: server.url })
        const error = Http.failureOf(exit)
        assert.strictEqual(error._tag, "TransportError")
        if (error._tag === "TransportError") {
          assert.strictEqual(error.reason, "HttpStatus")
          assert.strictEqual(error.status, status)
          assert.strictEqual(error.body, "upstream down")
          assert.strictEqual(error.contentType, "text/plain")
        }
        assert.deepStrictEqual(methodsSeen(server.seen), ["POST server/discover"])
      }).pipe(Effect.scoped))
  }

  it.live("a network failure: a transport error, not a verdict", () =>
    Effect.gen(function*() {
      // a port that was just free: nothing listens there
      const url = yield* Effect.scoped(Scripted.listen(() => {}))
      const { exit } = yield* Http.tryConnect({ url: `${url}/mcp` })
      const error = Http.failureOf(exit)
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") assert.strictEqual(error.reason, "Connect")
    }).pipe(Effect.scoped))

  it.live("a probe timeout: a transport error, not a verdict", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy", { probe: () => {} })
      const { exit } = yield* Http.tryConnect({ url: server.url }, { probeTimeout: "300 millis" })
      const error = Http.failureOf(exit)
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") assert.strictEqual(error.reason, "Timeout")
      assert.deepStrictEqual(methodsSeen(server.seen), ["POST server/discover"])
    }).pipe(Effect.scoped))
})

describe("HTTP era verdict cache", () => {
  it.live("the verdict is kept per origin: a second connection through the same transport skips the probe", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy")
      const transport = yield* Layer.build(Http.transport({ url: server.url }))
      const session = McpClient.make(Http.clientOptions).pipe(
        Effect.flatMap((client) => client.session),
        Effect.scoped,
        Effect.provide(transport)
      )
      const first = yield* session
      assert.strictEqual(first.era, "legacy")
      assert.isUndefined(first.transport.era)
      const second = yield* session
      assert.strictEqual(second.era, "legacy")
      assert.strictEqual(second.transport.era, "legacy")
      const posts = server.seen.flatMap((entry) => entry.method === "POST" ? [Scripted.methodOf(entry)] : [])
      assert.deepStrictEqual(posts, [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "initialize",
        "notifications/initialized"
      ])
    }).pipe(Effect.scoped))

  it.live("a kept legacy verdict of a server now modern only: initialize refused naming modern ones re-probes", () =>
    Effect.gen(function*() {
      let upgraded = false
      const server = yield* Scripted.mcpServer("legacy", {
        // (after an initialize, the scripted server hands server/discover to `request`)
        request: (seen, res, method) =>
          method === "server/discover" && upgraded
            ? Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), Scripted.discoverResult))
            : Scripted.sendJson(res, 200, Scripted.failure(Scripted.idOf(seen), -32601, "Method not found")),
        initialize: (seen, res, count) =>
          upgraded
            ? Scripted.sendJson(res, 400, Scripted.failure(Scripted.idOf(seen), -32022, "Unsupported version", {
              supported: [Scripted.MODERN],
              requested: "2025-11-25"
            }))
            : Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), Scripted.initializeResult()), {
              "mcp-session-id": `session-${count}`
            })
      })
      const transport = yield* Layer.build(Http.transport({ url: server.url }))
      const session = McpClient.make(Http.clientOptions).pipe(
        Effect.flatMap((client) => client.session),
        Effect.scoped,
        Effect.provide(transport)
      )
      assert.strictEqual((yield* session).era, "legacy")
      upgraded = true
      const second = yield* session
      assert.strictEqual(second.era, "modern")
      assert.strictEqual(second.protocolVersion, Scripted.MODERN)
    }).pipe(Effect.scoped))

  it.live("a server whose probe says legacy and whose initialize names only modern versions: a typed error", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy", {
        initialize: (seen, res) =>
          Scripted.sendJson(res, 400, Scripted.failure(Scripted.idOf(seen), -32022, "Unsupported protocol version", {
            supported: [Scripted.MODERN],
            requested: "2025-11-25"
          })),
        request: (seen, res) => Scripted.sendJson(res, 200, Scripted.failure(Scripted.idOf(seen), -32601, "no"))
      })
      const exit = yield* Effect.exit(Http.connect({ url: server.url }))
      const error = Http.failureOf(exit)
      assert.strictEqual(error._tag === "ProtocolError" ? error.reason : error._tag, "Negotiation")
    }).pipe(Effect.scoped))

  it.live("a modern verdict is kept too; the connection still discovers (capabilities come from it)", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern", {
        probe: (seen, res) =>
          Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), Scripted.discoverResult))
      })
      const transport = yield* Layer.build(Http.transport({ url: server.url }))
      const session = McpClient.make(Http.clientOptions).pipe(
        Effect.flatMap((client) => client.session),
        Effect.scoped,
        Effect.provide(transport)
      )
      assert.isUndefined((yield* session).transport.era)
      assert.strictEqual((yield* session).transport.era, "modern")
    }).pipe(Effect.scoped))
})
