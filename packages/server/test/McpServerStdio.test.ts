import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as McpServer from "../src/McpServer.js"

describe("McpServer.layerStdio", () => {
  it.effect("serves newline-delimited JSON-RPC over the given streams for the life of the layer", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "stdio-test",
        version: "1",
        tools: [McpServer.tool({
          name: "echo",
          parameters: Schema.Struct({ text: Schema.String }),
          handler: ({ text }) => Effect.succeed(text)
        })]
      })
      const lines = yield* Queue.unbounded<string>()
      const request = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }
      }
      const input = Stream.make(new TextEncoder().encode(`${JSON.stringify(request)}\nnot json\n`))
      const output = Sink.forEach((bytes: Uint8Array) => Queue.offer(lines, new TextDecoder().decode(bytes)))
      yield* Layer.launch(McpServer.layerStdio(server, { input, output })).pipe(Effect.forkScoped)
      const first = JSON.parse(yield* Queue.take(lines))
      assert.strictEqual(first.id, 1)
      assert.strictEqual(first.result.serverInfo.name, "stdio-test")
      const second = JSON.parse(yield* Queue.take(lines))
      assert.deepStrictEqual([second.id, second.error.code], [null, -32700])
      assert.deepStrictEqual(yield* Queue.clear(lines), [])
    }))
})
