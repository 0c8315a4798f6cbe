/**
 * Reading results: narrowing content blocks on `type`, the text and decoding helpers, and `isError` as a typed
 * failure (per call, in the Effect and the promise client, and as a combinator), against an in-process server.
 */
import { McpServer } from "@conduit-mcp/server"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { expectTypeOf } from "vitest"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpError from "../src/McpError.js"
import * as McpPromiseClient from "../src/McpPromiseClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as ToolResult from "../src/ToolResult.js"

// a block of a content type this client does not know, as a newer server may send it
const video = { type: "video", url: "https://example.com/v.mp4" } as unknown as McpSchema.ContentBlock
// a text block without its text: invalid, not unknown
const brokenText = { type: "text" } as unknown as McpSchema.ContentBlock

const server = McpServer.make({
  name: "results",
  version: "1.0.0",
  tools: [
    McpServer.tool({
      name: "mixed",
      parameters: Schema.Struct({}),
      handler: () =>
        Effect.succeed({
          content: [
            McpServer.text("first"),
            { type: "image", data: "aGk=", mimeType: "image/png" },
            video,
            McpServer.text("second")
          ]
        })
    }),
    McpServer.tool({
      name: "add",
      parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
      handler: ({ a, b }) => Effect.succeed({ content: [McpServer.text(String(a + b))], structuredContent: { sum: a + b } })
    }),
    McpServer.tool({
      name: "fail",
      parameters: Schema.Struct({}),
      handler: () =>
        Effect.succeed({ content: [McpServer.text("the disk is full")], structuredContent: { free: 0 }, isError: true })
    }),
    McpServer.tool({
      name: "broken",
      parameters: Schema.Struct({}),
      handler: () => Effect.succeed({ content: [brokenText] })
    })
  ]
})

const Transport = Layer.unwrap(Effect.map(server, InProcessTransport.layer))
const Client = McpClient.layer().pipe(Layer.provide(Transport))

describe("reading a result", () => {
  it.effect("narrowing a block on `type` gives that block; unknown blocks are kept and typed apart", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const result = yield* client.callTool({ name: "mixed" })
      // what a newcomer writes: it type-checks, and `text` is a string
      const texts = result.content.map((c) => c.type === "text" ? c.text : "")
      expectTypeOf(texts).toEqualTypeOf<Array<string>>()
      assert.deepStrictEqual(texts, ["first", "", "", "second"])
      const kinds = result.content.map((block) => {
        switch (block.type) {
          case "text":
            return `text:${block.text}`
          case "image":
            return `image:${block.mimeType}`
          case "audio":
          case "resource":
          case "resource_link":
            return block.type
          default:
            expectTypeOf(block.type).toEqualTypeOf<McpSchema.UnknownContentType>()
            return `unknown:${String(block.type)}`
        }
      })
      assert.deepStrictEqual(kinds, ["text:first", "image:image/png", "unknown:video", "text:second"])
      assert.deepStrictEqual(result.content[2], video)
    }).pipe(Effect.provide(Client)))

  it.effect("text and texts read the text blocks", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const result = yield* client.callTool({ name: "mixed" })
      assert.deepStrictEqual(ToolResult.texts(result), ["first", "second"])
      assert.strictEqual(ToolResult.text(result), "first\nsecond")
      assert.strictEqual(ToolResult.text({ content: [] }), "")
    }).pipe(Effect.provide(Client)))

  it.effect("a known block that breaks its shape fails the call: it is not read as an unknown block", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* Effect.flip(client.callTool({ name: "broken" }))
      assert.strictEqual(error._tag, "ProtocolError")
    }).pipe(Effect.provide(Client)))

  it.effect("decode reads the structured content with a Schema", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const sum = yield* client.callTool({ name: "add", arguments: { a: 2, b: 3 } }).pipe(
        Effect.flatMap(ToolResult.decode(Schema.Struct({ sum: Schema.Number })))
      )
      assert.deepStrictEqual(sum, { sum: 5 })
    }).pipe(Effect.provide(Client)))
})

describe("isError as a failure", () => {
  it.effect("by default a tool's failure is a result; with isError: \"fail\" it is a ToolFailed", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const returned = yield* client.callTool({ name: "fail" })
      assert.isTrue(ToolResult.isError(returned))
      const failed = client.callTool({ name: "fail" }, { isError: "fail" })
      expectTypeOf(failed).toEqualTypeOf<
        Effect.Effect<
          McpSchema.CallToolResult,
          McpError.McpClientError | McpError.TaskError | McpError.ToolFailed
        >
      >()
      expectTypeOf(client.callTool({ name: "fail" })).toEqualTypeOf<
        Effect.Effect<McpSchema.CallToolResult, McpError.McpClientError | McpError.TaskError>
      >()
      // one type names what a call fails with (a task's failure included): a handler typed with it compiles
      const tags = client.callTool({ name: "add", arguments: { a: 1, b: 2 } }).pipe(
        Effect.mapError((e: McpError.McpClientError) => e._tag)
      )
      assert.strictEqual(ToolResult.text(yield* tags), "3")
      const error = yield* Effect.flip(failed)
      assert.strictEqual(error._tag, "ToolFailed")
      if (error._tag === "ToolFailed") {
        assert.strictEqual(error.tool, "fail")
        assert.strictEqual(error.text, "the disk is full")
        assert.deepStrictEqual(error.structuredContent, { free: 0 })
        assert.strictEqual(error.message, "tool \"fail\" failed: the disk is full")
      }
      // handled by tag like any other error
      const handled = yield* failed.pipe(Effect.catchTag("ToolFailed", (e) => Effect.succeed(e.text)))
      assert.deepStrictEqual(handled, "the disk is full")
      // a call that succeeds is unchanged
      const ok = yield* client.callTool({ name: "add", arguments: { a: 1, b: 1 } }, { isError: "fail" })
      assert.strictEqual(ToolResult.text(ok), "2")
    }).pipe(Effect.provide(Client)))

  it.effect("failOnError turns a result into the same failure", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* client.callTool({ name: "fail" }).pipe(
        Effect.flatMap(ToolResult.failOnError("fail")),
        Effect.flip
      )
      assert.strictEqual(error._tag, "ToolFailed")
    }).pipe(Effect.provide(Client)))

  it.effect("the promise client rejects with ToolFailed given isError: \"fail\"", () =>
    Effect.gen(function*() {
      const client = yield* Effect.promise(() => McpPromiseClient.make(Client))
      yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
      const returned = yield* Effect.promise(() => client.callTool({ name: "fail" }))
      assert.isTrue(returned.isError)
      const rejected = yield* Effect.promise(() =>
        client.callTool({ name: "fail" }, { isError: "fail" }).then(() => undefined, (error: unknown) => error)
      )
      assert.strictEqual((rejected as McpError.ToolFailed)._tag, "ToolFailed")
      assert.strictEqual((rejected as McpError.ToolFailed).text, "the disk is full")
    }).pipe(Effect.scoped))
})
