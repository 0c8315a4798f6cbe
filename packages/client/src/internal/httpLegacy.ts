/**
 * Legacy Streamable HTTP (2025-03-26 … 2025-11-25): the session id of the `initialize` answer on every later
 * request; a 404 in a live session starts a new one, with the request that met it parked and sent once more
 * there; a broken response stream resumed with GET and `Last-Event-ID`; the session's GET stream for
 * server-initiated messages, reopened with backoff; the session DELETEd when the connection closes.
 *
 * @internal
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Scope from "effect/Scope"
import * as McpError from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"
import * as Transport from "../Transport.js"
import type { Inbound } from "./httpInbound.js"
import * as Body from "./httpResponse.js"
import type { Sender } from "./httpSender.js"
import type { Binding, Cursor, Parked, Resolved, State } from "./httpState.js"
import {
  ACCEPT_BOTH,
  backoff,
  EVENT_STREAM,
  newCursor,
  redactSession,
  transportError,
  unexpected
} from "./httpState.js"

/** From this revision on, legacy requests after `initialize` carry `MCP-Protocol-Version`. */
const VERSION_HEADER_SINCE = "2025-06-18"

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

/** @internal */
export const make = (
  resolved: Resolved,
  state: State,
  sender: Sender,
  inbound: Inbound,
  hooks: Hooks
): Legacy => {
  /** The headers of a request in the session (not `initialize`). */
  const sessionHeaders = (accept: string | undefined): Record<string, string> => {
    const headers: Record<string, string> = sender.baseHeaders()
    if (accept !== undefined) headers.accept = accept
    const version = state.legacyVersion
    if (version !== undefined && version >= VERSION_HEADER_SINCE) headers["mcp-protocol-version"] = version
    const sessionId = state.sessionId
    if (sessionId !== undefined) headers["mcp-session-id"] = sessionId
    return headers
  }

  const adoptSession = (response: HttpClientResponse.HttpClientResponse) =>
    Effect.suspend(() => {
      const id = response.headers["mcp-session-id"]
      state.expiredSession = undefined
      if (id === undefined || SESSION_ID.test(id)) {
        // a sessionless handshake clears the old id
        state.sessionId = id
        return Effect.void
      }
      state.sessionId = undefined
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
      const headers = initializing ? { ...sender.baseHeaders(), accept: ACCEPT_BOTH } : sessionHeaders(ACCEPT_BOTH)
      return Effect.flatMap(sender.post(sender.target, request, headers, request.method), (response) => {
        const status = response.status
        if (initializing) {
          if ((status === 400 || status === 404 || status === 405) && resolved.binding === "auto") {
            return hooks.fallback(response, request)
          }
          if (Body.isSuccess(status)) {
            return Effect.zipRight(adoptSession(response), answer(response, request, options))
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

  /**
   * A 404 to a notification, a response or the GET stream sent in session `sentWith`: the server forgot the
   * session, and the client starts a new one, unless one already replaced it. Requests still go out in the old
   * session meanwhile: one answered 404 waits for the new one (see `expired`).
   */
  const sessionGone = (sentWith: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (state.sessionId !== sentWith) return Effect.void
      return Effect.zipRight(
        Effect.logInfo("the server forgot the session; starting a new one"),
        inbound.emitOpen(Transport.TransportEvent.SessionExpired({ id: undefined }))
      )
    })

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
      state.parked.set(request.id, { message: request, options, resent: true })
      if (state.expiredSession !== sentWith) {
        state.expiredSession = sentWith
        state.sessionId = undefined
      }
      return Effect.zipRight(
        Effect.logInfo("the server forgot the session; the request waits for a new one"),
        inbound.emitOpen(Transport.TransportEvent.SessionExpired({ id: request.id }))
      )
    })

  /** Resumes a broken legacy response stream with GET and `Last-Event-ID`, until the answer arrives. */
  const resume = (
    request: McpSchema.JsonRpcRequest,
    cursor: Cursor
  ): Effect.Effect<void, McpError.TransportFailure> =>
    Effect.gen(function*() {
      let attempt = 0
      while (true) {
        if (attempt >= resolved.resumeAttempts) {
          return yield* Effect.fail(
            transportError(
              "StreamEnded",
              `the response stream of ${request.method} broke off and could not be resumed (${attempt} attempts)`
            )
          )
        }
        yield* Effect.sleep(backoff(resolved, cursor.retry, attempt))
        attempt++
        const before = cursor.events
        const answered = yield* Effect.scoped(resumeOnce(request, cursor))
        if (answered) return
        if (cursor.events > before) attempt = 0
      }
    })

  /** A GET in the session, resuming after the cursor's last event id. */
  const getStream = (cursor: Cursor) => {
    const headers = sessionHeaders(EVENT_STREAM)
    if (cursor.lastEventId !== undefined) headers["last-event-id"] = cursor.lastEventId
    return sender.execute(HttpClientRequest.get(resolved.url, { headers }))
  }

  const resumeOnce = (
    request: McpSchema.JsonRpcRequest,
    cursor: Cursor
  ): Effect.Effect<boolean, McpError.TransportFailure, Scope.Scope> =>
    Effect.gen(function*() {
      const sent = yield* Effect.either(getStream(cursor))
      if (Either.isLeft(sent)) {
        if (sent.left._tag === "AuthError") return yield* Effect.fail(sent.left)
        const { detail } = Body.describeClientError(sent.left)
        yield* Effect.logDebug(`resuming the stream of ${request.method} failed: ${detail}`)
        return false
      }
      const response = sent.right
      const status = response.status
      if (status === 401 || status === 403) return yield* Effect.fail(sender.authError(status, response))
      if (status >= 500 || status === 429) return false
      if (!Body.isSuccess(status) || Body.mediaType(response) !== EVENT_STREAM) {
        const body = yield* Body.readSnippet(response)
        return yield* Effect.fail(
          new McpError.TransportError({
            transport: "http",
            reason: "StreamEnded",
            detail: status === 404
              ? `the session ended before the answer to ${request.method} arrived`
              : `the server could not resume the response stream of ${request.method} (HTTP ${status})`,
            status,
            body
          })
        )
      }
      const outcome = yield* Effect.either(inbound.readEvents(response, { request, route: "legacy" }, cursor))
      if (Either.isRight(outcome)) return outcome.right
      if (outcome.left.reason === "FrameTooLarge") return yield* Effect.fail(outcome.left)
      return false
    })

  /** The GET stream of a legacy session: server requests and notifications, reconnected with backoff. */
  const getLoop = Effect.gen(function*() {
    const cursor = newCursor()
    let attempt = 0
    while (true) {
      const before = cursor.events
      const again = yield* Effect.scoped(openGet(cursor))
      if (!again) return
      if (cursor.events > before) attempt = 0
      yield* Effect.sleep(backoff(resolved, cursor.retry, attempt))
      attempt++
    }
  }).pipe(
    // a defect (a bug in delivering what was read) closes the connection rather than ending the stream, and
    // the server requests it carries, in silence
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.flatMap(
        unexpected("the GET stream", cause),
        (error) => inbound.emitOpen(Transport.TransportEvent.Closed({ error }))
      )
    ),
    Effect.annotateLogs({ module: "HttpTransport", method: "getStream" })
  )

  /** One GET; true when it is worth opening again. */
  const openGet = (cursor: Cursor): Effect.Effect<boolean, never, Scope.Scope> =>
    Effect.gen(function*() {
      const sessionId = state.sessionId
      const sent = yield* Effect.either(getStream(cursor))
      if (Either.isLeft(sent)) {
        if (sent.left._tag === "AuthError") {
          yield* Effect.logWarning(`the GET stream was refused: ${sent.left.message}`)
          return false
        }
        yield* Effect.logDebug(`the GET stream could not be opened: ${Body.describeClientError(sent.left).detail}`)
        return true
      }
      const response = sent.right
      const status = response.status
      if (status === 405) {
        yield* Effect.logDebug("the server offers no GET stream")
        return false
      }
      if (status >= 500 || status === 429) {
        yield* Effect.logDebug(`the GET stream was refused with HTTP ${status}; retrying`)
        return true
      }
      if (status === 404 && sessionId !== undefined && cursor.opened) {
        // the session is gone; the new one opens a GET stream of its own (a first GET refused with 404 is a
        // server without one, not a lost session: no loop of new sessions)
        yield* sessionGone(sessionId)
        return false
      }
      if (!Body.isSuccess(status) || Body.mediaType(response) !== EVENT_STREAM) {
        yield* Effect.logWarning(
          status === 404
            ? "the GET stream found no session"
            : `the GET stream was refused (HTTP ${status}, ${Body.contentType(response) ?? "no content type"})`
        )
        return false
      }
      cursor.opened = true
      const outcome = yield* Effect.either(
        inbound.readEvents(response, { request: undefined, route: "legacy" }, cursor)
      )
      if (Either.isLeft(outcome)) yield* Effect.logDebug(`the GET stream broke off: ${outcome.left.message}`)
      return true
    })

  const deleteSession: Effect.Effect<void> = Effect.suspend(() => {
    const sessionId = state.sessionId
    if (sessionId === undefined || state.binding !== "streamable-http") return Effect.void
    const headers = sessionHeaders(undefined)
    return Effect.scoped(
      Effect.flatMap(sender.execute(HttpClientRequest.del(resolved.url, { headers })), Body.readSnippet)
    ).pipe(
      Effect.interruptible,
      Effect.timeout(resolved.closeTimeout),
      Effect.catchAll((error) => Effect.logDebug(`the session could not be deleted: ${error._tag}`)),
      Effect.annotateLogs({ module: "HttpTransport", method: "close" })
    )
  })

  const oneWay: Binding["oneWay"] = (message, what) =>
    Effect.scoped(
      Effect.gen(function*() {
        if (state.expiredSession !== undefined) {
          return yield* Effect.logDebug(`dropped ${what}: the session expired`)
        }
        const sessionId = state.sessionId
        const headers = sessionHeaders(ACCEPT_BOTH)
        const response = yield* sender.post(sender.target, message, headers, what)
        const status = response.status
        if (status === 401 || status === 403) return yield* Effect.fail(sender.authError(status, response))
        if (status === 404 && sessionId !== undefined) {
          // the message is lost with its session (it belonged to it); the next one goes to a new session
          yield* sessionGone(sessionId)
          return yield* Effect.fail(new McpError.SessionExpired({ sessionId: redactSession(sessionId) }))
        }
        if (!Body.isSuccess(status)) return yield* sender.refused(response, what)
        yield* Body.readSnippet(response)
      })
    )

  const park: Legacy["park"] = (message, options) => {
    if (state.expiredSession === undefined || message.method === "initialize") return false
    state.parked.set(message.id, { message, options, resent: false })
    return true
  }

  const sessionStarted: Effect.Effect<void> = Effect.suspend(() => {
    state.expiredSession = undefined
    const parked = [...state.parked.values()]
    state.parked.clear()
    return Effect.zipRight(
      Effect.forEach(parked, hooks.restart, { discard: true }),
      // a new session gets a new GET stream (the old one belonged to the old session)
      hooks.runGetStream(getLoop)
    )
  })

  return { exchange, oneWay, announcesCancel: true, park, sessionStarted, deleteSession }
}
