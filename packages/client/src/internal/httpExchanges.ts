/**
 * The exchanges of one HTTP connection: each request's exchange runs in a fiber of its own, kept in a `FiberMap`
 * by request id, so that cancelling a request interrupts its exchange (which aborts its HTTP request) and closing
 * the connection interrupts them all. A failed exchange reports `RequestFailed` for its request.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import type * as McpError from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"
import * as Transport from "../Transport.js"
import * as DeadlineTimer from "./deadlineTimer.js"
import type { Inbound } from "./httpInbound.js"
import * as Redaction from "./httpRedaction.js"
import type { Sender } from "./httpSender.js"
import type { Binding, Route, State } from "./httpState.js"
import { transportError } from "./httpState.js"
import * as Tracing from "./tracing.js"

/**
 * @internal
 */
export interface Exchanges {
  /** Starts the exchange of a request on a route (a connection that is closing starts nothing more). */
  readonly start: (
    route: Route,
    request: McpSchema.JsonRpcRequest,
    options: Transport.WireOptions,
    resent: boolean
  ) => Effect.Effect<void>
  /** Interrupts the exchange of a request, if it runs. */
  readonly stop: (id: McpSchema.RequestId) => Effect.Effect<void>
  /** The route of a request whose exchange runs. */
  readonly routeOf: (id: McpSchema.RequestId) => Route | undefined
  /** Moves a running request to another route (the fallback to HTTP+SSE). */
  readonly reroute: (id: McpSchema.RequestId, route: Route) => void
}

/**
 * How long after a request's deadline its exchange is stopped by the transport itself: the client cancels the
 * request at the deadline, so this only ends an exchange nothing cancelled (a resumed stream, a request that is
 * not cancellable), and the client's own timeout error comes first.
 *
 * @internal
 */
export const DEADLINE_GRACE_MILLIS = 1_000

/** A running exchange with a deadline: stopped by the connection's deadline timer once `at` has passed. */
interface Timed {
  readonly at: number
  readonly id: McpSchema.RequestId
  fiber: Fiber.Fiber<void> | undefined
  /** The timer's handle on this deadline. */
  watch: DeadlineTimer.Watch<Timed> | undefined
}

/** @internal */
export const make = (
  state: State,
  sender: Sender,
  inbound: Inbound,
  bindingOf: (route: Route) => Binding
): Effect.Effect<Exchanges, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fibers = yield* FiberMap.make<McpSchema.RequestId>()
    // the route of each running exchange, with the start it belongs to: a later start of the same request (a
    // re-send) keeps its own
    const routes = new Map<McpSchema.RequestId, { route: Route }>()
    const connectionScope = yield* Effect.scope

    /** Stops an exchange past its deadline: once it has ended interrupted, its request fails with `Timeout`. */
    const expire = (entry: Timed): Effect.Effect<void> => {
      const fiber = entry.fiber
      if (fiber === undefined) return Effect.void
      return Effect.flatMap(Effect.andThen(Fiber.interrupt(fiber), Fiber.await(fiber)), (exit) =>
        Exit.hasInterrupts(exit)
          ? inbound.emitOpen(Transport.TransportEvent.RequestFailed({
            id: entry.id,
            error: transportError("Timeout", "the request's deadline passed before its exchange ended")
          }))
          : Effect.void)
    }

    /**
     * The deadlines of the running exchanges: one timer fiber per connection stops every exchange still running a
     * grace after its request's deadline (an exchange forks no timer of its own: a timeout race per exchange cost
     * two fibers and ~20% of an HTTP call's CPU, measured with `packages/bench/src/fibers.mjs --transport http`; see `deadlineTimer.ts`).
     */
    const deadlines = DeadlineTimer.make<Timed>(connectionScope, (entry) => entry.at, expire)

    // the redirect policy and the names the HTTP client must redact (see httpRedaction.ts)
    const guard = Redaction.guardContext(sender.withSecrets)

    /**
     * The exchange's fiber has that one exchange to run: its log annotations, the header and query parameter names
     * the HTTP client must redact, the redirect policy, the tracer switch and the Scope its response lives in are
     * set in its context in one step, with nothing to restore (the fiber ends with the exchange). Measured with
     * `packages/bench/src/fibers.mjs --transport http --ops` (on Effect 3): the same settings made with
     * `Effect.scoped`, `Effect.annotateLogs`, `Effect.locallyWith` and `Effect.withTracerEnabled` took an HTTP call
     * at 64 in flight from 121 to 250 Effect operations.
     */
    const exchangeContext = (
      context: Context.Context<never>,
      scope: Scope.Scope,
      method: string,
      untraced: boolean
    ): Context.Context<never> => {
      const annotations = Context.get(context, References.CurrentLogAnnotations)
      const guarded = Context.add(
        Context.add(guard(context), References.CurrentLogAnnotations, {
          ...annotations,
          module: "HttpTransport",
          method
        }),
        Scope.Scope,
        scope
      ) as Context.Context<never>
      return untraced ? Context.add(guarded, References.TracerEnabled, false) : guarded
    }

    const run = (
      route: Route,
      request: McpSchema.JsonRpcRequest,
      options: Transport.WireOptions,
      resent: boolean,
      entry: { route: Route },
      untraced: boolean,
      deadline: Timed | undefined
    ): Effect.Effect<void> => {
      const failed = (error: McpError.TransportFailure) =>
        inbound.emitOpen(Transport.TransportEvent.RequestFailed({ id: request.id, error }))
      const work = Effect.catchCause(bindingOf(route).exchange(request, options, resent), (cause) => {
        const failure = Cause.findErrorOption(cause)
        if (Option.isSome(failure)) return failed(failure.value)
        // a bug must not leave the caller waiting for its timeout
        const defect = Cause.findDefect(cause)
        // (an interruption: there is no failure to strip)
        if (Result.isFailure(defect)) {
          return Effect.failCause(Cause.fromReasons(cause.reasons.filter((reason) => !Cause.isFailReason(reason))))
        }
        return Effect.andThen(
          Effect.logError("the exchange died", defect.success),
          failed(transportError("Read", "the HTTP exchange failed unexpectedly", defect.success))
        )
      })
      return Effect.flatMap(Scope.make(), (scope) =>
        Effect.andThen(
          Effect.withFiber((fiber) => {
            fiber.setContext(exchangeContext(fiber.context, scope, request.method, untraced))
            return Effect.void
          }),
          // the Scope is in the fiber's context from the step above, which the types cannot follow
          Effect.onExit(work as Effect.Effect<void>, (exit) => {
            if (routes.get(request.id) === entry) routes.delete(request.id)
            if (deadline?.watch !== undefined) deadlines.forget(deadline.watch)
            return Scope.close(scope, exit)
          })
        ))
    }

    const start: Exchanges["start"] = (route, request, options, resent) =>
      Effect.withFiber((sender) => {
        if (state.closed) return Effect.void
        const entry = { route }
        routes.set(request.id, entry)
        // With Effect's own tracer and no span to join (the exchange inherits the sender's), the HTTP client's
        // span could be seen by no one: it is not made (nor its trace context sent).
        // past the request's deadline (and a grace), an exchange nothing cancelled is stopped by the timer (a
        // listen request has no deadline of its own)
        const deadline: Timed | undefined = options.deadline === undefined || options.listen === true
          ? undefined
          : { at: options.deadline + DEADLINE_GRACE_MILLIS, id: request.id, fiber: undefined, watch: undefined }
        if (deadline !== undefined) deadline.watch = deadlines.watch(deadline)
        const exchange = run(route, request, options, resent, entry, Tracing.untraced(sender), deadline)
        // The fiber inherits the sender's context (its span, its log annotations), and is interruptible even when
        // the request is sent from an uninterruptible region (a forked fiber is, unless told otherwise). A later
        // start of the same request interrupts the earlier exchange.
        const started = Effect.flatMap(
          Effect.forkDetach(exchange),
          (fiber) => {
            if (deadline !== undefined) deadline.fiber = fiber
            return FiberMap.set(fibers, request.id, fiber)
          }
        )
        return deadline === undefined ? started : Effect.andThen(started, deadlines.arm(deadline.at))
      })

    const stop: Exchanges["stop"] = (id) => FiberMap.remove(fibers, id)

    return {
      start,
      stop,
      routeOf: (id) => routes.get(id)?.route,
      reroute: (id, route) => {
        const entry = routes.get(id)
        if (entry !== undefined) entry.route = route
      }
    }
  })
