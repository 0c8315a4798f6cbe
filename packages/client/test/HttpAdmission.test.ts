/**
 * The places of the HTTP transport's requests on their own, under the TestClock: a request waits when all places
 * are taken, in order; a stalled window is doubled each stall period so that nothing waits for ever (nor long);
 * a place always comes back.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import * as Admission from "../src/internal/httpAdmission.js"

/** A request that starts (records its name) and waits until its gate opens; its place goes back when it ends. */
const request = (admission: Admission.Admission, started: Array<string>, name: string) =>
  Effect.gen(function*() {
    const gate = yield* Deferred.make<void>()
    const fiber = yield* Effect.forkChild(
      Effect.scoped(admission.admit(Effect.andThen(Effect.sync(() => started.push(name)), Deferred.await(gate))))
    )
    return { gate, fiber }
  })

/** Lets every fiber that can run do so. */
const settle = Effect.repeat(Effect.yieldNow, { times: 20 })

describe("HTTP admission", () => {
  it.effect("requests past the places wait their turn, in order, and go as places come back", () =>
    Effect.gen(function*() {
      const admission = Admission.make(2)
      const started: Array<string> = []
      const a = yield* request(admission, started, "a")
      const b = yield* request(admission, started, "b")
      const c = yield* request(admission, started, "c")
      const d = yield* request(admission, started, "d")
      yield* settle
      assert.deepStrictEqual(started, ["a", "b"])
      yield* Deferred.succeed(b.gate, undefined)
      yield* Fiber.join(b.fiber)
      yield* settle
      assert.deepStrictEqual(started, ["a", "b", "c"])
      // a request that fails gives its place back too
      yield* Fiber.interrupt(a.fiber)
      yield* settle
      assert.deepStrictEqual(started, ["a", "b", "c", "d"])
      yield* Deferred.succeed(c.gate, undefined)
      yield* Deferred.succeed(d.gate, undefined)
      yield* Fiber.join(c.fiber)
      yield* Fiber.join(d.fiber)
    }))

  it.effect("a window that makes no progress is widened after the stall time, step by step", () =>
    Effect.gen(function*() {
      const admission = Admission.make(2)
      const started: Array<string> = []
      const requests = []
      for (const name of ["a", "b", "c", "d", "e", "f"]) requests.push(yield* request(admission, started, name))
      yield* settle
      assert.deepStrictEqual(started, ["a", "b"])
      yield* TestClock.adjust(Admission.stall)
      yield* settle
      assert.deepStrictEqual(started, ["a", "b", "c", "d"])
      yield* TestClock.adjust(Admission.stall)
      yield* settle
      assert.deepStrictEqual(started, ["a", "b", "c", "d", "e", "f"])
      for (const { gate } of requests) yield* Deferred.succeed(gate, undefined)
      for (const { fiber } of requests) yield* Fiber.join(fiber)
      // with the queue empty the window is back to its size
      const later: Array<string> = []
      const again = []
      for (const name of ["x", "y", "z"]) again.push(yield* request(admission, later, name))
      yield* settle
      assert.deepStrictEqual(later, ["x", "y"])
      for (const { gate } of again) yield* Deferred.succeed(gate, undefined)
      for (const { fiber } of again) yield* Fiber.join(fiber)
    }))

  it.effect("while nothing is answered the window doubles each stall period: 2, 4, 8, 16, 32, then all 40", () =>
    Effect.gen(function*() {
      const admission = Admission.make(2)
      const started: Array<string> = []
      const requests = []
      for (let n = 0; n < 40; n++) requests.push(yield* request(admission, started, `r${n}`))
      const admitted: Array<number> = []
      yield* settle
      admitted.push(started.length)
      for (let period = 1; period <= 5; period++) {
        yield* TestClock.adjust(Admission.stall)
        yield* settle
        admitted.push(started.length)
      }
      // (a window grown by its size each period would have let 2, 4, 6, 8, 10, 12 through)
      assert.deepStrictEqual(admitted, [2, 4, 8, 16, 32, 40])
      // in order
      assert.deepStrictEqual(started, requests.map((_, n) => `r${n}`))
      for (const { gate } of requests) yield* Deferred.succeed(gate, undefined)
      for (const { fiber } of requests) yield* Fiber.join(fiber)
      // once the queue is empty the window is back to its size
      const later: Array<string> = []
      const again = []
      for (const name of ["x", "y", "z"]) again.push(yield* request(admission, later, name))
      yield* settle
      assert.deepStrictEqual(later, ["x", "y"])
      for (const { gate } of again) yield* Deferred.succeed(gate, undefined)
      for (const { fiber } of again) yield* Fiber.join(fiber)
    }))

  it.effect("a window that makes progress is not widened", () =>
    Effect.gen(function*() {
      const admission = Admission.make(1)
      const started: Array<string> = []
      const a = yield* request(admission, started, "a")
      const b = yield* request(admission, started, "b")
      const c = yield* request(admission, started, "c")
      yield* settle
      yield* TestClock.adjust(Duration.times(Admission.stall, 0.6))
      yield* Deferred.succeed(a.gate, undefined)
      yield* Fiber.join(a.fiber)
      yield* settle
      assert.deepStrictEqual(started, ["a", "b"])
      // a place came back during this stall period: no widening at its end
      yield* TestClock.adjust(Duration.times(Admission.stall, 0.6))
      yield* settle
      assert.deepStrictEqual(started, ["a", "b"])
      yield* TestClock.adjust(Admission.stall)
      yield* settle
      assert.deepStrictEqual(started, ["a", "b", "c"])
      yield* Deferred.succeed(b.gate, undefined)
      yield* Deferred.succeed(c.gate, undefined)
      yield* Fiber.join(b.fiber)
      yield* Fiber.join(c.fiber)
    }))

  it.effect("a request interrupted while it waits takes no place", () =>
    Effect.gen(function*() {
      const admission = Admission.make(1)
      const started: Array<string> = []
      const a = yield* request(admission, started, "a")
      const b = yield* request(admission, started, "b")
      const c = yield* request(admission, started, "c")
      yield* settle
      yield* Fiber.interrupt(b.fiber)
      yield* Deferred.succeed(a.gate, undefined)
      yield* Fiber.join(a.fiber)
      yield* settle
      assert.deepStrictEqual(started, ["a", "c"])
      yield* Deferred.succeed(c.gate, undefined)
      yield* Fiber.join(c.fiber)
      // the place came back: the next request goes at once
      const d = yield* request(admission, started, "d")
      yield* settle
      assert.deepStrictEqual(started, ["a", "c", "d"])
      yield* Deferred.succeed(d.gate, undefined)
      yield* Fiber.join(d.fiber)
    }))
})
