/**
 * Subscriptions in both eras, as one Stream: a modern `subscriptions/listen` (its acknowledgement first, listened
 * again with backoff after a drop), or legacy `resources/subscribe` plus the server's unsolicited `list_changed`
 * notifications; and the legacy session state (log level, resource subscriptions) sent again on every new session.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as McpClient from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as Cache from "./cache.js"
import type * as Calls from "./calls.js"
import type * as Connection from "./connection.js"
import type * as Envelope from "./envelope.js"
import type * as Inbound from "./inbound.js"
import * as NotificationHub from "./notificationHub.js"
import * as Requester from "./requester.js"
import type { Session, Wire } from "./session.js"
import { printable } from "../printable.js"

const relistenSchedule = Schedule.jittered(
  Schedule.min([Schedule.exponential("250 millis", 2), Schedule.spaced("30 seconds")])
)

const Acknowledged = Schema.Struct({
  notifications: Schema.optional(Schema.Struct({
    toolsListChanged: Schema.optional(Schema.Boolean),
    promptsListChanged: Schema.optional(Schema.Boolean),
    resourcesListChanged: Schema.optional(Schema.Boolean),
    resourceSubscriptions: Schema.optional(Schema.Array(Schema.String)),
    taskIds: Schema.optional(Schema.Array(Schema.String))
  }))
})
const decodeAcknowledged = Schema.decodeUnknownResult(Acknowledged)

/** What a listen asks of a server. */
interface Asked {
  readonly toolsListChanged?: boolean
  readonly promptsListChanged?: boolean
  readonly resourcesListChanged?: boolean
  readonly resourceSubscriptions?: ReadonlyArray<string>
  readonly taskIds?: ReadonlyArray<string>
}

/**
 * What a listen asked for and its acknowledgement left out (task ids are not counted: a server need not push
 * task states, the client polls them anyway).
 */
const unacknowledged = (asked: Asked, params: unknown): ReadonlyArray<string> => {
  const honoured = Result.getOrUndefined(decodeAcknowledged(params))?.notifications ?? {}
  const missing: Array<string> = []
  if (asked.toolsListChanged === true && honoured.toolsListChanged !== true) missing.push("toolsListChanged")
  if (asked.promptsListChanged === true && honoured.promptsListChanged !== true) missing.push("promptsListChanged")
  if (asked.resourcesListChanged === true && honoured.resourcesListChanged !== true) {
    missing.push("resourcesListChanged")
  }
  for (const uri of asked.resourceSubscriptions ?? []) {
    if (!(honoured.resourceSubscriptions ?? []).includes(uri)) missing.push(uri)
  }
  return missing
}

/** What a filter asks of a server: only what it advertises. */
const askedFor = (filter: McpClient.ListenFilter, capabilities: McpSchema.ServerCapabilities): Asked => {
  const uris = capabilities.resources?.subscribe === true ? filter.resourceSubscriptions ?? [] : []
  return {
    ...(filter.toolsListChanged === true && capabilities.tools?.listChanged === true
      ? { toolsListChanged: true }
      : {}),
    ...(filter.promptsListChanged === true && capabilities.prompts?.listChanged === true
      ? { promptsListChanged: true }
      : {}),
    ...(filter.resourcesListChanged === true && capabilities.resources?.listChanged === true
      ? { resourcesListChanged: true }
      : {}),
    ...(uris.length > 0 ? { resourceSubscriptions: [...uris] } : {}),
    ...(filter.taskIds !== undefined && filter.taskIds.length > 0 ? { taskIds: [...filter.taskIds] } : {})
  }
}

/** Whether a legacy listen with this filter wants a notification (drop notices always pass). */
const wanted = (filter: McpClient.ListenFilter) => (notification: McpSchema.ServerNotification): boolean => {
  switch (notification.method) {
    case NotificationHub.droppedMethod:
      return true
    case "notifications/tools/list_changed":
      return filter.toolsListChanged === true
    case "notifications/prompts/list_changed":
      return filter.promptsListChanged === true
    case "notifications/resources/list_changed":
      return filter.resourcesListChanged === true
    case "notifications/resources/updated": {
      const uri = typeof notification.params === "object" && notification.params !== null &&
          "uri" in notification.params
        ? notification.params.uri
        : undefined
      return typeof uri === "string" && (filter.resourceSubscriptions ?? []).includes(uri)
    }
    default:
      return false
  }
}

/**
 * @internal
 */
export interface Subscriptions {
  readonly listen: (
    filter: McpClient.ListenFilter
  ) => Stream.Stream<McpSchema.ServerNotification, McpError.McpClientError>
  /** Sends the legacy session state again on a new session: the log level and the resource subscriptions. */
  readonly restoreLegacy: (session: Session) => Effect.Effect<void>
}

/**
 * @internal
 */
export const make = (deps: {
  readonly status: Connection.Status
  readonly requester: Requester.Requester
  readonly calls: Calls.Calls
  readonly inbound: Inbound.Inbound
  readonly notifications: NotificationHub.NotificationHub
  readonly cache: Cache.Cache
  readonly envelope: Envelope.Envelope
  readonly requestTimeout: number
  readonly bufferSize: number
}): Subscriptions => {
  const { cache, calls, inbound, notifications, requester, status } = deps
  /** Legacy resource subscriptions (uri → how many listens want it), restored on every new session. */
  const legacySubscriptions = new Map<string, number>()

  /** Succeeds once the client will never have a session again (closed, or out of reconnections). */
  const closedForGood: Effect.Effect<void> = Effect.asVoid(
    Stream.runHead(Stream.filter(status.phase.changes, (phase) => phase._tag === "Failed"))
  )

  const listenLegacy = (filter: McpClient.ListenFilter, session: Session) =>
    Stream.unwrap(Effect.gen(function*() {
      const inbox = yield* notifications.subscribe
      const uris = session.capabilities.resources?.subscribe === true ? filter.resourceSubscriptions ?? [] : []
      for (const uri of uris) {
        const count = legacySubscriptions.get(uri) ?? 0
        legacySubscriptions.set(uri, count + 1)
        yield* Effect.addFinalizer(() =>
          Effect.suspend(() => {
            const left = (legacySubscriptions.get(uri) ?? 1) - 1
            if (left > 0) {
              legacySubscriptions.set(uri, left)
              return Effect.void
            }
            legacySubscriptions.delete(uri)
            return Effect.ignore(
              calls.send("resources/unsubscribe", { uri }, { timeout: "5 seconds" })
            )
          })
        )
        if (count === 0) {
          // A connection lost meanwhile is no failure: every new session subscribes again.
          yield* calls.send("resources/subscribe", { uri }).pipe(
            Effect.catchTag("TransportError", (error) =>
              Effect.logDebug(printable(`resources/subscribe deferred to the next session: ${error.message}`)))
          )
        }
      }
      return Stream.filter(inbox, wanted(filter))
    }))

  const listenModern = (filter: McpClient.ListenFilter) =>
    Stream.unwrap(Effect.gen(function*() {
      const items = yield* NotificationHub.makeInbox<McpError.McpClientError>(deps.bufferSize, "listen")
      const listener = (asked: Asked, onAnything: () => void): Inbound.Listener => (notification) => {
        onAnything()
        if (notification.method === "notifications/subscriptions/acknowledged") {
          const missing = unacknowledged(asked, notification.params)
          if (missing.length > 0) {
            return Effect.andThen(
              Effect.logWarning(printable(`the server does not honour: ${missing.join(", ")}`)).pipe(
                Effect.annotateLogs({ module: "McpClient", method: "subscriptions/listen" })
              ),
              items.offer(notification)
            )
          }
        }
        return items.offer(notification)
      }
      const listenOnce = (onAnything: () => void) =>
        Effect.gen(function*() {
          const session = yield* status.awaitSession(undefined, "subscriptions/listen")
          const asked = askedFor(filter, session.capabilities)
          let id: McpSchema.RequestId | undefined
          return yield* requester.send(
            session.wire,
            "subscriptions/listen",
            { notifications: asked },
            Requester.internal(undefined, {
              cancellable: true,
              onId: (assigned) => {
                id = assigned
                inbound.listen(assigned, listener(asked, onAnything))
              }
            })
          ).pipe(Effect.ensuring(Effect.sync(() => id !== undefined && inbound.unlisten(id))))
        })
      const run = Effect.gen(function*() {
        let next = yield* Schedule.toStepWithSleep(relistenSchedule)
        while (true) {
          let heard = false
          const outcome = yield* Effect.result(listenOnce(() => (heard = true)))
          if (Result.isSuccess(outcome)) return yield* items.end
          const error = outcome.failure
          if (error._tag !== "TransportError") return yield* items.fail(error)
          // a client closed for good (closed, or out of reconnections) will not listen again
          if ((yield* status.state.get)._tag === "Closed") return yield* items.fail(error)
          // A dropped stream: listen again (same filter, new id) after a jittered pause.
          if (heard) next = yield* Schedule.toStepWithSleep(relistenSchedule)
          // Notifications may have been missed during the gap: what is cached about this server is stale.
          const target = status.published()?.connection?.info.target
          if (target !== undefined) yield* cache.forgetServer(target)
          yield* Effect.logDebug(printable(`listen dropped (${error.message}); listening again`)).pipe(
            Effect.annotateLogs({ module: "McpClient", method: "subscriptions/listen" })
          )
          // The pause, unless the client is closed for good meanwhile: a dropped connection reaches the connection
          // loop after the listen saw it fail, and whether it reconnects is known only once the loop has run. A
          // client that will not reconnect fails the stream as soon as it says so (the pause may never end: the
          // clock is the caller's). (a schedule that ended listens again at once, as before)
          const closed = yield* Effect.raceFirst(
            Effect.as(Effect.catch(next(error), () => Effect.void), false),
            Effect.as(closedForGood, true)
          )
          if (closed) return yield* items.fail(error)
        }
      })
      // the listen is on its way when the stream's reader first waits (sent before what its reader does next)
      yield* Effect.forkScoped(run, { startImmediately: true })
      return items.stream
    }))

  const restoreLegacy = Effect.fnUntraced(function*(session: Session) {
    const wire: Wire = { ...session.wire, era: "legacy" }
    const send = Requester.internal(deps.requestTimeout, { cancellable: true })
    const logLevel = deps.envelope.logLevel()
    if (logLevel !== undefined && session.capabilities.logging !== undefined) {
      yield* Effect.ignore(requester.send(wire, "logging/setLevel", { level: logLevel }, send))
    }
    if (session.capabilities.resources?.subscribe === true) {
      for (const uri of legacySubscriptions.keys()) {
        yield* Effect.ignore(requester.send(wire, "resources/subscribe", { uri }, send))
      }
    }
  }, Effect.annotateLogs({ module: "McpClient", method: "restoreLegacyState" }))

  return {
    listen: (filter) =>
      Stream.unwrap(Effect.map(status.awaitSession(undefined, "subscriptions/listen"), (session) =>
        session.era === "modern" ? listenModern(filter) : listenLegacy(filter, session))),
    restoreLegacy
  }
}
