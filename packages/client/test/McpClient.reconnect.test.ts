import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as McpClient from "../src/McpClient.js"
import * as Transport from "../src/Transport.js"
import { advanceUntilDone, awaitSleep, withSleepLog } from "./utils/clock.js"
import * as Scripted from "./utils/scriptedTransport.js"

const crashy: Scripted.Script = Scripted.modernScript((message, ctx) => {
  if (!("method" in message) || !("id" in message) || message.method !== "tools/call") return Effect.void
  const name = (message.params as { name: string }).name
  if (name === "crash" && ctx.connection === 1) return ctx.close("killed mid-call")
  return ctx.reply(message.id, { content: [{ type: "text", text: `served by connection ${ctx.connection}` }] })
})

const awaitState = (client: McpClient.McpClientService, tag: McpClient.ConnectionState["_tag"]) =>
  Effect.gen(function*() {
    for (let i = 0; i < 10_000; i++) {
      if ((yield* client.state)._tag === tag) return
      yield* Effect.yieldNow
    }
  })

describe("reconnect", () => {
  it.effect("a server dying mid-call fails the call; the client reconnects with backoff and renegotiates", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const states: Array<string> = []
      yield* client.stateChanges.pipe(Stream.runForEach((s) => Effect.sync(() => states.push(s._tag))), Effect.forkScoped)
      yield* awaitState(client, "Connected")
      const error = yield* Effect.flip(client.callTool({ name: "crash" }))
      assert.strictEqual(error._tag, "TransportError")
      const log = yield* Scripted.ScriptLog
      assert.strictEqual(yield* Ref.get(log.connections), 1, "no reconnect before the backoff")
      const next = yield* Effect.forkChild(client.callTool({ name: "echo" }))
      yield* awaitSleep("1 seconds") // the reconnect backoff
      yield* TestClock.adjust("1 seconds")
      const result = yield* Fiber.join(next)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "served by connection 2" }])
      assert.strictEqual(yield* Ref.get(log.connections), 2)
      const probes = (yield* Ref.get(log.sent)).filter((s) => "method" in s.message && s.message.method === "server/discover")
      assert.deepStrictEqual(probes.map((p) => p.connection), [1, 2], "negotiated again")
      yield* awaitState(client, "Connected")
      assert.deepStrictEqual([...states], ["Connected", "Reconnecting", "Connecting", "Probing", "Connected"])
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, reconnect: Schedule.spaced("1 seconds") }).pipe(
        Layer.provideMerge(Scripted.layer(crashy))
      )
    ), withSleepLog))

  it.effect("when the schedule gives up, callers fail instead of waiting", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* Effect.flip(client.callTool({ name: "crash" }))
      yield* awaitSleep("1 seconds")
      yield* TestClock.adjust("1 seconds")
      const error = yield* Effect.flip(client.callTool({ name: "echo" }))
      assert.strictEqual(error._tag, "TransportError")
      assert.strictEqual((yield* client.state)._tag, "Closed")
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, reconnect: Schedule.max([Schedule.spaced("1 seconds"), Schedule.recurs(1)]) }).pipe(
        Layer.provideMerge(Scripted.layer(crashy, { connectFails: (n) => n > 1 }))
      )
    ), withSleepLog))

  it.effect("a quiet connection that fails its health check counts as closed", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.session
      const log = yield* Scripted.ScriptLog
      yield* TestClock.adjust("30 seconds") // quiet: the check is sent
      yield* TestClock.adjust("10 seconds") // unanswered: the connection is closed
      yield* TestClock.adjust("1 seconds") // backoff
      assert.strictEqual(yield* Ref.get(log.connections), 2)
      const session = yield* client.session
      assert.strictEqual(session.era, "legacy")
      const pings = (yield* Ref.get(log.sent)).filter((s) => "method" in s.message && s.message.method === "ping")
      assert.deepStrictEqual(pings.map((p) => p.connection), [1])
    }).pipe(Effect.provide(
      McpClient.layer({ era: "legacy", reconnect: Schedule.spaced("1 seconds") }).pipe(
        Layer.provideMerge(Scripted.layer(Scripted.legacyScript((message, ctx) =>
          "method" in message && "id" in message && message.method === "ping" && ctx.connection > 1
            ? ctx.reply(message.id, {})
            : Effect.void
        )))
      )
    )))

  it.effect("a healthy quiet connection answers its ping and stays", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.session
      const log = yield* Scripted.ScriptLog
      yield* TestClock.adjust("30 seconds")
      yield* TestClock.adjust("30 seconds")
      assert.strictEqual(yield* Ref.get(log.connections), 1)
      const pings = (yield* Ref.get(log.sent)).filter((s) => "method" in s.message && s.message.method === "ping")
      assert.strictEqual(pings.length, 2)
    }).pipe(Effect.provide(
      McpClient.layer({ era: "legacy" }).pipe(
        Layer.provideMerge(Scripted.layer(Scripted.legacyScript((message, ctx) =>
          "method" in message && "id" in message && message.method === "ping" ? ctx.reply(message.id, {}) : Effect.void
        )))
      )
    )))

  it.effect("legacy server pings are answered, other server requests get method-not-found", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.session
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.serverRequest(7, "ping")
      yield* ctx.serverRequest("s-1", "sampling/createMessage", { messages: [] })
      yield* Effect.yieldNow
      yield* TestClock.adjust("1 millis")
      const responses = (yield* Ref.get(log.sent)).flatMap((s) => ("method" in s.message ? [] : [s.message]))
      assert.deepStrictEqual(responses, [
        { jsonrpc: "2.0", id: 7, result: {} },
        { jsonrpc: "2.0", id: "s-1", error: { code: -32601, message: "sampling is not supported" } }
      ])
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false }).pipe(Layer.provideMerge(Scripted.layer(Scripted.legacyScript())))
    )))

  it.effect("server notifications reach subscribers as a Stream", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.session
      const subscription = yield* client.subscribe
      const received = yield* subscription.pipe(Stream.take(2), Stream.runCollect, Effect.forkChild)
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.notify("notifications/tools/list_changed")
      yield* ctx.notify("notifications/message", { level: "info", data: "hello" })
      const all = yield* Fiber.join(received)
      assert.deepStrictEqual(all.map((n) => n.method), ["notifications/tools/list_changed", "notifications/message"])
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false }).pipe(Layer.provideMerge(Scripted.layer(Scripted.modernScript())))
    )))
})

describe("cached verdict", () => {
  it.effect("a server known to be modern is never downgraded when a later probe goes unanswered", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* Effect.flip(client.callTool({ name: "crash" }))
      const next = yield* Effect.forkChild(client.callTool({ name: "echo" }))
      // backoff, connection 2 whose probe goes unanswered for 3 s, backoff, connection 3
      const result = yield* advanceUntilDone(next)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "served by connection 3" }])
      const log = yield* Scripted.ScriptLog
      assert.notInclude(Scripted.sentMethods(yield* Ref.get(log.sent)), "initialize")
      assert.strictEqual((yield* client.session).era, "modern")
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, reconnect: Schedule.spaced("1 seconds") }).pipe(
        Layer.provideMerge(Scripted.layer((message, ctx) => {
          if (!("method" in message) || !("id" in message)) return Effect.void
          if (message.method === "server/discover") {
            return ctx.connection === 2 ? Effect.void : ctx.reply(message.id, Scripted.discoverResult())
          }
          return crashy(message, ctx)
        }))
      )
    )))
})

describe("legacy session expiry", () => {
  it.effect("a SessionExpired event re-initializes on the same connection without failing anything", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.session
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.raw(Transport.TransportEvent.SessionExpired({ id: 99 }))
      yield* ctx.raw(Transport.TransportEvent.SessionExpired({ id: 100 })) // one re-initialization at a time
      for (let i = 0; i < 100 && (yield* Ref.get(log.sessions)).length < 2; i++) yield* Effect.yieldNow
      const sent = yield* Ref.get(log.sent)
      assert.deepStrictEqual(Scripted.sentMethods(sent), [
        "initialize",
        "notifications/initialized",
        "initialize",
        "notifications/initialized"
      ])
      assert.isTrue(sent.every((s) => s.connection === 1))
      assert.deepStrictEqual(yield* Ref.get(log.sessions), [
        { era: "legacy", protocolVersion: "2025-11-25" },
        { era: "legacy", protocolVersion: "2025-11-25" }
      ])
      assert.strictEqual((yield* client.state)._tag, "Connected")
    }).pipe(Effect.provide(
      McpClient.layer({ era: "legacy", healthCheckInterval: false }).pipe(
        Layer.provideMerge(Scripted.layer(Scripted.legacyScript()))
      )
    )))
})

/** Answers `echo`; never answers `silent`. */
const quiet = (era: "legacy" | "modern"): Scripted.Script => {
  const handle: Scripted.Script = (message, ctx) =>
    "method" in message && "id" in message && message.method === "tools/call" &&
      (message.params as { name: string }).name === "echo"
      ? ctx.reply(message.id, { content: [{ type: "text", text: "ok" }] })
      : Effect.void
  return era === "legacy" ? Scripted.legacyScript(handle) : Scripted.modernScript(handle)
}

describe("closing the client (its Scope)", () => {
  for (const era of ["legacy", "modern"] as const) {
    it.effect(`${era}: a waiting call fails with a Closed error, and every later call with the client's own`, () =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(
          McpClient.layer({ era, healthCheckInterval: false }).pipe(Layer.provideMerge(Scripted.layer(quiet(era)))),
          scope
        )
        const client = Context.get(context, McpClient.McpClient)
        const waiting = yield* Effect.forkChild(Effect.flip(client.callTool({ name: "silent" })))
        yield* Effect.yieldNow
        yield* Scope.close(scope, Exit.void)
        // (the connection's attempt ends first, with what it was serving)
        const first = yield* Fiber.join(waiting)
        assert.strictEqual(first._tag === "TransportError" ? first.reason : first._tag, "Closed")
        const later = yield* Effect.flip(client.callTool({ name: "echo" }))
        assert.strictEqual(later._tag === "TransportError" ? later.detail : later._tag, "the client closed")
        const again = yield* Effect.flip(client.listTools())
        assert.strictEqual(again._tag === "TransportError" ? again.detail : again._tag, "the client closed")
      }))
  }
})
