/**
 * Wraps any `Transport` so a test can see what crossed it: every message the client sent (request, notify, respond),
 * every cancel and session change, and every event the transport reported back, in order and numbered by
 * connection. The record is read through the `Recorder` service provided alongside the wrapped transport.
 *
 * ```ts
 * const Recorded = RecordingTransport.layer(NodeStdioTransport.layer(command))
 * const Live = McpClient.layer(options).pipe(Layer.provideMerge(Recorded))
 * const recorder = yield* RecordingTransport.Recorder
 * const sent = yield* recorder.sent
 * ```
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as McpSchema from "../../src/McpSchema.js"
import * as Transport from "../../src/Transport.js"

/**
 * One recorded step. `connection` counts the transport's `connect` calls, from 1.
 */
export type Entry = Data.TaggedEnum<{
  Connected: { readonly connection: number; readonly info: Transport.ConnectedInfo }
  Request: {
    readonly connection: number
    readonly message: McpSchema.JsonRpcRequest
    readonly options: Transport.WireOptions
  }
  Notify: { readonly connection: number; readonly message: McpSchema.JsonRpcNotification }
  Respond: { readonly connection: number; readonly message: McpSchema.JsonRpcResponse }
  Cancel: { readonly connection: number; readonly id: McpSchema.RequestId; readonly reason: Transport.CancelReason }
  SetSession: { readonly connection: number; readonly session: Transport.SessionInfo }
  Received: { readonly connection: number; readonly event: Transport.TransportEvent }
}>

export const Entry = Data.taggedEnum<Entry>()

/** A message the client wrote: what `request`, `notify` and `respond` were given. */
export type SentMessage = McpSchema.JsonRpcRequest | McpSchema.JsonRpcNotification | McpSchema.JsonRpcResponse

export const sentMessage = (entry: Entry): Option.Option<SentMessage> =>
  entry._tag === "Request" || entry._tag === "Notify" || entry._tag === "Respond"
    ? Option.some(entry.message)
    : Option.none()

export const receivedEvent = (entry: Entry): Option.Option<Transport.TransportEvent> =>
  entry._tag === "Received" ? Option.some(entry.event) : Option.none()

/**
 * Read access to what the wrapped transport carried.
 */
export class Recorder extends Context.Service<Recorder, {
  /** Everything, in order. */
  readonly entries: Effect.Effect<ReadonlyArray<Entry>>
  /** The messages the client sent (requests, notifications, responses), in order. */
  readonly sent: Effect.Effect<ReadonlyArray<SentMessage>>
  /** The events the transport reported to the client, in order. */
  readonly received: Effect.Effect<ReadonlyArray<Transport.TransportEvent>>
  /** The requests and notifications the client sent with this method. */
  readonly sentWithMethod: (
    method: string
  ) => Effect.Effect<ReadonlyArray<McpSchema.JsonRpcRequest | McpSchema.JsonRpcNotification>>
  /** How many times the transport was connected. */
  readonly connections: Effect.Effect<number>
  /**
   * Waits until `f` finds something in the record (it is tried on the current record, then after each new entry).
   * Bound it with `Effect.timeout` when the entry may never come.
   */
  readonly waitFor: <A>(f: (entries: ReadonlyArray<Entry>) => Option.Option<A>) => Effect.Effect<A>
  /** Forgets everything recorded so far (the connection count is kept). */
  readonly clear: Effect.Effect<void>
}>()("@conduit-mcp/client/test/Recorder") {}

interface Recording {
  readonly recorder: Recorder["Service"]
  readonly record: (entry: Entry) => Effect.Effect<void>
  readonly nextConnection: Effect.Effect<number>
}

const makeRecording: Effect.Effect<Recording> = Effect.gen(function*() {
  const log = yield* SubscriptionRef.make<ReadonlyArray<Entry>>([])
  const count = yield* Ref.make(0)
  const entries = SubscriptionRef.get(log)
  const hasMethod = (method: string) => (entry: Entry) =>
    (entry._tag === "Request" || entry._tag === "Notify") && entry.message.method === method
      ? Option.some(entry.message)
      : Option.none()
  const recorder: Recorder["Service"] = {
    entries,
    sent: Effect.map(entries, (all) => all.flatMap((entry) => Option.toArray(sentMessage(entry)))),
    received: Effect.map(entries, (all) => all.flatMap((entry) => Option.toArray(receivedEvent(entry)))),
    sentWithMethod: (method) =>
      Effect.map(entries, (all) => all.flatMap((entry) => Option.toArray(hasMethod(method)(entry)))),
    connections: Ref.get(count),
    waitFor: (f) =>
      SubscriptionRef.changes(log).pipe(
        Stream.filterMap((entries) => Result.fromOption(f(entries), () => undefined)),
        Stream.runHead,
        // `changes` never ends, so the stream only stops once `f` found something
        Effect.flatMap(Option.match({ onNone: () => Effect.never, onSome: Effect.succeed }))
      ),
    clear: SubscriptionRef.set(log, [])
  }
  return {
    recorder,
    record: (entry) => SubscriptionRef.update(log, (all) => [...all, entry]),
    nextConnection: Ref.updateAndGet(count, (n) => n + 1)
  }
})

const wrap = (
  transport: Transport.Transport["Service"],
  { nextConnection, record }: Recording
): Transport.Transport["Service"] =>
  Transport.Transport.of({
    kind: transport.kind,
    // the copy keeps the credentials of the transport it records (`McpClient.setAuth` swaps them through it)
    credentials: transport.credentials,
    traits: transport.traits,
    // (no `deliver` passed on: every event is recorded, through `emit`)
    connect: (emit) =>
      Effect.gen(function*() {
        const connection = yield* nextConnection
        const inner = yield* transport.connect((event) =>
          Effect.andThen(record(Entry.Received({ connection, event })), emit(event))
        )
        yield* record(Entry.Connected({ connection, info: inner.info }))
        return {
          info: inner.info,
          request: (message, options) =>
            Effect.andThen(record(Entry.Request({ connection, message, options })), inner.request(message, options)),
          notify: (message) => Effect.andThen(record(Entry.Notify({ connection, message })), inner.notify(message)),
          respond: (message) => Effect.andThen(record(Entry.Respond({ connection, message })), inner.respond(message)),
          cancel: (id, reason) =>
            Effect.andThen(record(Entry.Cancel({ connection, id, reason })), inner.cancel(id, reason)),
          setSession: (session) =>
            Effect.andThen(record(Entry.SetSession({ connection, session })), inner.setSession(session))
        } satisfies Transport.TransportConnection
      })
  })

/**
 * Builds a recording copy of a transport service, with its recorder.
 */
export const make = (
  transport: Transport.Transport["Service"]
): Effect.Effect<Context.Context<Transport.Transport | Recorder>> =>
  Effect.map(makeRecording, (recording) =>
    Context.make(Recorder, recording.recorder).pipe(
      Context.add(Transport.Transport, wrap(transport, recording))
    ))

/**
 * Wraps a transport layer: the result provides the recording transport and its `Recorder`. Each build of the layer
 * gets a fresh record. Pipeable: `transportLayer.pipe(RecordingTransport.layer)`.
 */
export const layer = <E, R>(
  inner: Layer.Layer<Transport.Transport, E, R>
): Layer.Layer<Transport.Transport | Recorder, E, R> =>
  Layer.effectContext(Effect.flatMap(Transport.Transport, make)).pipe(Layer.provide(inner))

