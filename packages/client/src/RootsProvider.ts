/**
 * Roots: the directories or files the application lets servers work on. Provide a layer of this service and the
 * client declares the roots capability, answers `roots/list` (legacy) and `roots/list` input requests (modern),
 * and sends `notifications/roots/list_changed` to legacy servers when `changes` emits.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"

/**
 * @since 0.1.0
 * @category models
 */
export interface Root {
  /** A `file://` URI. Any other, or one whose path climbs with `..`, is never shown to a server (it is logged). */
  readonly uri: string
  readonly name?: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly roots: Effect.Effect<ReadonlyArray<Root>>
  /** Emits whenever the roots change. */
  readonly changes: Stream.Stream<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class RootsProvider extends Context.Service<RootsProvider, Service>()("@conduit-mcp/client/RootsProvider") {}

/**
 * A fixed set of roots, for the client's `roots` option.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fixed = (roots: ReadonlyArray<Root>): Service => ({ roots: Effect.succeed(roots), changes: Stream.empty })

/**
 * A fixed set of roots as a layer, for a client given `roots: RootsProvider.RootsProvider`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (roots: ReadonlyArray<Root>): Layer.Layer<RootsProvider> => Layer.succeed(RootsProvider, fixed(roots))

/**
 * Roots held in a `SubscriptionRef`: setting it notifies connected legacy servers.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRef = (ref: SubscriptionRef.SubscriptionRef<ReadonlyArray<Root>>): Service => ({
  roots: SubscriptionRef.get(ref),
  changes: Stream.drop(Stream.map(SubscriptionRef.changes(ref), () => undefined), 1)
})
