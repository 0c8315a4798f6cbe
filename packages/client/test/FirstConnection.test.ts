/**
 * The first connection: by default a failed first attempt fails the layer at once; `retryFirstConnection` retries
 * it (on the reconnect schedule with `true`, or on its own schedule), the layer ready once a session is up.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as TestClock from "effect/testing/TestClock"
import * as McpClient from "../src/McpClient.js"
import * as Scripted from "./utils/scriptedTransport.js"

const failingFirst = (failures: number, options: McpClient.McpClientOptions) =>
  McpClient.layer({ healthCheckInterval: false, ...options }).pipe(
    Layer.provideMerge(Scripted.layer(Scripted.modernScript(), { connectFails: (n) => n <= failures }))
  )

const connections = Effect.flatMap(Scripted.ScriptLog, (log) => Ref.get(log.connections))

describe("the first connection", () => {
  it.effect("by default a failed first attempt fails the layer with its error, nothing retried", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Layer.build(failingFirst(1, {})))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.include(String(exit.cause), "refused")
    }))

  it.effect("a schedule: retried until a session is up", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      assert.strictEqual((yield* client.session).era, "modern")
      assert.strictEqual(yield* connections, 3)
    }).pipe(Effect.provide(failingFirst(2, { retryFirstConnection: Schedule.recurs(5) }))))

  it.effect("a schedule that ends: the layer fails with the last error", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Layer.build(failingFirst(10, { retryFirstConnection: Schedule.recurs(2) })))
      assert.isTrue(Exit.isFailure(exit))
    }))

  it.effect("true: retried on the reconnect schedule (its delays on the clock)", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Layer.build(failingFirst(2, {
        retryFirstConnection: true,
        reconnect: Schedule.spaced("1 second")
      })))
      yield* TestClock.adjust("1 second")
      assert.isUndefined(fiber.pollUnsafe(), "still waiting for the second retry")
      yield* TestClock.adjust("1 second")
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isSuccess(exit))
    }))
})
