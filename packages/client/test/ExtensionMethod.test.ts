/**
 * Adding a request method, as an application adds one for an MCP extension its servers serve: its definition (the
 * registry entry, with its schemas and facts), the service member that sends it, and this test. Nothing else of the
 * client changes. The server is the official SDK v2 server over HTTP on 127.0.0.1, with the extension's handler
 * registered the SDK's way (`setRequestHandler` with the method's parameter schema), in both eras.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { toNodeHandler } from "@modelcontextprotocol/node"
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Http from "node:http"
import * as McpClient from "../src/McpClient.js"
import * as McpError from "../src/McpError.js"
import * as McpMethod from "../src/McpMethod.js"
import { listen } from "./fixtures/http/scripted.js"

// The registry entry and its schemas: `acme/search` only reads, and gateways route it by its query.
const SearchParams = Schema.Struct({ query: Schema.String, limit: Schema.optional(Schema.Int) })
const SearchResult = Schema.Struct({ hits: Schema.Array(Schema.String) })
const Search = McpMethod.make("acme/search", {
  params: SearchParams,
  result: SearchResult,
  idempotent: true,
  nameField: "query"
})

// The service member: an application's service over the client.
class Acme extends Context.Service<Acme, {
  readonly search: (query: string, limit?: number) => Effect.Effect<ReadonlyArray<string>, McpError.McpClientError>
}>()("test/Acme") {
  static readonly layer = Layer.effect(
    Acme,
    Effect.map(McpClient.McpClient, (client) => ({
      search: (query, limit) =>
        Effect.map(client.request(Search, limit === undefined ? { query } : { query, limit }), (r) => r.hits)
    }))
  )
}

/** The SDK v2 server with the extension's handler; every POST's `Mcp-Method` and `Mcp-Name` headers recorded. */
const serve = Effect.gen(function*() {
  const headers: Array<Http.IncomingHttpHeaders> = []
  const make = () => {
    const server = new McpServer({ name: "acme", version: "1.0.0" }, { capabilities: { tools: {} } })
    server.server.setRequestHandler(
      "acme/search",
      { params: Schema.toStandardSchemaV1(SearchParams) },
      (params) => ({ hits: Array.from({ length: params.limit ?? 2 }, (_, i) => `${params.query} #${i + 1}`) })
    )
    return server
  }
  const handler = createMcpHandler(make, { keepAliveMs: 0 })
  const node = toNodeHandler(handler)
  const url = yield* listen((req, res) => {
    if (req.method === "POST") headers.push(req.headers)
    void node({
      method: req.method ?? "GET",
      url: req.url ?? "/",
      headers: req.headers,
      [Symbol.asyncIterator]: () => req[Symbol.asyncIterator]()
    }, res)
  })
  yield* Effect.addFinalizer(() => Effect.promise(() => handler.close()))
  return { url: `${url}/mcp`, headers }
})

describe("an extension's request method", () => {
  for (const era of ["modern", "legacy"] as const) {
    it.live(`is sent by its definition and answered by the SDK v2 server (${era})`, () =>
      Effect.gen(function*() {
        const server = yield* serve
        const context = yield* Layer.build(
          Acme.layer.pipe(
            Layer.provideMerge(McpClient.layerHttp({ url: server.url }, { era, healthCheckInterval: false })),
            Layer.provide(NodeHttpClient.layerUndici)
          )
        )
        const acme = Context.get(context, Acme)
        assert.deepStrictEqual(yield* acme.search("effect"), ["effect #1", "effect #2"])
        assert.deepStrictEqual(yield* acme.search("mcp", 1), ["mcp #1"])
        const session = yield* (yield* Effect.provide(McpClient.McpClient, context)).session
        assert.strictEqual(session.era, era)
        const searches = server.headers.filter((h) => h["mcp-method"] === "acme/search")
        if (era === "modern") {
          // the definition's nameField: the header a gateway routes by
          assert.deepStrictEqual(searches.map((h) => h["mcp-name"]), ["effect", "mcp"])
        } else {
          assert.deepStrictEqual(searches, [])
        }
      }).pipe(Effect.scoped))
  }

  it.live("parameters its schema refuses are never sent", () =>
    Effect.gen(function*() {
      const server = yield* serve
      const context = yield* Layer.build(
        Acme.layer.pipe(
          Layer.provideMerge(McpClient.layerHttp({ url: server.url }, { healthCheckInterval: false })),
          Layer.provide(NodeHttpClient.layerUndici)
        )
      )
      const error = yield* Effect.flip(Context.get(context, Acme).search("x", 1.5))
      assert.strictEqual(error._tag, "ProtocolError")
      if (error._tag === "ProtocolError") assert.strictEqual(error.reason, "InvalidParams")
      assert.deepStrictEqual(server.headers.filter((h) => h["mcp-method"] === "acme/search"), [])
    }).pipe(Effect.scoped))
})
