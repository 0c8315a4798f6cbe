/**
 * Refreshes on change notifications, coalesced: a server may announce a change before every answer to the listing
 * the change makes us send, which would keep a reader listing forever. Changes that arrive while a refresh waits or
 * runs make at most one more refresh, and a refresh starts no sooner than the minimum interval after the previous
 * one started (on the Clock, so a test drives it with TestClock).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

/**
 * The default minimum interval between two refreshes.
 *
 * @internal
 */
export const defaultMinInterval: Duration.Duration = Duration.seconds(1)

/**
 * Starts the refresher for the life of the Scope; the effect it gives asks for a refresh and never waits.
 *
 * @internal
 */
export const make = (
  refresh: Effect.Effect<void>,
  minInterval: Duration.Input = defaultMinInterval
): Effect.Effect<Effect.Effect<void>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const spacing = Duration.toMillis(Duration.fromInputUnsafe(minInterval))
    // one waiting request at most: more while one waits are the same request
    const asked = yield* Queue.sliding<void>(1)
    let lastStart: number | undefined
    yield* Queue.take(asked).pipe(
      Effect.andThen(Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        if (lastStart !== undefined && now - lastStart < spacing) yield* Effect.sleep(spacing - (now - lastStart))
        // what was asked while waiting is what this refresh reads (`clear` drains without waiting: `takeAll` waits)
        yield* Queue.clear(asked)
        lastStart = yield* Clock.currentTimeMillis
        yield* refresh
      })),
      Effect.forever,
      Effect.interruptible,
      Effect.forkScoped
    )
    return Effect.asVoid(Queue.offer(asked, undefined))
  })
