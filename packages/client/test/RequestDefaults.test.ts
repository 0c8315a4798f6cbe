/**
 * Request defaults as references: `McpClient.withRequestTimeout`, `withMeta` and `withRequestDefaults` reach every
 * method (the fast path, the listings, a generic request), below each call's own options.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import * as McpClient from "../src/McpClient.js"
import type * as McpError from "../src/McpError.js"
import * as Scripted from "./utils/scriptedTransport.js"

// answers ping at once; every other request waits for ever
const script = Scripted.legacyScript((message, ctx) =>
  "method" in message && "id" in message && message.method === "ping" ? ctx.reply(message.id, {}) : Effect.void
)

const layer = McpClient.layer({ healthCheckInterval: false }).pipe(
  Layer.provideMerge(Scripted.layer(script, { fastRequest: true }))
)

const timeoutOf = (exit: unknown): number | undefined => {
  const failure = exit as { readonly _tag: string; readonly cause?: unknown }
  const error = (failure.cause as { readonly reasons?: ReadonlyArray<{ readonly error?: McpError.McpClientError }> })
    ?.reasons?.[0]?.error
  return error?._tag === "RequestTimeout" ? error.timeoutMillis : undefined
}

describe("request defaults", () => {
  it.effect("withRequestTimeout is the timeout of every method's requests that set none", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const calls = [
        client.listTools(),
        client.callTool({ name: "slow" }),
        client.readResource({ uri: "file:///slow" }),
        client.getPrompt({ name: "slow" }),
        client.request("example/custom", {}, Schema.Unknown)
      ].map((call) => Effect.asVoid(call).pipe(McpClient.withRequestTimeout("1 second"), Effect.exit))
      const fibers = yield* Effect.forEach(calls, (call) => Effect.forkChild(call, { startImmediately: true }))
      // a call's own timeout wins over the default
      const own = yield* client.callTool({ name: "slow" }, { timeout: "3 seconds" }).pipe(
        McpClient.withRequestTimeout("1 second"),
        Effect.exit,
        Effect.forkChild({ startImmediately: true })
      )
      yield* TestClock.adjust("1 second")
      const exits = yield* Effect.forEach(fibers, Fiber.join)
      assert.deepStrictEqual(exits.map(timeoutOf), [1000, 1000, 1000, 1000, 1000])
      assert.isUndefined(own.pollUnsafe())
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(timeoutOf(yield* Fiber.join(own)), 3000)
    }).pipe(Effect.provide(layer)))

  it.effect("withMeta adds to every request's _meta, nested ones merged and the call's own entries winning", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.ping().pipe(McpClient.withMeta({ "example.com/tenant": "acme", "example.com/trace": "outer" }))
      yield* client.ping({ meta: { "example.com/trace": "own" } }).pipe(
        McpClient.withMeta({ "example.com/trace": "inner" }),
        McpClient.withMeta({ "example.com/tenant": "acme" })
      )
      yield* client.ping()
      const log = yield* Scripted.ScriptLog
      const metas = (yield* Ref.get(log.sent)).flatMap(({ message }) =>
        "method" in message && message.method === "ping"
          ? [(message.params as { readonly _meta?: Record<string, unknown> } | undefined)?._meta ?? {}]
          : []
      )
      assert.deepStrictEqual(metas, [
        { "example.com/tenant": "acme", "example.com/trace": "outer" },
        { "example.com/tenant": "acme", "example.com/trace": "own" },
        {}
      ])
    }).pipe(Effect.provide(layer)))
})
