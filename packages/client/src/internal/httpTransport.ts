/**
 * The HTTP transport behind `HttpTransport`: one connection speaks modern Streamable HTTP (2026-07-28), legacy
 * Streamable HTTP (2025-03-26 … 2025-11-25) or HTTP+SSE (2024-11-05), whichever the server turns out to be.
 *
 * This module composes the parts of a connection and holds what decides between the bindings: the route of each
 * message, the fallback from Streamable HTTP to HTTP+SSE, and the verdicts (era and binding) kept per origin.
 * - `httpSender.ts`: credentials and the OAuth retry, redaction, redirects, the one re-send of a request;
 * - `httpInbound.ts`: what comes back (delivery as transport events, classification of an answer);
 * - `httpModern.ts`, `httpLegacy.ts`, `httpSse.ts`: the three bindings, behind one interface (`httpState.ts`);
 * - `httpExchanges.ts`: each request's exchange in its own fiber, kept by request id; interrupting it aborts the
 *   HTTP request, which is how a modern request is cancelled (the client cancels a request at its deadline, so
 *   the exchange needs no timer of its own).
 * Long-lived streams (the legacy GET stream, the HTTP+SSE stream) run in the connection's own fibers. Closing the
 * connection's Scope interrupts them all, then DELETEs the legacy session (bounded in time).
 *
 * @internal
 */
import type * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as FiberHandle from "effect/FiberHandle"
import * as FiberSet from "effect/FiberSet"
import * as McpError from "../McpError.js"
import * as McpSchema from "../McpSchema.js"
import type * as HttpTransport from "../HttpTransport.js"
import type * as OAuth from "../OAuth.js"
import * as Transport from "../Transport.js"
import * as HttpAuth from "./httpAuth.js"
import * as Exchanges from "./httpExchanges.js"
import * as Inbound from "./httpInbound.js"
import * as Legacy from "./httpLegacy.js"
import * as Modern from "./httpModern.js"
import * as Body from "./httpResponse.js"
import * as Sender from "./httpSender.js"
import type * as Sse from "./httpSse.js"
import type { Binding, Resolved, Route, State } from "./httpState.js"
import { makeState, socketTurn, transportError } from "./httpState.js"
import { lazyImport } from "./lazyImport.js"
import { madeOnUse } from "./madeOnUse.js"
import * as McpHeaders from "./mcpHeaders.js"
import * as Tracing from "./tracing.js"
import { printable } from "./printable.js"

export type { BindingOption, Resolved } from "./httpState.js"

// The HTTP+SSE (2024-11-05) binding's module, loaded when a connection first needs it (the `sse` binding, or the
// fallback after a refused `initialize`): a connection to a Streamable HTTP server never loads it
const loadSse: Effect.Effect<typeof Sse> = lazyImport(() => import("./httpSse.js"))

/**
 * A connection's HTTP+SSE binding, made with its module on first use. It announces cancellations, as the
 * binding of `httpSse.ts` does.
 */
const lazySse = (make: (module: typeof Sse) => Sse.Sse): Sse.Sse => {
  let made: Sse.Sse | undefined
  const sse: Effect.Effect<Sse.Sse> = Effect.suspend(() =>
    made !== undefined ? Effect.succeed(made) : Effect.map(loadSse, (module) => (made ??= make(module)))
  )
  return {
    exchange: (request, options, resent) => Effect.flatMap(sse, (binding) => binding.exchange(request, options, resent)),
    oneWay: (message, what) => Effect.flatMap(sse, (binding) => binding.oneWay(message, what)),
    announcesCancel: true,
    endpoint: Effect.flatMap(sse, (binding) => binding.endpoint),
    post: (message, what) => Effect.flatMap(sse, (binding) => binding.post(message, what))
  }
}

/**
 * What the client reads of this transport: a server that answers every request refuses the era probe with a status
 * (400/404/405: a legacy server) and its silence is an outage; the probe waits 5 seconds by default (3 elsewhere).
 */
const traits: Transport.Traits = { probeTimeout: Duration.seconds(5), probeFailures: "status" }

/** What a connection found out about an origin, for the next connection through the same transport. */
interface Verdict {
  readonly era: McpSchema.Era
  readonly binding: "streamable-http" | "sse"
}

const cancelTimeout = Duration.seconds(2)

const cancelReason = (reason: Transport.CancelReason): string =>
  reason === "timeout" ? "Request timed out" : "Request cancelled by the client"

/**
 * The fallback chain: `initialize` got 400/404/405 under the `auto` binding, so the server may be an HTTP+SSE
 * (2024-11-05) one; try its stream on the same URL and send `initialize` there. A refusal naming the versions the
 * server supports is a Streamable HTTP server's answer, not a reason to fall back.
 */
const fallBackToSse = (
  state: State,
  inbound: Inbound.Inbound,
  sse: Sse.Sse,
  exchanges: Exchanges.Exchanges
) =>
(
  response: HttpClientResponse.HttpClientResponse,
  request: McpSchema.JsonRpcRequest
): Effect.Effect<void, McpError.TransportFailure> =>
  Effect.gen(function*() {
    const body = yield* Body.readSnippet(response)
    const error = Inbound.jsonRpcError(body)
    // a server that names the versions it supports is a Streamable HTTP server: its error is the answer
    if (error !== undefined && error.code === McpSchema.ErrorCode.UnsupportedProtocolVersion) {
      return yield* inbound.emitResponse(request, error)
    }
    const endpoint = yield* Effect.result(sse.endpoint)
    if (Result.isFailure(endpoint)) {
      if (endpoint.failure._tag === "AuthError") return yield* Effect.fail(endpoint.failure)
      if (error !== undefined) return yield* inbound.emitResponse(request, error)
      const refusal = Body.statusError(response, body, `the server refused initialize with HTTP ${response.status}`)
      const failure = endpoint.failure
      // (the fallback's own failure without its "http transport: …" prefix, which this error's message has)
      const why = failure._tag === "TransportError" && failure.detail !== undefined ? failure.detail : failure.message
      const hint = failure._tag === "TransportError" && failure.status === 404 ? Body.notFoundHint(response.status) : ""
      return yield* Effect.fail(
        new McpError.TransportError({
          ...refusal,
          detail: `${refusal.detail}, and the HTTP+SSE fallback failed: ${why}${hint}`,
          cause: failure
        })
      )
    }
    yield* Effect.logDebug("the server speaks HTTP+SSE (2024-11-05)")
    state.fellBackToSse()
    exchanges.reroute(request.id, "sse")
    yield* sse.post(request, request.method)
  })

/**
 * Cancels a request: a parked one is forgotten (it never reached the server); a running one's exchange is
 * interrupted, after `notifications/cancelled` where its binding announces cancellations.
 */
const canceller = (
  state: State,
  bindings: Record<Route, Binding>,
  exchanges: Exchanges.Exchanges,
  sessionRoute: () => Route
) =>
(id: McpSchema.RequestId, reason: Transport.CancelReason): Effect.Effect<void> =>
  Effect.suspend(() => {
    // a request waiting for a new session never reached the server
    if (state.unpark(id)) return Effect.void
    const binding = bindings[exchanges.routeOf(id) ?? sessionRoute()]
    const stop = exchanges.stop(id)
    if (!binding.announcesCancel) return stop
    const cancelled: McpSchema.JsonRpcNotification = {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: id, reason: cancelReason(reason) }
    }
    return Effect.andThen(
      binding.oneWay(cancelled, cancelled.method).pipe(
        Effect.catch((error) =>
          Effect.logDebug(printable(`notifications/cancelled was not delivered: ${error.message}`))
        )
      ),
      stop
    )
  }).pipe(
    // interruptible: callers run this in release steps, where a plain timeout would not fire
    Effect.interruptible,
    Effect.timeout(cancelTimeout),
    Effect.ignore,
    Effect.annotateLogs({ module: "HttpTransport", method: "cancel" })
  )

/**
 * Builds the transport service. The HTTP client is the one given here for every connection, so its connection
 * pool outlives reconnect attempts. The era verdicts of this transport are kept per origin.
 *
 * @internal
 */
export const make = (
  resolved: Resolved,
  client: HttpClient.HttpClient,
  oauth?: OAuth.OAuthShape | undefined
): Transport.Transport["Service"] => {
  const verdicts = new Map<string, Verdict>()
  const sender = Sender.make(resolved, client, oauth)

  const connect = (emit: Transport.Emit, connectOptions?: Transport.ConnectOptions) =>
    Effect.gen(function*() {
      yield* sender.auth.ready
      const cached = verdicts.get(resolved.origin)
      const state = makeState(
        resolved.binding === "sse" || (resolved.binding === "auto" && cached?.binding === "sse")
          ? "sse"
          : "streamable-http"
      )
      const knownEra = state.binding === "sse" ? "legacy" : cached?.era
      const clock = yield* Clock.Clock
      const inbound = Inbound.make(
        resolved,
        state,
        sender,
        emit,
        () => clock.currentTimeMillisUnsafe(),
        connectOptions?.deliver
      )

      // Finalizers run last-added first: stop accepting work, interrupt the streams and requests, DELETE the
      // session, and forget a cached verdict this connection could not confirm.
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          if (!state.negotiated) verdicts.delete(resolved.origin)
        })
      )
      // (the legacy binding is made below, once the exchanges it restarts exist)
      let deleteSession: Effect.Effect<void> = Effect.void
      yield* Effect.addFinalizer(() => deleteSession)
      const exchanges = yield* Exchanges.make(state, sender, inbound, (route) => bindings[route])
      // (made on first use, closing at this point of the order: a modern connection uses neither)
      const background = yield* madeOnUse(FiberSet.make())
      const getStream = yield* madeOnUse(FiberHandle.make())
      yield* Effect.addFinalizer(() => Effect.sync(state.close))

      const sse = lazySse((module) =>
        module.make(
          resolved,
          state,
          sender,
          inbound,
          (stream) => Effect.flatMap(background.use, (fibers) => Effect.asVoid(FiberSet.run(fibers, stream)))
        )
      )
      const legacy = Legacy.make(resolved, state, sender, inbound, {
        fallback: (response, request) => fallBackToSse(state, inbound, sse, exchanges)(response, request),
        restart: (parked) => exchanges.start("legacy", parked.message, parked.options, parked.resent),
        runGetStream: (stream) =>
          Effect.flatMap(getStream.use, (handle) => Effect.asVoid(FiberHandle.run(handle, stream)))
      })
      deleteSession = legacy.deleteSession
      const bindings: Record<Route, Binding> = {
        modern: Modern.make(state, sender, inbound),
        legacy,
        sse
      }

      /** The route of a message: the binding's, the negotiated era's, or before that the era it claims. */
      const routeOf = (message: McpSchema.JsonRpcRequest | McpSchema.JsonRpcNotification): Route => {
        if (state.binding === "sse") return "sse"
        if (state.era !== undefined) return state.era
        // before the era is settled: the probe and other modern messages carry the version in `_meta`
        const claimed = McpHeaders.protocolVersionOf(message)
        return claimed !== undefined && !McpSchema.isLegacyVersion(claimed) ? "modern" : "legacy"
      }

      /** The route of what is not a request of its own (a response, a cancellation). */
      const sessionRoute = (): Route =>
        state.binding === "sse" ? "sse" : state.era === "modern" ? "modern" : "legacy"

      const closedError = () => transportError("Closed", "the connection was closed")

      const start = (
        message: McpSchema.JsonRpcRequest,
        options: Transport.WireOptions
      ): Effect.Effect<void, McpError.TransportFailure> =>
        Effect.suspend(() => {
          if (state.closed) return Effect.fail(closedError())
          const route = routeOf(message)
          // while the session is being replaced, the request waits to go out in the new one
          if (route === "legacy" && legacy.park(message, options)) return Effect.void
          return exchanges.start(route, message, options, false)
        })

      // A step of the handshake follows the answer to the one before: it waits for that answer's socket (see
      // `socketTurn`). `negotiated` only turns true, so it is read when the effect is made: nothing per call after.
      const handshakeStep = <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E> =>
        state.negotiated ? self : Effect.andThen(socketTurn, self)

      const request = (
        message: McpSchema.JsonRpcRequest,
        options: Transport.WireOptions
      ): Effect.Effect<void, McpError.TransportFailure> => handshakeStep(start(message, options))

      /** Bounds a one-way message by `connectTimeout`. */
      const bounds = <A>(self: Effect.Effect<A, McpError.TransportFailure>, what: string) =>
        Effect.timeoutOrElse(self, {
          duration: resolved.connectTimeout,
          orElse: () => Effect.fail(transportError("Timeout", `${what} got no acknowledgement in time`))
        })

      const oneWay = (message: McpSchema.JsonRpcNotification): Effect.Effect<void, McpError.TransportFailure> =>
        Effect.suspend(() =>
          state.closed
            ? Effect.fail(closedError())
            : bounds(bindings[routeOf(message)].oneWay(message, message.method), message.method)
        )

      const notify = (message: McpSchema.JsonRpcNotification): Effect.Effect<void, McpError.TransportFailure> =>
        handshakeStep(oneWay(message)).pipe(
          Effect.annotateLogs({ module: "HttpTransport", method: printable(message.method) })
        )

      const respond = (message: McpSchema.JsonRpcResponse): Effect.Effect<void, McpError.TransportFailure> =>
        Effect.suspend(() => {
          if (state.closed) return Effect.fail(closedError())
          return bounds(bindings[sessionRoute()].oneWay(message, "a response"), "a response")
        }).pipe(Effect.annotateLogs({ module: "HttpTransport", method: "respond" }))

      const cancel = canceller(state, bindings, exchanges, sessionRoute)

      const setSession = (session: Transport.SessionInfo): Effect.Effect<void> =>
        Effect.suspend(() => {
          state.negotiatedSession(session)
          verdicts.set(resolved.origin, { era: session.era, binding: state.binding })
          // (the session's GET stream takes a socket of its own; the caller's first request, the last answer's)
          if (session.era !== "legacy" || state.binding !== "streamable-http") return socketTurn
          return Effect.andThen(legacy.sessionStarted, socketTurn)
        })

      if (state.binding === "sse") yield* sse.endpoint

      const info: Transport.ConnectedInfo = {
        get binding(): Transport.Binding {
          return state.binding
        },
        origin: resolved.origin,
        target: resolved.url.href,
        era: knownEra
      }
      const connection: Transport.TransportConnection = { info, request, notify, respond, cancel, setSession }
      return connection
    }).pipe(
      // (a span only where something can observe it: a connect is not the place to begin a trace nobody records)
      Tracing.withObservedSpan("HttpTransport.connect", {
        attributes: { "mcp.transport": "http", "server.address": resolved.origin }
      })
    )

  return Transport.Transport.of({
    kind: "http",
    connect,
    traits,
    credentials: {
      // (what `McpClient.setAuth` is given: an `HttpTransport.Auth`, checked again by the setter)
      set: (auth) => sender.auth.set(auth as HttpTransport.Auth),
      partition: HttpAuth.partitionOf(resolved.bearerToken, oauth, resolved.headers),
      extensions: oauth?.extensions
    }
  })
}
