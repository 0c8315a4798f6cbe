/**
 * Waiting on forked fibers without sleeping: turns of the event loop until a condition holds.
 */
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"

/** One turn of the event loop, so that promises (WebCrypto digests, sockets) can settle. */
export const turn = Effect.callback<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** Waits until `condition` holds (forked fibers need some turns to get going). */
export const eventually = (condition: Effect.Effect<boolean>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 20_000; i++) {
      if (yield* condition) return
      yield* turn
    }
    return yield* Effect.die(new Error("condition never held"))
  })

/**
 * Waits until every fiber has settled: none of them is done and none has anything left to run (for instance: each
 * caller joined a shared run). Effect 4 has no public fiber status (no `Fiber.status`, no `Supervisor`), so this
 * cannot ask what a fiber is blocked on: it gives the fibers a bounded number of scheduler yields and event-loop
 * turns, and dies if one of them ended (a fiber meant to block must not finish before the test releases it).
 */
export const blockedOnFibers = (fibers: ReadonlyArray<Fiber.Fiber<unknown, unknown>>) =>
  Effect.gen(function*() {
    // (each yield runs every task scheduled before it; a turn lets timers and promises in between)
    for (let i = 0; i < 50; i++) {
      yield* Effect.yieldNow
      if (i % 10 === 9) yield* turn
    }
    const done = fibers.filter((fiber) => fiber.pollUnsafe() !== undefined)
    if (done.length > 0) {
      return yield* Effect.die(new Error(`${done.length} of ${fibers.length} fibers ended instead of blocking`))
    }
  })
