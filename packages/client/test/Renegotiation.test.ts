/**
 * B5: a `-32022` after the negotiation, naming a version both sides speak other than the session's (the server
 * changed since), makes the client negotiate again and send the call once more; otherwise it is the caller's,
 * as a typed `UnsupportedProtocolVersion`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as McpClient from "../src/McpClient.js"
import * as McpSchema from "../src/McpSchema.js"
import * as Scripted from "./utils/scriptedTransport.js"

const ok = { content: [{ type: "text" as const, text: "ok" }] }

/** Modern on the first connection, refusing calls with -32022 naming `supported`; legacy from the second on. */
const downgraded = (supported: ReadonlyArray<string>): Scripted.Script => (message, ctx) => {
  if (!("method" in message) || !("id" in message)) return Effect.void
  if (ctx.connection === 1) {
    if (message.method === "server/discover") return ctx.reply(message.id, Scripted.discoverResult())
    return ctx.fail(message.id, -32022, "Unsupported protocol version", { supported, requested: "2026-07-28" })
  }
  if (message.method === "server/discover") return ctx.fail(message.id, -32601, "Method not found")
  if (message.method === "initialize") return ctx.reply(message.id, Scripted.initializeResult("2025-11-25"))
  return ctx.reply(message.id, ok)
}

/** Legacy on the first connection, refusing calls with -32022 naming the modern version; modern from then on. */
const upgraded: Scripted.Script = (message, ctx) => {
  if (!("method" in message) || !("id" in message)) return Effect.void
  if (ctx.connection === 1) {
    if (message.method === "server/discover") return ctx.fail(message.id, -32601, "Method not found")
    if (message.method === "initialize") return ctx.reply(message.id, Scripted.initializeResult("2025-06-18"))
    return ctx.fail(message.id, -32022, "Unsupported protocol version", { supported: ["2026-07-28"] })
  }
  if (message.method === "server/discover") return ctx.reply(message.id, Scripted.discoverResult())
  // (a modern server refuses initialize naming its versions: the client probes again)
  if (message.method === "initialize") {
    return ctx.fail(message.id, -32022, "Unsupported protocol version", { supported: ["2026-07-28"] })
  }
  return ctx.reply(message.id, ok)
}

const layer = (script: Scripted.Script) =>
  McpClient.layer({ healthCheckInterval: false, reconnect: Schedule.recurs(3) }).pipe(
    Layer.provideMerge(Scripted.layer(script))
  )

const calls = [
  ["callTool", (client: McpClient.McpClientService) => client.callTool({ name: "echo" })],
  [
    "request",
    (client: McpClient.McpClientService) => client.request("tools/call", { name: "echo" }, McpSchema.CallToolResult)
  ]
] as const

describe("-32022 after the negotiation (B5)", () => {
  for (const [name, call] of calls) {
    it.effect(`${name}: a modern server now legacy: the client negotiates again and the call goes through`, () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        assert.strictEqual((yield* client.session).era, "modern")
        const result = yield* call(client)
        assert.deepStrictEqual(result.content, ok.content)
        const session = yield* client.session
        assert.deepStrictEqual([session.era, session.protocolVersion], ["legacy", "2025-11-25"])
        const log = yield* Scripted.ScriptLog
        assert.strictEqual(yield* Ref.get(log.connections), 2)
      }).pipe(Effect.provide(layer(downgraded(["2025-11-25"])))))

    it.effect(`${name}: a legacy server now modern: the same, once`, () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        assert.strictEqual((yield* client.session).era, "legacy")
        const result = yield* call(client)
        assert.deepStrictEqual(result.content, ok.content)
        assert.strictEqual((yield* client.session).era, "modern")
      }).pipe(Effect.provide(layer(upgraded))))
  }

  it.effect("no shared version: UnsupportedProtocolVersion, and the connection stays", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* Effect.flip(client.callTool({ name: "echo" }))
      assert.strictEqual(error._tag, "UnsupportedProtocolVersion")
      const log = yield* Scripted.ScriptLog
      assert.strictEqual(yield* Ref.get(log.connections), 1)
    }).pipe(Effect.provide(layer(downgraded(["1999-01-01"])))))

  it.effect("the session's own version listed: the error is the caller's, no new negotiation", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* Effect.flip(client.request("tools/call", { name: "echo" }, Schema.Unknown))
      assert.strictEqual(error._tag, "UnsupportedProtocolVersion")
      const log = yield* Scripted.ScriptLog
      assert.strictEqual(yield* Ref.get(log.connections), 1)
    }).pipe(Effect.provide(layer(downgraded(["2026-07-28", "2025-11-25"])))))
})

describe("-32022 after the negotiation, never reconnecting", () => {
  it.effect("reconnect: false: the caller gets UnsupportedProtocolVersion and the connection stays", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* Effect.flip(client.callTool({ name: "echo" }))
      assert.strictEqual(error._tag, "UnsupportedProtocolVersion")
      assert.strictEqual((yield* client.state)._tag, "Connected")
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, reconnect: false }).pipe(
        Layer.provideMerge(Scripted.layer(downgraded(["2025-11-25"])))
      )
    )))
})
