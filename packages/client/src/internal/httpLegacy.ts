/**
 * Legacy Streamable HTTP (2025-03-26 … 2025-11-25): the session id of the `initialize` answer on every later
 * request; a 404 in a live session starts a new one, with the request that met it parked and sent once more
 * there; a broken response stream resumed with GET and `Last-Event-ID`; the session's GET stream for
 * server-initiated messages, reopened with backoff; the session DELETEd when the connection closes.
 *
 * @internal
 */
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as McpError from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"
import * as Transport from "../Transport.js"
import type { Inbound } from "./httpInbound.js"
import * as Body from "./httpResponse.js"
import type { Sender } from "./httpSender.js"
import type { Session } from "./httpLegacyStreams.js"
import * as LegacyStreams from "./httpLegacyStreams.js"
import type { Binding, Parked, Resolved, State } from "./httpState.js"
import { ACCEPT_BOTH, redactSession } from "./httpState.js"
import { printable } from "./printable.js"

const SESSION_ID = /^[\x21-\x7e]+$/

/**
 * What the legacy binding needs from the connection around it.
 *
 * @internal
 */
export interface Hooks {
  /** `initialize` refused with 400/404/405 under the `auto` binding: the fallback chain takes over. */
  readonly fallback: (
    response: HttpClientResponse.HttpClientResponse,
    request: McpSchema.JsonRpcRequest
  ) => Effect.Effect<void, McpError.TransportFailure>
  /** Starts the exchange of a request parked while the session was replaced. */
  readonly restart: (parked: Parked) => Effect.Effect<void>
  /** Runs the session's GET stream in place of the previous session's. */
  readonly runGetStream: (stream: Effect.Effect<void>) => Effect.Effect<void>
}

/**
 * The legacy binding, and what only a session has.
 *
 * @internal
 */
export interface Legacy extends Binding {
  /** Parks a request while the session is being replaced; false when there is a session to send it in. */
  readonly park: (message: McpSchema.JsonRpcRequest, options: Transport.WireOptions) => boolean
  /** A session was negotiated: its parked requests go out, and its GET stream opens. */
  readonly sessionStarted: Effect.Effect<void>
  /** DELETEs the session (bounded by `closeTimeout`, never failing). */
  readonly deleteSession: Effect.Effect<void>
}

/** How long a new session's first request waits for the server's answer to the session's GET at most. */
const FIRST_GET_WAIT = Duration.seconds(2)

/** @internal */
export const make = (
  resolved: Resolved,
  state: State,
  sender: Sender,
  inbound: Inbound,
  hooks: Hooks
): Legacy => {
  const session: Session = { resolved, state, sender, inbound }
  const resume = LegacyStreams.resumer(session)

  const adoptSession = (response: HttpClientResponse.HttpClientResponse) =>
    Effect.suspend(() => {
      const id = response.headers["mcp-session-id"]
      if (id === undefined || SESSION_ID.test(id)) {
        // a sessionless handshake clears the old id
        state.sessionStarted(id)
        return Effect.void
      }
      state.sessionStarted(undefined)
      return Effect.logWarning("ignored a session id that is not visible ASCII")
    })

  /** A legacy request's exchange, in the given Scope (which closes its response). */
  const exchange = (
    request: McpSchema.JsonRpcRequest,
    options: Transport.WireOptions,
    resent: boolean
  ): Effect.Effect<void, McpError.TransportFailure, Scope.Scope> =>
    Effect.suspend(() => {
      const initializing = request.method === "initialize"
      const sessionId = initializing ? undefined : state.sessionId
      const headers = initializing ? { ...sender.baseHeaders(), accept: ACCEPT_BOTH } : LegacyStreams.sessionHeaders(session, ACCEPT_BOTH)
      return Effect.flatMap(sender.post(sender.target, request, headers, request.method, options.idempotent), (response) => {
        const status = response.status
        if (initializing) {
          if ((status === 400 || status === 404 || status === 405) && resolved.binding === "auto") {
            return hooks.fallback(response, request)
          }
          if (Body.isSuccess(status)) {
            return Effect.andThen(adoptSession(response), answer(response, request, options))
          }
        }
        if (status === 404 && sessionId !== undefined) return expired(request, options, sessionId, resent)
        return answer(response, request, options)
      })
    })

  const answer = (
    response: HttpClientResponse.HttpClientResponse,
    request: McpSchema.JsonRpcRequest,
    options: Transport.WireOptions
  ) => inbound.answer(response, request, options, "legacy", { resume })

  /** A 404 to a request sent in a session: the server forgot the session. */
  const expired = (
    request: McpSchema.JsonRpcRequest,
    options: Transport.WireOptions,
    sentWith: string,
    resent: boolean
  ): Effect.Effect<void, McpError.TransportFailure> =>
    Effect.suspend(() => {
      if (resent) return Effect.fail(new McpError.SessionExpired({ sessionId: redactSession(sentWith) }))
      if (state.sessionId !== undefined && state.sessionId !== sentWith) {
        // a new session already started: this request goes there at once
        return Effect.scoped(exchange(request, options, true))
      }
      state.park({ message: request, options, resent: true })
      state.sessionExpired(sentWith)
      return Effect.andThen(
        Effect.logInfo("the server forgot the session; the request waits for a new one"),
        inbound.emitOpen(Transport.TransportEvent.SessionExpired({ id: request.id }))
      )
    })

  const oneWay: Binding["oneWay"] = (message, what) =>
    Effect.scoped(
      Effect.gen(function*() {
        if (state.expiredSession !== undefined) {
          return yield* Effect.logDebug(printable(`dropped ${what}: the session expired`))
        }
        const sessionId = state.sessionId
        const headers = LegacyStreams.sessionHeaders(session, ACCEPT_BOTH)
        const response = yield* sender.post(sender.target, message, headers, what)
        const status = response.status
        if (status === 401 || status === 403) return yield* sender.authError(status, response)
        if (status === 404 && sessionId !== undefined) {
          // the message is lost with its session (it belonged to it); the next one goes to a new session
          yield* LegacyStreams.sessionGone(session, sessionId)
          return yield* Effect.fail(new McpError.SessionExpired({ sessionId: redactSession(sessionId) }))
        }
        if (!Body.isSuccess(status)) return yield* sender.refused(response, what)
        yield* Body.readSnippet(response)
      })
    )

  const park: Legacy["park"] = (message, options) => {
    if (state.expiredSession === undefined || message.method === "initialize") return false
    state.park({ message, options, resent: false })
    return true
  }

  const sessionStarted: Effect.Effect<void> = Effect.gen(function*() {
    const parked = state.takeParked()
    yield* Effect.forEach(parked, hooks.restart, { discard: true })
    // A new session gets a new GET stream (the old one belonged to the old session), and the session's first
    // request waits until the server has answered that GET (or for FIRST_GET_WAIT at most): a server sends what it
    // has no request stream for on the GET stream, and drops it while there is none — a notification or request
    // that the caller's first call sets off would be lost to a GET still on its way (a new connection, where the
    // call rides the kept-alive one).
    const answered = yield* Deferred.make<void>()
    yield* hooks.runGetStream(LegacyStreams.getStream(session, answered))
    yield* Effect.timeoutOption(Deferred.await(answered), FIRST_GET_WAIT)
  })

  return {
    exchange,
    oneWay,
    announcesCancel: true,
    park,
    sessionStarted,
    deleteSession: LegacyStreams.deleteSession(session)
  }
}
