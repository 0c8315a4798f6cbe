/**
 * A part of a connection made in its Scope by the first use that needs it, for the parts most connections never use
 * (the fibers of an HTTP+SSE stream, a legacy session's GET stream, the server's requests being answered): a
 * `FiberMap`, `FiberSet` or `FiberHandle` costs ~40 Effect operations to make and ~35 to close, which every connect
 * and close paid for each. Two first uses may both make one: the first made wins, and the other closes with the
 * Scope unused. Made after the Scope closed, it is closed at once, as a part made before would have been.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"

/** @internal */
export interface MadeOnUse<A> {
  /** The part, made now if it was not. */
  readonly use: Effect.Effect<A>
  /** The part, if a use made it. */
  readonly current: () => A | undefined
}

/** @internal */
export const madeOnUse = <A>(scope: Scope.Scope, make: Effect.Effect<A, never, Scope.Scope>): MadeOnUse<A> => {
  let made: A | undefined
  return {
    use: Effect.suspend(() =>
      made !== undefined ? Effect.succeed(made) : Effect.map(Scope.extend(make, scope), (part) => (made ??= part))
    ),
    current: () => made
  }
}
