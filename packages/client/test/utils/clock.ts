import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { turn } from "./fibers.js"

/**
 * Waits until some fiber sleeps on the TestClock until `now + duration`, so that a following `TestClock.adjust`
 * reaches it; answers that wake-up time. It waits turns of the event loop, not only fiber yields: the fiber may go to
 * sleep only once a socket delivered what it reads (a server's answer over HTTP), and a loaded machine delivers it
 * late in real time but within a few turns.
 */
export const awaitSleep = (duration: Duration.DurationInput) =>
  Effect.gen(function*() {
    const wake = (yield* TestClock.currentTimeMillis) + Duration.toMillis(duration)
    for (let i = 0; i < 10_000; i++) {
      if (Chunk.some(yield* TestClock.sleeps(), (at) => at === wake)) return wake
      yield* Effect.yieldNow()
      if (i % 10 === 9) yield* turn
    }
    const sleeps = Chunk.toReadonlyArray(yield* TestClock.sleeps()).map((at) => at - (wake - Duration.toMillis(duration)))
    return yield* Effect.dieMessage(
      `no fiber went to sleep for ${Duration.format(duration)} on the TestClock (sleeps in: ${sleeps.join(", ")} ms)`
    )
  })

/** Whether some fiber still sleeps on the TestClock until `wake` (it has not woken, so has done nothing since). */
export const stillAsleep = (wake: number) =>
  Effect.map(TestClock.sleeps(), (sleeps) => Chunk.some(sleeps, (at) => at === wake))

/** Moves the TestClock forward in steps until `fiber` is done (at most `limit` steps), then joins it. */
export const advanceUntilDone = <A, E>(
  fiber: Fiber.Fiber<A, E>,
  step: Duration.DurationInput = "100 millis",
  limit = 1000
) =>
  Effect.gen(function*() {
    for (let i = 0; i < limit; i++) {
      if (Option.isSome(yield* Fiber.poll(fiber))) break
      yield* TestClock.adjust(step)
    }
    return yield* Fiber.join(fiber)
  })
