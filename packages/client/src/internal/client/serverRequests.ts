/**
 * Requests a legacy server sends to the client (sampling, elicitation, roots, ping), answered by the handler
 * services the application provided, each in a fiber of its own, at most `maxServerRequests` at once.
 *
 * Policy beyond the limit: the request is refused at once with JSON-RPC error -32603, written from the transport's
 * delivery itself, so a server that does not read its answers is held back by the transport's bounded outbox
 * instead of piling up work in the client. The first refusal of each run of refusals is logged at warning level.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Transport from "../../Transport.js"
import * as Features from "../clientFeatures.js"
import { type MadeOnUse, madeOnUse } from "../madeOnUse.js"
import type * as Envelope from "./envelope.js"
import type { Attempt, Session } from "./session.js"
import { printable } from "../printable.js"

/**
 * @internal
 */
export interface ServerRequests {
  /** Answers (or refuses) one request of the server. */
  readonly handle: (
    attempt: Attempt,
    message: McpSchema.JsonRpcRequest,
    related: McpSchema.RequestId | undefined
  ) => Effect.Effect<void>
  /** The server cancelled one of its requests: its handler is interrupted. */
  readonly cancel: (id: McpSchema.RequestId) => Effect.Effect<void>
  /** The connection ended: every handler still running is interrupted. */
  readonly clear: Effect.Effect<void>
  /** 2025-11-25: a URL-mode elicitation finished; unknown or already finished ids are ignored. */
  readonly elicitationCompleted: (params: unknown) => Effect.Effect<void>
  /**
   * `-32042`: shows the URL elicitations a request needs through the elicitation handler (its URL consent); true
   * when the user accepted every one. Their completions are awaited with `awaitCompleted`.
   */
  readonly elicitUrls: (
    session: Session,
    elicitations: ReadonlyArray<McpError.UrlElicitation>
  ) => Effect.Effect<boolean>
  /** Waits until the server reported these URL elicitations complete, or `timeoutMillis` passed (if given). */
  readonly awaitCompleted: (ids: ReadonlyArray<string>, timeoutMillis: number | undefined) => Effect.Effect<void>
  /**
   * C4: the handler's manual controls for a request waiting on URL pages the user consented to (the first page
   * is shown to it); undefined when the handler has none.
   */
  readonly urlPending: (
    session: Session,
    elicitations: ReadonlyArray<McpError.UrlElicitation>
  ) => Effect.Effect<"retry" | "cancel"> | undefined
}

interface Options {
  readonly envelope: Envelope.Envelope
  readonly supportedLegacy: ReadonlyArray<McpSchema.LegacyVersion>
  readonly maxServerRequests: number
}

/**
 * @internal
 */
export const make = (options: Options): Effect.Effect<ServerRequests, never, Scope.Scope> =>
  // (the handlers' fibers are kept once the server sends a first request: most servers send none)
  Effect.map(madeOnUse(FiberMap.make<McpSchema.RequestId>()), (running) => {
    /** URL-mode elicitations shown to the handler and not yet reported complete. */
    const openUrlElicitations = new Set<string>()
    return {
      ...makeAnswering(options, running, openUrlElicitations),
      ...makeUrlElicitations(options.envelope, openUrlElicitations)
    }
  })

const respondError = (
  connection: Transport.TransportConnection,
  id: McpSchema.RequestId,
  code: number,
  message: string
) => connection.respond({ jsonrpc: "2.0", id, error: { code, message } })

/** The server's requests answered by the handlers, each in its fiber, the excess refused. */
const makeAnswering = (
  options: Options,
  running: MadeOnUse<FiberMap.FiberMap<McpSchema.RequestId>>,
  openUrlElicitations: Set<string>
): Pick<ServerRequests, "handle" | "cancel" | "clear"> => {
  const { envelope, maxServerRequests, supportedLegacy } = options
  const handlers = envelope.handlers
  /** Set while requests are being refused, so that a run of refusals is logged once. */
  let refusing = false

  const answer = (
    connection: Transport.TransportConnection,
    attempt: Attempt,
    version: McpSchema.ProtocolVersion,
    message: McpSchema.JsonRpcRequest,
    related: McpSchema.RequestId | undefined
  ): Effect.Effect<void> => {
    const answered = Effect.flatMap(
      Features.fulfil(handlers, message.method, message.params, {
        serverOrigin: connection.info.origin,
        serverName: attempt.serverName,
        related,
        declaredModes: envelope.declaredModes(version),
        onUrlElicitation: (elicitationId) => {
          openUrlElicitations.add(elicitationId)
          return () => openUrlElicitations.delete(elicitationId)
        }
      }),
      Result.match({
        onFailure: (failure) => respondError(connection, message.id, failure.code, failure.message),
        onSuccess: (result) => connection.respond({ jsonrpc: "2.0", id: message.id, result })
      })
    )
    const handled = answered.pipe(
      // a handler that died (or a reply that could not be written): the server still gets an answer, unless the
      // request was cancelled
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.andThen(
          Effect.logWarning(printable(`could not answer ${message.method}`), cause),
          Effect.ignore(respondError(
            connection,
            message.id,
            McpSchema.ErrorCode.InternalError,
            `the client failed to handle ${message.method}`
          ))
        )
      ),
      Effect.annotateLogs({ module: "McpClient", method: printable(message.method) })
    )
    return Effect.flatMap(running.use, (fibers) => Effect.asVoid(FiberMap.run(fibers, message.id, handled)))
  }

  const refuse = (connection: Transport.TransportConnection, message: McpSchema.JsonRpcRequest) => {
    const refusal = Effect.ignore(respondError(
      connection,
      message.id,
      McpSchema.ErrorCode.InternalError,
      `too many requests in progress (at most ${maxServerRequests})`
    ))
    if (refusing) return refusal
    refusing = true
    return Effect.andThen(
      Effect.logWarning(
        `the server sends more than ${maxServerRequests} requests at once; refusing the excess with -32603`
      ).pipe(Effect.annotateLogs({ module: "McpClient", method: printable(message.method) })),
      refusal
    )
  }

  return {
    handle: (attempt, message, related) => {
      const connection = attempt.connection
      if (connection === undefined) return Effect.logDebug("dropped a server request that came before connecting")
      if (attempt.era === "modern") {
        // Modern servers send no requests and modern clients write no responses.
        return Effect.logWarning(printable(`dropped a ${message.method} request from a modern server`))
      }
      const version = attempt.version ?? supportedLegacy[supportedLegacy.length - 1] ?? "2025-11-25"
      return Effect.flatMap(running.ifMade(FiberMap.size, 0), (size) => {
        if (size >= maxServerRequests) return refuse(connection, message)
        refusing = false
        return answer(connection, attempt, version, message, related)
      })
    },
    cancel: (id) => running.ifMade((fibers) => FiberMap.remove(fibers, id), undefined),
    clear: running.ifMade(FiberMap.clear, undefined)
  }
}

/** URL-mode elicitations: those of a `-32042` shown and awaited, and the server's reports of completion. */
const makeUrlElicitations = (
  envelope: Envelope.Envelope,
  openUrlElicitations: Set<string>
): Pick<ServerRequests, "elicitationCompleted" | "elicitUrls" | "awaitCompleted" | "urlPending"> => {
  const handlers = envelope.handlers
  /** Completed by `notifications/elicitation/complete`, by elicitation id (URL elicitations of a -32042). */
  const waiters = new Map<string, Deferred.Deferred<void>>()
  return {
    elicitationCompleted: (params) => {
      const id = typeof params === "object" && params !== null && "elicitationId" in params
        ? params.elicitationId
        : undefined
      const waiter = typeof id === "string" ? waiters.get(id) : undefined
      if (waiter !== undefined && typeof id === "string") {
        waiters.delete(id)
        Deferred.doneUnsafe(waiter, Exit.void)
      }
      if (typeof id !== "string" || !openUrlElicitations.delete(id)) return Effect.void
      const completed = Option.getOrUndefined(handlers.elicitation)?.completed
      if (completed === undefined) return Effect.void
      return Effect.catchCause(
        Effect.suspend(() => completed(id)),
        (cause) => Effect.logWarning("the elicitation completion callback failed", cause)
      )
    },
    elicitUrls: (session, elicitations) =>
      Effect.gen(function*() {
        for (const elicitation of elicitations) {
          // known before the handler answers: the completion may come while the user is still in the browser
          if (!waiters.has(elicitation.elicitationId)) {
            waiters.set(elicitation.elicitationId, yield* Deferred.make<void>())
          }
          const outcome = yield* Features.fulfil(handlers, "elicitation/create", elicitation, {
            serverOrigin: session.transport.origin,
            serverName: session.serverInfo?.name,
            related: undefined,
            declaredModes: envelope.declaredModes(session.protocolVersion),
            onUrlElicitation: (elicitationId) => {
              openUrlElicitations.add(elicitationId)
              return () => openUrlElicitations.delete(elicitationId)
            }
          })
          const accepted = Result.isSuccess(outcome) && typeof outcome.success === "object" && outcome.success !== null &&
            "action" in outcome.success && outcome.success.action === "accept"
          if (!accepted) {
            for (const { elicitationId } of elicitations) waiters.delete(elicitationId)
            return false
          }
        }
        return true
      }),
    awaitCompleted: (ids, timeoutMillis) =>
      Effect.forEach(ids, (id) => {
        const waiter = waiters.get(id)
        return waiter === undefined ? Effect.void : Deferred.await(waiter)
      }, { discard: true, concurrency: "unbounded" }).pipe(
        (wait) => timeoutMillis === undefined ? wait : Effect.ignore(Effect.timeout(wait, timeoutMillis)),
        Effect.ensuring(Effect.sync(() => {
          for (const id of ids) waiters.delete(id)
        }))
      ),
    urlPending: (session, elicitations) => {
      const pending = Option.getOrUndefined(handlers.elicitation)?.urlPending
      const first = elicitations[0]
      if (pending === undefined || first === undefined) return undefined
      const serverOrigin = session.transport.origin
      const inspected = Features.inspectUrl(first.url, serverOrigin)
      // (a URL never shown to the user has no controls either)
      if (Result.isFailure(inspected)) return undefined
      return pending({
        mode: "url",
        message: first.message,
        url: first.url,
        urlOrigin: inspected.success.origin,
        serverOrigin,
        warnings: inspected.success.warnings,
        elicitationId: first.elicitationId
      }, { serverName: session.serverInfo?.name, relatedRequest: undefined })
    }
  }
}
