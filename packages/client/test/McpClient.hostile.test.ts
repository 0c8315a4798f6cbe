/**
 * Hostile servers against the client's buffers (issue 21, item 4): a flood of notifications at a reader that does
 * not keep up, and a flood of server-to-client requests, whether or not the server reads the answers. Every buffer
 * between the server and user code is bounded.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as Url from "node:url"
import * as V8 from "node:v8"
import * as Vm from "node:vm"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as SamplingHandler from "../src/SamplingHandler.js"
import * as StdioTransport from "../src/StdioTransport.js"
import * as Transport from "../src/Transport.js"
import * as Scripted from "./utils/scriptedTransport.js"

const flood = Url.fileURLToPath(new URL("./fixtures/stdio/flood.mjs", import.meta.url))

V8.setFlagsFromString("--expose-gc")
const gc = Vm.runInNewContext("gc") as () => void
const MiB = 1024 * 1024
/** The live heap, after collecting garbage. */
const heapMiB = () =>
  Effect.sync(() => {
    gc()
    gc()
    return process.memoryUsage().heapUsed / MiB
  })

const floodClient = (era: "legacy" | "modern") =>
  McpClient.layer({ healthCheckInterval: false, era }).pipe(
    Layer.provide(StdioTransport.layer({ command: process.execPath, args: [flood, era], closeTimeout: "500 millis" })),
    Layer.provide(NodeServices.layer)
  )

const COUNT = 100_000
const BYTES = 1024
/**
 * The bound: 100,000 notifications of ~1.1 KiB are ~110 MiB when kept; the default buffer keeps 1,000 (~1 MiB).
 * What the heap may grow by while they arrive, with the reader not reading.
 */
const BOUND_MIB = 24

const runFlood = Effect.flatMap(McpClient.McpClient, (client) =>
  client.callTool({ name: "flood", arguments: { count: COUNT, bytes: BYTES } }, { timeout: "120 seconds" }))

/** Reads a pulled stream until `count` notifications (drop notices not counted) came. */
const readAll = (
  pull: Effect.Effect<ReadonlyArray<McpSchema.ServerNotification>, unknown>,
  count: number
) =>
  Effect.gen(function*() {
    const out: Array<McpSchema.ServerNotification> = []
    let notifications = 0
    while (notifications < count) {
      for (const item of yield* Effect.orDie(pull)) {
        out.push(item)
        if (item.method !== McpClient.NotificationsDropped) notifications++
      }
    }
    return out
  })

const checkDrops = (received: ReadonlyArray<McpSchema.ServerNotification>, kept: number) => {
  assert.deepStrictEqual(received[0], { method: McpClient.NotificationsDropped, params: { dropped: COUNT - kept } })
  const rest = received.slice(1)
  assert.strictEqual(rest.length, kept)
  assert.isTrue(rest.every((n) => n.method === "notifications/tools/list_changed"))
  // the newest were kept, in order
  assert.deepStrictEqual(
    rest.map((n) => (n.params as { _meta: { n: number } })._meta.n),
    Array.from({ length: kept }, (_, i) => COUNT - kept + i)
  )
}

describe("a flood of notifications at a slow reader", () => {
  it.live(
    `legacy: ${COUNT} notifications at a subscriber that does not read stay under ${BOUND_MIB} MiB; ` +
      "it sees the drop count",
    () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const reader = yield* client.subscribe
        const before = yield* heapMiB()
        yield* runFlood
        const growth = (yield* heapMiB()) - before
        assert.isBelow(growth, BOUND_MIB, `the heap grew by ${growth.toFixed(1)} MiB`)
        const pull = yield* Stream.toPull(reader)
        checkDrops(yield* readAll(pull, 1_000), 1_000)
      }).pipe(Effect.scoped, Effect.provide(floodClient("legacy"))),
    60_000
  )

  it.live(
    `modern: ${COUNT} notifications at a listen stream that does not read stay under ${BOUND_MIB} MiB; ` +
      "it sees the drop count",
    () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const pull = yield* Stream.toPull(client.listen({ toolsListChanged: true }))
        const ack = yield* Effect.orDie(pull)
        assert.strictEqual(ack[0].method, "notifications/subscriptions/acknowledged")
        const before = yield* heapMiB()
        yield* runFlood
        const growth = (yield* heapMiB()) - before
        assert.isBelow(growth, BOUND_MIB, `the heap grew by ${growth.toFixed(1)} MiB`)
        checkDrops(yield* readAll(pull, 1_000), 1_000)
      }).pipe(Effect.scoped, Effect.provide(floodClient("modern"))),
    60_000
  )

  it.effect("the buffer size is an option; a reader that keeps up loses nothing", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const ctx = (yield* Ref.get((yield* Scripted.ScriptLog).current))!
      const slow = yield* Stream.toPull(yield* client.subscribe)
      const fast = yield* client.subscribe
      const fastRead = yield* Effect.forkChild(Stream.runCollect(Stream.take(fast, 25)))
      for (let i = 0; i < 25; i++) {
        yield* ctx.notify("notifications/message", { level: "info", data: i })
        // the fast reader reads as each comes
        for (let j = 0; j < 5; j++) yield* Effect.yieldNow
      }
      const all = Array.from(yield* Fiber.join(fastRead))
      const data = (n: McpSchema.ServerNotification) => (n.params as { data: number }).data
      assert.deepStrictEqual(all.map(data), Array.from({ length: 25 }, (_, i) => i))
      const kept = yield* readAll(slow, 10)
      assert.deepStrictEqual(kept[0], { method: McpClient.NotificationsDropped, params: { dropped: 15 } })
      assert.deepStrictEqual(kept.slice(1).map((n) => (n.params as { data: number }).data), [
        15,
        16,
        17,
        18,
        19,
        20,
        21,
        22,
        23,
        24
      ])
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, notificationBufferSize: 10 }).pipe(
        Layer.provideMerge(Scripted.layer(Scripted.legacyScript()))
      )
    )))

  it.effect("a buffer size or request limit that is not a positive integer is refused", () =>
    Effect.gen(function*() {
      for (const options of [{ notificationBufferSize: 0 }, { maxServerRequests: 1.5 }]) {
        const error = yield* Effect.flip(
          Effect.scoped(Layer.build(
            McpClient.layer(options).pipe(Layer.provide(Scripted.layer(Scripted.legacyScript())))
          ))
        )
        assert.strictEqual(error._tag, "InvalidOption")
      }
    }))
})

/** A legacy server whose sampling requests the handler never finishes. */
const stuckSampling = SamplingHandler.layer({ createMessage: () => Effect.never })

const samplingParams = { messages: [], maxTokens: 5 }

describe("a flood of server-to-client requests", () => {
  it.effect("requests beyond the limit are refused with -32603 while the others run; the limit frees up", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.session
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      for (let id = 1; id <= 6; id++) yield* ctx.serverRequest(id, "sampling/createMessage", samplingParams)
      const responses = Effect.map(
        Ref.get(log.sent),
        (sent) => sent.flatMap((s) => "id" in s.message && !("method" in s.message) ? [s.message] : [])
      )
      const refused = yield* responses
      assert.deepStrictEqual(refused.map((r) => [r.id, "error" in r ? r.error.code : undefined]), [
        [5, -32603],
        [6, -32603]
      ])
      // the server cancels one: the next request runs
      yield* ctx.notify("notifications/cancelled", { requestId: 1 })
      yield* ctx.serverRequest(7, "ping", {})
      let after = yield* responses
      for (let i = 0; i < 1_000 && after.length < 3; i++) {
        yield* Effect.yieldNow
        after = yield* responses
      }
      assert.deepStrictEqual(after.slice(2), [{ jsonrpc: "2.0", id: 7, result: {} }])
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, maxServerRequests: 4, sampling: SamplingHandler.SamplingHandler }).pipe(
        Layer.provideMerge(Scripted.layer(Scripted.legacyScript())),
        Layer.provide(stuckSampling)
      )
    )))

  it.effect("a server that floods pings without reading the answers is held back: at most the limit run", () =>
    Effect.gen(function*() {
      const emitted = yield* Ref.make(0)
      const responded = yield* Ref.make(0)
      const ready = yield* Deferred.make<Transport.Emit>()
      // the server: answers the handshake, never reads what the client writes after it
      const transport = Transport.Transport.of({
        kind: "in-process",
        connect: (emit) =>
          Effect.gen(function*() {
            yield* Deferred.succeed(ready, emit)
            return {
              info: { binding: "in-process", target: "ping-flood" },
              request: (message) =>
                message.method === "initialize"
                  ? Effect.forkDetach(emit(Transport.TransportEvent.Response({
                    message: { jsonrpc: "2.0", id: message.id, result: Scripted.initializeResult() }
                  })))
                  : Effect.void,
              notify: () => Effect.void,
              // a full pipe: the answer is never taken
              respond: () => Effect.andThen(Ref.update(responded, (n) => n + 1), Effect.never),
              cancel: () => Effect.void,
              setSession: () => Effect.void
            } satisfies Transport.TransportConnection
          })
      })
      const client = yield* McpClient.make({ healthCheckInterval: false, era: "legacy", maxServerRequests: 8 }).pipe(
        Effect.provideService(Transport.Transport, transport)
      )
      yield* client.session
      const emit = yield* Deferred.await(ready)
      const flooding = yield* Effect.forkChild(Effect.forEach(
        Array.from({ length: 100_000 }, (_, i) => i + 1),
        (id) =>
          Effect.andThen(
            emit(Transport.TransportEvent.ServerRequest({
              message: { jsonrpc: "2.0", id, method: "ping" },
              related: undefined
            })),
            Ref.update(emitted, (n) => n + 1)
          ),
        { discard: true }
      ))
      for (let i = 0; i < 100; i++) yield* Effect.yieldNow
      // eight answers run (each stuck writing), the ninth request's refusal is written by the reader itself,
      // which then waits: nothing more is read
      assert.strictEqual(yield* Ref.get(emitted), 8)
      assert.strictEqual(yield* Ref.get(responded), 9)
      assert.isTrue(flooding.pollUnsafe() === undefined)
      yield* Fiber.interrupt(flooding)
    }))
})
