/**
 * The value behind the client's connection state and `stateChanges`: its changes start with the current value and
 * then give every later one in order, to each subscriber, whenever it subscribed.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as References from "effect/References"
import * as Stream from "effect/Stream"
import * as Signal from "../src/internal/signal.js"

/** Collects `n` values of the changes in a fiber, once it has read the first (so it has subscribed). */
const collect = <A>(signal: Signal.Signal<A>, n: number) =>
  Effect.gen(function*() {
    const subscribed = yield* Deferred.make<void>()
    const fiber = yield* signal.changes.pipe(
      Stream.tap(() => Deferred.succeed(subscribed, undefined)),
      Stream.take(n),
      Stream.runCollect,
      Effect.forkChild
    )
    yield* Deferred.await(subscribed)
    return fiber
  })

describe("Signal", () => {
  it.effect("gives the current value at once, without a subscriber", () =>
    Effect.gen(function*() {
      const signal = Signal.make(1)
      assert.strictEqual(yield* signal.get, 1)
      yield* signal.set(2)
      yield* signal.update((n) => n * 10)
      assert.strictEqual(yield* signal.get, 20)
    }))

  it.effect("changes: the current value, then every later one in order", () =>
    Effect.gen(function*() {
      const signal = Signal.make("a")
      yield* signal.set("b")
      const fiber = yield* collect(signal, 4)
      yield* signal.set("c")
      yield* signal.update((s) => `${s}!`)
      yield* signal.set("d")
      assert.deepStrictEqual(yield* Fiber.join(fiber), ["b", "c", "c!", "d"])
    }))

  it.effect("every subscriber gets the changes made after it subscribed, starting from the value it read", () =>
    Effect.gen(function*() {
      const signal = Signal.make(0)
      const first = yield* collect(signal, 4)
      yield* signal.set(1)
      const second = yield* collect(signal, 3)
      yield* signal.set(2)
      yield* signal.set(3)
      assert.deepStrictEqual(yield* Fiber.join(first), [0, 1, 2, 3])
      assert.deepStrictEqual(yield* Fiber.join(second), [1, 2, 3])
    }))

  it.effect("a set between a subscriber's subscription and its first read is neither lost nor repeated", () =>
    Effect.gen(function*() {
      // fibers that yield every few operations, and subscribers that start a few turns apart from each other, put
      // some of the sets between a subscriber's subscription and its first read, whatever the interleaving
      for (let opsBeforeYield = 16; opsBeforeYield <= 48; opsBeforeYield++) {
        const broken = yield* Effect.gen(function*() {
          const signal = Signal.make(0)
          const seen: Array<Array<number>> = Array.from({ length: 12 }, () => [])
          const subscribers = yield* Effect.forEach(seen, (values, i) =>
            Effect.forkChild(Effect.andThen(
              Effect.repeat(Effect.yieldNow, { times: i }),
              Stream.runForEach(signal.changes, (n) => Effect.sync(() => values.push(n)))
            )))
          for (let n = 1; n <= 30; n++) yield* Effect.andThen(signal.set(n), Effect.yieldNow)
          yield* Effect.repeat(Effect.yieldNow, { times: 200 })
          yield* Effect.forEach(subscribers, Fiber.interrupt, { discard: true })
          // each subscriber: consecutive values (none lost, none twice), up to the last
          return seen.filter((values) =>
            values.at(-1) !== 30 || values.some((n, k) => k > 0 && n !== values[k - 1]! + 1)
          )
        }).pipe(Effect.provideService(References.MaxOpsBeforeYield, opsBeforeYield))
        assert.deepStrictEqual(broken, [], `yielding every ${opsBeforeYield} operations`)
      }
    }))

  it.effect("a subscriber that leaves does not hold later changes up", () =>
    Effect.gen(function*() {
      const signal = Signal.make(0)
      const leaving = yield* collect(signal, 100)
      yield* Fiber.interrupt(leaving)
      for (let i = 1; i <= 1_000; i++) yield* signal.set(i)
      const staying = yield* collect(signal, 2)
      yield* signal.set(1_001)
      assert.deepStrictEqual(yield* Fiber.join(staying), [1_000, 1_001])
    }))
})
