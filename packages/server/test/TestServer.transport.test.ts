/**
 * `TestServer.layer` without a client on top: the in-process `Transport` it gives reaches the server, the server
 * records what it received, and the transport's `Control` counts the connection. (`TestServer.test.ts` does the
 * same through `McpClient`.)
 */
import * as InProcessTransport from "@conduit-mcp/client/InProcessTransport"
import * as Transport from "@conduit-mcp/client/Transport"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as McpServer from "../src/McpServer.js"
import * as TestServer from "../src/TestServer.js"

const echo = McpServer.tool({
  name: "echo",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(`echo: ${text}`)
})

const modern = (params: Record<string, unknown>) => ({
  ...params,
  _meta: {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {}
  }
})

describe("TestServer.layer", () => {
  it.effect("gives a transport to the server, the server's record and the transport's control", () =>
    Effect.gen(function*() {
      const transport = yield* Transport.Transport
      const events = yield* Queue.unbounded<Transport.TransportEvent>()
      const connection = yield* transport.connect((event) => Queue.offer(events, event))
      yield* connection.request({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: modern({ name: "echo", arguments: { text: "hi" } })
      }, {})
      const event = yield* Queue.take(events)
      assert.strictEqual(event._tag, "Response")
      if (event._tag !== "Response") return
      assert.strictEqual(event.message.id, 1)
      assert.deepStrictEqual("result" in event.message ? event.message.result : undefined, {
        content: [{ type: "text", text: "echo: hi" }],
        resultType: "complete",
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "t", version: "1" } }
      })
      const server = yield* McpServer.McpServer
      assert.strictEqual((yield* server.received("tools/call")).length, 1)
      const control = yield* InProcessTransport.Control
      assert.strictEqual(yield* control.open, 1)
    }).pipe(Effect.provide(TestServer.layer({ name: "t", version: "1", tools: [echo] }))))
})
