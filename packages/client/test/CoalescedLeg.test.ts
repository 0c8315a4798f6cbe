/**
 * C3, second half: identical cacheable reads made at once share one request through the result cache, but each
 * caller keeps its own deadline and its own progress handler. A caller with a short timeout does not fail the
 * others; the shared request is cancelled only once no caller waits any more; progress reaches every joined caller
 * that asked for it, whoever started the request.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/testing/TestClock"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as ResultCache from "../src/ResultCache.js"
import { blockedOnFibers, eventually } from "./utils/fibers.js"
import * as Scripted from "./utils/scriptedTransport.js"

interface Server {
  /** The read as the server received it (its id and progress token). */
  readonly arrived: Deferred.Deferred<{ readonly id: McpSchema.RequestId; readonly token: unknown }>
  /** Lets the server answer. */
  readonly release: Deferred.Deferred<void>
}

/** A modern server whose resources/read answers only once released. */
const slowRead = (server: Server): Scripted.Script =>
  Scripted.modernScript((message, ctx) =>
    Effect.gen(function*() {
      if (!("method" in message) || !("id" in message) || message.method !== "resources/read") return
      const params = message.params as { uri: string; _meta?: { progressToken?: unknown } }
      yield* Deferred.succeed(server.arrived, { id: message.id, token: params._meta?.progressToken })
      yield* Deferred.await(server.release)
      yield* ctx.reply(message.id, { resultType: "complete", contents: [{ uri: params.uri, text: "slow" }] })
    })
  )

const setUp = Effect.gen(function*() {
  const server: Server = {
    arrived: yield* Deferred.make<{ readonly id: McpSchema.RequestId; readonly token: unknown }>(),
    release: yield* Deferred.make<void>()
  }
  const context = yield* Layer.build(
    McpClient.layer({ healthCheckInterval: false, resultCache: ResultCache.ResultCache }).pipe(
      Layer.provideMerge(Scripted.layer(slowRead(server))),
      Layer.provide(ResultCache.layerMemory())
    )
  )
  const client = yield* Effect.provide(McpClient.McpClient, context)
  const log = yield* Effect.provide(Scripted.ScriptLog, context)
  yield* client.session
  const reads = Effect.map(
    Ref.get(log.sent),
    (sent) => sent.filter((s) => "method" in s.message && s.message.method === "resources/read").length
  )
  // the callers the test forks, so that it can see them waiting on the shared request
  const callers: Array<Fiber.Fiber<unknown, unknown>> = []
  const fork = <A, E>(caller: Effect.Effect<A, E>) =>
    Effect.tap(Effect.forkChild(caller), (fiber) => Effect.sync(() => callers.push(fiber)))
  /**
   * Waits until `count` callers wait on the request under way (each caller's cache lookup hashes its key, which
   * takes real time, before it joins the request). Effect 4 has no Supervisor or fiber status to see what a caller
   * waits on: the callers are given time to settle (none may end), and the server must still have seen one read —
   * so every caller that settled waits without a request of its own, i.e. on the shared one. (One round of
   * `blockedOnFibers` was too short on a loaded machine for a caller to hash its key and join: twenty are given.)
   */
  const joined = (count: number) =>
    Effect.gen(function*() {
      assert.strictEqual(callers.length, count, "callers forked")
      for (let i = 0; i < 20; i++) yield* blockedOnFibers(callers)
      assert.strictEqual(yield* reads, 1, "the callers share one request")
    })
  const cancelled = eventually(Effect.map(Ref.get(log.cancels), (cancels) => cancels.length > 0))
  return { server, client, log, reads, fork, joined, cancelled }
})

describe("coalesced reads: each caller's deadline and progress (C3)", () => {
  it.effect("a joined caller with a longer timeout outlives the first caller's shorter one", () =>
    Effect.gen(function*() {
      const { client, fork, joined, log, reads, server } = yield* setUp
      const short = yield* fork(client.readResource({ uri: "file:///slow" }, { timeout: "1 second" }))
      yield* Deferred.await(server.arrived)
      const long = yield* fork(client.readResource({ uri: "file:///slow" }, { timeout: "10 seconds" }))
      yield* joined(2)
      yield* TestClock.adjust("1 second")
      const shortExit = yield* Fiber.await(short)
      assert.isTrue(Exit.isFailure(shortExit))
      if (Exit.isFailure(shortExit)) {
        const reasons = shortExit.cause.reasons
        const error = reasons.length === 1 && reasons[0]._tag === "Fail" ? reasons[0].error : undefined
        assert.strictEqual(error?._tag, "RequestTimeout")
        if (error?._tag === "RequestTimeout") assert.strictEqual(error.timeoutMillis, 1000)
      }
      // the shared request goes on for the caller still waiting
      assert.isUndefined(long.pollUnsafe())
      assert.deepStrictEqual(yield* Ref.get(log.cancels), [])
      yield* TestClock.adjust("5 seconds")
      assert.isUndefined(long.pollUnsafe())
      yield* Deferred.succeed(server.release, undefined)
      const result = yield* Fiber.join(long)
      assert.deepStrictEqual(result.contents[0], { uri: "file:///slow", text: "slow" })
      assert.strictEqual(yield* reads, 1, "one request for both callers")
    }))

  it.effect("a first caller with the longer timeout is not failed by a joined caller's shorter one", () =>
    Effect.gen(function*() {
      const { client, fork, joined, reads, server } = yield* setUp
      const long = yield* fork(client.readResource({ uri: "file:///slow" }, { timeout: "10 seconds" }))
      yield* Deferred.await(server.arrived)
      const short = yield* fork(client.readResource({ uri: "file:///slow" }, { timeout: "1 second" }))
      yield* joined(2)
      yield* TestClock.adjust("2 seconds")
      assert.isTrue(Exit.isFailure(yield* Fiber.await(short)))
      assert.isUndefined(long.pollUnsafe())
      yield* Deferred.succeed(server.release, undefined)
      assert.strictEqual((yield* Fiber.join(long)).contents.length, 1)
      assert.strictEqual(yield* reads, 1)
    }))

  it.effect("the shared request is cancelled once no caller waits any more", () =>
    Effect.gen(function*() {
      const { cancelled, client, fork, joined, log, server } = yield* setUp
      const first = yield* fork(client.readResource({ uri: "file:///slow" }, { timeout: "1 second" }))
      const { id } = yield* Deferred.await(server.arrived)
      const second = yield* fork(client.readResource({ uri: "file:///slow" }, { timeout: "3 seconds" }))
      yield* joined(2)
      yield* TestClock.adjust("1 second")
      assert.isTrue(Exit.isFailure(yield* Fiber.await(first)))
      assert.deepStrictEqual(yield* Ref.get(log.cancels), [])
      yield* TestClock.adjust("2 seconds")
      assert.isTrue(Exit.isFailure(yield* Fiber.await(second)))
      yield* cancelled
      assert.deepStrictEqual((yield* Ref.get(log.cancels)).map((c) => c.id), [id])
    }))

  it.effect("progress reaches every joined caller that asked for it, though the first did not", () =>
    Effect.gen(function*() {
      const { client, fork, joined, log, reads, server } = yield* setUp
      const heard = yield* Ref.make<ReadonlyArray<string>>([])
      const listener = (name: string) => (progress: McpSchema.Progress) =>
        Ref.update(heard, (all) => [...all, `${name}:${progress.progress}`])
      const plain = yield* fork(client.readResource({ uri: "file:///slow" }))
      const { token } = yield* Deferred.await(server.arrived)
      // the shared request asks for progress whoever joins it later
      assert.isDefined(token)
      const second = yield* fork(client.readResource({ uri: "file:///slow" }, { onProgress: listener("b") }))
      const third = yield* fork(client.readResource({ uri: "file:///slow" }, { onProgress: listener("c") }))
      yield* joined(3)
      const context = yield* Ref.get(log.current)
      yield* context!.notify("notifications/progress", { progressToken: token, progress: 1, total: 2 })
      yield* context!.notify("notifications/progress", { progressToken: token, progress: 2, total: 2 })
      yield* Deferred.succeed(server.release, undefined)
      yield* Fiber.join(plain)
      yield* Fiber.join(second)
      yield* Fiber.join(third)
      assert.sameMembers([...(yield* Ref.get(heard))], ["b:1", "c:1", "b:2", "c:2"])
      assert.strictEqual(yield* reads, 1)
    }))

  it.effect("a joined caller whose timeout restarts on progress keeps waiting while progress comes", () =>
    Effect.gen(function*() {
      const { client, fork, joined, log, server } = yield* setUp
      const first = yield* fork(client.readResource({ uri: "file:///slow" }, { timeout: "1 minute" }))
      const { token } = yield* Deferred.await(server.arrived)
      // (the progress the watched caller heard: each one restarted its timeout just before it was handed over)
      const heard = yield* Ref.make(0)
      const watched = yield* fork(
        client.readResource({ uri: "file:///slow" }, {
          timeout: "1 second",
          resetTimeoutOnProgress: true,
          onProgress: () => Ref.update(heard, (n) => n + 1)
        })
      )
      yield* joined(2)
      const context = yield* Ref.get(log.current)
      for (let step = 1; step <= 3; step++) {
        yield* TestClock.adjust("800 millis")
        yield* context!.notify("notifications/progress", { progressToken: token, progress: step })
        yield* eventually(Effect.map(Ref.get(heard), (n) => n === step))
      }
      assert.isUndefined(watched.pollUnsafe(), "progress restarted its timeout")
      yield* TestClock.adjust("1 second")
      assert.isTrue(Exit.isFailure(yield* Fiber.await(watched)))
      assert.isUndefined(first.pollUnsafe())
      yield* Deferred.succeed(server.release, undefined)
      yield* Fiber.join(first)
    }))
})
