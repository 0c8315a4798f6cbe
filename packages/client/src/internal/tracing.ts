/** @internal */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Tracer from "effect/Tracer"

/**
 * Effect's own tracer (the default), whose spans are seen only by the code that runs under them: nothing exports
 * or records them.
 *
 * @internal
 */
export const nativeTracer: Tracer.Tracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/**
 * True when nothing can observe a span this fiber would start: the fiber traces with Effect's own tracer and runs
 * under no span (so a new span would begin a trace that no one records, and its ids would mean nothing to a
 * server).
 *
 * @internal
 */
export const untraced = (fiber: Pick<Fiber.RuntimeFiber<unknown, unknown>, "currentTracer" | "currentSpan">): boolean =>
  fiber.currentTracer === nativeTracer && fiber.currentSpan === undefined

/**
 * `Effect.withSpan`, made only when something can observe the span (see {@link untraced}): under Effect's own
 * tracer and no span, the effect runs as it is.
 *
 * @internal
 */
export const withObservedSpan = (name: string, options: Tracer.SpanOptions) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) => untraced(fiber) ? self : Effect.withSpan(self, name, options))
