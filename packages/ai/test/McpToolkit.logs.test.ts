/**
 * What the toolkit logs of a hostile server (a real child process over stdio) reaches the application's logger
 * escaped: no terminal control, no invisible character, no carriage return.
 */
import { McpToolkit } from "@conduit-mcp/ai"
import { McpHub } from "@conduit-mcp/client"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Url from "node:url"

const hostile = Url.fileURLToPath(new URL("./fixtures/hostile-list-error.mjs", import.meta.url))

// what a terminal acts on or draws as nothing: C0 (a newline included: a log line is one line), DEL, C1, the
// bidirectional controls, tag characters
const RAW = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|\udb40[\udc00-\udc7f]/

describe("McpToolkit logs", () => {
  it.live("a server's error message is logged with its controls escaped", () =>
    Effect.gen(function*() {
      const logged: Array<string> = []
      const logger = Logger.make(({ fiber, message }) => {
        logged.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
        for (const value of Object.values(fiber.getRef(References.CurrentLogAnnotations))) logged.push(String(value))
      })
      const built = yield* Effect.gen(function*() {
        const hub = yield* McpHub.make({
          servers: [
            McpHub.stdio("hostile", { command: process.execPath, args: [hostile], closeTimeout: "500 millis" })
          ],
          client: { healthCheckInterval: false, probeTimeout: "300 millis" }
        })
        return yield* McpToolkit.make(McpToolkit.fromHub(hub))
      }).pipe(
        Effect.scoped,
        Effect.provide(NodeServices.layer),
        Effect.provide(Logger.layer([logger])),
        Effect.provideService(References.MinimumLogLevel, "All")
      )
      assert.strictEqual(built.origins.size, 0)
      const line = logged.find((text) => text.startsWith("McpToolkit: tools left out"))
      assert.isDefined(line)
      assert.notMatch(line!, RAW)
      assert.include(
        line!,
        "\\x1b]0;owned\\x07\\x1b[2Jlisting failed\\x9b31m\\u202eevil\\u{e0049}\\u{e0047}\\u{e004e}\\x0dall good"
      )
    }))
})
