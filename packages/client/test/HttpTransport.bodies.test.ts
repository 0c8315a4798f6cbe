/**
 * Response bodies over every HTTP client a user may provide: the platform's undici, `node:http` and fetch clients
 * (whose bodies the transport reads from the response's source) and a client of another shape (whose bodies it
 * reads through `response.stream`). Each must read chunked and sized bodies, hold the size limit while reading,
 * report a body that breaks off as a typed error, read event streams split anywhere, and drop a body it stops
 * reading.
 */
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Http from "node:http"
import type * as McpSchema from "../src/McpSchema.js"
import * as Common from "./fixtures/http/common.js"
import * as Scripted from "./fixtures/http/scripted.js"
import { eventually } from "./utils/eventually.js"

/** The response with its underlying source hidden: what a client of an unknown shape hands the transport. */
const opaque = (response: HttpClientResponse.HttpClientResponse): HttpClientResponse.HttpClientResponse =>
  new Proxy(response, {
    get: (target, key) => key === "source" ? undefined : Reflect.get(target, key, target),
    has: (target, key) => key !== "source" && Reflect.has(target, key)
  })

const opaqueClient = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (client) => HttpClient.transformResponse(client, Effect.map(opaque)))
).pipe(Layer.provide(NodeHttpClient.layerUndici))

const clients: ReadonlyArray<readonly [string, Layer.Layer<HttpClient.HttpClient>]> = [
  ["undici", NodeHttpClient.layerUndici],
  ["node:http", NodeHttpClient.layerNodeHttp],
  ["fetch", FetchHttpClient.layer],
  ["a client of another shape", opaqueClient]
]

const textOf = (result: McpSchema.CallToolResult) =>
  result.content.flatMap((block) => (block.type === "text" && "text" in block ? [block.text] : [])).join("")

/** Writes `parts` one after another, a few milliseconds apart (so that they arrive as separate chunks). */
const trickle = (res: Http.ServerResponse, parts: ReadonlyArray<string>, end: boolean) => {
  const next = (index: number) => {
    if (index === parts.length) {
      if (end) res.end()
      return
    }
    res.write(parts[index])
    setTimeout(() => next(index + 1), 5)
  }
  next(0)
}

/** The tool a `tools/call` names. */
const toolOf = (seen: Scripted.Seen): unknown =>
  Scripted.isObject(seen.body) && Scripted.isObject(seen.body.params) ? seen.body.params.name : undefined

const answering = (answer: (seen: Scripted.Seen, res: Http.ServerResponse) => void) =>
  Scripted.mcpServer("modern", { request: (seen, res) => answer(seen, res) })

for (const [name, httpClient] of clients) {
  describe(`response bodies over ${name}`, () => {
    const connect = (url: string, maxEventBytes?: number) =>
      Common.connect(maxEventBytes === undefined ? { url } : { url, maxEventBytes }, {}, httpClient)

    it.live("a chunked JSON answer in several pieces and a sized one", () =>
      Effect.gen(function*() {
        const server = yield* answering((seen, res) => {
          const body = JSON.stringify(Scripted.success(Scripted.idOf(seen), Scripted.textResult("é".repeat(3000))))
          if (toolOf(seen) === "sized") {
            return Scripted.sendJson(res, 200, JSON.parse(body), {
              "content-length": String(Buffer.byteLength(body))
            })
          }
          res.writeHead(200, { "content-type": "application/json" })
          // split inside a two-byte character
          const bytes = Buffer.from(body)
          res.write(bytes.subarray(0, 101))
          setTimeout(() => {
            res.write(bytes.subarray(101, 2001))
            setTimeout(() => res.end(bytes.subarray(2001)), 5)
          }, 5)
        })
        const { client } = yield* connect(server.url)
        assert.strictEqual(textOf(yield* client.callTool({ name: "chunked" })), "é".repeat(3000))
        assert.strictEqual(textOf(yield* client.callTool({ name: "sized" })), "é".repeat(3000))
      }).pipe(Effect.scoped))

    it.live("a chunked JSON answer past maxEventBytes is FrameTooLarge; the connection goes on", () =>
      Effect.gen(function*() {
        let closed = 0
        const server = yield* answering((seen, res) => {
          if (toolOf(seen) === "small") {
            return Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), Scripted.textResult("ok")))
          }
          res.on("close", () => closed++)
          res.writeHead(200, { "content-type": "application/json" })
          // more than the limit, and never ended: only the limit can end this read
          trickle(res, Array.from({ length: 8 }, () => " ".repeat(1000)), false)
        })
        const { client } = yield* connect(server.url, 4096)
        const error = yield* Effect.flip(client.callTool({ name: "huge" }, { timeout: "30 seconds" }))
        assert.strictEqual(error._tag === "TransportError" ? error.reason : error._tag, "FrameTooLarge")
        // the body left unread is dropped with its connection
        yield* eventually(() => closed === 1, "the oversized answer's connection to close")
        assert.strictEqual(textOf(yield* client.callTool({ name: "small" })), "ok")
      }).pipe(Effect.scoped))

    it.live("a declared content-length past maxEventBytes is FrameTooLarge before the body is read", () =>
      Effect.gen(function*() {
        const server = yield* answering((_, res) => {
          res.writeHead(200, { "content-type": "application/json", "content-length": "100000" })
          // the body never comes: only the declared length can end this call
          res.write("{")
        })
        const { client } = yield* connect(server.url, 4096)
        const error = yield* Effect.flip(client.callTool({ name: "huge" }, { timeout: "30 seconds" }))
        assert.strictEqual(error._tag, "TransportError")
        if (error._tag === "TransportError") {
          assert.strictEqual(error.reason, "FrameTooLarge")
          assert.include(error.detail, "100000")
        }
      }).pipe(Effect.scoped))

    it.live("a chunked JSON answer that breaks off loses the request: a typed StreamEnded error", () =>
      Effect.gen(function*() {
        const server = yield* answering((_, res) => {
          res.writeHead(200, { "content-type": "application/json" })
          Scripted.breakAfter(res, "{\"jsonrpc\":\"2.0\",")
        })
        const { client } = yield* connect(server.url)
        const error = yield* Effect.flip(client.callTool({ name: "x" }, { timeout: "30 seconds" }))
        assert.strictEqual(error._tag, "TransportError")
        if (error._tag === "TransportError") {
          assert.strictEqual(error.reason, "StreamEnded")
          assert.include(error.detail, "broke off")
          assert.include(error.detail, "may have run")
        }
      }).pipe(Effect.scoped))

    it.live("an event stream split anywhere: progress, then the answer; the rest of the stream is dropped", () =>
      Effect.gen(function*() {
        let closed = 0
        const server = yield* answering((seen, res) => {
          res.on("close", () => closed++)
          Scripted.startSse(res)
          const report = JSON.stringify(Scripted.progress(Scripted.progressToken(seen), 1))
          const stream = `: hello\n\nid: 1\nevent: message\ndata: ${report}\n\n` +
            `id: 2\nevent: message\ndata: ${
              JSON.stringify(Scripted.success(Scripted.idOf(seen), Scripted.textResult("streamed")))
            }\r\n\r\n`
          const cuts = [3, 9, 30, 31, stream.length - 40, stream.length - 2, stream.length]
          // the stream stays open after the answer: the client must stop reading on its own
          trickle(res, cuts.map((end, index) => stream.slice(index === 0 ? 0 : cuts[index - 1], end)), false)
        })
        const { client } = yield* connect(server.url)
        const reports: Array<number> = []
        const result = yield* client.callTool({ name: "x" }, {
          onProgress: (report) => Effect.sync(() => reports.push(report.progress)),
          timeout: "30 seconds"
        })
        assert.strictEqual(textOf(result), "streamed")
        assert.deepStrictEqual(reports, [1])
        yield* eventually(() => closed === 1, "the rest of the event stream to be dropped")
      }).pipe(Effect.scoped))

    it.live("an oversized event is FrameTooLarge", () =>
      Effect.gen(function*() {
        const server = yield* answering((_, res) => {
          Scripted.startSse(res)
          trickle(res, ["data: ", "x".repeat(3000), "y".repeat(3000)], false)
        })
        const { client } = yield* connect(server.url, 4096)
        const error = yield* Effect.flip(client.callTool({ name: "x" }, { timeout: "30 seconds" }))
        assert.strictEqual(error._tag === "TransportError" ? error.reason : error._tag, "FrameTooLarge")
      }).pipe(Effect.scoped))

    it.live("a refusal's body is kept up to its first 64 KiB", () =>
      Effect.gen(function*() {
        const server = yield* answering((_, res) => {
          res.writeHead(500, { "content-type": "text/plain" })
          trickle(res, Array.from({ length: 5 }, (_, index) => String(index).repeat(20_000)), true)
        })
        const { client } = yield* connect(server.url)
        const error = yield* Effect.flip(client.callTool({ name: "x" }, { timeout: "30 seconds" }))
        assert.strictEqual(error._tag, "TransportError")
        if (error._tag === "TransportError") {
          assert.strictEqual(error.reason, "HttpStatus")
          assert.strictEqual(error.status, 500)
          assert.strictEqual(error.body?.length, 64 * 1024)
          assert.isTrue(error.body?.startsWith("0".repeat(20_000) + "1"))
        }
      }).pipe(Effect.scoped))
  })
}
