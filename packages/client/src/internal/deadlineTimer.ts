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
import { LinkedList, type Node } from "./linkedList.js"

/**
 * An entry the timer watches, as `watch` gives it back.
 *
 * @internal
 */
export type Watch<A> = Node<A>

/** @internal */
export interface DeadlineTimer<A> {
  /**
   * Watches an entry (then `arm` its deadline); gives back the handle that `forget` takes. The entries are kept in
   * a linked list, not in a Set: a Set of objects gives each new object a hash code, a call into the VM on every
   * request (see linkedList.ts).
   */
  readonly watch: (entry: A) => Watch<A>
  /** Stops watching an entry (nothing when it is not watched any more). */
  readonly forget: (watch: Watch<A>) => void
  /** Whether the timer already wakes by `at` (then `arm(at)` has nothing to do). */
  readonly wakesBy: (at: number) => boolean
  /** Makes sure the timer wakes by `at`. */
  readonly arm: (at: number) => Effect.Effect<void>
}

/**
 * A timer whose fiber runs in `scope`. `deadlineOf` gives an entry's deadline (epoch milliseconds); `expire` is run
 * for each entry past it, once the timer stopped watching it.
 *
 * @internal
 */
export const make = <A>(
  scope: Scope.Scope,
  deadlineOf: (entry: A, now: number) => number,
  expire: (entry: A) => Effect.Effect<void>
): DeadlineTimer<A> => {
  const entries = new LinkedList<A>()
  let timer: { readonly at: number; readonly fiber: Fiber.Fiber<void> } | undefined
  let generation = 0

  const run = (own: number): Effect.Effect<void> =>
    Effect.gen(function*() {
      while (own === generation) {
        const now = yield* Clock.currentTimeMillis
        let next: number | undefined
        const due: Array<A> = []
        for (let node = entries.first; node !== undefined;) {
          const following = node.next
          const at = deadlineOf(node.value, now)
          if (at <= now) {
            due.push(node.value)
            entries.remove(node)
          } else if (next === undefined || at < next) next = at
          node = following
        }
        if (due.length > 0) {
          for (const entry of due) yield* expire(entry)
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
    watch: (entry) => entries.add(entry),
    forget: (watch) => entries.remove(watch),
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
