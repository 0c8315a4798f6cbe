/**
 * Requests by their method's definition (`McpMethod`): the parameters encoded and the result decoded by the
 * definition's schemas, and its facts honoured as the client's own methods' are: a read lost with its stream issued
 * again, `input_required` rounds served where the definition allows them, what the transport needs of the method
 * handed to it with each request. A definition that names one of the specification's methods keeps the client's
 * facts for it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as ElicitationHandler from "../src/ElicitationHandler.js"
import * as McpClient from "../src/McpClient.js"
import * as McpError from "../src/McpError.js"
import * as McpMethod from "../src/McpMethod.js"
import * as McpPromiseClient from "../src/McpPromiseClient.js"
import * as Transport from "../src/Transport.js"
import * as Scripted from "./utils/scriptedTransport.js"

const Lookup = McpMethod.make("acme/lookup", {
  params: Schema.Struct({ key: Schema.String, limit: Schema.NumberFromString }),
  result: Schema.Struct({ values: Schema.Array(Schema.String) }),
  idempotent: true,
  inputRounds: true,
  nameField: "key"
})

const Poke = McpMethod.make("acme/poke", { result: Schema.Struct({ ok: Schema.Boolean }) })

/** Named like the specification's method: the client's facts for it stay (it is not idempotent). */
const ToolsCall = McpMethod.make("tools/call", {
  params: Schema.Struct({ name: Schema.String }),
  result: Schema.Struct({ content: Schema.Array(Schema.Unknown) }),
  idempotent: true
})

/** What the transport was handed with each request: its method and wire options. */
class Handed extends Context.Service<Handed, Ref.Ref<ReadonlyArray<readonly [string, Transport.WireOptions]>>>()(
  "test/Handed"
) {}

const handing = <E, R>(
  layer: Layer.Layer<Transport.Transport | Scripted.ScriptLog, E, R>
): Layer.Layer<Transport.Transport | Scripted.ScriptLog | Handed, E, R> =>
  Layer.effectContext(Effect.gen(function*() {
    const handed = yield* Ref.make<ReadonlyArray<readonly [string, Transport.WireOptions]>>([])
    const inner = yield* Transport.Transport
    const record = (message: { readonly method: string }, options: Transport.WireOptions) =>
      Effect.runSync(Ref.update(handed, (all) => [...all, [message.method, options] as const]))
    const transport: Transport.Transport["Service"] = {
      ...inner,
      connect: (emit, options) =>
        Effect.map(inner.connect(emit, options), (connection) => ({
          ...connection,
          request: (message, wire) => Effect.andThen(Effect.sync(() => record(message, wire)), connection.request(message, wire))
        }))
    }
    return Context.make(Transport.Transport, transport).pipe(
      Context.add(Scripted.ScriptLog, yield* Scripted.ScriptLog),
      Context.add(Handed, handed)
    )
  })).pipe(Layer.provide(layer))

const params = (sent: ReadonlyArray<Scripted.Sent>, method: string) =>
  sent.flatMap((s) => "method" in s.message && s.message.method === method ? [s.message.params] : [])

/** A modern server serving the extension: `acme/lookup` answers the values of its key, `count` times. */
const serving = (handle: Scripted.Script): Scripted.Script =>
  Scripted.modernScript((message, ctx) =>
    "method" in message && "id" in message && (message.method.startsWith("acme/") || message.method === "tools/call")
      ? handle(message, ctx)
      : Effect.void
  )

const answering = serving((message, ctx) => {
  if (!("method" in message) || !("id" in message) || message.id === null) return Effect.void
  if (message.method === "acme/poke") return ctx.reply(message.id, { ok: true, resultType: "complete", extra: 1 })
  if (message.method === "tools/call") return ctx.reply(message.id, { content: [], resultType: "complete" })
  const p = message.params as { key?: string; limit?: string }
  return ctx.reply(message.id, {
    values: Array.from({ length: Number(p.limit ?? 1) }, (_, i) => `${p.key}-${i}`),
    resultType: "complete"
  })
})

const client = (script: Scripted.Script) =>
  McpClient.layer({ healthCheckInterval: false }).pipe(Layer.provideMerge(handing(Scripted.layer(script))))

describe("McpMethod: requests by definition", () => {
  it.effect("encodes the parameters and decodes the result with the definition's schemas", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      const result = yield* mcp.request(Lookup, { key: "k", limit: 2 })
      assert.deepStrictEqual(result, { values: ["k-0", "k-1"] })
      const log = yield* Scripted.ScriptLog
      const sent = params(yield* Ref.get(log.sent), "acme/lookup")
      assert.strictEqual(sent.length, 1)
      assert.deepInclude(sent[0] as object, { key: "k", limit: "2" })
      // a method without parameters
      assert.deepStrictEqual(yield* mcp.request(Poke), { ok: true })
    }).pipe(Effect.provide(client(answering))))

  it.effect("parameters the schema refuses fail with InvalidParams and nothing is sent; a bad result with InvalidResult", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      const refused = yield* Effect.flip(mcp.request(Lookup, { key: "k", limit: Number.NaN as never }).pipe(
        Effect.andThen(mcp.request(McpMethod.make("acme/strict", {
          params: Schema.Struct({ n: Schema.Int }),
          result: Schema.Unknown
        }), { n: 1.5 }))
      ))
      assert.strictEqual(refused._tag, "ProtocolError")
      if (refused._tag === "ProtocolError") {
        assert.strictEqual(refused.reason, "InvalidParams")
        assert.strictEqual(refused.method, "acme/strict")
      }
      const log = yield* Scripted.ScriptLog
      assert.deepStrictEqual(params(yield* Ref.get(log.sent), "acme/strict"), [])
      const bad = yield* Effect.flip(mcp.request(McpMethod.make("acme/lookup", {
        params: Schema.Struct({ key: Schema.String }),
        result: Schema.Struct({ values: Schema.Array(Schema.Number) })
      }), { key: "k" }))
      assert.strictEqual(bad._tag, "ProtocolError")
      if (bad._tag === "ProtocolError") assert.strictEqual(bad.reason, "InvalidResult")
    }).pipe(Effect.provide(client(answering))))

  it.effect("the transport is handed the definition's facts; a specification method's own facts stay", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      yield* mcp.request(Lookup, { key: "k", limit: 1 })
      yield* mcp.request(Poke)
      yield* mcp.request(ToolsCall, { name: "echo" })
      const handed = new Map(yield* Ref.get(yield* Handed))
      assert.deepInclude(handed.get("acme/lookup"), { idempotent: true, nameField: "key" })
      assert.deepInclude(handed.get("acme/poke"), { idempotent: false, nameField: undefined })
      assert.deepInclude(handed.get("tools/call"), { idempotent: false, nameField: "name" })
      assert.deepInclude(handed.get("server/discover"), { idempotent: true })
    }).pipe(Effect.provide(client(answering))))

  it.effect("an idempotent method lost with its stream is issued again; another is not", () => {
    const seen = new Map<string, number>()
    const losing = serving((message, ctx) => {
      if (!("method" in message) || !("id" in message) || message.id === null) return Effect.void
      const n = (seen.get(message.method) ?? 0) + 1
      seen.set(message.method, n)
      return n === 1
        ? ctx.raw(Transport.TransportEvent.RequestFailed({
          id: message.id,
          error: new McpError.TransportError({ transport: "in-process", reason: "StreamEnded" })
        }))
        : ctx.reply(message.id, { values: ["again"], resultType: "complete" })
    })
    return Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      assert.deepStrictEqual(yield* mcp.request(Lookup, { key: "k", limit: 1 }), { values: ["again"] })
      const lost = yield* Effect.flip(mcp.request(Poke))
      assert.strictEqual(lost._tag, "TransportError")
      const sent = yield* Ref.get((yield* Scripted.ScriptLog).sent)
      assert.strictEqual(params(sent, "acme/lookup").length, 2)
      assert.strictEqual(params(sent, "acme/poke").length, 1)
    }).pipe(Effect.provide(client(losing)))
  })

  it.effect("input_required rounds are served where the definition allows them, refused elsewhere", () => {
    const asking = serving((message, ctx) => {
      if (!("method" in message) || !("id" in message) || message.id === null) return Effect.void
      const p = message.params as { requestState?: string }
      return p.requestState === undefined
        ? ctx.reply(message.id, {
          resultType: "input_required",
          inputRequests: {
            confirm: {
              method: "elicitation/create",
              params: { mode: "form", message: "ok?", requestedSchema: { type: "object", properties: {} } }
            }
          },
          requestState: "s1"
        })
        : ctx.reply(message.id, { values: [p.requestState], resultType: "complete" })
    })
    return Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      assert.deepStrictEqual(yield* mcp.request(Lookup, { key: "k", limit: 1 }), { values: ["s1"] })
      const refused = yield* Effect.flip(mcp.request(Poke))
      assert.strictEqual(refused._tag, "ProtocolError")
      if (refused._tag === "ProtocolError") assert.strictEqual(refused.reason, "InvalidResultType")
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, elicitation: ElicitationHandler.ElicitationHandler }).pipe(
        Layer.provideMerge(handing(Scripted.layer(asking))),
        Layer.provide(ElicitationHandler.layer({
          modes: ["form"],
          elicit: () => Effect.succeed({ action: "accept", content: {} })
        }))
      )
    ))
  })

  it.effect("the promise client sends a definition's request", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(client(answering))
      const promises = McpPromiseClient.fromRuntime(context)
      const result = yield* Effect.promise(() => promises.request(Lookup, { key: "p", limit: 1 }))
      assert.deepStrictEqual(result, { values: ["p-0"] })
      assert.deepStrictEqual(yield* Effect.promise(() => promises.request(Poke)), { ok: true })
      yield* Effect.promise(() => promises.close())
    }).pipe(Effect.scoped))
})
