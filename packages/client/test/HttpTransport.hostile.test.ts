/**
 * Hostile servers over HTTP (issue 21): a redirect to another origin must not take the credentials or the session
 * id there, whatever HTTP client carries the requests; the HTTP+SSE endpoint's session id stays out of spans; a
 * compressed answer is bounded by what it decodes to, not by its `content-length`.
 */
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Http from "node:http"
import * as Zlib from "node:zlib"
import * as Common from "./fixtures/http/common.js"
import * as Scripted from "./fixtures/http/scripted.js"
import { makeCapture } from "./utils/capture.js"
import { eventually } from "./utils/eventually.js"

const clients: ReadonlyArray<readonly [string, Layer.Layer<HttpClient.HttpClient>]> = [
  ["fetch", FetchHttpClient.layer],
  ["undici", NodeHttpClient.layerUndici]
]

const token = "tok-redirected-5e4d3c2b1a"
const apiKey = "key-redirected-0f1e2d3c"

describe("a redirect to another origin", () => {
  for (const [name, httpClient] of clients) {
    for (const era of ["legacy", "modern"] as const) {
      it.live(`${name}, ${era}: a 307 to another port is not followed; nothing reaches the other origin`, () =>
        Effect.gen(function*() {
          // the other origin: 127.0.0.1 on another port
          const elsewhere = yield* Scripted.scripted((_seen, res) => Scripted.sendJson(res, 200, {}))
          const server = yield* Scripted.mcpServer(era, {
            request: (seen, res, method) => {
              if (method === "tools/call") {
                return void res.writeHead(307, { location: `${elsewhere.url}/mcp` }).end()
              }
              Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
            }
          })
          const { client } = yield* Common.connect(
            { url: server.url, bearerToken: Redacted.make(token), headers: { "X-Api-Key": apiKey } },
            {},
            httpClient
          )
          const error = yield* Effect.flip(client.callTool({ name: "echo", arguments: {} }))
          assert.strictEqual(error._tag, "TransportError")
          if (error._tag === "TransportError") {
            assert.strictEqual(error.reason, "HttpStatus")
            assert.strictEqual(error.status, 307)
          }
          assert.deepStrictEqual(elsewhere.seen, [])
          // the credentials went where they belong
          const call = server.seen.find((entry) => Scripted.methodOf(entry) === "tools/call")
          assert.strictEqual(call?.headers["x-api-key"], apiKey)
          if (era === "legacy") assert.strictEqual(call?.headers["mcp-session-id"], "session-1")
        }).pipe(Effect.scoped))
    }

    it.live(`${name}: the GET stream of a legacy session redirected elsewhere is not followed`, () =>
      Effect.gen(function*() {
        const elsewhere = yield* Scripted.scripted((_seen, res) => res.writeHead(405).end())
        const server = yield* Scripted.mcpServer("legacy", {
          get: (_seen, res) => res.writeHead(307, { location: `${elsewhere.url}/mcp` }).end(),
          request: (seen, res) => Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
        })
        const capture = makeCapture()
        yield* Effect.gen(function*() {
          const { client } = yield* Common.connect({ url: server.url, headers: { "X-Api-Key": apiKey } }, {}, httpClient)
          yield* client.ping()
          // the GET stream gives up on the redirect (followed, it would give up on the other origin's 405)
          yield* eventually(
            () => capture.logs.some((line) => /GET stream was refused|offers no GET stream/.test(line)),
            "the GET stream's outcome"
          )
        }).pipe(Effect.scoped, capture.observe)
        assert.isTrue(server.seen.some((entry) => entry.method === "GET"))
        assert.deepStrictEqual(elsewhere.seen, [])
      }).pipe(Effect.scoped))
  }
})

describe("the HTTP+SSE session id", () => {
  it.live("never reaches a span: url.full and url.query carry it redacted", () =>
    Effect.gen(function*() {
      const sessionId = "sse-session-7a6b5c4d3e"
      let stream: Http.ServerResponse | undefined
      const server = yield* Scripted.scripted((seen, res) => {
        if (seen.method === "GET") {
          stream = res
          Scripted.startSse(res)
          res.write(`event: endpoint\ndata: /messages?sessionId=${sessionId}&v=1\n\n`)
          return
        }
        if (seen.url === "/sse") return void res.writeHead(405).end()
        res.writeHead(202).end()
        const method = Scripted.methodOf(seen)
        if (method === "initialize") {
          Scripted.sseMessage(stream!, Scripted.success(Scripted.idOf(seen), Scripted.initializeResult("2024-11-05")))
        } else if (method === "ping") {
          Scripted.sseMessage(stream!, Scripted.success(Scripted.idOf(seen), {}))
        }
      })
      const capture = makeCapture()
      yield* Effect.gen(function*() {
        const { client } = yield* Common.connect({ url: `${server.url}/sse` })
        yield* client.ping()
      }).pipe(Effect.scoped, Effect.withSpan("caller"), capture.observe)
      // the session id did go where it belongs
      assert.isTrue(server.seen.some((entry) => entry.url === `/messages?sessionId=${sessionId}&v=1`))
      const posts = capture.spans.filter((text) => text.includes("/messages"))
      assert.isAbove(posts.length, 0)
      for (const text of posts) {
        assert.include(text, "sessionId=REDACTED&v=1")
      }
      for (const text of capture.seen) assert.notInclude(text, sessionId)
    }).pipe(Effect.scoped))
})

/** A tools/call answer of `text` bytes of "a", gzipped, with its (compressed) `content-length`. */
const gzipAnswer = (id: unknown, textBytes: number): Buffer =>
  Zlib.gzipSync(
    `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"${"a".repeat(textBytes)}"}]}}`
  )

describe("a compressed answer", () => {
  const limit = 1024 * 1024
  const serving = (textBytes: number) =>
    Scripted.mcpServer("modern", {
      request: (seen, res, method) => {
        if (method !== "tools/call") return Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), {}))
        const body = gzipAnswer(Scripted.idOf(seen), textBytes)
        res.writeHead(200, {
          "content-type": "application/json",
          "content-encoding": "gzip",
          "content-length": body.length
        }).end(body)
      }
    })

  it.live("fetch, which decodes it: 8 MiB decoded from a few KiB fail FrameTooLarge under maxEventBytes 1 MiB", () =>
    Effect.gen(function*() {
      const server = yield* serving(8 * limit)
      const { client } = yield* Common.connect({ url: server.url, maxEventBytes: limit }, {}, FetchHttpClient.layer)
      const outcome = yield* Effect.result(client.callTool({ name: "echo", arguments: {} }))
      // (what a call read past the limit is not printed: a failed assertion would show megabytes)
      assert.isTrue(Result.isFailure(outcome), "the call read the decoded answer")
      if (Result.isFailure(outcome)) {
        assert.strictEqual(outcome.failure._tag, "TransportError")
        if (outcome.failure._tag === "TransportError") assert.strictEqual(outcome.failure.reason, "FrameTooLarge")
      }
    }).pipe(Effect.scoped))

  it.live("fetch: one within the limit once decoded is read whole", () =>
    Effect.gen(function*() {
      const server = yield* serving(limit / 2)
      const { client } = yield* Common.connect({ url: server.url, maxEventBytes: limit }, {}, FetchHttpClient.layer)
      const result = yield* client.callTool({ name: "echo", arguments: {} })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "a".repeat(limit / 2) }])
    }).pipe(Effect.scoped))

  it.live("undici, which does not decode it: the compressed bytes are no JSON-RPC answer, a typed error", () =>
    Effect.gen(function*() {
      const server = yield* serving(8 * limit)
      const { client } = yield* Common.connect({ url: server.url, maxEventBytes: limit }, {}, NodeHttpClient.layerUndici)
      const error = yield* Effect.flip(client.callTool({ name: "echo", arguments: {} }))
      assert.strictEqual(error._tag, "TransportError")
    }).pipe(Effect.scoped))
})
