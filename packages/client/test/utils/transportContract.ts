/**
 * The Transport contract: what every binding must do for the client, checked on the transport alone (no client)
 * against the fixture server (`fixtureServer.ts`). Each binding's test file runs `transportContract` with a layer
 * providing its transport and a view of the server's side; the suite does the era's handshake itself.
 *
 * A transport must: report its binding; answer each request with exactly one event carrying its id; keep
 * concurrent requests apart; deliver what the server sends about a request (progress) before its answer, in
 * order; report a JSON-RPC error as an answer, not a transport failure; take a notification; on cancel, stop the
 * request on the server and report no answer for it; and once its Scope closes, take no more requests.
 */
import { assert, describe, layer as withLayer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Exit from "effect/Exit"
import * as McpSchema from "../../src/McpSchema.js"
import * as Transport from "../../src/Transport.js"
import { ServerSide } from "./behaviourSuite.js"
import * as FixtureServer from "./fixtureServer.js"

export { ServerSide } from "./behaviourSuite.js"

/** What the suite expects of a binding. */
export interface Expected {
  readonly binding: Transport.Binding
  readonly era: McpSchema.Era
  /** The legacy version to initialize with (default 2025-11-25). */
  readonly legacyVersion?: string | undefined
}

type EventOf<Tag extends Transport.TransportEvent["_tag"]> = Extract<Transport.TransportEvent, { _tag: Tag }>

const isResponseTo = (id: McpSchema.RequestId) => (event: Transport.TransportEvent): event is EventOf<"Response"> =>
  event._tag === "Response" && event.message.id === id

const resultOf = (event: EventOf<"Response">): Record<string, unknown> =>
  "result" in event.message && typeof event.message.result === "object" && event.message.result !== null
    ? { ...event.message.result }
    : {}

const textOf = (event: EventOf<"Response">): string => {
  const content = resultOf(event).content
  return Array.isArray(content)
    ? content.map((block: { readonly text?: unknown }) => (typeof block.text === "string" ? block.text : "")).join("")
    : ""
}

/** Opens a connection of the transport in context, records its events, and runs the era's handshake. */
const open = (expected: Expected) =>
  Effect.gen(function*() {
    const transport = yield* Transport.Transport
    const events = yield* SubscriptionRef.make<ReadonlyArray<Transport.TransportEvent>>([])
    const connection = yield* transport.connect((event) => SubscriptionRef.update(events, (all) => [...all, event]))
    const all = SubscriptionRef.get(events)
    const awaitEvent = <A extends Transport.TransportEvent>(predicate: (event: Transport.TransportEvent) => event is A) =>
      SubscriptionRef.changes(events).pipe(
        Stream.filterMap((seen) => {
          const found = seen.find(predicate)
          return found === undefined ? Result.failVoid : Result.succeed(found)
        }),
        Stream.runHead,
        Effect.flatMap(Option.match({ onNone: () => Effect.never, onSome: Effect.succeed })),
        Effect.timeoutOrElse({
          duration: "20 seconds",
          orElse: () => Effect.fail(new Error("no such event in 20 seconds"))
        }),
        Effect.orDie
      )
    let nextId = 0
    const params = (value: Record<string, unknown>, meta: Record<string, unknown> = {}) =>
      expected.era === "modern"
        ? FixtureServer.modern(value, meta)
        : Object.keys(meta).length === 0
        ? value
        : { ...value, _meta: meta }
    const start = (method: string, value: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) =>
      Effect.gen(function*() {
        const id = ++nextId
        yield* connection.request({ jsonrpc: "2.0", id, method, params: params(value, meta) }, {})
        return id
      })
    const call = (method: string, value: Record<string, unknown> = {}) =>
      Effect.flatMap(start(method, value), (id) => awaitEvent(isResponseTo(id)))
    if (expected.era === "modern") {
      yield* call("server/discover")
      yield* connection.setSession({ era: "modern", protocolVersion: McpSchema.MODERN_VERSIONS[0] })
    } else {
      const version = expected.legacyVersion ?? "2025-11-25"
      const initialized = yield* call("initialize", {
        protocolVersion: version,
        capabilities: {},
        clientInfo: { name: "transport-contract", version: "0.0.0" }
      })
      const agreed = resultOf(initialized).protocolVersion
      yield* connection.notify({ jsonrpc: "2.0", method: "notifications/initialized" })
      yield* connection.setSession({
        era: "legacy",
        protocolVersion: (typeof agreed === "string" ? agreed : version) as McpSchema.ProtocolVersion
      })
    }
    return { connection, events: all, awaitEvent, start, call }
  })

/** Runs the contract against the transport of `layer` (one server for the whole suite). */
export const transportContract = <E>(
  name: string,
  layer: Layer.Layer<Transport.Transport | ServerSide, E>,
  expected: Expected
) =>
  describe(`Transport contract: ${name}`, () => {
    // real servers and real time
    withLayer(layer, { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("reports its binding; a request gets exactly one answer, with its id", () =>
        Effect.gen(function*() {
          const peer = yield* open(expected)
          assert.strictEqual(peer.connection.info.binding, expected.binding)
          assert.isString(peer.connection.info.target)
          const id = yield* peer.start("tools/call", { name: "echo", arguments: { text: "contract" } })
          assert.strictEqual(textOf(yield* peer.awaitEvent(isResponseTo(id))), "contract")
          // a later round trip: nothing more came for the first request
          yield* peer.call("ping")
          const answers = (yield* peer.events).filter((event) => event._tag === "Response" && event.message.id === id)
          assert.strictEqual(answers.length, 1)
        }))

      it.effect("concurrent requests each get their own answer", () =>
        Effect.gen(function*() {
          const peer = yield* open(expected)
          const texts = Array.from({ length: 20 }, (_, n) => `text ${n}`)
          const answers = yield* Effect.forEach(
            texts,
            (text) => Effect.map(peer.call("tools/call", { name: "echo", arguments: { text } }), textOf),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(answers, texts)
        }))

      it.effect("what the server sends about a request comes before its answer, in order", () =>
        Effect.gen(function*() {
          const peer = yield* open(expected)
          const id = yield* peer.start(
            "tools/call",
            { name: "slow", arguments: { steps: 3, delayMs: 5 } },
            { progressToken: "contract-progress" }
          )
          yield* peer.awaitEvent(isResponseTo(id))
          const events = yield* peer.events
          const progress = events.flatMap((event) =>
            event._tag === "Notification" && event.message.method === "notifications/progress"
              ? [(event.message.params as { readonly progress: number }).progress]
              : []
          )
          assert.deepStrictEqual(progress, [1, 2, 3])
          const answer = events.findIndex(isResponseTo(id))
          assert.isFalse(events.slice(answer).some((event) => event._tag === "Notification"))
        }))

      it.effect("a JSON-RPC error is an answer, not a transport failure", () =>
        Effect.gen(function*() {
          const peer = yield* open(expected)
          const answer = yield* peer.call("no/such/method")
          assert.isTrue("error" in answer.message)
          if ("error" in answer.message) assert.strictEqual(answer.message.error.code, -32601)
          assert.isFalse((yield* peer.events).some((event) => event._tag === "RequestFailed"))
        }))

      it.effect("takes a notification", () =>
        Effect.gen(function*() {
          const peer = yield* open(expected)
          yield* peer.connection.notify({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: "not-a-request", reason: "contract" }
          })
          // the connection goes on
          yield* peer.call("ping")
        }))

      it.effect("a cancelled request is stopped on the server and gets no answer", () =>
        Effect.gen(function*() {
          const server = yield* ServerSide
          const peer = yield* open(expected)
          const id = yield* peer.start("tools/call", { name: "hang", arguments: {} }, { progressToken: "contract-hang" })
          // running: it reported progress 0
          yield* peer.awaitEvent((event): event is EventOf<"Notification"> =>
            event._tag === "Notification" && event.message.method === "notifications/progress"
          )
          yield* peer.connection.cancel(id, "interrupted")
          yield* server.awaitInterrupted(id)
          yield* peer.call("ping")
          const events = yield* peer.events
          assert.isFalse(events.some((event) => isResponseTo(id)(event)))
        }))

      it.effect("once its Scope closes, the connection takes no more requests", () =>
        Effect.gen(function*() {
          const scope = yield* Scope.make()
          const peer = yield* Scope.provide(open(expected), scope)
          yield* Scope.close(scope, Exit.void)
          const exit = yield* Effect.exit(
            peer.connection.request({ jsonrpc: "2.0", id: 99, method: "ping", params: {} }, {})
          )
          assert.isTrue(Exit.isFailure(exit))
        }))
    })
  })
