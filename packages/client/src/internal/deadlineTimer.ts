/**
 * One timer fiber for many deadlines: it sleeps until the earliest one, expires the entries past theirs, and goes on
 * until none is left; an entry due before the timer wakes restarts it. Nothing with a deadline forks a timer of its
 * own (a timeout race per request costs fibers on every call). Used by the request table (every request's timeout)
 * and by the HTTP transport's exchanges (stopped a grace past their deadline).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"

/** @internal */
export interface DeadlineTimer<A> {
  /** The entries the timer watches: add one, then `arm` its deadline; delete one to forget it. */
  readonly entries: Set<A>
  /** Whether the timer already wakes by `at` (then `arm(at)` has nothing to do). */
  readonly wakesBy: (at: number) => boolean
  /** Makes sure the timer wakes by `at`. */
  readonly arm: (at: number) => Effect.Effect<void>
}

/**
 * A timer whose fiber runs in `scope`. `deadlineOf` gives an entry's deadline (epoch milliseconds); `expire` is run
 * for each entry past it, after the entry left `entries`.
 *
 * @internal
 */
export const make = <A>(
  scope: Scope.Scope,
  deadlineOf: (entry: A, now: number) => number,
  expire: (entry: A) => Effect.Effect<void>
): DeadlineTimer<A> => {
  const entries = new Set<A>()
  let timer: { readonly at: number; readonly fiber: Fiber.Fiber<void> } | undefined
  let generation = 0

  const run = (own: number): Effect.Effect<void> =>
    Effect.gen(function*() {
      while (own === generation) {
        const now = yield* Clock.currentTimeMillis
        let next: number | undefined
        const due: Array<A> = []
        for (const entry of entries) {
          const at = deadlineOf(entry, now)
          if (at <= now) due.push(entry)
          else if (next === undefined || at < next) next = at
        }
        if (due.length > 0) {
          for (const entry of due) {
            entries.delete(entry)
            yield* expire(entry)
          }
          // while they expired (a long batch yields to other fibers), entries may have come whose deadline this
          // timer was taken to cover: look at them all again
          continue
        }
        if (own !== generation) return
        if (next === undefined) {
          timer = undefined
          return
        }
        if (timer !== undefined) timer = { at: next, fiber: timer.fiber }
        yield* Effect.sleep(Duration.millis(next - now))
      }
    })

  const wakesBy = (at: number) => timer !== undefined && timer.at <= at

  return {
    entries,
    wakesBy,
    arm: (at) =>
      Effect.suspend(() => {
        if (wakesBy(at)) return Effect.void
        timer?.fiber.interruptUnsafe()
        const own = ++generation
        return Effect.map(Effect.forkIn(Effect.interruptible(run(own)), scope), (fiber) => {
          if (own === generation && fiber.pollUnsafe() === undefined) timer = { at, fiber }
        })
      })
  }
}
