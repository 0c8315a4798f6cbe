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

/**
 * A call on the fast path, one object per call: what it asks, where it goes, its span (when made) and what its
 * metrics need.
 */
interface FastCall<A> {
  readonly fiber: Requester.FiberView
  readonly method: string
  readonly params: Readonly<Record<string, unknown>> | undefined
  readonly decode: Calls.SyncDecoder<A>
  readonly options: McpClient.RequestOptions | undefined
  readonly tool: string | undefined
  readonly send: Requester.SendOptions
  readonly session: Session
  readonly metrics: Telemetry.MethodMetrics
  readonly clock: Clock.Clock
  readonly timing: boolean
  /** Undefined while a deferred span is not needed. */
  span: Tracer.Span | undefined
  readonly start: bigint
  /** Set once the request is registered (never, when the connection had closed already). */
  registered: Requester.Registered
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
  const startSpan = (call: FastCall<unknown>): Tracer.Span => {
    const { fiber, method, tool } = call
    const spanOptions = telemetry.spanOptionsFor(method)
    // as `Effect.withSpan` makes it (`makeSpanUnsafe` in effect's internal/effect.ts)
    const parent = propagatedParent(currentSpan(fiber))
    const level = fiber.getRef(Tracer.CurrentTraceLevel)
    const span = fiber.getRef(Tracer.Tracer).span({
      name: `McpClient ${method}`,
      parent,
      annotations: Context.empty(),
      links: fiber.getRef(References.TracerSpanLinks).slice(),
      startTime: call.timing ? call.start : BigInt(0),
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
   * Starts a call on the fast path: its metrics, and its span unless nothing can observe it yet; undefined when the
   * call must take the effect (`call` then runs `Calls.call`, `direct` hands it back to its caller). The request is
   * registered next, by {@link register}, unless the connection closed already.
   */
  const begin = <A>(
    fiber: Requester.FiberView,
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    decode: Calls.SyncDecoder<A>,
    options: McpClient.RequestOptions | undefined,
    tool: string | undefined,
    /** A timeout that restarts on progress needs a watchdog fiber of its own (the caller has none). */
    noWatchdog: boolean
  ): FastCall<A> | undefined => {
    const session = fastSession(fiber, method)
    if (session === undefined) return undefined
    const send = calls.sendOptions(options)
    if (noWatchdog && send.resetOnProgress && send.timeoutMillis !== undefined) return undefined
    const clock = fiber.getRef(Clock.Clock)
    const timing = fiber.getRef(References.TracerTimingEnabled)
    const start = clock.currentTimeNanosUnsafe()
    const metrics = telemetry.metricsFor(method)
    const call: FastCall<A> = {
      fiber,
      method,
      params,
      decode,
      options,
      tool,
      send,
      session,
      metrics,
      clock,
      timing,
      span: undefined,
      start,
      registered: undefined!
    }
    if (!deferSpan(fiber, session.wire)) call.span = startSpan(call)
    return call
  }

  /** Registers the call's request and sends it when the transport takes it at once; false: the connection closed. */
  const register = <A>(call: FastCall<A>): boolean => {
    const wire = call.session.wire
    if (wire.attempt.closedError !== undefined) return false
    call.registered = requester.register(call.fiber, wire, call.method, call.params, call.send, call.span)
    return true
  }

  /** What the send runs in when it runs an effect: the call's span, unless the transport's send sees none. */
  const aroundSend = <A>(call: FastCall<A>) =>
    untracedSend || call.span === undefined ? undefined : inSpan(call.span, call.tool)

  /** The call's span, made now if it was deferred, with the start time it would have had. */
  const spanOf = (call: FastCall<unknown>): Tracer.Span => call.span ??= startSpan(call)

  /** Records a call's latency (and failure by error tag) and ends its span; gives back its outcome. */
  const endCall = <A>(
    call: FastCall<A>,
    exit: Exit.Exit<A, McpError.McpClientError>
  ): Exit.Exit<A, McpError.McpClientError> => {
    const { clock, metrics, span } = call
    // (the metrics read their attributes, `Metric.CurrentMetricAttributes`, from the caller's context)
    const context = call.fiber.context
    if (Exit.isFailure(exit)) {
      const error = Cause.findErrorOption(exit.cause)
      if (Option.isSome(error)) metrics.errorsBy(error.value._tag).updateUnsafe(1, context)
    }
    metrics.duration.updateUnsafe(Duration.nanos(clock.currentTimeNanosUnsafe() - call.start), context)
    if (span !== undefined && span.status._tag !== "Ended") {
      span.end(call.timing ? clock.currentTimeNanosUnsafe() : BigInt(0), exit)
    }
    return exit
  }

  /** A call that found the connection closed: its outcome, ended. */
  const endClosed = <A>(call: FastCall<A>) => endCall(call, Exit.fail(call.session.wire.attempt.closedError!))

  /**
   * A request that failed: the call's typed outcome, the cancellation its binding requires (the entry leaves the
   * table), and the call made once more when a new negotiation cures the failure (a -32022: this call ends, the
   * connection negotiates again and the call is sent once more).
   */
  const failureOf = <A>(call: FastCall<A>, cause: Cause.Cause<McpError.RequestError>) => {
    const { decode, method, options, params, tool } = call
    const typed = SpecErrors.typedCause(cause, method, params)
    const exit = Exit.failCause(typed)
    const cancel = requester.abandoned(call.session.wire, call.registered, call.send, cause)
    const failure = Cause.findErrorOption(typed)
    const again = Option.isSome(failure)
      ? calls.recover(failure.value, calls.callOnce(method, params, decode, options, tool))
      : undefined
    return { exit, cancel, again }
  }

  /**
   * The answer to the call's request: the call's outcome (decoded, ended), or undefined when the server asks for
   * input first (an `input_required` answer: {@link roundsOf} then runs the rounds that follow).
   */
  const answered = <A>(call: FastCall<A>, raw: unknown): Exit.Exit<A, McpError.McpClientError> | undefined => {
    requester.completed(call.registered)
    if (InputRounds.isInputRequired(raw)) return undefined
    const decoded = call.decode(call.method, raw)
    return endCall(call, Result.isSuccess(decoded) ? Exit.succeed(decoded.success) : Exit.fail(decoded.failure))
  }

  /** The rounds after a first `input_required` answer, the last one decoded, still in the call's span. */
  const roundsOf = <A>(call: FastCall<A>, raw: unknown): Effect.Effect<A, McpError.McpClientError> => {
    const { decode, method, options, params } = call
    const rounds = Effect.flatMap(
      calls.inputRounds(method, params, options, [raw, call.session]),
      (last) => Effect.fromResult(decode(method, last))
    )
    return inSpan(spanOf(call), call.tool)(rounds)
  }

  /** The outcome of the rounds, typed: the call's, ended. */
  const roundsEnded = <A>(call: FastCall<A>, exit: Exit.Exit<A, McpError.McpClientError>) =>
    endCall(call, Exit.isSuccess(exit) ? exit : Exit.failCause(SpecErrors.typedCause(exit.cause, call.method, call.params)))

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
        const state = begin(fiber, method, params, decode, options, tool, false)
        if (state === undefined) return restore(calls.call(method, params, decode, options, tool))
        if (!register(state)) return endClosed(state)
        return Effect.matchCauseEffect(restore(requester.transmit(state.registered, aroundSend(state))), {
          onFailure: (cause) => {
            const { again, cancel, exit } = failureOf(state, cause)
            const end = () => {
              const ended = endCall(state, exit)
              // (the recovery waits on the user and the server: the caller may give it up)
              return again === undefined ? ended : restore(again)
            }
            return cancel === undefined ? end() : Effect.flatMap(cancel, end)
          },
          onSuccess: (raw) =>
            answered(state, raw) ?? Effect.matchCauseEffect(restore(roundsOf(state, raw)), {
              onFailure: (cause) => roundsEnded(state, Exit.failCause(cause)),
              onSuccess: (value) => roundsEnded(state, Exit.succeed(value))
            })
        })
      })
    )
  }

  const direct: DirectCall = (runtime, method, params, decode, given, tool, onExit, after) => {
    const { fiber, run } = runtime
    const state = begin(fiber, method, params, decode, Calls.underDefaults(fiber, given), tool, true)
    if (state === undefined) return undefined
    let ended = false
    const end: typeof onExit = (exit) => {
      if (ended) return
      ended = true
      onExit(exit)
    }
    if (!register(state)) {
      end(endClosed(state))
      return { abort: () => {} }
    }
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
      const { again, cancel, exit } = failureOf(state, cause)
      const finish = () => {
        const exitEnded = endCall(state, exit)
        if (again === undefined) end(exitEnded)
        else follow(again, settle)
      }
      if (cancel === undefined) finish()
      else run(cancel, finish)
    }

    const succeeded = (raw: unknown) => {
      const exit = answered(state, raw)
      if (exit === undefined) follow(roundsOf(state, raw), (rounds) => settle(roundsEnded(state, rounds)))
      else settle(exit)
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
        end(endCall(state, Exit.die(defect)))
      }
    }

    const registered = state.registered
    const arm = requester.listen(registered, onOutcome)
    if (arm !== undefined) run(arm, () => {})
    const sent = registered.sent
    if (sent !== undefined) {
      const around = aroundSend(state)
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
        const cancel = requester.abandoned(state.session.wire, registered, state.send, cause)
        const finish = () => end(endCall(state, Exit.failCause(cause)))
        if (cancel === undefined) finish()
        else run(cancel, finish)
      }
    }
  }

  return { call, direct }
}
