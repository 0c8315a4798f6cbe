/**
 * G4, capability gating: with `strict`, requests for features the server did not declare never reach it (lists
 * are empty, other requests fail with `CapabilityMissing` naming the capability and method); without it (the
 * default) everything is sent, for servers that under-declare.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as McpClient from "../src/McpClient.js"
import * as Scripted from "./utils/scriptedTransport.js"

/** A server declaring only `tools`, but answering everything. */
const underDeclaring = (era: "legacy" | "modern"): Scripted.Script => (message, ctx) => {
  if (!("method" in message) || !("id" in message)) return Effect.void
  switch (message.method) {
    case "server/discover":
      return era === "modern"
        ? ctx.reply(message.id, Scripted.discoverResult({ capabilities: { tools: {} } }))
        : ctx.fail(message.id, -32601, "Method not found")
    case "initialize":
      return ctx.reply(message.id, Scripted.initializeResult())
    case "tools/list":
      return ctx.reply(message.id, { tools: [{ name: "echo", inputSchema: { type: "object" } }] })
    case "prompts/list":
      return ctx.reply(message.id, { prompts: [{ name: "hidden" }] })
    case "resources/list":
      return ctx.reply(message.id, { resources: [{ uri: "file:///a", name: "a" }] })
    case "resources/templates/list":
      return ctx.reply(message.id, { resourceTemplates: [] })
    case "resources/read":
      return ctx.reply(message.id, { contents: [{ uri: "file:///a", text: "a" }] })
    case "prompts/get":
      return ctx.reply(message.id, { messages: [] })
    case "completion/complete":
      return ctx.reply(message.id, { completion: { values: [] } })
    default:
      return ctx.reply(message.id, {})
  }
}

const layer = (era: "legacy" | "modern", strict: boolean | undefined) =>
  McpClient.layer({ healthCheckInterval: false, ...(strict === undefined ? {} : { strict }) }).pipe(
    Layer.provideMerge(Scripted.layer(underDeclaring(era)))
  )

const sentAfterNegotiation = Effect.gen(function*() {
  const log = yield* Scripted.ScriptLog
  return Scripted.sentMethods(yield* Ref.get(log.sent)).filter((method) =>
    method !== "server/discover" && method !== "initialize" && method !== "notifications/initialized"
  )
})

for (const era of ["legacy", "modern"] as const) {
  describe(`capability gating (${era})`, () => {
    it.effect("strict: undeclared lists are empty without a round trip; other requests fail naming what is missing", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        assert.deepStrictEqual(yield* client.listPrompts(), [])
        assert.deepStrictEqual(yield* client.listResources(), [])
        assert.deepStrictEqual(yield* client.listResourceTemplates(), [])
        assert.lengthOf(yield* client.listTools(), 1, "tools are declared")
        const refusals = [
          yield* Effect.flip(client.getPrompt({ name: "hidden" })),
          yield* Effect.flip(client.readResource({ uri: "file:///a" })),
          yield* Effect.flip(
            client.complete({ ref: { type: "ref/prompt", name: "hidden" }, argument: { name: "a", value: "" } })
          )
        ]
        assert.deepStrictEqual(
          refusals.map((e) => [e._tag, e._tag === "ProtocolError" ? e.reason : "", e._tag === "ProtocolError" ? e.method : ""]),
          [
            ["ProtocolError", "CapabilityMissing", "prompts/get"],
            ["ProtocolError", "CapabilityMissing", "resources/read"],
            ["ProtocolError", "CapabilityMissing", "completion/complete"]
          ]
        )
        assert.include(refusals[0]!.message, "prompts")
        if (era === "legacy") {
          const logging = yield* Effect.flip(client.setLoggingLevel("debug"))
          assert.strictEqual(logging._tag === "ProtocolError" ? logging.reason : logging._tag, "CapabilityMissing")
        }
        assert.deepStrictEqual(yield* sentAfterNegotiation, ["tools/list"])
      }).pipe(Effect.provide(layer(era, true))))

    it.effect("not strict (the default): everything is sent", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        assert.lengthOf(yield* client.listPrompts(), 1)
        assert.lengthOf(yield* client.listResources(), 1)
        yield* client.readResource({ uri: "file:///a" })
        yield* client.getPrompt({ name: "hidden" })
        assert.deepStrictEqual(yield* sentAfterNegotiation, ["prompts/list", "resources/list", "resources/read", "prompts/get"])
      }).pipe(Effect.provide(layer(era, undefined))))
  })
}
