/**
 * A part of a connection made by the first use that needs it, for the parts most connections never use (the fibers
 * of an HTTP+SSE stream, a legacy session's GET stream, the server's requests being answered, the hub of a stdio
 * server's stderr): a `FiberMap`, `FiberSet` or `FiberHandle` costs ~40 Effect operations to make and ~35 to close,
 * which every connect and close paid for each, and a stderr hub holds a ring of 1 024 slots. The part is made in a
 * Scope forked from the current one where `madeOnUse` runs, so it closes at the point of the order where it would
 * have been made. Two first uses may both make one: the first made wins, and the other closes with the Scope
 * unused. Made after the Scope closed, it is closed at once, as a part made before would have been.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"

/** @internal */
export interface MadeOnUse<A> {
  /** The part, made now if it was not. */
  readonly use: Effect.Effect<A>
  /** `f` of the part once a use made it; `none` until then (nothing is made). */
  readonly ifMade: <B>(f: (part: A) => Effect.Effect<B>, none: B) => Effect.Effect<B>
}

/** @internal */
export const madeOnUse = <A>(
  make: Effect.Effect<A, never, Scope.Scope>
): Effect.Effect<MadeOnUse<A>, never, Scope.Scope> =>
  Effect.map(Effect.flatMap(Effect.scope, (scope) => Scope.fork(scope, "sequential")), (scope) => {
    let made: A | undefined
    return {
      use: Effect.suspend(() =>
        made !== undefined ? Effect.succeed(made) : Effect.map(Scope.provide(make, scope), (part) => (made ??= part))
      ),
      ifMade: (f, none) => Effect.suspend(() => made === undefined ? Effect.succeed(none) : f(made))
    }
  })
