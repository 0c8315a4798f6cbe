import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import { turn } from "./fibers.js"

/**
 * The wake-up times of the sleeps registered on the TestClock. Effect 4.1.5 has no public `TestClock.sleeps`: this
 * reads the clock's own `sleeps` field (`{ timestamp, latch }` entries; private to `TestClockImpl`, so checked at
 * run time and reported plainly if a later version changes it).
 */
const sleeps: Effect.Effect<ReadonlyArray<number>> = TestClock.testClockWith((clock) =>
  Effect.suspend(() => {
    const entries: unknown = (clock as unknown as { readonly sleeps?: unknown }).sleeps
    if (!Array.isArray(entries)) {
      return Effect.die(new Error("the TestClock has no `sleeps` list (its internals changed): port utils/clock.ts"))
    }
    return Effect.succeed(entries.map((entry: { readonly timestamp: number }) => entry.timestamp))
  })
)

/**
 * Waits until some fiber sleeps on the TestClock until `now + duration`, so that a following `TestClock.adjust`
 * reaches it; answers that wake-up time. It waits turns of the event loop, not only fiber yields: the fiber may go to
 * sleep only once a socket delivered what it reads (a server's answer over HTTP), and a loaded machine delivers it
 * late in real time but within a few turns.
 */
export const awaitSleep = (duration: Duration.Input) =>
  Effect.gen(function*() {
    const wake = (yield* Clock.currentTimeMillis) + Duration.toMillis(duration)
    for (let i = 0; i < 10_000; i++) {
      if ((yield* sleeps).some((at) => at === wake)) return wake
      yield* Effect.yieldNow
      if (i % 10 === 9) yield* turn
    }
    const pending = (yield* sleeps).map((at) => at - (wake - Duration.toMillis(duration)))
    return yield* Effect.die(
      new Error(
        `no fiber went to sleep for ${Duration.format(Duration.fromInputUnsafe(duration))} on the TestClock (sleeps in: ${pending.join(", ")} ms)`
      )
    )
  })

/** Whether some fiber still sleeps on the TestClock until `wake` (it has not woken, so has done nothing since). */
export const stillAsleep = (wake: number) => Effect.map(sleeps, (all) => all.some((at) => at === wake))

/** Moves the TestClock forward in steps until `fiber` is done (at most `limit` steps), then joins it. */
export const advanceUntilDone = <A, E>(
  fiber: Fiber.Fiber<A, E>,
  step: Duration.Input = "100 millis",
  limit = 1000
) =>
  Effect.gen(function*() {
    for (let i = 0; i < limit; i++) {
      if (fiber.pollUnsafe() !== undefined) break
      yield* TestClock.adjust(step)
    }
    return yield* Fiber.join(fiber)
  })
