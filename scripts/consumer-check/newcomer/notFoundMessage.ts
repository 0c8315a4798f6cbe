// Item 5 of the 1.0 API issue, "messages", the library's part: a URL where nothing serves MCP (an ordinary web
// server answering 404 with its HTML page) fails the client's connection with one message that names the status
// without repeating it ("… (HTTP 404) (HTTP 404)"), says to check the URL's path, and quotes no HTML; in the era the
// client finds by itself and in the modern era pinned.
import { McpClient } from "@conduit-mcp/client"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { expect, run } from "./guard.js"

const notFoundServer = Effect.acquireRelease(
  Effect.callback<Http.Server>((resume) => {
    const server = Http.createServer((_request, response) =>
      void response.writeHead(404, { "content-type": "text/html" })
        .end("<!doctype html>\n<html><body><h1>Not Found</h1></body></html>")
    )
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
)

const messageOf = (url: string, era: "modern" | undefined) =>
  Effect.gen(function*() {
    const client = McpClient.layerHttp({ url }, era === undefined ? {} : { era }).pipe(
      Layer.provide(NodeHttpClient.layerUndici)
    )
    const error = yield* Effect.flip(Effect.provide(Effect.flatMap(McpClient.McpClient, (c) => c.session), client))
    return error.message
  })

const program = Effect.gen(function*() {
  const server = yield* notFoundServer
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/not-mcp`
  for (const era of [undefined, "modern"] as const) {
    const message = yield* messageOf(url, era)
    const where = `the message (${era ?? "era found by the client"}) ${JSON.stringify(message)}`
    yield* expect(message.includes("HTTP 404"), `${where} does not name the status`)
    yield* expect(!/\(HTTP 404\)/.test(message), `${where} names the status twice, once more as "(HTTP 404)"`)
    yield* expect(message.split("http transport:").length === 2, `${where} repeats its prefix`)
    yield* expect(message.includes("check its path"), `${where} does not say to check the URL's path`)
    yield* expect(!/<html|Not Found<|doctype/i.test(message), `${where} quotes the server's HTML page`)
  }
}).pipe(Effect.scoped)

await run("item 5, messages: a 404 where nothing serves MCP reads once and hints at the path", program)
