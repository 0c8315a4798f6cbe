/**
 * The shortcut layers: a client over stdio or HTTP in one layer (`McpClient.layerStdio`, `McpClient.layerHttp`),
 * against server-everything as a child process and over streamable HTTP.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as McpClient from "../src/McpClient.js"
import * as ToolResult from "../src/ToolResult.js"
import * as Everything from "./fixtures/http/everything.js"
import { everything } from "./utils/realServers.js"

const echo = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  const session = yield* client.session
  const result = yield* client.callTool({ name: "echo", arguments: { message: "hi" } }, { isError: "fail" })
  // a missing resource is the tagged error a test server gives too (this server answers -32602)
  const missing = yield* client.readResource({ uri: "demo://nothing/here" }).pipe(
    Effect.map(() => "found"),
    Effect.catchTag("ResourceNotFound", (error) => Effect.succeed(`missing ${error.uri} (${error.cause.code})`))
  )
  return {
    text: ToolResult.text(result),
    missing,
    binding: session.transport.binding,
    client: session.serverInfo?.name
  }
})

describe("shortcut layers", () => {
  it.live("layerStdio: one layer over a spawned server", () =>
    Effect.gen(function*() {
      const answer = yield* echo.pipe(
        Effect.provide(
          McpClient.layerStdio(
            { command: everything.command, args: [...everything.args] },
            { clientInfo: { name: "shortcut-test", version: "1.0.0" } }
          ).pipe(Layer.provide(NodeServices.layer))
        )
      )
      assert.deepStrictEqual(answer, {
        text: "Echo: hi",
        missing: "missing demo://nothing/here (-32602)",
        binding: "stdio",
        client: everything.serverInfo.name
      })
    }))

  it.live("layerHttp: one layer over a URL", () =>
    Effect.gen(function*() {
      const server = yield* Everything.start("streamableHttp")
      const answer = yield* echo.pipe(
        Effect.provide(McpClient.layerHttp({ url: server.url }).pipe(Layer.provide(NodeHttpClient.layerUndici)))
      )
      assert.deepStrictEqual(answer, {
        text: "Echo: hi",
        missing: "missing demo://nothing/here (-32602)",
        binding: "streamable-http",
        client: everything.serverInfo.name
      })
    }).pipe(Effect.scoped))
})
