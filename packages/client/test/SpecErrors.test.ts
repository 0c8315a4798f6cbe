/**
 * The spec's errors with a meaning of their own come back as tagged errors a caller can `catchTag`, the server's
 * `McpError` kept as their cause; an error whose `data` lacks the spec's shape stays an `McpError`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as McpClient from "../src/McpClient.js"
import * as Scripted from "./utils/scriptedTransport.js"

const elicitation = {
  mode: "url" as const,
  elicitationId: "e-1",
  url: "https://auth.example.com/connect",
  message: "Connect your account"
}

const script = (era: "legacy" | "modern"): Scripted.Script => {
  const handle: Scripted.Script = (message, ctx) => {
    if (!("method" in message) || !("id" in message)) return Effect.void
    const params = (message.params ?? {}) as Record<string, unknown>
    switch (message.method) {
      case "resources/read":
        if (params.uri === "file:///gone") {
          // how a 2026-07-28 server says it (the spec's example)
          return ctx.fail(message.id, -32602, "Resource not found", { uri: params.uri })
        }
        return params.uri === "file:///bare"
          ? ctx.fail(message.id, -32002, "Resource not found")
          : ctx.fail(message.id, -32002, "Resource not found", { uri: params.uri })
      case "tools/call":
        switch (params.name) {
          case "url":
            return ctx.fail(message.id, -32042, "URL elicitation required", { elicitations: [elicitation] })
          case "caps":
            return ctx.fail(message.id, -32021, "Missing capability", {
              requiredCapabilities: { sampling: {} }
            })
          case "invalid-params":
            return ctx.fail(message.id, -32602, "Invalid params")
          case "version":
            return ctx.fail(message.id, -32022, "Unsupported", { supported: ["1999-01-01"], requested: "x" })
          default:
            return ctx.fail(message.id, -32042, "no data")
        }
      case "prompts/get":
        return ctx.fail(message.id, -32021, "Missing capability", { requiredCapabilities: { elicitation: {} } })
      default:
        return ctx.fail(message.id, -32601, "Method not found")
    }
  }
  return era === "modern" ? Scripted.modernScript(handle) : Scripted.legacyScript(handle)
}

const layer = (era: "legacy" | "modern") =>
  McpClient.layer({ healthCheckInterval: false }).pipe(Layer.provideMerge(Scripted.layer(script(era))))

for (const era of ["legacy", "modern"] as const) {
  describe(`typed spec errors (${era})`, () => {
    it.effect("-32002: ResourceNotFound naming the resource, the McpError as its cause", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const error = yield* Effect.flip(client.readResource({ uri: "file:///missing" }))
        assert.strictEqual(error._tag, "ResourceNotFound")
        if (error._tag !== "ResourceNotFound") return
        assert.strictEqual(error.uri, "file:///missing")
        assert.strictEqual(error.method, "resources/read")
        assert.strictEqual(error.cause.code, -32002)
        // catchTag recovers it
        const recovered = yield* client.readResource({ uri: "file:///bare" }).pipe(
          Effect.map(() => "found"),
          Effect.catchTag("ResourceNotFound", (e) => Effect.succeed(`missing ${e.uri}`))
        )
        assert.strictEqual(recovered, "missing file:///bare")
      }).pipe(Effect.provide(layer(era))))

    it.effect(
      "-32602 to resources/read (a 2026-07-28 server's way, and the official SDK's in 2025): ResourceNotFound",
      () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const error = yield* Effect.flip(client.readResource({ uri: "file:///gone" }))
          assert.strictEqual(error._tag, "ResourceNotFound")
          if (error._tag !== "ResourceNotFound") return
          assert.strictEqual(error.uri, "file:///gone")
          assert.strictEqual(error.cause.code, -32602)
          // other methods' -32602 stay McpErrors in every era
          const other = yield* Effect.flip(client.callTool({ name: "invalid-params" }))
          assert.strictEqual(other._tag, "McpError")
        }).pipe(Effect.provide(layer(era)))
    )

    it.effect("-32042: UrlElicitationRequired with the elicitations", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const error = yield* Effect.flip(client.callTool({ name: "url" }))
        assert.strictEqual(error._tag, "UrlElicitationRequired")
        if (error._tag !== "UrlElicitationRequired") return
        assert.deepStrictEqual(error.elicitations, [elicitation])
        assert.strictEqual(error.cause.code, -32042)
        // without the spec's data it stays an McpError
        const bare = yield* Effect.flip(client.callTool({ name: "other" }))
        assert.strictEqual(bare._tag, "McpError")
      }).pipe(Effect.provide(layer(era))))

    it.effect("-32021: MissingClientCapability naming the capability and the method", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const error = yield* Effect.flip(client.callTool({ name: "caps" }))
        assert.strictEqual(error._tag, "MissingClientCapability")
        if (error._tag !== "MissingClientCapability") return
        assert.deepStrictEqual(error.requiredCapabilities, { sampling: {} })
        assert.strictEqual(error.method, "tools/call")
        assert.include(error.message, "sampling")
        const prompt = yield* Effect.flip(client.getPrompt({ name: "p" }))
        assert.strictEqual(prompt._tag, "MissingClientCapability")
        const viaRequest = yield* Effect.flip(
          client.request("prompts/get", { name: "p" }, Schema.Unknown)
        )
        assert.strictEqual(viaRequest._tag, "MissingClientCapability")
      }).pipe(Effect.provide(layer(era))))

    it.effect("-32022 naming no shared version: UnsupportedProtocolVersion with the server's versions", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const error = yield* Effect.flip(client.callTool({ name: "version" }))
        assert.strictEqual(error._tag, "UnsupportedProtocolVersion")
        if (error._tag !== "UnsupportedProtocolVersion") return
        assert.deepStrictEqual(error.supported, ["1999-01-01"])
        assert.strictEqual(error.cause.code, -32022)
      }).pipe(Effect.provide(layer(era))))
  })
}
