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
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberMap from "effect/FiberMap"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as McpSchema from "../../McpSchema.js"
import type * as Transport from "../../Transport.js"
import * as Features from "../clientFeatures.js"
import type * as Envelope from "./envelope.js"
import type { Attempt } from "./session.js"

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
}

/**
 * @internal
 */
export const make = (options: {
  readonly envelope: Envelope.Envelope
  readonly supportedLegacy: ReadonlyArray<McpSchema.LegacyVersion>
  readonly maxServerRequests: number
}): Effect.Effect<ServerRequests, never, Scope.Scope> =>
  Effect.map(FiberMap.make<McpSchema.RequestId>(), (running) => {
    const { envelope, maxServerRequests, supportedLegacy } = options
    const handlers = envelope.handlers
    /** URL-mode elicitations shown to the handler and not yet reported complete. */
    const openUrlElicitations = new Set<string>()
    /** Set while requests are being refused, so that a run of refusals is logged once. */
    let refusing = false

    const respondError = (
      connection: Transport.TransportConnection,
      id: McpSchema.RequestId,
      code: number,
      message: string
    ) => connection.respond({ jsonrpc: "2.0", id, error: { code, message } })

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
        Either.match({
          onLeft: (failure) => respondError(connection, message.id, failure.code, failure.message),
          onRight: (result) => connection.respond({ jsonrpc: "2.0", id: message.id, result })
        })
      )
      return FiberMap.run(
        running,
        message.id,
        answered.pipe(
          // a handler that died (or a reply that could not be written): the server still gets an answer, unless the
          // request was cancelled
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.zipRight(
              Effect.logWarning(`could not answer ${message.method}`, cause),
              Effect.ignore(respondError(
                connection,
                message.id,
                McpSchema.ErrorCode.InternalError,
                `the client failed to handle ${message.method}`
              ))
            )
          ),
          Effect.annotateLogs({ module: "McpClient", method: message.method })
        )
      ).pipe(Effect.asVoid)
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
      return Effect.zipRight(
        Effect.logWarning(
          `the server sends more than ${maxServerRequests} requests at once; refusing the excess with -32603`
        ).pipe(Effect.annotateLogs({ module: "McpClient", method: message.method })),
        refusal
      )
    }

    return {
      handle: (attempt, message, related) => {
        const connection = attempt.connection
        if (connection === undefined) return Effect.logDebug("dropped a server request that came before connecting")
        if (attempt.era === "modern") {
          // Modern servers send no requests and modern clients write no responses.
          return Effect.logWarning(`dropped a ${message.method} request from a modern server`)
        }
        const version = attempt.version ?? supportedLegacy[supportedLegacy.length - 1] ?? "2025-11-25"
        return Effect.flatMap(FiberMap.size(running), (size) => {
          if (size >= maxServerRequests) return refuse(connection, message)
          refusing = false
          return answer(connection, attempt, version, message, related)
        })
      },
      cancel: (id) => FiberMap.remove(running, id),
      clear: FiberMap.clear(running),
      elicitationCompleted: (params) => {
        const id = typeof params === "object" && params !== null && "elicitationId" in params
          ? params.elicitationId
          : undefined
        if (typeof id !== "string" || !openUrlElicitations.delete(id)) return Effect.void
        const completed = Option.getOrUndefined(handlers.elicitation)?.completed
        if (completed === undefined) return Effect.void
        return Effect.catchAllCause(
          Effect.suspend(() => completed(id)),
          (cause) => Effect.logWarning("the elicitation completion callback failed", cause)
        )
      }
    }
  })
