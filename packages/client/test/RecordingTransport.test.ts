import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as McpSchema from "../src/McpSchema.js"
import * as Transport from "../src/Transport.js"
import * as RecordingTransport from "./utils/recordingTransport.js"

/**
 * A trivial in-process server: every request is answered with a result echoing its method, and every notification
 * is answered with a server notification; `written` keeps what reached it.
 */
const fakeTransport = Effect.gen(function*() {
  const written = yield* Ref.make<ReadonlyArray<string>>([])
  const write = (what: string) => Ref.update(written, (all) => [...all, what])
  const transport = Transport.Transport.of({
    kind: "in-process",
    connect: (emit) =>
      Effect.succeed({
        info: { binding: "in-process", target: "fake" },
        request: (message) =>
          Effect.andThen(
            write(`request ${message.method}`),
            emit(Transport.TransportEvent.Response({
              message: { jsonrpc: "2.0", id: message.id, result: { method: message.method } }
            }))
          ),
        notify: (message) =>
          Effect.andThen(
            write(`notify ${message.method}`),
            emit(Transport.TransportEvent.Notification({
              message: { jsonrpc: "2.0", method: "notifications/message", params: { data: message.method } }
            }))
          ),
        respond: (message) => write(`respond ${message.id}`),
        cancel: (id, reason) => write(`cancel ${id} ${reason}`),
        setSession: (session) => write(`session ${session.protocolVersion}`)
      } satisfies Transport.TransportConnection)
  })
  return { transport, written }
})

const ping: McpSchema.JsonRpcRequest = { jsonrpc: "2.0", id: 1, method: "ping" }
const initialized: McpSchema.JsonRpcNotification = { jsonrpc: "2.0", method: "notifications/initialized" }
const pong: McpSchema.JsonRpcResponse = { jsonrpc: "2.0", id: "s-1", result: {} }

describe("RecordingTransport", () => {
  it.effect("records what the client sends and receives, in order, and passes everything through", () =>
    Effect.gen(function*() {
      const fake = yield* fakeTransport
      const received: Array<Transport.TransportEvent> = []
      yield* Effect.gen(function*() {
        const transport = yield* Transport.Transport
        const recorder = yield* RecordingTransport.Recorder
        assert.strictEqual(transport.kind, "in-process")
        yield* Effect.scoped(Effect.gen(function*() {
          const connection = yield* transport.connect((event) => Effect.sync(() => void received.push(event)))
          yield* connection.request(ping, { probe: true })
          yield* connection.notify(initialized)
          yield* connection.respond(pong)
          yield* connection.setSession({ era: "legacy", protocolVersion: "2025-11-25" })
          yield* connection.cancel(1, "timeout")
        }))

        const entries = yield* recorder.entries
        assert.deepStrictEqual(entries.map((entry) => entry._tag), [
          "Connected",
          "Request",
          "Received",
          "Notify",
          "Received",
          "Respond",
          "SetSession",
          "Cancel"
        ])
        assert.isTrue(entries.every((entry) => entry.connection === 1))
        assert.deepStrictEqual(yield* recorder.sent, [ping, initialized, pong])
        const request = entries[1]
        assert.deepStrictEqual(request._tag === "Request" ? request.options : undefined, { probe: true })
        assert.deepStrictEqual(yield* recorder.received, received)
        assert.deepStrictEqual(yield* recorder.sentWithMethod("notifications/initialized"), [initialized])
        assert.deepStrictEqual(yield* recorder.sentWithMethod("tools/call"), [])
      }).pipe(Effect.provide(RecordingTransport.layer(Layer.succeed(Transport.Transport, fake.transport))))

      // the wrapped transport saw every call, and the client saw every event
      assert.deepStrictEqual(yield* Ref.get(fake.written), [
        "request ping",
        "notify notifications/initialized",
        "respond s-1",
        "session 2025-11-25",
        "cancel 1 timeout"
      ])
      assert.deepStrictEqual(received.map((event) => event._tag), ["Response", "Notification"])
    }))

  it.effect("numbers connections and forgets entries on clear", () =>
    Effect.gen(function*() {
      const fake = yield* fakeTransport
      yield* Effect.gen(function*() {
        const transport = yield* Transport.Transport
        const recorder = yield* RecordingTransport.Recorder
        const once = Effect.scoped(Effect.flatMap(transport.connect(() => Effect.void), (c) => c.request(ping, {})))
        yield* once
        yield* once
        assert.strictEqual(yield* recorder.connections, 2)
        const connections = (yield* recorder.entries).map((entry) => `${entry._tag}@${entry.connection}`)
        assert.deepStrictEqual(connections, [
          "Connected@1",
          "Request@1",
          "Received@1",
          "Connected@2",
          "Request@2",
          "Received@2"
        ])
        yield* recorder.clear
        assert.deepStrictEqual(yield* recorder.entries, [])
        assert.strictEqual(yield* recorder.connections, 2)
      }).pipe(Effect.provide(RecordingTransport.layer(Layer.succeed(Transport.Transport, fake.transport))))
    }))

  it.effect("waitFor resumes once a matching entry is recorded", () =>
    Effect.gen(function*() {
      const fake = yield* fakeTransport
      yield* Effect.gen(function*() {
        const transport = yield* Transport.Transport
        const recorder = yield* RecordingTransport.Recorder
        const cancelled = (entries: ReadonlyArray<RecordingTransport.Entry>) =>
          Option.fromNullishOr(entries.find((entry) => entry._tag === "Cancel"))
        const waiting = yield* Effect.forkChild(recorder.waitFor(cancelled))
        yield* Effect.scoped(Effect.gen(function*() {
          const connection = yield* transport.connect(() => Effect.void)
          yield* connection.request(ping, {})
          yield* Effect.yieldNow
          assert.isUndefined(waiting.pollUnsafe(), "nothing matched yet")
          yield* connection.cancel(1, "interrupted")
        }))
        const found = yield* Fiber.join(waiting)
        assert.deepStrictEqual(found._tag === "Cancel" ? [found.id, found.reason] : [], [1, "interrupted"])
        // an entry already recorded is found at once
        assert.strictEqual((yield* recorder.waitFor(cancelled))._tag, "Cancel")
      }).pipe(Effect.provide(RecordingTransport.layer(Layer.succeed(Transport.Transport, fake.transport))))
    }))

  it.effect("each build of the layer records separately", () =>
    Effect.gen(function*() {
      const fake = yield* fakeTransport
      const live = RecordingTransport.layer(Layer.succeed(Transport.Transport, fake.transport))
      const connectOnce = Effect.gen(function*() {
        const transport = yield* Transport.Transport
        yield* Effect.scoped(transport.connect(() => Effect.void))
        return yield* Effect.flatMap(RecordingTransport.Recorder, (recorder) => recorder.connections)
      })
      assert.strictEqual(yield* Effect.provide(connectOnce, live), 1)
      assert.strictEqual(yield* Effect.provide(connectOnce, live), 1)
    }))
})
