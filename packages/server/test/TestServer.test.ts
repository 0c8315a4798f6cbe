import * as InProcessTransport from "@conduit-mcp/client/InProcessTransport"
import * as McpClient from "@conduit-mcp/client/McpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as McpServer from "../src/McpServer.js"
import * as TestServer from "../src/TestServer.js"

const echo = McpServer.tool({
  name: "echo",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(`echo: ${text}`)
})

describe("TestServer", () => {
  it.effect("gives the client a transport to the server, and the server's record of what it received", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const result = yield* client.callTool({ name: "echo", arguments: { text: "hi" } })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "echo: hi" }])
      const server = yield* McpServer.McpServer
      const calls = yield* server.received("tools/call")
      assert.strictEqual(calls.length, 1)
      const control = yield* InProcessTransport.Control
      assert.strictEqual(yield* control.open, 1)
    }).pipe(Effect.provide(
      McpClient.layer().pipe(Layer.provideMerge(TestServer.layer({ name: "t", version: "1", tools: [echo] })))
    )))

  it.effect("a server made without `record` keeps no record", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "t", version: "1", tools: [echo] })
      const client = yield* McpClient.make().pipe(Effect.provide(InProcessTransport.layer(server)))
      yield* client.callTool({ name: "echo", arguments: { text: "hi" } })
      assert.deepStrictEqual(yield* server.received(), [])
      assert.deepStrictEqual(yield* server.interrupted, [])
    }))
})
