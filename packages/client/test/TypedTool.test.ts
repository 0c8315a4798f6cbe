/**
 * Typed tools against an in-process server: the check against the advertised `inputSchema`, the decoding of
 * structured and text results, failures, and the types a declaration gives.
 */
import { McpServer } from "@conduit-mcp/server"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { expectTypeOf, vi } from "vitest"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as TypedToolInternal from "../src/internal/typedTool.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpError from "../src/McpError.js"
import * as TypedTool from "../src/TypedTool.js"
import { program as example } from "./examples/typedTool.js"
import * as Scripted from "./utils/scriptedTransport.js"

const server = McpServer.make({
  name: "typed",
  version: "1.0.0",
  tools: [
    McpServer.tool({
      name: "add",
      parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
      outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
      handler: ({ a, b }) => Effect.succeed({ content: [McpServer.text(String(a + b))], structuredContent: { sum: a + b } })
    }),
    McpServer.tool({
      name: "echo",
      parameters: Schema.Struct({ text: Schema.String, loud: Schema.optional(Schema.Boolean) }),
      handler: ({ loud, text }) => Effect.succeed(loud === true ? text.toUpperCase() : text)
    }),
    McpServer.tool({
      name: "weather",
      inputSchema: {
        type: "object",
        properties: { city: { type: "string" }, unit: { type: "string", enum: ["C", "F"] } },
        required: ["city"],
        additionalProperties: false
      },
      handler: (args) => Effect.succeed(JSON.stringify({ city: args.city, degrees: 21 }))
    }),
    McpServer.tool({
      name: "fail",
      parameters: Schema.Struct({}),
      handler: () => Effect.succeed({ content: [McpServer.text("the disk is full")], isError: true })
    })
  ]
})

const Client = McpClient.layer().pipe(Layer.provide(Layer.unwrap(Effect.map(server, InProcessTransport.layer))))

const Add = TypedTool.make("add", {
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  success: Schema.Struct({ sum: Schema.Number })
})

const Echo = TypedTool.make("echo", {
  parameters: Schema.Struct({ text: Schema.String, loud: Schema.optional(Schema.Boolean) }),
  success: Schema.String
})

const Weather = TypedTool.make("weather", {
  parameters: Schema.Struct({ city: Schema.String, unit: Schema.optional(Schema.Literals(["C", "F"])) }),
  success: Schema.Struct({ city: Schema.String, degrees: Schema.Number })
})

const mismatch = <A, I extends Readonly<Record<string, unknown>>, R, RI>(
  tool: TypedTool.TypedTool<string, A, I, R, RI>
) =>
  Effect.flip(TypedTool.bind(tool)).pipe(
    Effect.map((error) => {
      assert.strictEqual(error._tag, "ToolSchemaMismatch")
      return error as TypedTool.ToolSchemaMismatch
    })
  )

// a server's value nested 20,000 deep, which JSON.stringify and String() cannot take
let deep: unknown = "leaf"
for (let i = 0; i < 20_000; i++) deep = [deep]

/** A client of a scripted server listing `tools` (the in-process transport serializes, which they do not survive). */
const scripted = (tools: ReadonlyArray<unknown>) => {
  const script = Scripted.legacyScript((message, ctx) =>
    "method" in message && "id" in message && message.method === "tools/list"
      ? ctx.reply(message.id, { tools })
      : Effect.void
  )
  return McpClient.layer({ healthCheckInterval: false }).pipe(Layer.provide(Scripted.layer(script)))
}

describe("TypedTool", () => {
  it.effect("a matching declaration calls the tool; the result is decoded from structuredContent", () =>
    Effect.gen(function*() {
      const add = yield* TypedTool.bind(Add)
      assert.deepStrictEqual(yield* add({ a: 2, b: 3 }), { sum: 5 })
    }).pipe(Effect.provide(Client)))

  it.effect("without structured content, the text is the result: as a string, or as the JSON it holds", () =>
    Effect.gen(function*() {
      const echo = yield* TypedTool.bind(Echo)
      assert.strictEqual(yield* echo({ text: "hi", loud: true }), "HI")
      const weather = yield* TypedTool.bind(Weather)
      assert.deepStrictEqual(yield* weather({ city: "Oslo" }), { city: "Oslo", degrees: 21 })
    }).pipe(Effect.provide(Client)))

  it.effect("a text nested past the frame limits is not given to JSON.parse: it decodes as the string alone", () =>
    Effect.gen(function*() {
      const deep = "[".repeat(16 * 1024 * 1024)
      const parse = vi.spyOn(JSON, "parse")
      const exit = yield* Effect.exit(
        TypedToolInternal.decodeResult(Schema.Struct({ a: Schema.Number }), { content: [{ type: "text", text: deep }] })
      )
      const calls = parse.mock.calls.filter(([text]) => text === deep).length
      parse.mockRestore()
      assert.isTrue(Exit.isFailure(exit))
      assert.strictEqual(calls, 0)
      // within the limits, the JSON in the text still decodes
      const value = yield* TypedToolInternal.decodeResult(Schema.Struct({ a: Schema.Number }), {
        content: [{ type: "text", text: "{\"a\":1}" }]
      })
      assert.deepStrictEqual(value, { a: 1 })
    }))

  it.effect("an isError result is a ToolFailed carrying the tool's text", () =>
    Effect.gen(function*() {
      const fail = yield* TypedTool.bind(TypedTool.make("fail", { parameters: Schema.Struct({}), success: Schema.String }))
      const error = yield* Effect.flip(fail({}))
      assert.strictEqual(error._tag, "ToolFailed")
      assert.strictEqual(error._tag === "ToolFailed" ? error.text : "", "the disk is full")
      assert.include(error.message, "the disk is full")
    }).pipe(Effect.provide(Client)))

  it.effect("a result the success Schema rejects is a SchemaError", () =>
    Effect.gen(function*() {
      const add = yield* TypedTool.bind(TypedTool.make("add", {
        parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
        success: Schema.Struct({ total: Schema.Number })
      }))
      const error = yield* Effect.flip(add({ a: 1, b: 1 }))
      assert.strictEqual(error._tag, "SchemaError")
    }).pipe(Effect.provide(Client)))

  it.effect("a required property left out, or made optional, is MissingRequired at its path", () =>
    Effect.gen(function*() {
      const leftOut = yield* mismatch(TypedTool.make("add", {
        parameters: Schema.Struct({ a: Schema.Number }),
        success: Schema.Unknown
      }))
      assert.deepStrictEqual(leftOut.issues.map((issue) => [issue.path, issue.reason]), [["/b", "MissingRequired"]])
      assert.include(leftOut.message, `tool "add" does not match`)
      assert.include(leftOut.message, `/b: the server requires "b"; the Schema does not have it`)
      const optional = yield* mismatch(TypedTool.make("add", {
        parameters: Schema.Struct({ a: Schema.Number, b: Schema.optional(Schema.Number) }),
        success: Schema.Unknown
      }))
      assert.include(optional.message, `the Schema makes it optional`)
    }).pipe(Effect.provide(Client)))

  it.effect("a type the server does not accept is WrongType (also a value outside the server's enum)", () =>
    Effect.gen(function*() {
      const wrong = yield* mismatch(TypedTool.make("add", {
        parameters: Schema.Struct({ a: Schema.String, b: Schema.NullOr(Schema.Number) }),
        success: Schema.Unknown
      }))
      assert.deepStrictEqual(wrong.issues.map((issue) => [issue.path, issue.reason]), [
        ["/a", "WrongType"],
        ["/b", "WrongType"]
      ])
      assert.include(wrong.message, "/a: the server expects number; the Schema may give string")
      assert.include(wrong.message, "/b: the server expects number; the Schema may give null")
      const outside = yield* mismatch(TypedTool.make("weather", {
        parameters: Schema.Struct({ city: Schema.String, unit: Schema.Literals(["C", "K"]) }),
        success: Schema.Unknown
      }))
      assert.deepStrictEqual(outside.issues.map((issue) => [issue.path, issue.reason]), [["/unit", "WrongType"]])
      assert.include(outside.message, `may give "K"`)
    }).pipe(Effect.provide(Client)))

  it.effect("a property a closed inputSchema does not take is UnknownProperty; a missing tool is NotAdvertised", () =>
    Effect.gen(function*() {
      const extra = yield* mismatch(TypedTool.make("weather", {
        parameters: Schema.Struct({ city: Schema.String, country: Schema.String }),
        success: Schema.Unknown
      }))
      assert.deepStrictEqual(extra.issues.map((issue) => [issue.path, issue.reason]), [["/country", "UnknownProperty"]])
      const missing = yield* mismatch(TypedTool.make("nope", { parameters: Schema.Struct({}), success: Schema.Unknown }))
      assert.deepStrictEqual(missing.issues.map((issue) => issue.reason), ["NotAdvertised"])
    }).pipe(Effect.provide(Client)))

  it.effect("the README example binds add and gets its sum", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* example, 5)
    }).pipe(Effect.provide(Layer.unwrap(Effect.map(server, InProcessTransport.layer)))))

  it.effect("a hostile inputSchema: a malformed $ref is left unresolved, a deep enum value is a mismatch", () =>
    Effect.gen(function*() {
      const tools = [
        {
          name: "ref",
          inputSchema: {
            type: "object",
            properties: { text: { $ref: "#/%E0%A4%A" }, count: { type: "string" } },
            required: ["text", "count"]
          }
        },
        { name: "enum", inputSchema: { type: "object", properties: { text: { enum: ["a", deep] } } } },
        {
          name: "long",
          inputSchema: {
            type: "object",
            properties: { n: { enum: Array.from({ length: 10_000 }, (_, i) => `v${i}`) } }
          }
        }
      ]
      const hostile = scripted(tools)
      const check = <A, I extends Readonly<Record<string, unknown>>>(
        name: string,
        parameters: Schema.Codec<A, I>
      ) => Effect.provide(mismatch(TypedTool.make(name, { parameters, success: Schema.Unknown })), hostile)
      // the reference is not followed, so "text" is not compared; the rest of the schema still is
      const ref = yield* check("ref", Schema.Struct({ text: Schema.String, count: Schema.Number }))
      assert.deepStrictEqual(ref.issues.map((issue) => [issue.path, issue.reason]), [["/count", "WrongType"]])
      const wide = yield* check("enum", Schema.Struct({ text: Schema.String }))
      assert.deepStrictEqual(wide.issues.map((issue) => [issue.path, issue.reason]), [["/text", "WrongType"]])
      assert.include(wide.issues[0].detail, `the server accepts only "a", [[[[`)
      assert.isBelow(wide.issues[0].detail.length, 200)
      // "a" is told apart from the deep value at its first level
      const narrow = TypedTool.make("enum", {
        parameters: Schema.Struct({ text: Schema.Literal("a") }),
        success: Schema.Unknown
      })
      assert.isFunction(yield* Effect.provide(TypedTool.bind(narrow), hostile))
      // an enum of 10 000 values is named by its first 20
      const long = yield* check("long", Schema.Struct({ n: Schema.Literal("zz") }))
      assert.deepStrictEqual(long.issues.map((issue) => [issue.path, issue.reason]), [["/n", "WrongType"]])
      assert.include(long.issues[0].detail, `the server accepts only "v0", "v1", "v2",`)
      assert.include(long.issues[0].detail, `"v19" and 9980 more; the Schema may give "zz"`)
      assert.isBelow(long.issues[0].detail.length, 200)
    }))

  it.effect("required names and type lists holding a deep value: the value names nothing, the rest is compared", () =>
    Effect.gen(function*() {
      const tools = [{
        name: "odd",
        inputSchema: { type: "object", properties: { text: { type: [deep, "number"] } }, required: [deep, "text"] }
      }]
      const declared = TypedTool.make("odd", {
        parameters: Schema.Struct({ text: Schema.String }),
        success: Schema.Unknown
      })
      const odd = yield* Effect.provide(mismatch(declared), scripted(tools))
      assert.deepStrictEqual(odd.issues, [
        { path: "/text", reason: "WrongType", detail: "the server expects number; the Schema may give string" }
      ])
    }))

  it("issues() compares a declaration with a tool definition without a server", () => {
    const advertised = {
      name: "add",
      inputSchema: { type: "object", properties: { a: { type: "integer" }, b: { type: "number" } }, required: ["a"] }
    }
    assert.deepStrictEqual(TypedTool.issues(Add, advertised), [])
    const nested = TypedTool.make("deep", {
      parameters: Schema.Struct({ items: Schema.Array(Schema.Struct({ id: Schema.String })) }),
      success: Schema.Unknown
    })
    const deep = {
      name: "deep",
      inputSchema: {
        type: "object",
        properties: {
          items: { type: "array", items: { $ref: "#/$defs/Item" } }
        },
        $defs: { Item: { type: "object", properties: { id: { type: "number" } }, required: ["id", "rev"] } }
      }
    }
    assert.deepStrictEqual(TypedTool.issues(nested, deep).map((issue) => [issue.path, issue.reason]), [
      ["/items/items/rev", "MissingRequired"],
      ["/items/items/id", "WrongType"]
    ])
  })

  it("the types: parameters in, result out, and the error union", () => {
    expectTypeOf(Add.name).toEqualTypeOf<"add">()
    expectTypeOf(TypedTool.bind(Add)).toEqualTypeOf<
      Effect.Effect<
        TypedTool.Bound<{ readonly a: number; readonly b: number }, { readonly sum: number }>,
        McpError.McpClientError | TypedTool.ToolSchemaMismatch,
        McpClient.McpClient
      >
    >()
    type Call = TypedTool.Bound<{ readonly a: number; readonly b: number }, { readonly sum: number }>
    expectTypeOf<Parameters<Call>[0]>().toEqualTypeOf<{ readonly a: number; readonly b: number }>()
    expectTypeOf<ReturnType<Call>>().toEqualTypeOf<
      Effect.Effect<
        { readonly sum: number },
        McpError.McpClientError | McpError.TaskError | Schema.SchemaError | TypedTool.ToolFailed
      >
    >()
    // @ts-expect-error: the parameters are checked at compile time
    const wrong = (add: Call) => add({ a: 1, b: "2" })
    assert.isFunction(wrong)
  })
})
