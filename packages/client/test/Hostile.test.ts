/**
 * Hostile servers (real child processes): what a server sends may be built to stall the event loop, crash the
 * client or reach what it should not. Each case ends in a typed error or a dropped frame, quickly.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as Logger from "effect/Logger"
import * as Url from "node:url"
import * as McpClient from "../src/McpClient.js"
import * as StdioTransport from "../src/StdioTransport.js"
import { leastMillisOf } from "./utils/cost.js"
import { eventually } from "./utils/eventually.js"

const hostile = Url.fileURLToPath(new URL("./fixtures/stdio/hostile.mjs", import.meta.url))

const client = (mode: string, layers: Layer.Layer<never> = Layer.empty) =>
  McpClient.layer({ healthCheckInterval: false, probeTimeout: "300 millis" }).pipe(
    Layer.provide(layers),
    Layer.provide(StdioTransport.layer({ command: process.execPath, args: [hostile, mode], closeTimeout: "500 millis" })),
    Layer.provide(NodeServices.layer)
  )

describe("hostile servers", () => {
  it.live("ReDoS: an output schema pattern built to backtrack is matched in linear time", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      yield* mcp.listTools()
      // a backtracking engine needs 2^40 steps for each of the two values: hours
      const match = Effect.flip(mcp.callTool({ name: "match" }, { timeout: "20 seconds" }))
      const error = yield* match
      assert.strictEqual(error._tag, "ProtocolError")
      assert.include(error.message, "must match the pattern")
      // it costs about what a round trip costs (compared with one measured here, never with milliseconds)
      const ratio = (yield* leastMillisOf(match, 3)) / Math.max(yield* leastMillisOf(mcp.listTools(), 3), 0.05)
      assert.isBelow(ratio, 20)
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

  it.live("terminal controls in what the client logs of a server (a bad line, its log messages) are escaped", () =>
    Effect.gen(function*() {
      const logged: Array<string> = []
      const logger = Logger.make(({ fiber, message }) => {
        logged.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
        for (const value of Object.values(fiber.getRef(References.CurrentLogAnnotations))) logged.push(String(value))
      })
      const result = yield* Effect.gen(function*() {
        const mcp = yield* McpClient.McpClient
        const answer = yield* mcp.callTool({ name: "echo" }, { timeout: "20 seconds" })
        // the log messages arrive before the answer; the bad line too
        yield* eventually(() => logged.filter((line) => line.includes("red")).length > 0, "the forwarded log")
        return answer
      }).pipe(
        Effect.provide(
          McpClient.layer({ healthCheckInterval: false, serverLogs: "logger" }).pipe(
            Layer.provide(StdioTransport.layer({ command: process.execPath, args: [hostile, "terminal"] })),
            Layer.provide(NodeServices.layer)
          )
        ),
        Effect.provide(Logger.layer([logger])),
        Effect.provideService(References.MinimumLogLevel, "All")
      )
      assert.deepStrictEqual(result.content, [{ type: "text", text: "done" }])
      const all = logged.join("\n")
      // what a terminal acts on or draws as nothing: C0 but newline, DEL, C1, bidirectional controls, tag characters
      assert.notMatch(all, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|\udb40[\udc00-\udc7f]/)
      assert.include(all, "\\x1b]0;owned\\x07\\x1b[2J not json \\u{e0049}\\u{e0047}\\u{e004e}")
      assert.include(all, "\\x1b[31mred\\u202eevil\\u{e0049}\\u{e0047}\\u{e004e}\\x0d")
      assert.include(all, "logger\\x1b[8m")
      assert.include(all, "\\x9b2J\\u2066")
    }))
})
