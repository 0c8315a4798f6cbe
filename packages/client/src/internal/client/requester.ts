/**
 * The core send: a request registered in the request table, its message built with the `_meta` envelope, handed to
 * the transport, and waited for; dropped whatever the outcome, and cancelled the way the binding requires when its
 * caller gives up. Every feature of the client (negotiation, health checks, calls, the cache, input rounds,
 * subscriptions) sends through it.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import type * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as Transport from "../../Transport.js"
import type * as McpMethods from "../mcpMethods.js"
import * as Envelope from "./envelope.js"
import type * as RequestTable from "./requestTable.js"
import type { Wire } from "./session.js"

/**
 * How one request is sent and waited for.
 *
 * @internal
 */
export interface SendOptions {
  readonly timeoutMillis: number | undefined
  readonly resetOnProgress: boolean
  readonly maxTotalMillis: number | undefined
  readonly onProgress: ((progress: McpSchema.Progress) => Effect.Effect<void>) | undefined
  readonly meta: Readonly<Record<string, unknown>> | undefined
  /** Cancelled on the wire when given up (timed out, or its caller interrupted). */
  readonly cancellable: boolean
  /**
   * The era probe: HTTP transports report refusals in detail, and a JSON-RPC error whose id matches no request
   * answers it.
   */
  readonly probe: boolean
  /** Told the request id before the request is sent (a listen routes its notifications by it). */
  readonly onId?: ((id: McpSchema.RequestId) => void) | undefined
}

/**
 * The options of the client's own requests (negotiation, health checks, restores).
 *
 * @internal
 */
export const internal = (timeoutMillis: number | undefined, extra?: Partial<SendOptions>): SendOptions => ({
  timeoutMillis,
  resetOnProgress: false,
  maxTotalMillis: undefined,
  onProgress: undefined,
  meta: undefined,
  cancellable: false,
  probe: false,
  ...extra
})

/**
 * A request registered (its id taken, its entry pending) and its message built: `sent` sends it.
 *
 * @internal
 */
export interface Registered {
  readonly entry: RequestTable.Entry
  /** The transport's send, still to run; undefined when the request went out at once. */
  readonly sent: Effect.Effect<void, McpError.TransportFailure> | undefined
}

/**
 * What a request reads of the fiber it is made in (its context and references: clock, span, tracer, metric
 * attributes): the fiber itself, or, for a caller that is not a fiber, the same read from a context (the promise
 * client's: `{ context, getRef: (ref) => Context.get(context, ref) }`).
 *
 * @internal
 */
export type FiberView = Pick<Fiber.Fiber<unknown, unknown>, "context" | "getRef">

/**
 * @internal
 */
export interface Requester {
  /** The methods this client knows, with their facts (what the transport is told of each request's method). */
  readonly methods: McpMethods.Registry
  /**
   * Sends one request and waits for its outcome. The request is registered (and its deadline set) before it is
   * sent and dropped whatever the outcome; a request given up (timed out, or its caller interrupted) is cancelled
   * when `options.cancellable`.
   */
  readonly send: (
    wire: Wire,
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    options: SendOptions
  ) => RequestTable.Reply
  /**
   * What precedes every send, in the caller's fiber. `span` is the request's span (the fiber's current span when
   * undefined): its trace context goes in `_meta` on modern requests.
   */
  readonly register: (
    fiber: FiberView,
    wire: Wire,
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    options: SendOptions,
    span: Tracer.Span | undefined
  ) => Registered
  /** Sends a registered request (unless it went out at once) and waits; `around` runs the transport's part. */
  readonly transmit: (
    registered: Registered,
    around: (<A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>) | undefined
  ) => RequestTable.Reply
  /**
   * `transmit`'s wait for a caller that is not a fiber, once the request is sent (`sent`, when not undefined, is
   * for the caller to run): see `RequestTable.listen`.
   */
  readonly listen: (
    registered: Registered,
    onOutcome: (outcome: Exit.Exit<unknown, McpError.RequestError>) => void
  ) => Effect.Effect<void> | undefined
  /** A request answered: its entry is dropped. */
  readonly completed: (registered: Registered) => void
  /**
   * A request that did not succeed is dropped; one given up (timed out, or its caller interrupted) is cancelled
   * when `options.cancellable`: the effect that cancels it, if any.
   */
  readonly abandoned: (
    wire: Wire,
    registered: Registered,
    options: SendOptions,
    cause: Cause.Cause<McpError.RequestError>
  ) => Effect.Effect<void> | undefined
}

/**
 * Sends a request through the transport's synchronous path when it has one and it takes the request now. A
 * transport's throw counts as not sent: its `request` then runs, where a failure is the call's.
 */
const sentAtOnce = (
  connection: Transport.TransportConnection,
  message: McpSchema.JsonRpcRequest,
  options: Transport.WireOptions
): boolean => {
  const unsafeRequest = connection.trySend
  if (unsafeRequest === undefined) return false
  try {
    return unsafeRequest(message, options)
  } catch {
    return false
  }
}

/** The request's own span, when it is a span of this process whose trace a server can join. */
const propagatedSpan = (span: Tracer.AnySpan | undefined) =>
  span !== undefined && span._tag === "Span" ? span : undefined

/**
 * @internal
 */
export const make = (
  requests: RequestTable.RequestTable,
  envelope: Envelope.Envelope,
  methods: McpMethods.Registry
): Requester => {
  const register = (
    fiber: FiberView,
    wire: Wire,
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    send: SendOptions,
    span: Tracer.Span | undefined
  ): Registered => {
    const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
    const entry = requests.register(method, now, send, send.onProgress)
    const id = entry.id
    send.onId?.(id)
    const timeout = send.timeoutMillis
    // a timeout that restarts on progress still ends by the hard ceiling (default ten times the timeout)
    const budget = send.resetOnProgress && timeout !== undefined ? send.maxTotalMillis ?? timeout * 10 : timeout
    const finalParams = envelope.params(
      wire,
      id,
      params,
      send,
      wire.era === "legacy" ? undefined : Envelope.traceContext(span ?? propagatedSpan(Option.getOrUndefined(Context.getOption(fiber.context, Tracer.ParentSpan))))
    )
    const message: McpSchema.JsonRpcRequest = finalParams === undefined
      ? { jsonrpc: "2.0", id, method }
      : { jsonrpc: "2.0", id, method, params: finalParams }
    // what the transport needs to know of the method, from its definition
    const definition = methods.of(method)
    const options: Transport.WireOptions = {
      probe: send.probe,
      deadline: budget === undefined ? undefined : now + budget,
      listen: method === "subscriptions/listen",
      idempotent: definition?.idempotent ?? false,
      nameField: definition?.nameField
    }
    const connection = wire.connection
    const sent = sentAtOnce(connection, message, options) ? undefined : connection.request(message, options)
    return { entry, sent }
  }

  const transmit = (
    registered: Registered,
    around: (<A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>) | undefined
  ): RequestTable.Reply => {
    const sent = registered.sent
    if (sent === undefined) return requests.await(registered.entry)
    return Effect.flatMap(around === undefined ? sent : around(sent), () => requests.await(registered.entry))
  }

  const completed = (registered: Registered): void => requests.completed(registered.entry)

  const abandoned = (
    wire: Wire,
    registered: Registered,
    send: SendOptions,
    cause: Cause.Cause<McpError.RequestError>
  ): Effect.Effect<void> | undefined => {
    if (!requests.abandon(registered.entry) || !send.cancellable) return undefined
    const timedOut = Option.exists(Cause.findErrorOption(cause), (e) => e._tag === "RequestTimeout")
    if (!timedOut && !Cause.hasInterrupts(cause)) return undefined
    return wire.connection.cancel(registered.entry.id, timedOut ? "timeout" : "interrupted")
  }

  const send = (
    wire: Wire,
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    options: SendOptions
  ): RequestTable.Reply =>
    Effect.uninterruptibleMask((restore) =>
      Effect.withFiber<unknown, McpError.RequestError>((fiber) => {
        if (wire.attempt.closedError !== undefined) return Effect.fail(wire.attempt.closedError)
        const registered = register(fiber, wire, method, params, options, undefined)
        return Effect.matchCauseEffect(restore(transmit(registered, undefined)), {
          onFailure: (cause) => {
            const cancel = abandoned(wire, registered, options, cause)
            return cancel === undefined ? Effect.failCause(cause) : Effect.andThen(cancel, Effect.failCause(cause))
          },
          onSuccess: (value) => {
            completed(registered)
            return Effect.succeed(value)
          }
        })
      })
    )

  return {
    methods,
    send,
    register,
    transmit,
    listen: (registered, onOutcome) => requests.listen(registered.entry, onOutcome),
    completed,
    abandoned
  }
}
