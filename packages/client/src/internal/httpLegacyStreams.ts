/**
 * The streams of a legacy Streamable HTTP session: the resumption of a broken response stream (GET with
 * `Last-Event-ID`), the session's GET stream for server-initiated messages (reopened with backoff), the DELETE of
 * the session, and what a lost session means for them.
 *
 * @internal
 */
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as McpError from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"
import * as Transport from "../Transport.js"
import type { Inbound } from "./httpInbound.js"
import * as Body from "./httpResponse.js"
import type { Sender } from "./httpSender.js"
import type { Cursor, Resolved, State } from "./httpState.js"
import { backoff, EVENT_STREAM, newCursor, socketTurn, transportError, unexpected } from "./httpState.js"
import { printable } from "./printable.js"

/** From this revision on, legacy requests after `initialize` carry `MCP-Protocol-Version`. */
const VERSION_HEADER_SINCE = "2025-06-18"

/**
 * The parts of a connection a legacy session works with.
 *
 * @internal
 */
export interface Session {
  readonly resolved: Resolved
  readonly state: State
  readonly sender: Sender
  readonly inbound: Inbound
}

/**
 * The headers of a request in the session (not `initialize`).
 *
 * @internal
 */
export const sessionHeaders = (
  { sender, state }: Session,
  accept: string | undefined
): Record<string, string> => {
  const headers: Record<string, string> = sender.baseHeaders()
  if (accept !== undefined) headers.accept = accept
  const version = state.legacyVersion
  if (version !== undefined && version >= VERSION_HEADER_SINCE) headers["mcp-protocol-version"] = version
  const sessionId = state.sessionId
  if (sessionId !== undefined) headers["mcp-session-id"] = sessionId
  return headers
}

/**
 * A 404 to a notification, a response or the GET stream sent in session `sentWith`: the server forgot the
 * session, and the client starts a new one, unless one already replaced it. Requests still go out in the old
 * session meanwhile: one answered 404 waits for the new one (see `expired` in `httpLegacy.ts`).
 *
 * @internal
 */
export const sessionGone = ({ inbound, state }: Session, sentWith: string): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (state.sessionId !== sentWith) return Effect.void
    return Effect.andThen(
      Effect.logInfo("the server forgot the session; starting a new one"),
      inbound.emitOpen(Transport.TransportEvent.SessionExpired({ id: undefined }))
    )
  })

/** A GET in the session, resuming after the cursor's last event id. */
const sessionGet = (session: Session, cursor: Cursor) => {
  const headers = sessionHeaders(session, EVENT_STREAM)
  if (cursor.lastEventId !== undefined) headers["last-event-id"] = cursor.lastEventId
  return session.sender.execute(HttpClientRequest.get(session.resolved.url, { headers }))
}

/**
 * Resumes a broken legacy response stream with GET and `Last-Event-ID`, until the answer arrives.
 *
 * @internal
 */
export const resumer = (session: Session) => {
  const { inbound, resolved, sender } = session
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

  const resumeOnce = (
    request: McpSchema.JsonRpcRequest,
    cursor: Cursor
  ): Effect.Effect<boolean, McpError.TransportFailure, Scope.Scope> =>
    Effect.gen(function*() {
      const sent = yield* Effect.result(sessionGet(session, cursor))
      if (Result.isFailure(sent)) {
        if (sent.failure._tag === "AuthError") return yield* Effect.fail(sent.failure)
        const { detail } = Body.describeClientError(sent.failure)
        yield* Effect.logDebug(printable(`resuming the stream of ${request.method} failed: ${detail}`))
        return false
      }
      const response = sent.success
      const status = response.status
      if (status === 401 || status === 403) return yield* sender.authError(status, response)
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
      const outcome = yield* Effect.result(inbound.readEvents(response, { request, route: "legacy" }, cursor))
      if (Result.isSuccess(outcome)) return outcome.success
      const reason = outcome.failure.reason
      if (reason === "FrameTooLarge" || reason === "TooManyRefusedFrames") return yield* Effect.fail(outcome.failure)
      return false
    })

  return resume
}

/**
 * The GET stream of a legacy session: server requests and notifications, reconnected with backoff.
 *
 * @internal
 */
export const getStream = (session: Session, answered: Deferred.Deferred<void>): Effect.Effect<void> => {
  const { inbound, resolved, state } = session
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
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.flatMap(
        unexpected("the GET stream", cause),
        inbound.emitClosed
      )
    ),
    Effect.ensuring(Deferred.succeed(answered, undefined)),
    Effect.annotateLogs({ module: "HttpTransport", method: "getStream" })
  )

  /** One GET; true when it is worth opening again. */
  const openGet = (cursor: Cursor): Effect.Effect<boolean, never, Scope.Scope> =>
    Effect.gen(function*() {
      const sessionId = state.sessionId
      const sent = yield* Effect.result(sessionGet(session, cursor))
      yield* Deferred.succeed(answered, undefined)
      if (Result.isFailure(sent)) {
        if (sent.failure._tag === "AuthError") {
          yield* Effect.logWarning(printable(`the GET stream was refused: ${sent.failure.message}`))
          return false
        }
        yield* Effect.logDebug(
          printable(`the GET stream could not be opened: ${Body.describeClientError(sent.failure).detail}`)
        )
        return true
      }
      const response = sent.success
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
        yield* sessionGone(session, sessionId)
        return false
      }
      if (!Body.isSuccess(status) || Body.mediaType(response) !== EVENT_STREAM) {
        yield* Effect.logWarning(
          status === 404
            ? "the GET stream found no session"
            : printable(
              `the GET stream was refused (HTTP ${status}, ${Body.contentType(response) ?? "no content type"})`
            )
        )
        return false
      }
      cursor.opened = true
      const outcome = yield* Effect.result(
        inbound.readEvents(response, { request: undefined, route: "legacy" }, cursor)
      )
      if (Result.isFailure(outcome)) yield* Effect.logDebug(printable(`the GET stream broke off: ${outcome.failure.message}`))
      return true
    })

  return getLoop
}

/**
 * DELETEs the session (bounded by `closeTimeout`, never failing).
 *
 * @internal
 */
export const deleteSession = (session: Session): Effect.Effect<void> =>
  Effect.suspend(() => {
    const { resolved, sender, state } = session
    const sessionId = state.sessionId
    if (sessionId === undefined || state.binding !== "streamable-http") return Effect.void
    const headers = sessionHeaders(session, undefined)
    // (most often right after the last answer: see `socketTurn`)
    return Effect.andThen(
      socketTurn,
      Effect.scoped(Effect.flatMap(sender.execute(HttpClientRequest.delete(resolved.url, { headers })), Body.readSnippet))
    ).pipe(
      Effect.interruptible,
      Effect.timeout(resolved.closeTimeout),
      Effect.catch((error) => Effect.logDebug(`the session could not be deleted: ${error._tag}`)),
      Effect.annotateLogs({ module: "HttpTransport", method: "close" })
    )
  })
