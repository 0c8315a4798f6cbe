import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"

/**
 * Waits (yielding) until some fiber sleeps on the TestClock until `now + duration`, so that a following
 * `TestClock.adjust` reaches it.
 */
export const awaitSleep = (duration: Duration.DurationInput) =>
  Effect.gen(function*() {
    const wake = (yield* TestClock.currentTimeMillis) + Duration.toMillis(duration)
    for (let i = 0; i < 10_000; i++) {
      if (Chunk.some(yield* TestClock.sleeps(), (at) => at === wake)) return
      yield* Effect.yieldNow()
    }
    return yield* Effect.dieMessage(`no fiber went to sleep for ${Duration.format(duration)} on the TestClock`)
  })
