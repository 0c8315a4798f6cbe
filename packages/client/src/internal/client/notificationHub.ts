/**
 * Bounded buffers between the server's notifications and the code that reads them.
 *
 * Policy: every reader (a `notifications` stream, a `subscribe`d stream, a `listen` stream) has its own buffer of
 * `capacity` notifications. The connection never waits for a reader: when a reader's buffer is full, its oldest
 * notification is dropped to make room. The reader then receives, before what it reads next, one notice
 * `{ method: "conduit/notificationsDropped", params: { dropped } }` with the number lost since its last read; the
 * drops are counted in the `mcp_client_notifications_dropped` metric, and the first drop of each run of drops is
 * logged at warning level.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as McpSchema from "../../McpSchema.js"
import { printable } from "../printable.js"

/**
 * The method of the notice a reader receives after notifications were dropped for it.
 *
 * @internal
 */
export const droppedMethod = "conduit/notificationsDropped"

/**
 * Notifications dropped because a reader was slower than the server, by reader kind.
 *
 * @internal
 */
export const droppedCounter = Metric.counter("mcp_client_notifications_dropped", {
  description: "server notifications dropped (the oldest first) because a reader's buffer was full",
  incremental: true
})

/**
 * One reader's buffer: offers never wait; end and failure are the stream's own.
 *
 * @internal
 */
export interface Inbox<E> {
  /** Adds a notification, dropping the oldest when the buffer is full. Never waits. */
  readonly offer: (notification: McpSchema.ServerNotification) => Effect.Effect<void>
  /** Ends the stream once the buffer is read. */
  readonly end: Effect.Effect<void>
  /** Fails the stream once the buffer is read. */
  readonly fail: (error: E) => Effect.Effect<void>
  /** What the reader reads: the notifications, with a drop notice before what follows a gap. */
  readonly stream: Stream.Stream<McpSchema.ServerNotification, E>
}

/**
 * A buffer of `capacity` notifications for one reader; `reader` names it in logs and metrics.
 *
 * @internal
 */
export const makeInbox = <E = never>(capacity: number, reader: string): Effect.Effect<Inbox<E>> =>
  Effect.map(Queue.make<McpSchema.ServerNotification, E | Cause.Done>({ capacity, strategy: "sliding" }), (queue) => {
    // dropped since the reader last read
    let dropped = 0
    const counter = Metric.withAttributes(droppedCounter, { reader })
    const offer = (notification: McpSchema.ServerNotification): Effect.Effect<void> =>
      Effect.suspend(() => {
        const full = Queue.sizeUnsafe(queue) >= capacity
        Queue.offerUnsafe(queue, notification)
        if (!full) return Effect.void
        dropped++
        const counted = Metric.update(counter, 1)
        if (dropped > 1) return counted
        return Effect.andThen(
          counted,
          Effect.logWarning(printable(
            `a ${reader} reader is slower than the server: dropping its oldest notifications (buffer of ${capacity})`
          )).pipe(Effect.annotateLogs({ module: "McpClient" }))
        )
      })
    const stream = Stream.mapArray(Stream.fromQueue(queue), (batch) => {
      if (dropped === 0) return batch
      const notice: McpSchema.ServerNotification = { method: droppedMethod, params: { dropped } }
      dropped = 0
      return [notice, ...batch]
    })
    return {
      offer,
      end: Effect.asVoid(Queue.end(queue)),
      fail: (error) => Effect.asVoid(Queue.fail(queue, error)),
      stream
    }
  })

/**
 * Fan-out of notifications to every current reader, each through its own {@link Inbox}.
 *
 * @internal
 */
export interface NotificationHub {
  readonly publish: (notification: McpSchema.ServerNotification) => Effect.Effect<void>
  /** A reader registered now, for the life of the Scope. */
  readonly subscribe: Effect.Effect<Stream.Stream<McpSchema.ServerNotification>, never, Scope.Scope>
  /** A reader registered when the stream starts. */
  readonly stream: Stream.Stream<McpSchema.ServerNotification>
}

/**
 * @internal
 */
export const makeHub = (capacity: number): NotificationHub => {
  const readers = new Set<Inbox<never>>()
  const subscribe = Effect.flatMap(makeInbox(capacity, "notifications"), (inbox) =>
    Effect.as(
      Effect.acquireRelease(Effect.sync(() => readers.add(inbox)), () => Effect.sync(() => readers.delete(inbox))),
      inbox.stream
    ))
  return {
    publish: (notification) =>
      Effect.suspend(() => {
        if (readers.size === 0) return Effect.void
        if (readers.size === 1) return readers.values().next().value!.offer(notification)
        return Effect.forEach([...readers], (inbox) => inbox.offer(notification), { discard: true })
      }),
    subscribe,
    // (put together when the stream is first run, not with every client)
    stream: Stream.suspend(() => Stream.unwrap(subscribe))
  }
}
