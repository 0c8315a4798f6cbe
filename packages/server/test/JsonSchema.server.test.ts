/**
 * The JSON Schema a tool advertises for its Effect Schema parameters describes what the server decodes: closed
 * objects, numbers without the JSON codec's "NaN"/"Infinity" strings, optional members without `null`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { jsonSchemaOf } from "../src/internal/serverDefinitions.js"

describe("jsonSchemaOf", () => {
  it("a struct of required members is a closed object", () => {
    assert.deepStrictEqual(jsonSchemaOf(Schema.Struct({ value: Schema.Number, text: Schema.String })), {
      type: "object",
      required: ["value", "text"],
      properties: { value: { type: "number" }, text: { type: "string" } },
      additionalProperties: false
    })
  })

  it("optional members are not required and do not take null; NullOr members do", () => {
    const schema = jsonSchemaOf(Schema.Struct({
      a: Schema.optional(Schema.String),
      b: Schema.optionalKey(Schema.Number),
      c: Schema.NullOr(Schema.Boolean),
      d: Schema.optional(Schema.NullOr(Schema.String))
    }))
    assert.deepStrictEqual(schema.required, ["c"])
    assert.deepStrictEqual(schema.properties, {
      a: { type: "string" },
      b: { type: "number" },
      c: { anyOf: [{ type: "boolean" }, { type: "null" }] },
      d: { anyOf: [{ type: "string" }, { type: "null" }] }
    })
  })

  it("nested objects, arrays and records", () => {
    const schema = jsonSchemaOf(Schema.Struct({
      nested: Schema.Struct({ n: Schema.Number, o: Schema.optional(Schema.String) }),
      list: Schema.Array(Schema.Number),
      map: Schema.Record(Schema.String, Schema.Number)
    }))
    assert.deepStrictEqual(schema.properties, {
      nested: {
        type: "object",
        required: ["n"],
        properties: { n: { type: "number" }, o: { type: "string" } },
        additionalProperties: false
      },
      list: { type: "array", items: { type: "number" } },
      map: { type: "object", additionalProperties: { type: "number" } }
    })
  })

  it("an empty struct is an object schema; a record of anything is an open object", () => {
    assert.deepStrictEqual(jsonSchemaOf(Schema.Struct({})), { type: "object", properties: {} })
    assert.deepStrictEqual(jsonSchemaOf(Schema.Record(Schema.String, Schema.Unknown)), { type: "object" })
  })

  it("shared definitions go under $defs", () => {
    const Item = Schema.Struct({ id: Schema.String }).annotate({ identifier: "Item" })
    const schema = jsonSchemaOf(Schema.Struct({ a: Item, b: Item }))
    assert.deepStrictEqual(schema.properties, { a: { $ref: "#/$defs/Item" }, b: { $ref: "#/$defs/Item" } })
    assert.deepStrictEqual(schema.$defs, {
      Item: { type: "object", required: ["id"], properties: { id: { type: "string" } }, additionalProperties: false }
    })
  })

  it("a decoding default leaves the member optional", () => {
    const schema = jsonSchemaOf(Schema.Struct({
      message: Schema.String.pipe(Schema.withDecodingDefaultType(Effect.succeed("x")))
    }))
    assert.deepStrictEqual(schema, {
      type: "object",
      properties: { message: { type: "string" } },
      additionalProperties: false
    })
  })
})
