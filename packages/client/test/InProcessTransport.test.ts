import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/testing/TestClock"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "@conduit-mcp/server/McpServer"
import * as Transport from "../src/Transport.js"
import { awaitSleep, withSleepLog } from "./utils/clock.js"
import * as FixtureServer from "./utils/fixtureServer.js"

const { modern } = FixtureServer

type EventOf<Tag extends Transport.TransportEvent["_tag"]> = Extract<Transport.TransportEvent, { _tag: Tag }>

/** Connects and records every event the transport emits. */
const connect = (transport: Transport.Transport["Service"]) =>
  Effect.gen(function*() {
    const events = yield* SubscriptionRef.make<ReadonlyArray<Transport.TransportEvent>>([])
    const connection = yield* transport.connect((event) => SubscriptionRef.update(events, (all) => [...all, event]))
    const all = SubscriptionRef.get(events)
    const awaitEvent = <A extends Transport.TransportEvent>(
      predicate: (event: Transport.TransportEvent) => event is A
    ) =>
      SubscriptionRef.changes(events).pipe(
        Stream.filterMap((seen) => {
          const found = seen.find(predicate)
          return found === undefined ? Result.failVoid : Result.succeed(found)
        }),
        Stream.runHead,
        Effect.flatMap(Option.match({ onNone: () => Effect.never, onSome: Effect.succeed }))
      )
    const responseTo = (id: McpSchema.RequestId) =>
      awaitEvent((event): event is EventOf<"Response"> =>
        event._tag === "Response" && event.message.id === id
      )
    const request = (id: number, method: string, params?: unknown) =>
      connection.request({ jsonrpc: "2.0", id, method, params }, {})
    const call = (id: number, method: string, params?: unknown) =>
      Effect.andThen(request(id, method, params), responseTo(id))
    return { connection, events: all, awaitEvent, responseTo, request, call }
  })

const resultOf = (event: { readonly message: McpSchema.JsonRpcResponse }): Record<string, unknown> =>
  "result" in event.message && typeof event.message.result === "object" && event.message.result !== null
    ? { ...event.message.result }
    : {}

const isProgress = (event: Transport.TransportEvent): event is EventOf<"Notification"> =>
  event._tag === "Notification" && event.message.method === "notifications/progress"

describe("InProcessTransport", () => {
  it.effect("connects at once and answers requests through emit", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      const { transport } = yield* InProcessTransport.make(server)
      assert.strictEqual(transport.kind, "in-process")
      const peer = yield* connect(transport)
      assert.deepStrictEqual(peer.connection.info, { binding: "in-process", target: "in-process:conduit-fixture" })
      const discover = yield* peer.call(1, "server/discover", modern())
      assert.deepStrictEqual(resultOf(discover).supportedVersions, server.supportedVersions)
      const echo = yield* peer.call(2, "tools/call", modern({ name: "echo", arguments: { text: "in-process" } }))
      assert.deepStrictEqual(resultOf(echo).content, [{ type: "text", text: "in-process" }])
      assert.deepStrictEqual((yield* server.received()).map((r) => r.method), ["server/discover", "tools/call"])
    }))

  it.effect("server notifications are emitted in order, before the response", () =>
    Effect.gen(function*() {
      const { transport } = yield* InProcessTransport.make(yield* FixtureServer.make())
      const peer = yield* connect(transport)
      yield* peer.request(
        1,
        "tools/call",
        modern({ name: "slow", arguments: { steps: 2, delayMs: 50 } }, { progressToken: 1 })
      )
      for (let step = 0; step < 2; step++) {
        yield* awaitSleep("50 millis")
        yield* TestClock.adjust("50 millis")
      }
      yield* peer.responseTo(1)
      const events = yield* peer.events
      assert.deepStrictEqual(events.map((event) => event._tag), ["Notification", "Notification", "Response"])
      assert.deepStrictEqual(
        events.flatMap((event) => event._tag === "Notification" ? [event.message.params] : []),
        [1, 2].map((progress) => ({ progressToken: 1, progress, total: 2, message: `step ${progress} of 2` }))
      )
    }).pipe(withSleepLog))

  it.effect("cancel interrupts the handler and no response is emitted", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      const { transport } = yield* InProcessTransport.make(server)
      const peer = yield* connect(transport)
      yield* peer.request(7, "tools/call", modern({ name: "hang" }, { progressToken: 7 }))
      yield* peer.awaitEvent(isProgress)
      yield* peer.connection.cancel(7, "timeout")
      assert.deepStrictEqual(yield* server.interrupted, [{ connection: 1, id: 7, method: "tools/call" }])
      // Cancelling is not a message: the server received only the request.
      assert.deepStrictEqual((yield* server.received()).map((r) => r.method), ["tools/call"])
      yield* peer.call(8, "server/discover", modern())
      const responses = (yield* peer.events).flatMap((event) => event._tag === "Response" ? [event.message.id] : [])
      assert.deepStrictEqual(responses, [8])
    }))

  it.effect("values that cannot be serialized are caught in both directions", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "unserializable",
        version: "0",
        record: true,
        tools: [McpServer.tool({
          name: "big",
          parameters: Schema.Struct({}),
          handler: () => Effect.succeed({ content: [], structuredContent: { value: 1n } })
        })]
      })
      const { transport } = yield* InProcessTransport.make(server)
      const peer = yield* connect(transport)

      const error = yield* Effect.flip(peer.request(1, "tools/call", modern({ name: "big", arguments: { n: 1n } })))
      assert.strictEqual(error._tag, "TransportError")
      assert.isTrue(error._tag === "TransportError" && error.reason === "Write" && error.transport === "in-process")
      assert.deepStrictEqual(yield* server.received(), [])

      yield* peer.request(2, "tools/call", modern({ name: "big" }))
      const failed = yield* peer.awaitEvent((event): event is EventOf<"RequestFailed"> =>
        event._tag === "RequestFailed"
      )
      assert.strictEqual(failed.id, 2)
      assert.isTrue(failed.error._tag === "TransportError" && failed.error.reason === "Read")
    }))

  it.effect("closing the scope interrupts everything and emits nothing further", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      const { transport } = yield* InProcessTransport.make(server)
      const scope = yield* Scope.make()
      const peer = yield* connect(transport).pipe(Scope.provide(scope))
      yield* peer.request(1, "tools/call", modern({ name: "hang" }, { progressToken: 1 }))
      yield* peer.request(2, "tools/call", modern({ name: "slow", arguments: { steps: 1, delayMs: 100 } }))
      yield* peer.awaitEvent(isProgress)
      yield* awaitSleep("100 millis")
      yield* Scope.close(scope, Exit.void)
      const before = yield* peer.events
      assert.deepStrictEqual(
        (yield* server.interrupted).map((i) => i.id).sort(),
        [1, 2]
      )
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* peer.events, before)
      const error = yield* Effect.flip(peer.request(3, "server/discover", modern()))
      assert.isTrue(error._tag === "TransportError" && error.reason === "Closed")
    }).pipe(withSleepLog))

  it.effect("disconnect reports Closed, stops the connection, and a new connection works", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      const [transport, control] = yield* Effect.all([Transport.Transport, InProcessTransport.Control]).pipe(
        Effect.provide(InProcessTransport.layerWithControl(server))
      )
      yield* Effect.scoped(Effect.gen(function*() {
        const peer = yield* connect(transport)
        yield* peer.request(1, "tools/call", modern({ name: "hang" }, { progressToken: 1 }))
        yield* peer.awaitEvent(isProgress)
        assert.strictEqual(yield* control.open, 1)
        yield* control.disconnect
        const closed = yield* peer.awaitEvent((event): event is EventOf<"Closed"> => event._tag === "Closed")
        assert.strictEqual(closed.error.reason, "Closed")
        assert.strictEqual(closed.error.transport, "in-process")
        assert.strictEqual((yield* server.interrupted).length, 1)
        const error = yield* Effect.flip(peer.request(2, "server/discover", modern()))
        assert.isTrue(error._tag === "TransportError" && error.reason === "Closed")
        yield* control.disconnect
        assert.strictEqual((yield* peer.events).filter((event) => event._tag === "Closed").length, 1)
      }))
      yield* Effect.scoped(Effect.gen(function*() {
        const peer = yield* connect(transport)
        yield* peer.call(1, "server/discover", modern())
        assert.strictEqual(yield* control.connections, 2)
        assert.strictEqual(yield* control.open, 1)
      }))
      assert.strictEqual(yield* control.open, 0)
    }))

  it.effect("each connection has its own server state", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      const { transport } = yield* InProcessTransport.make(server)
      const first = yield* connect(transport)
      const second = yield* connect(transport)
      const init = yield* first.call(1, "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "0" }
      })
      assert.strictEqual(resultOf(init).protocolVersion, "2025-06-18")
      yield* first.connection.notify({ jsonrpc: "2.0", method: "notifications/initialized" })
      assert.isTrue("result" in (yield* first.call(2, "tools/list", {})).message)
      assert.isTrue("error" in (yield* second.call(1, "tools/list", {})).message)
      assert.deepStrictEqual(
        (yield* server.received("tools/list")).map((r) => r.connection),
        [1, 2]
      )
    }))
})
