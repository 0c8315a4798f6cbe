/**
 * Inbound routing: what the server sends, to where it belongs. Answers settle their requests, progress goes to
 * its request's caller, notifications tagged with a modern listen's id go to that listen alone and the rest to
 * every reader, server requests to their handlers.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as LogLevel from "effect/LogLevel"
import * as Schema from "effect/Schema"
import * as McpSchema from "../../McpSchema.js"
import type * as Transport from "../../Transport.js"
import * as codec from "../codec.js"
import type * as Cache from "./cache.js"
import type * as NotificationHub from "./notificationHub.js"
import type * as RequestTable from "./requestTable.js"
import type * as ServerRequests from "./serverRequests.js"
import type { Attempt } from "./session.js"
import { printable } from "../printable.js"

const decodeProgress = Schema.decodeUnknownResult(McpSchema.ProgressParams)
const CancelledParams = Schema.Struct({ requestId: McpSchema.RequestId })
const decodeCancelled = Schema.decodeUnknownResult(CancelledParams)
const SubscriptionMeta = Schema.Struct({
  _meta: Schema.Struct({ [McpSchema.MetaKeys.subscriptionId]: McpSchema.RequestId })
})
const decodeSubscriptionMeta = Schema.decodeUnknownResult(SubscriptionMeta)
const decodeLogMessage = Schema.decodeUnknownResult(McpSchema.LoggingMessageParams)

/** The most of a server's log message forwarded to the logger, and of its logger's and server's names. */
const LOG_TEXT = 8192
const NAME_TEXT = 256

/** `text` cut to `max` characters, never inside a surrogate pair. */
const cut = (text: string, max: number): string => {
  if (text.length <= max) return text
  const end = /[\ud800-\udbff]/.test(text[max - 1]!) ? max - 1 : max
  return `${text.slice(0, end)}…`
}

const subscriptionIdOf = (params: unknown): McpSchema.RequestId | undefined => {
  if (typeof params !== "object" || params === null || !("_meta" in params)) return undefined
  return Result.getOrUndefined(
    Result.map(decodeSubscriptionMeta(params), (p) => p._meta[McpSchema.MetaKeys.subscriptionId])
  )
}

const isInvalidating = (method: string): boolean =>
  method === "notifications/tools/list_changed" || method === "notifications/prompts/list_changed" ||
  method === "notifications/resources/list_changed" || method === "notifications/resources/updated"

const logLevels: Readonly<Record<McpSchema.LoggingLevel, LogLevel.Severity>> = {
  debug: "Debug",
  info: "Info",
  notice: "Info",
  warning: "Warn",
  error: "Error",
  critical: "Error",
  alert: "Error",
  emergency: "Fatal"
}

/**
 * Receives the notifications of one modern listen.
 *
 * @internal
 */
export type Listener = (notification: McpSchema.ServerNotification) => Effect.Effect<void>

/**
 * @internal
 */
export interface Inbound {
  /** Routes one event of the transport (all but `Closed` and `SessionExpired`). */
  readonly route: (attempt: Attempt, event: Transport.TransportEvent) => Effect.Effect<void>
  /** Routes the notifications tagged with a listen's request id to it, until `unlisten`. */
  readonly listen: (id: McpSchema.RequestId, listener: Listener) => void
  readonly unlisten: (id: McpSchema.RequestId) => void
  /**
   * Keeps routing the progress of a request's token to `onProgress` after the request was answered (a 2025-11-25
   * task reports on its creating request's token for its whole life), until the returned function runs.
   */
  readonly keepProgress: (
    token: McpSchema.ProgressToken,
    onProgress: (progress: McpSchema.Progress) => Effect.Effect<void>
  ) => () => void
}

/**
 * @internal
 */
export const make = (options: {
  readonly requests: RequestTable.RequestTable
  readonly notifications: NotificationHub.NotificationHub
  readonly serverRequests: ServerRequests.ServerRequests
  readonly cache: Cache.Cache
  /** The attempt whose session is published, if any: its target keys the cache, its server names logs. */
  readonly published: () => Attempt | undefined
  readonly serverLogs: "stream" | "logger"
  /** Something the server offers changed (a `list_changed` or `resources/updated` notification, by method). */
  readonly onChanged?: ((method: string) => void) | undefined
}): Inbound => {
  const { cache, notifications, requests, serverRequests } = options
  const listeners = new Map<McpSchema.RequestId, Listener>()
  const kept = new Map<McpSchema.ProgressToken, (progress: McpSchema.Progress) => Effect.Effect<void>>()

  const onResponse = (message: McpSchema.JsonRpcResponse): Effect.Effect<void> => {
    // an error whose id is null or unknown, while the era probe waits, is the probe's answer: the server could not
    // read the probe (it is not a modern server)
    const entry = requests.get(message.id) ?? ("error" in message ? requests.pendingProbe() : undefined)
    if (entry === undefined) {
      return Effect.logDebug("dropped a response to an unknown or abandoned request").pipe(
        Effect.annotateLogs({ module: "McpClient", id: printable(String(message.id)) })
      )
    }
    requests.settleResponse(message, entry)
    return Effect.void
  }

  const onProgress = (params: unknown): Effect.Effect<void> => {
    const decoded = decodeProgress(params)
    if (Result.isFailure(decoded)) return Effect.logDebug("dropped a malformed progress notification")
    const entry = requests.get(decoded.success.progressToken)
    if (entry === undefined) {
      const callback = kept.get(decoded.success.progressToken)
      return callback === undefined ? Effect.void : Effect.catchCause(
        Effect.suspend(() => callback(decoded.success)),
        (cause) => Effect.logWarning("a progress callback failed", cause)
      )
    }
    return Effect.flatMap(Clock.currentTimeMillis, (now) => {
      entry.lastActivity = now
      const callback = entry.onProgress
      // the caller's callback may throw as well as fail: neither reaches the connection
      return callback === undefined ? Effect.void : Effect.catchCause(
        Effect.suspend(() => callback(decoded.success)),
        (cause) => Effect.logWarning("a progress callback failed", cause)
      )
    })
  }

  /** The server ended a listen: its request completes as if answered. */
  const endListen = (id: McpSchema.RequestId): Effect.Effect<void> =>
    Effect.sync(() => requests.succeed(id, { resultType: "complete" }))

  const forwardLog = (params: unknown): Effect.Effect<void> => {
    const decoded = decodeLogMessage(params)
    if (Result.isFailure(decoded)) return Effect.void
    const { data, level, logger } = decoded.success
    // a server's text reaches the application's logger bounded and printable (see `printable`)
    const text = typeof data === "string"
      ? printable(cut(data, LOG_TEXT))
      : codec.preview(data, LOG_TEXT)
    return Effect.logWithLevel(logLevels[level])(text).pipe(
      Effect.annotateLogs({
        module: "McpServer",
        server: printable(cut(options.published()?.serverName ?? "unknown", NAME_TEXT)),
        logger: logger === undefined ? "" : printable(cut(logger, NAME_TEXT))
      })
    )
  }

  const dispatch = (
    message: McpSchema.JsonRpcNotification,
    notification: McpSchema.ServerNotification
  ): Effect.Effect<void> => {
    const subscription = subscriptionIdOf(message.params)
    if (subscription !== undefined) {
      const listener = listeners.get(subscription)
      if (listener !== undefined) {
        return message.method === "notifications/cancelled" ? endListen(subscription) : listener(notification)
      }
    }
    const published = notifications.publish(notification)
    if (message.method === "notifications/elicitation/complete") {
      return Effect.andThen(serverRequests.elicitationCompleted(message.params), published)
    }
    if (message.method === "notifications/message" && options.serverLogs === "logger") {
      return Effect.andThen(forwardLog(message.params), published)
    }
    if (message.method === "notifications/cancelled") {
      const decoded = decodeCancelled(message.params)
      if (Result.isSuccess(decoded)) {
        const id = decoded.success.requestId
        // On stdio a server ends a listen by cancelling it.
        if (listeners.has(id)) return endListen(id)
        return Effect.andThen(serverRequests.cancel(id), published)
      }
    }
    return published
  }

  const onNotification = (message: McpSchema.JsonRpcNotification): Effect.Effect<void> => {
    if (message.method === "notifications/progress") return onProgress(message.params)
    const notification = { method: message.method, params: message.params }
    if (isInvalidating(message.method)) {
      options.onChanged?.(message.method)
      const target = options.published()?.connection?.info.target
      return Effect.andThen(cache.invalidate(target, notification), dispatch(message, notification))
    }
    return dispatch(message, notification)
  }

  return {
    route: (attempt, event) => {
      switch (event._tag) {
        case "Response":
          return onResponse(event.message)
        case "RequestFailed":
          return Effect.sync(() => requests.fail(event.id, event.error))
        case "Notification":
          return onNotification(event.message)
        case "ServerRequest":
          return serverRequests.handle(attempt, event.message, event.related)
        default:
          return Effect.void
      }
    },
    listen: (id, listener) => {
      listeners.set(id, listener)
    },
    unlisten: (id) => {
      listeners.delete(id)
    },
    keepProgress: (token, onProgress) => {
      kept.set(token, onProgress)
      return () => {
        if (kept.get(token) === onProgress) kept.delete(token)
      }
    }
  }
}
