/**
 * The fast path of the calls whose result decodes synchronously (`tools/call`, `resources/read`, `prompts/get`,
 * `completion/complete`), connected and with no cache in the way: span, registration and send in one step, then
 * the reply decoded, the span ended and the metrics recorded in one continuation. Everything else (and any call
 * while the tracer is disabled) goes through `Calls.call`, which does the same with `Effect.withSpan` and
 * `Metric.trackDuration`.
 *
 * Why by hand, measured with packages/bench/src/fibers.mjs (legacy `tools/call` at 64 in flight, this module against
 * `Calls.call` for these methods too; packages/bench/README.md, "The client core rebuilt"): Effect operations per
 * call 15.1 against 101.1 over stdio and 121 against 249 over HTTP; in-process CPU per call 26–41 µs against
 * 67–105 µs over stdio and 414–446 µs against 586–587 µs over HTTP. The span is the one `Effect.withSpan`
 * would start (same parent, links, annotations and attributes) and the metrics are the same `Metric.timer` and
 * counter, updated without an effect. With Effect's own tracer and no caller span nothing can observe a span, so
 * it is made only if something comes to need it (an `input_required` round).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"
import type * as McpClient from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import type * as Cache from "./cache.js"
import * as Calls from "./calls.js"
import type * as Connection from "./connection.js"
import type * as Direct from "./direct.js"
import * as InputRounds from "./inputRounds.js"
import * as SpecErrors from "./specErrors.js"
import type * as Requester from "./requester.js"
import type { Session, Wire } from "./session.js"
import type * as Telemetry from "./telemetry.js"

/** The parent a new span gets: the current span, unless it (or its ancestry) turned propagation off. */
const propagatedParent = (span: Option.Option<Tracer.AnySpan>): Option.Option<Tracer.AnySpan> =>
  Option.flatMap(span, (s) =>
    Context.get(s.annotations, Tracer.DisablePropagation)
      ? s._tag === "Span" ? propagatedParent(s.parent) : Option.none()
      : Option.some(s))

/** The current span of a fiber (or of what a caller that is not a fiber reads). */
const currentSpan = (fiber: Requester.FiberView): Option.Option<Tracer.AnySpan> =>
  Context.getOption(fiber.context, Tracer.ParentSpan)

/** With Effect's own tracer and no span around, nothing can observe a span. */
const untraced = (fiber: Requester.FiberView): boolean =>
  Option.isNone(currentSpan(fiber)) && fiber.getRef(Tracer.Tracer) === Tracer.nativeTracer

/** A call under way: its span (when made), and what its metrics need. */
interface CallTrace {
  readonly fiber: Requester.FiberView
  readonly method: string
  readonly tool: string | undefined
  readonly metrics: Telemetry.MethodMetrics
  readonly clock: Clock.Clock
  readonly timing: boolean
  /** Undefined while a deferred span is not needed. */
  span: Tracer.Span | undefined
  readonly start: bigint
}

const annotated = <A, E>(effect: Effect.Effect<A, E>, tool: string | undefined): Effect.Effect<A, E> =>
  tool === undefined ? effect : Effect.annotateSpans(effect, "mcp.tool", tool)

/** What runs in a call's span: with the span as the parent, and the call's tool annotating nested spans. */
const inSpan = (span: Tracer.Span, tool: string | undefined) =>
<A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> => Effect.withParentSpan(annotated(effect, tool), span)

/**
 * A call whose result decodes synchronously.
 *
 * @internal
 */
export type CallSync = <A>(
  method: string,
  params: Readonly<Record<string, unknown>> | undefined,
  decode: Calls.SyncDecoder<A>,
  options: McpClient.RequestOptions | undefined,
  tool?: string | undefined
) => Effect.Effect<A, McpError.McpClientError>

/**
 * What a call made from a promise runs with: what a fiber the runtime starts would read (its fiber refs, its
 * context) and how to run an effect in that runtime when a call needs one (the timer's start, a cancellation, the
 * rounds after an `input_required`, a recovery); `run` gives back what interrupts the effect.
 *
 * @internal
 */
export interface DirectRuntime {
  readonly fiber: Requester.FiberView
  readonly run: <A, E>(effect: Effect.Effect<A, E>, onExit: (exit: Exit.Exit<A, E>) => void) => () => void
}

/**
 * {@link CallSync} for a caller that is not a fiber: the same call (span, metrics, registration, send, decoding,
 * typed errors, cancellation on the wire) with the caller waiting on a promise instead of a fiber of its own.
 * Undefined when the call cannot go this way now (no session yet, a cache in the way, a gated method, tracing
 * turned off, a timeout that restarts on progress): the caller then runs the effect.
 *
 * @internal
 */
export type DirectCall = <A>(
  runtime: DirectRuntime,
  method: string,
  params: Readonly<Record<string, unknown>> | undefined,
  decode: Calls.SyncDecoder<A>,
  options: McpClient.RequestOptions | undefined,
  tool: string | undefined,
  onExit: Direct.OnExit<A>,
  after?: After<A>
) => Direct.Handle | undefined

/**
 * What a decoded value still needs once the call itself is over (its span and metrics ended, as for the effect that
 * follows `CallSync` in the service): an effect whose outcome is the caller's, or undefined when nothing. It runs
 * inside the transport's delivery and must not throw (a failure is the effect's).
 *
 * @internal
 */
export type After<A> = (value: A) => Effect.Effect<A, McpError.McpClientError> | undefined

/**
 * @internal
 */
export interface FastPath {
  readonly call: CallSync
  readonly direct: DirectCall
}

/**
 * @internal
 */
export const make = (deps: {
  /** The transport's `traits.untracedSend`: its send runs nothing that could see the call's span. */
  readonly untracedSend: boolean
  readonly status: Connection.Status
  readonly requester: Requester.Requester
  readonly calls: Calls.Calls
  readonly cache: Cache.Cache
  readonly telemetry: Telemetry.Telemetry
}): FastPath => {
  const { cache, calls, requester, status, telemetry, untracedSend } = deps

  /** The span `Effect.withSpan` would start in this fiber (but not made the parent). */
  const startSpan = (trace: CallTrace): Tracer.Span => {
    const { fiber, method, tool } = trace
    const spanOptions = telemetry.spanOptionsFor(method)
    // as `Effect.withSpan` makes it (`makeSpanUnsafe` in effect's internal/effect.ts)
    const parent = propagatedParent(currentSpan(fiber))
    const level = fiber.getRef(Tracer.CurrentTraceLevel)
    const span = fiber.getRef(Tracer.Tracer).span({
      name: `McpClient ${method}`,
      parent,
      annotations: Context.empty(),
      links: fiber.getRef(References.TracerSpanLinks).slice(),
      startTime: trace.timing ? trace.start : BigInt(0),
      kind: spanOptions.kind ?? "internal",
      root: false,
      sampled: Option.isSome(parent) && parent.value.sampled === false
        ? false
        : !LogLevel.isGreaterThan(fiber.getRef(Tracer.MinimumTraceLevel), level)
    })
    const annotations = fiber.getRef(References.TracerSpanAnnotations)
    for (const key in annotations) span.attribute(key, annotations[key])
    // a call's tool is an annotation of its spans: set before the attributes, as annotations are
    if (tool !== undefined) span.attribute("mcp.tool", tool)
    for (const [key, value] of Object.entries(spanOptions.attributes ?? {})) span.attribute(key, value)
    return span
  }

  /** Starts a call's metrics and its span, or defers the span when nothing can observe it. */
  const beginCall = (
    fiber: Requester.FiberView,
    method: string,
    tool: string | undefined,
    deferSpan: boolean
  ): CallTrace => {
    const clock = fiber.getRef(Clock.Clock)
    const timing = fiber.getRef(References.TracerTimingEnabled)
    const start = clock.currentTimeNanosUnsafe()
    const metrics = telemetry.metricsFor(method)
    const trace: CallTrace = { fiber, method, tool, metrics, clock, timing, span: undefined, start }
    if (!deferSpan) trace.span = startSpan(trace)
    return trace
  }

  /** The call's span, made now if it was deferred, with the start time it would have had. */
  const spanOf = (trace: CallTrace): Tracer.Span => trace.span ??= startSpan(trace)

  /** Records a call's latency (and failure by error tag) and ends its span; gives back its outcome. */
  const endCall = <A>(
    trace: CallTrace,
    exit: Exit.Exit<A, McpError.McpClientError>
  ): Exit.Exit<A, McpError.McpClientError> => {
    const { clock, metrics, span } = trace
    // (the metrics read their attributes, `Metric.CurrentMetricAttributes`, from the caller's context)
    const context = trace.fiber.context
    if (Exit.isFailure(exit)) {
      const error = Cause.findErrorOption(exit.cause)
      if (Option.isSome(error)) metrics.errorsBy(error.value._tag).updateUnsafe(1, context)
    }
    metrics.duration.updateUnsafe(Duration.nanos(clock.currentTimeNanosUnsafe() - trace.start), context)
    if (span !== undefined && span.status._tag !== "Ended") {
      span.end(trace.timing ? clock.currentTimeNanosUnsafe() : BigInt(0), exit)
    }
    return exit
  }

  /** Whether a call's span can wait until something needs it. */
  const deferSpan = (fiber: Requester.FiberView, wire: Wire) =>
    // With Effect's own tracer, nothing records a span: one is made only where something can see it. A legacy
    // call over a transport whose send is untraced (stdio) runs nothing under its span and sends no trace context;
    // any other call needs its span only under a caller's span, whose trace the server may join.
    untraced(fiber) ||
    (untracedSend && wire.era === "legacy" && fiber.getRef(Tracer.Tracer) === Tracer.nativeTracer)

  /** The session a call goes to on the fast path now, or undefined when it must take `Calls.call`. */
  const fastSession = (fiber: Requester.FiberView, method: string): Session | undefined => {
    const session = status.current()
    return session === undefined || cache.applies(method) || !fiber.getRef(References.TracerEnabled) ||
        calls.gated(method, session)
      ? undefined
      : session
  }

  /**
   * A request that failed: the call's typed outcome, the cancellation its binding requires (the entry leaves the
   * table), and the call made once more when a new negotiation cures the failure (a -32022: this call ends, the
   * connection negotiates again and the call is sent once more).
   */
  const failureOf = <A>(
    cause: Cause.Cause<McpError.RequestError>,
    session: Session,
    registered: Requester.Registered,
    send: Requester.SendOptions,
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    decode: Calls.SyncDecoder<A>,
    options: McpClient.RequestOptions | undefined,
    tool: string | undefined
  ) => {
    const typed = SpecErrors.typedCause(cause, method, params)
    const exit = Exit.failCause(typed)
    const cancel = requester.abandoned(session.wire, registered, send, cause)
    const failure = Cause.findErrorOption(typed)
    const again = Option.isSome(failure)
      ? calls.recover(failure.value, calls.callOnce(method, params, decode, options, tool))
      : undefined
    return { exit, cancel, again }
  }

  /** The rounds after a first `input_required` answer, the last one decoded. */
  const roundsAfter = <A>(
    raw: unknown,
    session: Session,
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    decode: Calls.SyncDecoder<A>,
    options: McpClient.RequestOptions | undefined
  ) => Effect.flatMap(calls.inputRounds(method, params, options, [raw, session]), (last) => Effect.fromResult(decode(method, last)))

  /** An answer, decoded. */
  const decodedExit = <A>(decode: Calls.SyncDecoder<A>, method: string, raw: unknown) => {
    const decoded = decode(method, raw)
    return Result.isSuccess(decoded) ? Exit.succeed(decoded.success) : Exit.fail(decoded.failure)
  }

  const call = <A>(
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    decode: Calls.SyncDecoder<A>,
    given: McpClient.RequestOptions | undefined,
    tool?: string | undefined
  ): Effect.Effect<A, McpError.McpClientError> => {
    return Effect.uninterruptibleMask((restore) =>
      Effect.withFiber<A, McpError.McpClientError>((fiber) => {
        // under the caller's request defaults (McpClient.withRequestDefaults)
        const options = Calls.underDefaults(fiber, given)
        const send = calls.sendOptions(options)
        const session = fastSession(fiber, method)
        if (session === undefined) return restore(calls.call(method, params, decode, options, tool))
        const wire = session.wire
        const trace = beginCall(fiber, method, tool, deferSpan(fiber, wire))
        const span = trace.span
        if (wire.attempt.closedError !== undefined) return endCall(trace, Exit.fail(wire.attempt.closedError))
        const registered = requester.register(fiber, wire, method, params, send, span)
        const around = untracedSend || span === undefined ? undefined : inSpan(span, tool)
        return Effect.matchCauseEffect(restore(requester.transmit(registered, around)), {
          onFailure: (cause) => {
            const { again, cancel, exit } = failureOf(
              cause,
              session,
              registered,
              send,
              method,
              params,
              decode,
              options,
              tool
            )
            const end = () => {
              const ended = endCall(trace, exit)
              // (the recovery waits on the user and the server: the caller may give it up)
              return again === undefined ? ended : restore(again)
            }
            return cancel === undefined ? end() : Effect.flatMap(cancel, end)
          },
          onSuccess: (raw) => {
            requester.completed(registered)
            if (InputRounds.isInputRequired(raw)) {
              // the rounds after the first, still in the call's span
              const rounds = roundsAfter(raw, session, method, params, decode, options)
              return Effect.matchCauseEffect(restore(inSpan(spanOf(trace), tool)(rounds)), {
                onFailure: (cause) =>
                  endCall(trace, Exit.failCause(SpecErrors.typedCause(cause, method, params))),
                onSuccess: (value) => endCall(trace, Exit.succeed(value))
              })
            }
            return endCall(trace, decodedExit(decode, method, raw))
          }
        })
      })
    )
  }

  const direct: DirectCall = (runtime, method, params, decode, given, tool, onExit, after) => {
    const { fiber, run } = runtime
    const session = fastSession(fiber, method)
    if (session === undefined) return undefined
    const options = Calls.underDefaults(fiber, given)
    const send = calls.sendOptions(options)
    // (a timeout that restarts on progress has a watchdog fiber of its own)
    if (send.resetOnProgress && send.timeoutMillis !== undefined) return undefined
    const wire = session.wire
    const trace = beginCall(fiber, method, tool, deferSpan(fiber, wire))
    const span = trace.span
    let ended = false
    const end: typeof onExit = (exit) => {
      if (ended) return
      ended = true
      onExit(exit)
    }
    if (wire.attempt.closedError !== undefined) {
      end(endCall(trace, Exit.fail(wire.attempt.closedError)))
      return { abort: () => {} }
    }
    const registered = requester.register(fiber, wire, method, params, send, span)
    // the outcome, once: the answer, a failure, the deadline, or the caller giving up
    let settled = false

    // what runs after the outcome (the rounds after an `input_required`, a recovery), until it ends: an abort
    // interrupts it, as it would interrupt the caller's fiber
    let following: (() => void) | undefined
    const follow = <B, E>(effect: Effect.Effect<B, E>, onExit: (exit: Exit.Exit<B, E>) => void) => {
      // (an effect may end while `run` starts it, and its outcome may start the next: that one is what an abort
      // interrupts then)
      let over = false
      const interrupt = run(effect, (exit) => {
        over = true
        following = undefined
        onExit(exit)
      })
      if (!over && !ended) following = interrupt
    }

    // the call's outcome, once what `after` asks of a value has run
    const settle: typeof onExit = after === undefined ? end : (exit) => {
      const more = Exit.isSuccess(exit) ? after(exit.value) : undefined
      if (more === undefined) end(exit)
      else follow(more, end)
    }

    const failed = (cause: Cause.Cause<McpError.RequestError>) => {
      const { again, cancel, exit } = failureOf(cause, session, registered, send, method, params, decode, options, tool)
      const finish = () => {
        const exitEnded = endCall(trace, exit)
        if (again === undefined) end(exitEnded)
        else follow(again, settle)
      }
      if (cancel === undefined) finish()
      else run(cancel, finish)
    }

    const succeeded = (raw: unknown) => {
      requester.completed(registered)
      if (InputRounds.isInputRequired(raw)) {
        const rounds = roundsAfter(raw, session, method, params, decode, options)
        follow(inSpan(spanOf(trace), tool)(rounds), (exit) =>
          settle(
            endCall(
              trace,
              Exit.isSuccess(exit)
                ? exit
                : Exit.failCause(SpecErrors.typedCause(exit.cause, method, params))
            )
          ))
        return
      }
      settle(endCall(trace, decodedExit(decode, method, raw)))
    }

    // the transport's send while it runs (when the request did not go out at once): a failed call stops it, as
    // the end of the caller's fiber would
    let sending: (() => void) | undefined

    const onOutcome = (outcome: Exit.Exit<unknown, McpError.RequestError>) => {
      if (settled) return
      settled = true
      if (Exit.isFailure(outcome)) sending?.()
      // (told from the transport's delivery, which must not throw: a throw here is this call's defect, as it would
      // be in the caller's fiber)
      try {
        if (Exit.isSuccess(outcome)) succeeded(outcome.value)
        else failed(outcome.cause)
      } catch (defect) {
        end(endCall(trace, Exit.die(defect)))
      }
    }

    const arm = requester.listen(registered, onOutcome)
    if (arm !== undefined) run(arm, () => {})
    const sent = registered.sent
    if (sent !== undefined) {
      const around = untracedSend || span === undefined ? undefined : inSpan(span, tool)
      const stop = run(around === undefined ? sent : around(sent), (exit) => {
        sending = undefined
        if (Exit.isFailure(exit)) onOutcome(exit)
      })
      if (!settled) sending = stop
    }
    return {
      abort: () => {
        if (settled) {
          following?.()
          return
        }
        settled = true
        sending?.()
        const cause = Cause.interrupt()
        const cancel = requester.abandoned(wire, registered, send, cause)
        const finish = () => end(endCall(trace, Exit.failCause(cause)))
        if (cancel === undefined) finish()
        else run(cancel, finish)
      }
    }
  }

  return { call, direct }
}
