import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as McpClient from "../src/McpClient.js"
import * as Transport from "../src/Transport.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as TestClock from "effect/testing/TestClock"
import * as Scripted from "./utils/scriptedTransport.js"

const SUB = "io.modelcontextprotocol/subscriptionId"

const capabilities = {
  tools: { listChanged: true },
  prompts: { listChanged: true },
  resources: { subscribe: true, listChanged: true }
}

const listens = (sent: ReadonlyArray<Scripted.Sent>) =>
  sent.flatMap((s) =>
    "method" in s.message && "id" in s.message && s.message.method === "subscriptions/listen"
      ? [{ connection: s.connection, message: s.message }]
      : []
  )

/** A modern server that acknowledges every listen with what it asked for. */
const modernListenServer: Scripted.Script = (message, ctx) => {
  if (!("method" in message) || !("id" in message)) return Effect.void
  if (message.method === "server/discover") {
    return ctx.reply(message.id, Scripted.discoverResult({ capabilities }))
  }
  if (message.method === "subscriptions/listen") {
    const asked = (message.params as { notifications: unknown }).notifications
    return ctx.notify("notifications/subscriptions/acknowledged", {
      _meta: { [SUB]: message.id },
      notifications: asked
    })
  }
  return Effect.void
}

const awaitListens = (n: number) =>
  Effect.gen(function*() {
    const log = yield* Scripted.ScriptLog
    for (let i = 0; i < 10_000; i++) {
      const found = listens(yield* Ref.get(log.sent))
      if (found.length >= n) return found
      yield* Effect.yieldNow
    }
    return yield* Effect.die(new Error(`expected ${n} listens`))
  })

/** Moves the clock in small steps until `check` finds what it looks for. */
const advanceUntil = <A>(check: Effect.Effect<A | undefined, never, Scripted.ScriptLog>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 300; i++) {
      const found = yield* check
      if (found !== undefined) return found
      yield* TestClock.adjust("100 millis")
    }
    const log = yield* Scripted.ScriptLog
    const sent = yield* Ref.get(log.sent)
    return yield* Effect.die(
      new Error(
        `not found in time; sent: ${sent.map((s) => `${s.connection}:${"method" in s.message ? s.message.method : "response"}`).join(" ")}`
      )
    )
  })

const settle = Effect.repeat(Effect.yieldNow, { times: 200 })

const modernLayer = McpClient.layer({ healthCheckInterval: false, reconnect: Schedule.spaced("1 seconds") }).pipe(
  Layer.provideMerge(Scripted.layer(modernListenServer))
)

describe("modern subscriptions/listen", () => {
  it.effect("the acknowledgement first; two listens demultiplexed by subscription id", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const tools = yield* client.listen({ toolsListChanged: true }).pipe(Stream.take(2), Stream.runCollect, Effect.forkChild)
      const updates = yield* client.listen({ resourceSubscriptions: ["file:///a.txt"] }).pipe(
        Stream.take(2),
        Stream.runCollect,
        Effect.forkChild
      )
      const [first, second] = yield* awaitListens(2)
      yield* settle // the acknowledgements go out first
      assert.deepStrictEqual(first.message.params, {
        notifications: { toolsListChanged: true },
        _meta: (first.message.params as { _meta: unknown })._meta
      })
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      // the updates for the second listen come first: each stream gets only its own
      yield* ctx.notify("notifications/resources/updated", { uri: "file:///a.txt", _meta: { [SUB]: second.message.id } })
      yield* ctx.notify("notifications/tools/list_changed", { _meta: { [SUB]: first.message.id } })
      const toolEvents = yield* Fiber.join(tools)
      const updateEvents = yield* Fiber.join(updates)
      assert.deepStrictEqual(toolEvents.map((n) => n.method), [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed"
      ])
      assert.deepStrictEqual(updateEvents.map((n) => n.method), [
        "notifications/subscriptions/acknowledged",
        "notifications/resources/updated"
      ])
    }).pipe(Effect.provide(modernLayer)))

  it.effect("only what the server advertises is asked for", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.listen({ toolsListChanged: true, promptsListChanged: true }).pipe(
        Stream.runDrain,
        Effect.forkScoped
      )
      const [listen] = yield* awaitListens(1)
      assert.deepStrictEqual((listen.message.params as { notifications: unknown }).notifications, {
        toolsListChanged: true
      })
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false }).pipe(
        Layer.provideMerge(Scripted.layer((message, ctx) =>
          "method" in message && "id" in message && message.method === "server/discover"
            ? ctx.reply(message.id, Scripted.discoverResult({ capabilities: { tools: { listChanged: true } } }))
            : Effect.void
        ))
      )
    )))

  it.effect("the server ends a listen with its result, or by cancelling it: the stream ends", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const byResult = yield* client.listen({ toolsListChanged: true }).pipe(Stream.runCollect, Effect.forkChild)
      const [first] = yield* awaitListens(1)
      yield* settle // the acknowledgement goes out first (Effect 4 starts the script's fiber after this one yields)
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.reply(first.message.id, { resultType: "complete", _meta: { [SUB]: first.message.id } })
      assert.strictEqual((yield* Fiber.join(byResult)).length, 1) // the acknowledgement
      const byCancel = yield* client.listen({ toolsListChanged: true }).pipe(Stream.runCollect, Effect.forkChild)
      const [, second] = yield* awaitListens(2)
      yield* settle
      yield* ctx.notify("notifications/cancelled", { requestId: second.message.id, _meta: { [SUB]: second.message.id } })
      assert.strictEqual((yield* Fiber.join(byCancel)).length, 1)
    }).pipe(Effect.provide(modernLayer)))

  it.effect("a dropped stream is listened again (same filter, new id) after the reconnect", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const events = yield* client.listen({ toolsListChanged: true }).pipe(Stream.take(3), Stream.runCollect, Effect.forkChild)
      yield* awaitListens(1)
      yield* settle // the first acknowledgement arrives before the drop
      const log = yield* Scripted.ScriptLog
      const ctx1 = (yield* Ref.get(log.current))!
      yield* ctx1.close("dropped")
      const all = yield* advanceUntil(Effect.map(Ref.get(log.sent), (sent) => {
        const found = listens(sent)
        return found.length >= 2 ? found : undefined
      }))
      yield* settle
      assert.strictEqual(all[1].connection, 2)
      assert.notStrictEqual(all[1].message.id, all[0].message.id)
      assert.deepStrictEqual(all[1].message.params, {
        ...(all[0].message.params as object),
        _meta: (all[1].message.params as { _meta: unknown })._meta
      })
      const ctx2 = (yield* Ref.get(log.current))!
      yield* ctx2.notify("notifications/tools/list_changed", { _meta: { [SUB]: all[1].message.id } })
      const seen = (yield* Fiber.join(events)).map((n) => n.method)
      assert.deepStrictEqual(seen, [
        "notifications/subscriptions/acknowledged",
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed"
      ])
    }).pipe(Effect.provide(modernLayer)))

  it.effect("a dropped stream of a client that will not reconnect fails with the transport error", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const events = yield* client.listen({ toolsListChanged: true }).pipe(Stream.runCollect, Effect.result, Effect.forkChild)
      yield* awaitListens(1)
      const ctx = (yield* Ref.get((yield* Scripted.ScriptLog).current))!
      yield* ctx.close("dropped")
      const outcome = yield* Fiber.join(events)
      assert.isTrue(outcome._tag === "Failure" && outcome.failure._tag === "TransportError")
      assert.strictEqual((yield* client.state)._tag, "Closed")
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, reconnect: false }).pipe(
        Layer.provideMerge(Scripted.layer(modernListenServer))
      )
    )))

  it.effect("ending the stream cancels the listen", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const first = yield* client.listen({ toolsListChanged: true }).pipe(Stream.runHead)
      assert.strictEqual(first._tag === "Some" ? first.value.method : "", "notifications/subscriptions/acknowledged")
      const [listen] = yield* awaitListens(1)
      const log = yield* Scripted.ScriptLog
      assert.deepStrictEqual(yield* Ref.get(log.cancels), [{ id: listen.message.id, reason: "interrupted" }])
    }).pipe(Effect.provide(modernLayer)))
})

describe("legacy subscriptions", () => {
  const legacyServer = Scripted.legacyScript((message, ctx) => {
    if (!("method" in message) || !("id" in message)) return Effect.void
    if (
      message.method === "resources/subscribe" || message.method === "resources/unsubscribe" ||
      message.method === "logging/setLevel"
    ) {
      return ctx.reply(message.id, {})
    }
    return Effect.void
  })
  const legacyLayer = McpClient.layer({ healthCheckInterval: false, reconnect: Schedule.spaced("1 seconds") }).pipe(
    Layer.provideMerge(Scripted.layer((message, ctx) =>
      "method" in message && "id" in message && message.method === "initialize"
        ? ctx.reply(message.id, { ...Scripted.initializeResult(), capabilities: { ...capabilities, logging: {} } })
        : legacyServer(message, ctx)
    ))
  )
  const methodsOn = (sent: ReadonlyArray<Scripted.Sent>, method: string) =>
    sent.filter((s) => "method" in s.message && s.message.method === method)

  it.effect("resources/subscribe, updates and list changes on the stream, unsubscribe at the end", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const events = yield* client.listen({ toolsListChanged: true, resourceSubscriptions: ["file:///a.txt"] }).pipe(
        Stream.take(2),
        Stream.runCollect,
        Effect.forkChild
      )
      const log = yield* Scripted.ScriptLog
      for (let i = 0; i < 1000 && methodsOn(yield* Ref.get(log.sent), "resources/subscribe").length === 0; i++) {
        yield* Effect.yieldNow
      }
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.notify("notifications/prompts/list_changed") // not asked for
      yield* ctx.notify("notifications/resources/updated", { uri: "file:///other.txt" }) // not asked for
      yield* ctx.notify("notifications/resources/updated", { uri: "file:///a.txt" })
      yield* ctx.notify("notifications/tools/list_changed")
      const seen = (yield* Fiber.join(events)) as ReadonlyArray<McpSchema.ServerNotification>
      assert.deepStrictEqual(seen.map((n) => n.method), [
        "notifications/resources/updated",
        "notifications/tools/list_changed"
      ])
      const sent = yield* Ref.get(log.sent)
      assert.strictEqual(methodsOn(sent, "resources/subscribe").length, 1)
      assert.strictEqual(methodsOn(sent, "resources/unsubscribe").length, 1)
    }).pipe(Effect.provide(legacyLayer)))

  /** Sets a log level and subscribes to a resource, once the server saw the subscription. */
  const withLevelAndSubscription = Effect.gen(function*() {
    const client = yield* McpClient.McpClient
    yield* client.setLoggingLevel("error")
    yield* client.listen({ resourceSubscriptions: ["file:///a.txt"] }).pipe(Stream.runDrain, Effect.forkScoped)
    const log = yield* Scripted.ScriptLog
    for (let i = 0; i < 1000 && methodsOn(yield* Ref.get(log.sent), "resources/subscribe").length === 0; i++) {
      yield* Effect.yieldNow
    }
    return { ctx: (yield* Ref.get(log.current))!, log }
  })

  it.effect("subscriptions and the log level are restored after a reconnect", () =>
    Effect.gen(function*() {
      const { ctx, log } = yield* withLevelAndSubscription
      yield* ctx.close("restarted")
      const sent = yield* advanceUntil(Effect.map(Ref.get(log.sent), (sent) =>
        methodsOn(sent, "resources/subscribe").some((s) => s.connection === 2) ? sent : undefined))
      const second = sent.filter((s) => s.connection === 2).map((s) => ("method" in s.message ? s.message.method : ""))
      assert.includeMembers(second, ["initialize", "logging/setLevel", "resources/subscribe"])
    }).pipe(Effect.provide(legacyLayer)))

  it.effect("subscriptions and the log level are restored in the new session after the server forgot one", () =>
    Effect.gen(function*() {
      const { ctx, log } = yield* withLevelAndSubscription
      yield* ctx.raw(Transport.TransportEvent.SessionExpired({ id: 99 }))
      const sent = yield* advanceUntil(Effect.map(Ref.get(log.sent), (sent) =>
        methodsOn(sent, "resources/subscribe").length === 2 ? sent : undefined))
      // on the same connection: a second initialize, then the state sent again
      assert.isTrue(sent.every((s) => s.connection === 1))
      const methods = Scripted.sentMethods(sent)
      const reinitialized = methods.lastIndexOf("initialize")
      assert.isAbove(reinitialized, 0)
      assert.includeMembers(methods.slice(reinitialized), ["logging/setLevel", "resources/subscribe"])
    }).pipe(Effect.provide(legacyLayer)))
})
