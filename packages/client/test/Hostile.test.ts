/**
 * Hostile servers (real child processes): what a server sends may be built to stall the event loop, crash the
 * client or reach what it should not. Each case ends in a typed error or a dropped frame, quickly.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Url from "node:url"
import * as McpClient from "../src/McpClient.js"
import * as StdioTransport from "../src/StdioTransport.js"

const hostile = Url.fileURLToPath(new URL("./fixtures/stdio/hostile.mjs", import.meta.url))

const client = (mode: string, layers: Layer.Layer<never> = Layer.empty) =>
  McpClient.layer({ healthCheckInterval: false, probeTimeout: "300 millis" }).pipe(
    Layer.provide(layers),
    Layer.provide(StdioTransport.layer({ command: process.execPath, args: [hostile, mode], closeTimeout: "500 millis" })),
    Layer.provide(NodeContext.layer)
  )

const elapsed = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = performance.now()
    const result = yield* self
    return [result, performance.now() - start] as const
  })

describe("hostile servers", () => {
  it.live("ReDoS: an output schema pattern built to backtrack is matched in linear time", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      yield* mcp.listTools()
      // a backtracking engine needs 2^40 steps for each of the two values: hours
      const [error, millis] = yield* elapsed(Effect.flip(mcp.callTool({ name: "match" }, { timeout: "20 seconds" })))
      assert.strictEqual(error._tag, "ProtocolError")
      assert.include(error.message, "must match the pattern")
      assert.isBelow(millis, 2000)
    }).pipe(Effect.provide(client("redos"))))
  it.live("a line holding an array nested 200,000 deep is dropped; the connection stays", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      const { pid } = (yield* mcp.session).transport
      const first = yield* mcp.callTool({ name: "echo", arguments: { text: "one" } }, { timeout: "20 seconds" })
      const second = yield* mcp.callTool({ name: "echo", arguments: { text: "two" } }, { timeout: "20 seconds" })
      assert.deepStrictEqual([first.content, second.content], [
        [{ type: "text", text: "one" }],
        [{ type: "text", text: "two" }]
      ])
      assert.strictEqual((yield* mcp.session).transport.pid, pid, "the same connection")
    }).pipe(Effect.provide(client("deep-batch"))))
})
