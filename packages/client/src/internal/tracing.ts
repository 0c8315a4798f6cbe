/** @internal */
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Tracer from "effect/Tracer"

/**
 * Effect's own tracer (the default), whose spans are seen only by the code that runs under them: nothing exports
 * or records them.
 *
 * @internal
 */
export const nativeTracer: Tracer.Tracer = Tracer.nativeTracer

/**
 * The tracer a fiber traces with: `fiber.cache` holds what the fiber's context resolves to (no tracer there means
 * the default, {@link nativeTracer}).
 *
 * @internal
 */
export const tracerOf = (fiber: Pick<Fiber.Fiber<unknown, unknown>, "cache">): Tracer.Tracer =>
  fiber.cache.tracer ?? nativeTracer

/**
 * True when nothing can observe a span this fiber would start: the fiber traces with Effect's own tracer and runs
 * under no span (so a new span would begin a trace that no one records, and its ids would mean nothing to a
 * server).
 *
 * @internal
 */
export const untraced = (fiber: Pick<Fiber.Fiber<unknown, unknown>, "cache">): boolean =>
  fiber.cache.span === undefined && tracerOf(fiber) === nativeTracer

/**
 * `Effect.withSpan`, made only when something can observe the span (see {@link untraced}): under Effect's own
 * tracer and no span, the effect runs as it is.
 *
 * @internal
 */
export const withObservedSpan = (name: string, options: Tracer.SpanOptions) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => untraced(fiber) ? self : Effect.withSpan(self, name, options))
