/**
 * The connection: one fiber, owned by the client's Scope, that connects through the transport, negotiates the era,
 * publishes the session, checks the health of a quiet connection, starts a new legacy session when the server
 * forgot the old one, and reconnects on the `reconnect` schedule when the transport closes.
 *
 * Its phase (waiting for a session, a session, closed for good) is a `Signal`: callers wait on its changes
 * while no session is up, and read the session at once while one is.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Transport from "../../Transport.js"
import type * as Negotiation from "../negotiation.js"
import * as Signal from "../signal.js"
import type * as Options from "./options.js"
import * as Requester from "./requester.js"
import type * as RequestTable from "./requestTable.js"
import { type Attempt, type Session, sessionOf, type Wire } from "./session.js"
import { printable } from "../printable.js"

/**
 * Whether callers can send: a session, none yet (connecting or reconnecting), or none ever again.
 *
 * @internal
 */
export type Phase =
  | { readonly _tag: "Waiting" }
  | { readonly _tag: "Ready"; readonly session: Session }
  | { readonly _tag: "Failed"; readonly error: McpError.RequestError }

const waiting: Phase = { _tag: "Waiting" }

const isSettled = (phase: Phase): phase is Exclude<Phase, { readonly _tag: "Waiting" }> => phase._tag !== "Waiting"

/**
 * What the rest of the client reads of the connection.
 *
 * @internal
 */
export interface Status {
  readonly phase: Signal.Signal<Phase>
  /** The public state. */
  readonly state: Signal.Signal<McpClient.ConnectionState>
  /** The session, while one is up (read without waiting). */
  readonly current: () => Session | undefined
  /** The attempt whose session is published, while it is alive. */
  readonly published: () => Attempt | undefined
  /** The session; while none is up, waits for one (failing with `RequestTimeout` after `timeoutMillis`). */
  readonly awaitSession: (
    timeoutMillis: number | undefined,
    method: string
  ) => Effect.Effect<Session, McpError.RequestError>
  /**
   * The session's protocol version is no longer the server's: its connection closes and the connection loop
   * connects and negotiates again (on the reconnect schedule); callers wait for the new session.
   */
  readonly renegotiate: (session: Session, error: McpError.TransportError) => Effect.Effect<void>
}

/**
 * The connection's own handle on its status.
 *
 * @internal
 */
export interface Control extends Status {
  readonly publish: (session: Session) => Effect.Effect<void>
  /** The attempt's session is no longer usable: callers wait for the next. */
  readonly unpublish: (attempt: Attempt | undefined) => Effect.Effect<void>
  /** No session ever again: callers fail with `error` (a function is called at each read: it answers one error). */
  readonly fail: (error: McpError.RequestError | (() => McpError.RequestError)) => Effect.Effect<void>
}

/**
 * @internal
 */
export const makeStatus: Effect.Effect<Control> = Effect.sync(() => {
  const phase = Signal.make<Phase>(waiting)
  const state = Signal.make<McpClient.ConnectionState>({ _tag: "Connecting" })
  let current: Session | undefined
  // (built when first needed: a caller waiting for a session while none is up is rare, and the changes stream is
  // not cheap to put together, so a connect does not build it)
  const settled: Effect.Effect<Session, McpError.RequestError> = Effect.suspend(() =>
    Effect.flatMap(
      Stream.runHead(Stream.filter(phase.changes, isSettled)),
      (first) =>
        Option.isNone(first)
          ? Effect.never
          : first.value._tag === "Ready"
          ? Effect.succeed(first.value.session)
          : Effect.fail(first.value.error)
    )
  )
  const control: Control = {
    phase,
    state,
    current: () => current,
    published: () => current?.attempt,
    awaitSession: (timeoutMillis, method) =>
      Effect.suspend(() => {
        // connected: the session is there, so no timer is needed to wait for it
        if (current !== undefined) return Effect.succeed(current)
        if (timeoutMillis === undefined) return settled
        return Effect.timeoutOrElse(settled, {
          duration: timeoutMillis,
          orElse: () => Effect.fail(new McpError.RequestTimeout({ method, timeoutMillis }))
        })
      }),
    renegotiate: (session, error) =>
      Effect.suspend(() => {
        const attempt = session.attempt
        attempt.closedError ??= error
        return Effect.andThen(control.unpublish(attempt), Deferred.succeed(attempt.closed, error))
      }),
    publish: (session) =>
      Effect.suspend(() => {
        current = session
        return phase.set({ _tag: "Ready", session })
      }),
    unpublish: (attempt) =>
      Effect.suspend(() => {
        if (current === undefined || (attempt !== undefined && current.attempt !== attempt)) return Effect.void
        // Callers arriving from now on wait for the next session instead of using this dead one.
        current = undefined
        return phase.update((now) => now._tag === "Ready" ? waiting : now)
      }),
    fail: (error) =>
      Effect.suspend(() => {
        current = undefined
        return phase.set(
          typeof error === "function"
            ? {
              _tag: "Failed",
              get error() {
                return error()
              }
            }
            : { _tag: "Failed", error }
        )
      })
  }
  return control
})

/**
 * What the connection asks of the rest of the client.
 *
 * @internal
 */
export interface Hooks {
  /** Routes what the transport delivers, but for `Closed` and `SessionExpired`, which the connection handles. */
  readonly route: (attempt: Attempt, event: Transport.TransportEvent) => Effect.Effect<void>
  /**
   * A session was negotiated; `renewed` for every session after the first. Runs in the attempt's Scope, before the
   * session is published: no caller uses it until this is done.
   */
  readonly onSession: (session: Session, renewed: boolean) => Effect.Effect<void, never, Scope.Scope>
  /** The server forgot its legacy session and a new one was made on the same transport. */
  readonly onReinitialized: (session: Session) => Effect.Effect<void, never, Scope.Scope>
  /** An attempt ended: what it served stops. */
  readonly onAttemptEnd: Effect.Effect<void>
}

/**
 * @internal
 */
export interface Config {
  readonly transport: Transport.Transport["Service"]
  readonly options: Options.Resolved
  readonly negotiator: Negotiation.Negotiator
  readonly requester: Requester.Requester
  readonly requests: RequestTable.RequestTable
  readonly hooks: Hooks
}

/** What the connection's steps share. */
interface Context extends Config {
  readonly control: Control
  readonly kind: McpError.TransportKind
  /** Completed by the first session, or failed by the first attempt. */
  readonly ready: Deferred.Deferred<void, McpError.ConnectError>
  /** False until a first session existed: only later sessions have state to restore. */
  renewed: boolean
}

const closeAttempt = (ctx: Context, attempt: Attempt, error: McpError.TransportError) =>
  Effect.suspend(() => {
    attempt.closedError ??= error
    return Effect.andThen(
      ctx.control.unpublish(attempt),
      Effect.andThen(Deferred.succeed(attempt.closed, error), Effect.sync(() => ctx.requests.failAll(error)))
    )
  })

/** The connection as the negotiator sees it. */
const channelOf = (
  ctx: Context,
  attempt: Attempt,
  connection: Transport.TransportConnection
): Negotiation.Channel => ({
  get knownEra() {
    return connection.info.era
  },
  request: (method, params, o) =>
    ctx.requester.send(
      { attempt, connection, era: o.era, version: o.version },
      method,
      params,
      Requester.internal(o.timeoutMillis, o.probe === true ? { probe: true } : undefined)
    ),
  notifyInitialized: connection.notify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  closed: Deferred.isDone(attempt.closed),
  onEra: (era) => {
    attempt.era = era
  }
})

/** Legacy session expiry: a new session on the same transport, nothing failed; the transport re-sends. */
const reinitialize = (ctx: Context, attempt: Attempt): Effect.Effect<void> =>
  Effect.suspend(() => {
    const connection = attempt.connection
    const version = attempt.version
    if (attempt.reinitializing || connection === undefined || version === undefined) return Effect.void
    if (!McpSchema.isLegacyVersion(version)) return Effect.void
    attempt.reinitializing = true
    return ctx.negotiator.initialize(channelOf(ctx, attempt, connection), version).pipe(
      Effect.flatMap((negotiated) => {
        const session = sessionOf(negotiated, attempt, connection)
        return Effect.andThen(
          connection.setSession({ era: session.era, protocolVersion: session.protocolVersion }),
          Scope.provide(ctx.hooks.onReinitialized(session), attempt.scope)
        )
      }),
      Effect.catch((error) =>
        closeAttempt(
          ctx,
          attempt,
          new McpError.TransportError({
            transport: ctx.kind,
            reason: "Closed",
            detail: `the server forgot the session and a new one could not be started: ${
              "message" in error ? error.message : error._tag
            }`
          })
        )
      ),
      Effect.ensuring(Effect.sync(() => (attempt.reinitializing = false))),
      Effect.annotateLogs({ module: "McpClient", method: "reinitialize" }),
      Effect.forkIn(attempt.scope),
      Effect.asVoid
    )
  })

/** Where the transport delivers what the server sends during one attempt. */
const emitFor = (ctx: Context, attempt: Attempt): readonly [Transport.Emit, Transport.ConnectOptions] => {
  const route = (event: Transport.TransportEvent): Effect.Effect<void> => {
    switch (event._tag) {
      case "SessionExpired":
        return reinitialize(ctx, attempt)
      case "Closed":
        return closeAttempt(ctx, attempt, event.error)
      default:
        return ctx.hooks.route(attempt, event)
    }
  }
  // A defect while handling a message (a bug, here or in a callback) drops that message: it must not kill the
  // transport's reader, whose death would leave every pending request waiting.
  const emit = (event: Transport.TransportEvent) =>
    Effect.catchDefect(
      Effect.suspend(() => {
        attempt.inbound++
        return route(event)
      }),
      (defect) => Effect.logError(`an inbound ${event._tag} could not be handled and was dropped`, Cause.die(defect))
    )
  // the answer to a pending request settles it at once: nothing else to run
  const unsafeEmit = (event: Transport.TransportEvent): boolean => {
    if (event._tag !== "Response") return false
    const entry = ctx.requests.get(event.message.id)
    if (entry === undefined) return false
    attempt.inbound++
    ctx.requests.settleResponse(event.message, entry)
    return true
  }
  return [emit, { deliver: unsafeEmit }]
}

/** A connection quiet for `interval` is checked (legacy `ping`, modern `server/discover`); a failure closes it. */
const healthCheck = Effect.fnUntraced(function*(ctx: Context, attempt: Attempt, session: Session, interval: number) {
  const wire: Wire = { attempt, connection: session.connection, era: session.era, version: session.protocolVersion }
  const send = Requester.internal(ctx.options.healthTimeout, { cancellable: true })
  while (true) {
    const before = attempt.inbound
    yield* Effect.sleep(Duration.millis(interval))
    if (attempt.inbound !== before) continue
    const check = ctx.requester.send(wire, session.era === "legacy" ? "ping" : "server/discover", undefined, send)
    const failed = yield* check.pipe(
      Effect.as(false),
      Effect.catch((error) => Effect.succeed(error._tag !== "McpError"))
    )
    if (failed) {
      const error = new McpError.TransportError({
        transport: ctx.kind,
        reason: "Timeout",
        detail: "the connection failed its health check"
      })
      yield* Effect.logWarning("health check failed; reconnecting").pipe(Effect.annotateLogs({ module: "McpClient" }))
      return yield* closeAttempt(ctx, attempt, error)
    }
  }
})

/**
 * The error of requests a closing connection ends. Its fields are this module's own, so the schema's check of
 * them on construction (~0.1 ms per error, twice per close) is skipped.
 */
const closedError = (transport: McpError.TransportKind, detail: string) =>
  new McpError.TransportError({ transport, reason: "Closed", detail }, { disableChecks: true })

/** One connection attempt: connect, negotiate, serve until the transport closes. */
const runAttempt = (ctx: Context, onEstablished: () => void): Effect.Effect<never, Negotiation.NegotiationError> =>
  Effect.scoped(Effect.gen(function*() {
    const { control, kind } = ctx
    const attempt: Attempt = {
      closed: yield* Deferred.make<McpError.TransportError>(),
      closedError: undefined,
      connection: undefined,
      era: undefined,
      inbound: 0,
      scope: yield* Effect.scope,
      reinitializing: false,
      version: undefined,
      serverName: undefined
    }
    yield* Effect.addFinalizer(() =>
      Effect.andThen(
        Effect.sync(() => {
          // (the error is made only for requests that wait for it)
          if (ctx.requests.size() > 0) ctx.requests.failAll(closedError(kind, "the connection closed"))
        }),
        Effect.andThen(ctx.hooks.onAttemptEnd, control.unpublish(undefined))
      )
    )
    // (a first attempt starts there already: publishing the same state again would only cost the connect)
    if ((yield* control.state.get)._tag !== "Connecting") {
      yield* control.state.set({ _tag: "Connecting" })
    }
    const connection = yield* ctx.transport.connect(...emitFor(ctx, attempt))
    attempt.connection = connection
    const negotiated = yield* ctx.negotiator.negotiate(channelOf(ctx, attempt, connection))
    const session = sessionOf(negotiated, attempt, connection)
    attempt.version = session.protocolVersion
    attempt.serverName = session.serverInfo?.name
    yield* connection.setSession({ era: session.era, protocolVersion: session.protocolVersion })
    onEstablished()
    ctx.negotiator.established()
    // In this order, so that nothing depends on when the other fibers run: what the new session makes stale is
    // forgotten before any caller can use it, the state is `Connected` before anything can have used it, and the
    // constructor (waiting on `ready`) returns a client that is connected.
    yield* ctx.hooks.onSession(session, ctx.renewed)
    ctx.renewed = true
    yield* control.state.set({
      _tag: "Connected",
      era: session.era,
      protocolVersion: session.protocolVersion
    })
    yield* control.publish(session)
    yield* Deferred.succeed(ctx.ready, undefined)
    yield* Effect.logDebug(printable(`connected: ${session.era} ${session.protocolVersion}`)).pipe(
      Effect.annotateLogs({ module: "McpClient", transport: printable(kind) })
    )
    const interval = ctx.options.healthInterval
    if (interval !== undefined) yield* Effect.forkScoped(healthCheck(ctx, attempt, session, interval))
    return yield* Effect.flatMap(Deferred.await(attempt.closed), Effect.fail)
  }))

const closedFor = (ctx: Context, error: McpError.ConnectError) =>
  Effect.andThen(ctx.control.state.set({ _tag: "Closed", error }), ctx.control.fail(error))

/** Attempt after attempt, on the reconnect schedule, until it gives up (or the first attempt fails). */
const loop = Effect.fnUntraced(function*(ctx: Context) {
  // a step sleeps for the schedule's delay, then fails with `Cause.Done` once the schedule ends
  let next = yield* Schedule.toStepWithSleep(ctx.options.reconnect)
  const first = ctx.options.firstConnection
  const firstNext = first === undefined ? undefined : yield* Schedule.toStepWithSleep(first)
  let attemptNumber = 0
  while (true) {
    let established = false
    const signal = yield* Effect.flip(runAttempt(ctx, () => (established = true)))
    let outcome: McpError.ConnectError
    if (signal._tag === "RestartAsLegacy" || signal._tag === "Reprobe") {
      const refused = ctx.negotiator.turn(signal)
      if (refused === undefined) continue
      outcome = refused
    } else {
      outcome = signal
    }
    if (!(yield* Deferred.isDone(ctx.ready))) {
      // The first connection failed: unless it is retried, report it to the constructor instead of retrying a bad
      // setup.
      const retry = firstNext === undefined ? undefined : yield* Effect.result(firstNext(outcome))
      if (retry === undefined || Result.isFailure(retry)) {
        yield* Deferred.fail(ctx.ready, outcome)
        return yield* closedFor(ctx, outcome)
      }
      attemptNumber++
      yield* Effect.logInfo(printable(`the first connection failed (${outcome.message}); trying again`)).pipe(
        Effect.annotateLogs({ module: "McpClient", attempt: attemptNumber })
      )
      continue
    }
    if (established) {
      attemptNumber = 0
      // the schedule starts again (a step function has no reset)
      next = yield* Schedule.toStepWithSleep(ctx.options.reconnect)
    }
    attemptNumber++
    yield* ctx.control.state.set({ _tag: "Reconnecting", attempt: attemptNumber, error: outcome })
    yield* Effect.logInfo(printable(`connection lost (${outcome.message}); reconnecting`)).pipe(
      Effect.annotateLogs({ module: "McpClient", attempt: attemptNumber })
    )
    const step = yield* Effect.result(next(outcome))
    if (Result.isFailure(step)) return yield* closedFor(ctx, outcome)
  }
})

/**
 * Starts the connection in the Scope; succeeds once the first session is up, fails when the first attempt fails.
 *
 * @internal
 */
export const run = (
  control: Control,
  config: Config
): Effect.Effect<void, McpError.ConnectError, Scope.Scope> =>
  Effect.gen(function*() {
    const kind = config.options.kind
    const ctx: Context = {
      ...config,
      control,
      kind,
      ready: yield* Deferred.make<void, McpError.ConnectError>(),
      renewed: false
    }
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        // made only when something reads it (a request still waiting, a call after the close): building an error,
        // its stack above all, was ~1% of a warm connect, call and close over HTTP
        let closed: McpError.TransportError | undefined
        const closedNow = () => closed ??= closedError(kind, "the client closed")
        yield* control.fail(closedNow)
        if (config.requests.size() > 0) config.requests.failAll(closedNow())
        yield* control.state.set({ _tag: "Closed", error: undefined })
      })
    )
    yield* Effect.forkScoped(Effect.interruptible(loop(ctx)))
    yield* Deferred.await(ctx.ready)
  })
