/**
 * Waiting on real time in `it.live` tests, for what another process or a socket does on its own schedule.
 */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"

/** Sleeps on the real clock (the TestClock does not move in `it.live`, but this never depends on it). */
export const realSleep = (millis: number) =>
  Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, millis)))

/**
 * Polls `condition` every 10 ms, 2000 times (20 s or more: a safety net for a loaded machine, where 5 s ran out in a
 * whole-suite run); fails the test naming `what` if it never holds.
 */
export const eventually = (condition: () => boolean, what: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 2000; i++) {
      if (condition()) return
      yield* realSleep(10)
    }
    assert.fail(`timed out waiting for ${what}`)
  })
