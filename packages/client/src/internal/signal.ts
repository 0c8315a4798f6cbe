/**
 * A value and the stream of its changes, for the client's connection state: what `SubscriptionRef` gives, at the
 * cost of one step per change instead of a semaphore's and a hub's (~38 Effect operations a `set`, ~22 a `make`),
 * which every connect and close paid several times. Changes are set whole (no effectful update needs the lock), so
 * a set is synchronous; the hub is made by the first subscriber, and a value nobody watches has none.
 *
 * `changes` starts with the current value, then every later one, in order: each value published carries its
 * number, and a subscriber skips those it read as its first (a set between its subscription and that read).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"

/** @internal */
export interface Signal<A> {
  readonly get: Effect.Effect<A>
  readonly set: (value: A) => Effect.Effect<void>
  readonly update: (f: (current: A) => A) => Effect.Effect<void>
  /** The current value, then each change. */
  readonly changes: Stream.Stream<A>
}

/** @internal */
export const make = <A>(initial: A): Signal<A> => {
  let value = initial
  let version = 0
  let hub: PubSub.PubSub<readonly [number, A]> | undefined

  const unsafeSet = (next: A): void => {
    value = next
    version++
    // (an unbounded hub takes every offer while open; once shut down nobody is listening)
    if (hub !== undefined) PubSub.publishUnsafe(hub, [version, next])
  }

  // the first hub made wins: two first subscribers may both make one, and the other is dropped unused
  const hubOf = Effect.suspend(() =>
    hub !== undefined
      ? Effect.succeed(hub)
      : Effect.map(PubSub.unbounded<readonly [number, A]>(), (made) => (hub ??= made))
  )

  return {
    get: Effect.sync(() => value),
    set: (next) => Effect.sync(() => unsafeSet(next)),
    update: (f) => Effect.sync(() => unsafeSet(f(value))),
    changes: Stream.unwrap(
      Effect.flatMap(hubOf, (opened) =>
        Effect.map(PubSub.subscribe(opened), (subscription) => {
          // read in the step after subscribing: what is set from now on is in the subscription, numbered after `seen`
          const seen = version
          return Stream.concat(
            Stream.succeed(value),
            Stream.filterMap(
              Stream.fromSubscription(subscription),
              ([published, next]) => published > seen ? Result.succeed(next) : Result.failVoid
            )
          )
        }))
    )
  }
}
