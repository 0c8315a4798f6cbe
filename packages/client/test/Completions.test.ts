/**
 * K6: completions are answered once per question: identical requests at once share one, a result is kept for
 * `completionCacheTtl` (5 s by default), and kept results are dropped when the server's prompts change.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/testing/TestClock"
import * as McpClient from "../src/McpClient.js"
import * as Scripted from "./utils/scriptedTransport.js"

const completing: Scripted.Script = Scripted.legacyScript((message, ctx) => {
  if (!("method" in message) || !("id" in message) || message.method !== "completion/complete") return Effect.void
  const value = (message.params as { argument: { value: string } }).argument.value
  return ctx.reply(message.id, { completion: { values: [`${value}1`, `${value}2`] } })
})

const layer = (options: McpClient.McpClientOptions = {}) =>
  McpClient.layer({ healthCheckInterval: false, ...options }).pipe(Layer.provideMerge(Scripted.layer(completing)))

const ask = (value: string) =>
  Effect.flatMap(McpClient.McpClient, (client) =>
    client.complete({ ref: { type: "ref/prompt", name: "p" }, argument: { name: "a", value } }))

const sent = Effect.flatMap(Scripted.ScriptLog, (log) =>
  Effect.map(Ref.get(log.sent), (all) => Scripted.sentMethods(all).filter((m) => m === "completion/complete").length))

describe("completions (K6)", () => {
  it.effect("the same question is sent once, at once or within the time to live; another value is its own", () =>
    Effect.gen(function*() {
      const [a, b] = yield* Effect.all([ask("al"), ask("al")], { concurrency: 2 })
      assert.deepStrictEqual([a.completion.values, b.completion.values], [["al1", "al2"], ["al1", "al2"]])
      yield* ask("al")
      assert.strictEqual(yield* sent, 1)
      yield* ask("b")
      assert.strictEqual(yield* sent, 2)
      yield* TestClock.adjust("5 seconds")
      yield* ask("al")
      assert.strictEqual(yield* sent, 3, "past the time to live")
    }).pipe(Effect.provide(layer())))

  it.effect("a change of the server's prompts drops what was kept", () =>
    Effect.gen(function*() {
      yield* ask("al")
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.notify("notifications/prompts/list_changed")
      yield* Effect.yieldNow
      yield* ask("al")
      assert.strictEqual(yield* sent, 2)
    }).pipe(Effect.provide(layer())))

  it.effect("completionCacheTtl: false sends every question", () =>
    Effect.gen(function*() {
      yield* ask("al")
      yield* ask("al")
      assert.strictEqual(yield* sent, 2)
    }).pipe(Effect.provide(layer({ completionCacheTtl: false }))))
})
