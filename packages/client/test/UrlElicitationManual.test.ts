/**
 * C4: manual controls for URL-mode interactions, and a page asked for again is not shown again.
 *
 * - 2025-11-25 `-32042`: the handler's `urlPending` lets the user retry before the server reports the page
 *   complete (or if it never does), or cancel; a retry that meets the same page again asks the controls again,
 *   never the user; the server's report, when it comes first, ends the controls' wait.
 * - 2026-07-28 `input_required` rounds: a page the user consented to is not shown again in the next rounds; the
 *   controls decide when to retry or cancel, or without them the client retries after a growing pause.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/testing/TestClock"
import * as ElicitationHandler from "../src/ElicitationHandler.js"
import * as McpClient from "../src/McpClient.js"
import * as Scripted from "./utils/scriptedTransport.js"

const page = { url: "https://auth.example.com/connect", message: "Connect your account" }

/** Legacy: tools/call fails with -32042 until the user finished on the page (`connected`). */
const legacyServer = (connected: Ref.Ref<boolean>): Scripted.Script =>
  Scripted.legacyScript((message, ctx) =>
    Effect.gen(function*() {
      if (!("method" in message) || !("id" in message) || message.method !== "tools/call") return
      if (!(yield* Ref.get(connected))) {
        return yield* ctx.fail(message.id, -32042, "URL elicitation required", {
          elicitations: [{ mode: "url", elicitationId: "connect-1", ...page }]
        })
      }
      return yield* ctx.reply(message.id, { content: [{ type: "text", text: "connected" }] })
    })
  )

/** Modern: tools/call asks for the page in every round until the user finished on it. */
const modernServer = (connected: Ref.Ref<boolean>): Scripted.Script =>
  Scripted.modernScript((message, ctx) =>
    Effect.gen(function*() {
      if (!("method" in message) || !("id" in message) || message.method !== "tools/call") return
      if (!(yield* Ref.get(connected))) {
        return yield* ctx.reply(message.id, {
          resultType: "input_required",
          inputRequests: { connect: { method: "elicitation/create", params: { mode: "url", ...page } } },
          requestState: "waiting"
        })
      }
      return yield* ctx.reply(message.id, { resultType: "complete", content: [{ type: "text", text: "connected" }] })
    })
  )

interface Handler {
  readonly shown: Ref.Ref<number>
  readonly pending: Ref.Ref<number>
}

const setup = (
  era: "legacy" | "modern",
  urlPending: ((connected: Ref.Ref<boolean>, asked: number) => Effect.Effect<"retry" | "cancel">) | undefined
) =>
  Effect.gen(function*() {
    const connected = yield* Ref.make(false)
    const handler: Handler = { shown: yield* Ref.make(0), pending: yield* Ref.make(0) }
    const service: ElicitationHandler.Service = {
      modes: ["url"],
      elicit: () => Effect.as(Ref.update(handler.shown, (n) => n + 1), { action: "accept" as const }),
      ...(urlPending === undefined ? {} : {
        urlPending: () => Effect.flatMap(Ref.updateAndGet(handler.pending, (n) => n + 1), (n) => urlPending(connected, n))
      })
    }
    const context = yield* Layer.build(
      McpClient.layer({ healthCheckInterval: false, elicitation: service }).pipe(
        Layer.provideMerge(Scripted.layer(era === "legacy" ? legacyServer(connected) : modernServer(connected)))
      )
    )
    const log = Context.get(context, Scripted.ScriptLog)
    const calls = Effect.map(Ref.get(log.sent), (sent) =>
      Scripted.sentMethods(sent).filter((m) => m === "tools/call").length)
    return { client: Context.get(context, McpClient.McpClient), handler, calls, connected, log }
  })

/** The user finishes on the page, then presses retry. */
const finishThenRetry = (connected: Ref.Ref<boolean>) => Effect.as(Ref.set(connected, true), "retry" as const)

describe("URL elicitation, manual controls (2025-11-25 -32042)", () => {
  it.effect("the user retries before any completion report: the request is sent again", () =>
    Effect.gen(function*() {
      const { calls, client, handler } = yield* setup("legacy", finishThenRetry)
      const result = yield* client.callTool({ name: "account" })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "connected" }])
      assert.strictEqual(yield* Ref.get(handler.shown), 1)
      assert.strictEqual(yield* Ref.get(handler.pending), 1)
      assert.strictEqual(yield* calls, 2)
    }))

  it.effect("a retry too early meets the same page again: the controls are asked again, the user is not", () =>
    Effect.gen(function*() {
      const { calls, client, handler } = yield* setup(
        "legacy",
        (connected, asked) => asked === 1 ? Effect.succeed("retry") : finishThenRetry(connected)
      )
      yield* client.callTool({ name: "account" })
      assert.strictEqual(yield* Ref.get(handler.shown), 1, "the page was shown once")
      assert.strictEqual(yield* Ref.get(handler.pending), 2)
      assert.strictEqual(yield* calls, 3)
    }))

  it.effect("the user cancels: the caller gets UrlElicitationRequired and nothing is sent again", () =>
    Effect.gen(function*() {
      const { calls, client } = yield* setup("legacy", () => Effect.succeed("cancel"))
      const error = yield* Effect.flip(client.callTool({ name: "account" }))
      assert.strictEqual(error._tag, "UrlElicitationRequired")
      assert.strictEqual(yield* calls, 1)
    }))

  it.effect("the server's completion report comes first: the controls' wait ends and the request is sent again", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const { calls, client, connected, handler, log } = yield* setup("legacy", () =>
        Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))))
      const call = yield* Effect.forkChild(client.callTool({ name: "account" }))
      // the user consented and the controls wait; the user finishes on the page, and the server reports it
      while ((yield* Ref.get(handler.pending)) < 1) yield* Effect.yieldNow
      yield* Ref.set(connected, true)
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.notify("notifications/elicitation/complete", { elicitationId: "connect-1" })
      const result = yield* Fiber.join(call)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "connected" }])
      yield* Deferred.await(interrupted)
      assert.strictEqual(yield* calls, 2)
    }))
})

describe("URL elicitation in input_required rounds (2026-07-28)", () => {
  it.effect("the page is shown once; the controls decide each later round", () =>
    Effect.gen(function*() {
      const { calls, client, handler } = yield* setup(
        "modern",
        (connected, asked) => asked < 3 ? Effect.succeed("retry") : finishThenRetry(connected)
      )
      const result = yield* client.callTool({ name: "account" })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "connected" }])
      assert.strictEqual(yield* Ref.get(handler.shown), 1, "the user was asked once")
      assert.strictEqual(yield* Ref.get(handler.pending), 3)
      assert.strictEqual(yield* calls, 5, "the first call, the retry after consent, three after the controls")
    }))

  it.effect("the user cancels: the call fails with InputFailed and nothing more is sent", () =>
    Effect.gen(function*() {
      const { calls, client } = yield* setup("modern", () => Effect.succeed("cancel"))
      const error = yield* Effect.flip(client.callTool({ name: "account" }))
      assert.strictEqual(error._tag, "ProtocolError")
      if (error._tag === "ProtocolError") assert.strictEqual(error.reason, "InputFailed")
      assert.strictEqual(yield* calls, 2)
    }))

  it.effect("without controls: retried after a growing pause, the user not asked again", () =>
    Effect.gen(function*() {
      const { calls, client, connected, handler } = yield* setup("modern", undefined)
      const call = yield* Effect.forkChild(client.callTool({ name: "account" }))
      const settle = Effect.repeat(Effect.yieldNow, { times: 50 })
      yield* settle
      // the first call and the retry that follows the consent at once
      assert.strictEqual(yield* calls, 2)
      yield* TestClock.adjust("999 millis")
      yield* settle
      assert.strictEqual(yield* calls, 2, "no retry before the first pause ends")
      yield* TestClock.adjust("1 millis")
      yield* settle
      assert.strictEqual(yield* calls, 3)
      yield* TestClock.adjust("1 second")
      yield* settle
      assert.strictEqual(yield* calls, 3, "the second pause is longer")
      yield* Ref.set(connected, true)
      yield* TestClock.adjust("1 second")
      const result = yield* Fiber.join(call)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "connected" }])
      assert.strictEqual(yield* calls, 4)
      assert.strictEqual(yield* Ref.get(handler.shown), 1)
    }))
})
