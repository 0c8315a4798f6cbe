import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as JsonSchema from "../src/JsonSchema.js"
import * as AjvOracle from "./utils/ajvOracle.js"

const D7 = "http://json-schema.org/draft-07/schema#"

interface Case {
  readonly name: string
  readonly schema: unknown
  readonly valid: ReadonlyArray<unknown>
  readonly invalid: ReadonlyArray<unknown>
  /** A keyword an issue of every invalid value names: the table's unless given; undefined to check none. */
  readonly keyword?: string | undefined
  /** Why Ajv reaches a different verdict; the case is then not compared with it. */
  readonly ajvDiffers?: string
}

const dialectOf = (schema: unknown): AjvOracle.Dialect =>
  typeof schema === "object" && schema !== null && "$schema" in schema && schema.$schema === D7 ? "draft-07" : "2020-12"

const oracles = { "2020-12": AjvOracle.make("2020-12"), "draft-07": AjvOracle.make("draft-07") }

const tables: Record<string, ReadonlyArray<Case>> = {
  type: [
    { name: "string", schema: { type: "string" }, valid: ["", "a"], invalid: [1, null, [], {}, true] },
    { name: "integer accepts 1.0", schema: { type: "integer" }, valid: [1, 1.0, -3, 0, 1e300], invalid: [1.5, "1"] },
    { name: "number includes integers", schema: { type: "number" }, valid: [1, 1.5, -0], invalid: ["1", null] },
    { name: "null", schema: { type: "null" }, valid: [null], invalid: [0, "", false] },
    { name: "boolean", schema: { type: "boolean" }, valid: [true, false], invalid: [0, "true"] },
    { name: "object excludes arrays", schema: { type: "object" }, valid: [{}, { a: 1 }], invalid: [[], null] },
    { name: "array", schema: { type: "array" }, valid: [[], [1]], invalid: [{}, "[]"] },
    {
      name: "array of types",
      schema: { type: ["string", "null"] },
      valid: ["a", null],
      invalid: [1, {}]
    },
    { name: "draft-07", schema: { $schema: D7, type: "integer" }, valid: [2], invalid: [2.5] }
  ],
  enum: [
    {
      name: "primitives",
      schema: { enum: ["a", 1, null, true] },
      valid: ["a", 1, 1.0, null, true],
      invalid: ["b", 2, false]
    },
    {
      name: "composites by value",
      schema: { enum: [{ a: 1, b: [1, 2] }, [1, "x"]] },
      valid: [{ b: [1, 2], a: 1 }, [1, "x"]],
      invalid: [{ a: 1 }, { a: 1, b: [2, 1] }, ["x", 1], "a"]
    },
    { name: "no type coercion", schema: { enum: [1] }, valid: [1], invalid: ["1", true, [1]] }
  ],
  const: [
    { name: "primitive", schema: { const: 0 }, valid: [0, -0], invalid: [false, null, "0"] },
    { name: "null", schema: { const: null }, valid: [null], invalid: [0, {}] },
    {
      name: "object",
      schema: { const: { a: [1, { b: 2 }] } },
      valid: [{ a: [1, { b: 2 }] }],
      invalid: [{ a: [1, {}] }]
    }
  ],
  properties: [
    {
      name: "each present property",
      schema: { properties: { a: { type: "string" }, b: { type: "integer" } } },
      valid: [{}, { a: "x" }, { a: "x", b: 1, c: null }, "not an object"],
      invalid: [{ a: 1 }, { b: "1" }],
      keyword: "type"
    },
    {
      name: "inherited names are not properties",
      schema: { properties: { constructor: { type: "string" } }, required: ["toString"] },
      valid: [{ toString: 1 }, { toString: 1, constructor: "x" }],
      invalid: [{}, { constructor: "x" }],
      keyword: "required",
      ajvDiffers: "Ajv reads inherited names (toString, constructor) as present properties"
    }
  ],
  required: [
    { name: "names", schema: { required: ["a", "b"] }, valid: [{ a: 0, b: null }, [], 1], invalid: [{ a: 1 }, {}] },
    { name: "empty list", schema: { required: [] }, valid: [{}], invalid: [] }
  ],
  additionalProperties: [
    {
      name: "false",
      schema: { properties: { a: true }, patternProperties: { "^x-": true }, additionalProperties: false },
      valid: [{ a: 1, "x-y": 2 }, {}],
      invalid: [{ b: 1 }, { a: 1, y: 2 }]
    },
    {
      name: "schema",
      schema: { properties: { a: true }, additionalProperties: { type: "number" } },
      valid: [{ a: "x", b: 1 }],
      invalid: [{ b: "x" }],
      keyword: "type"
    }
  ],
  patternProperties: [
    {
      name: "every matching pattern applies",
      schema: { patternProperties: { "^a": { type: "string" }, "b$": { minLength: 2 } } },
      valid: [{ ab: "xy", c: 1 }, { a: "" }],
      invalid: [{ ab: "x" }, { b: "" }],
      keyword: "minLength"
    },
    {
      name: "unicode patterns",
      schema: { patternProperties: { "^\\p{L}+$": { type: "integer" } } },
      valid: [{ "é": 1, "1": "x" }],
      invalid: [{ "é": "x" }],
      keyword: "type"
    }
  ],
  propertyNames: [
    {
      name: "every key",
      schema: { propertyNames: { pattern: "^[a-z]+$", maxLength: 3 } },
      valid: [{ abc: 1 }, {}, ["ABCD"]],
      invalid: [{ ABC: 1 }, { abcd: 1 }]
    }
  ],
  minProperties: [
    { name: "at least", schema: { minProperties: 2 }, valid: [{ a: 1, b: 2 }, []], invalid: [{ a: 1 }] }
  ],
  maxProperties: [
    { name: "at most", schema: { maxProperties: 1 }, valid: [{}, { a: 1 }], invalid: [{ a: 1, b: 2 }] }
  ],
  dependentRequired: [
    {
      name: "2020-12",
      schema: { dependentRequired: { card: ["billing"] } },
      valid: [{}, { billing: 1 }, { card: 1, billing: 2 }],
      invalid: [{ card: 1 }]
    },
    {
      name: "not a draft-07 keyword",
      schema: { $schema: D7, dependentRequired: { card: ["billing"] } },
      valid: [{ card: 1 }],
      invalid: []
    },
    {
      name: "draft-07 dependencies (array form)",
      schema: { $schema: D7, dependencies: { card: ["billing"] } },
      valid: [{ billing: 1 }, { card: 1, billing: 2 }],
      invalid: [{ card: 1 }],
      keyword: "dependencies"
    }
  ],
  dependentSchemas: [
    {
      name: "2020-12",
      schema: { dependentSchemas: { card: { required: ["billing"] } } },
      valid: [{}, { card: 1, billing: 2 }],
      invalid: [{ card: 1 }],
      keyword: "required"
    },
    {
      name: "draft-07 dependencies (schema form)",
      schema: { $schema: D7, dependencies: { card: { properties: { billing: { type: "string" } } } } },
      valid: [{ billing: 1 }, { card: 1, billing: "x" }],
      invalid: [{ card: 1, billing: 1 }],
      keyword: "type"
    }
  ],
  items: [
    {
      name: "2020-12 schema",
      schema: { items: { type: "integer" } },
      valid: [[], [1, 2], "x"],
      invalid: [[1, "2"]],
      keyword: "type"
    },
    {
      name: "2020-12 after prefixItems",
      schema: { prefixItems: [{ type: "string" }], items: { type: "integer" } },
      valid: [["a"], ["a", 1, 2], []],
      invalid: [["a", "b"], [1]],
      keyword: "type"
    },
    {
      name: "false after prefixItems",
      schema: { prefixItems: [true, true], items: false },
      valid: [[1, 2]],
      invalid: [[1, 2, 3]]
    },
    {
      name: "draft-07 array form with additionalItems",
      schema: { $schema: D7, items: [{ type: "string" }, { type: "integer" }], additionalItems: false },
      valid: [["a", 1], ["a"], []],
      invalid: [["a", 1, 2]],
      keyword: "additionalItems"
    },
    {
      name: "draft-07 additionalItems schema",
      schema: { $schema: D7, items: [{ type: "string" }], additionalItems: { type: "integer" } },
      valid: [["a", 1, 2]],
      invalid: [["a", "b"]],
      keyword: "type"
    },
    {
      name: "draft-07 additionalItems without an items array is ignored",
      schema: { $schema: D7, items: { type: "integer" }, additionalItems: false },
      valid: [[1, 2]],
      invalid: [["x"]],
      keyword: "type"
    },
    {
      name: "2020-12 reads an items array as draft-07 did",
      schema: { items: [{ type: "string" }], additionalItems: false },
      valid: [["a"]],
      invalid: [["a", 1]],
      keyword: "additionalItems",
      ajvDiffers: "Ajv 2020 refuses an items array as an invalid schema"
    }
  ],
  prefixItems: [
    {
      name: "positions",
      schema: { prefixItems: [{ type: "string" }, { type: "integer" }] },
      valid: [[], ["a"], ["a", 1, null]],
      invalid: [[1], ["a", "b"]],
      keyword: "type"
    },
    { name: "not a draft-07 keyword", schema: { $schema: D7, prefixItems: [false] }, valid: [[1]], invalid: [] }
  ],
  contains: [
    {
      name: "at least one",
      schema: { contains: { type: "integer" } },
      valid: [[1], ["a", 2], {}],
      invalid: [[], ["a"]]
    },
    {
      name: "minContains",
      schema: { contains: { type: "integer" }, minContains: 2 },
      valid: [[1, 2], [1, "a", 3]],
      invalid: [[1, "a"]],
      keyword: "minContains"
    },
    {
      name: "maxContains",
      schema: { contains: { type: "integer" }, maxContains: 1 },
      valid: [[1, "a"]],
      invalid: [[1, 2]],
      keyword: "maxContains"
    },
    { name: "minContains 0", schema: { contains: false, minContains: 0 }, valid: [[], [1]], invalid: [] },
    {
      name: "draft-07 ignores minContains",
      schema: { $schema: D7, contains: { type: "integer" }, minContains: 3 },
      valid: [[1]],
      invalid: [[]]
    },
    {
      name: "each property's array on its own",
      schema: { additionalProperties: { contains: { type: "string" } } },
      valid: [{ a: [""], c: ["x", 1] }, {}],
      invalid: [{ a: [""], c: [] }, { c: [], a: [""] }],
      ajvDiffers: "Ajv lets an empty array pass contains after an earlier property's array held a match"
    },
    {
      name: "each item's array on its own",
      schema: { items: { contains: { type: "string" } } },
      valid: [[[""], ["x", 1]], []],
      invalid: [[[""], []], [[], [""]]],
      ajvDiffers: "Ajv lets an empty array pass contains after an earlier item's array held a match"
    }
  ],
  minItems: [{ name: "at least", schema: { minItems: 2 }, valid: [[1, 2], "ab"], invalid: [[1]] }],
  maxItems: [{ name: "at most", schema: { maxItems: 1 }, valid: [[], [1]], invalid: [[1, 2]] }],
  uniqueItems: [
    {
      name: "by JSON value",
      schema: { uniqueItems: true },
      valid: [[], [1, "1", true], [{ a: 1 }, { a: 2 }], [[1], [1, 1]], [0, false, null, "", [], {}]],
      invalid: [[1, 1.0], [{ a: 1, b: 2 }, { b: 2, a: 1 }], [[1, [2]], [1, [2]]], ["a", "a"]]
    },
    { name: "false", schema: { uniqueItems: false }, valid: [[1, 1]], invalid: [] }
  ],
  minLength: [
    { name: "code points", schema: { minLength: 2 }, valid: ["ab", "😀😀", 1], invalid: ["a", "😀", ""] }
  ],
  maxLength: [
    { name: "code points", schema: { maxLength: 2 }, valid: ["ab", "😀😀", "é"], invalid: ["abc", "😀😀😀"] }
  ],
  pattern: [
    { name: "unanchored search", schema: { pattern: "b+" }, valid: ["abbc", 12], invalid: ["ac"] },
    { name: "unicode mode", schema: { pattern: "^.$" }, valid: ["😀"], invalid: ["ab"] },
    { name: "property escapes", schema: { pattern: "^\\p{Lu}" }, valid: ["Élan"], invalid: ["élan"] },
    {
      name: "legacy identity escapes are still honoured",
      schema: { pattern: "^a\\-b$" },
      valid: ["a-b"],
      invalid: ["ab"],
      ajvDiffers: "Ajv compiles every pattern in unicode mode, where \\- outside a class is a syntax error"
    }
  ],
  format: [
    {
      name: "an annotation by default",
      schema: { format: "email" },
      valid: ["not an email", "a@b.example"],
      invalid: []
    }
  ],
  minimum: [
    { name: "inclusive", schema: { minimum: 1.5 }, valid: [1.5, 2, "0"], invalid: [1, -3] },
    {
      name: "draft-04 boolean exclusiveMinimum",
      schema: { minimum: 1, exclusiveMinimum: true },
      valid: [1.1],
      invalid: [1],
      keyword: "exclusiveMinimum",
      ajvDiffers: "Ajv refuses the boolean (draft-04) form as an invalid schema"
    }
  ],
  maximum: [
    { name: "inclusive", schema: { maximum: 3 }, valid: [3, -1], invalid: [3.01] },
    {
      name: "draft-04 boolean exclusiveMaximum",
      schema: { $schema: D7, maximum: 5, exclusiveMaximum: true },
      valid: [4.9],
      invalid: [5],
      keyword: "exclusiveMaximum",
      ajvDiffers: "Ajv refuses the boolean (draft-04) form as an invalid schema"
    },
    {
      name: "false leaves it inclusive",
      schema: { maximum: 5, exclusiveMaximum: false },
      valid: [5],
      invalid: [6],
      ajvDiffers: "Ajv refuses the boolean form"
    }
  ],
  exclusiveMinimum: [
    { name: "number", schema: { exclusiveMinimum: 0 }, valid: [0.001, 1], invalid: [0, -1] },
    { name: "draft-07", schema: { $schema: D7, exclusiveMinimum: 0 }, valid: [1], invalid: [0] }
  ],
  exclusiveMaximum: [
    { name: "number", schema: { exclusiveMaximum: 10 }, valid: [9.99], invalid: [10, 11] }
  ],
  multipleOf: [
    { name: "integers", schema: { multipleOf: 3 }, valid: [0, 9, -6, "x"], invalid: [10, 1.5] },
    { name: "fractions", schema: { multipleOf: 0.5 }, valid: [1.5, 2], invalid: [1.25] },
    {
      name: "decimal fractions forgive rounding",
      schema: { multipleOf: 0.1 },
      valid: [0.3, 1.1, 12.7],
      invalid: [0.35],
      ajvDiffers: "Ajv divides in floating point: 0.3 / 0.1 is 2.9999999999999996, so it refuses 0.3"
    }
  ],
  allOf: [
    {
      name: "every schema",
      schema: { allOf: [{ type: "integer" }, { minimum: 2 }] },
      valid: [2, 3],
      invalid: [1, 2.5],
      keyword: undefined
    }
  ],
  anyOf: [
    { name: "some schema", schema: { anyOf: [{ type: "string" }, { minimum: 2 }] }, valid: ["a", 2], invalid: [1] }
  ],
  oneOf: [
    {
      name: "exactly one",
      schema: { oneOf: [{ type: "integer" }, { minimum: 2 }] },
      valid: [1, 2.5],
      invalid: [3, 1.5]
    }
  ],
  not: [
    { name: "inverts", schema: { not: { type: "string" } }, valid: [1, null], invalid: ["a"] },
    { name: "not false", schema: { not: false }, valid: [1], invalid: [] }
  ],
  if: [
    {
      name: "then and else",
      schema: { if: { type: "integer" }, then: { minimum: 0 }, else: { type: "string" } },
      valid: [0, 5, "a"],
      invalid: [-1, 1.5, null],
      keyword: undefined
    },
    {
      name: "then without else",
      schema: { if: { minimum: 10 }, then: { multipleOf: 10 } },
      valid: [5, 20],
      invalid: [15],
      keyword: "multipleOf"
    },
    { name: "if alone is inert", schema: { if: false }, valid: [1], invalid: [] },
    {
      name: "draft-07",
      schema: { $schema: D7, if: { required: ["a"] }, then: { required: ["b"] } },
      valid: [{}, { a: 1, b: 2 }],
      invalid: [{ a: 1 }],
      keyword: "required"
    }
  ],
  $ref: [
    {
      name: "$defs by pointer",
      schema: {
        $defs: { positive: { type: "number", exclusiveMinimum: 0 } },
        properties: { n: { $ref: "#/$defs/positive" } }
      },
      valid: [{ n: 1 }],
      invalid: [{ n: 0 }, { n: "1" }],
      keyword: undefined
    },
    {
      name: "definitions by pointer",
      schema: { $schema: D7, definitions: { s: { type: "string" } }, items: { $ref: "#/definitions/s" } },
      valid: [["a"]],
      invalid: [[1]],
      keyword: "type"
    },
    {
      name: "pointer escapes",
      schema: {
        $defs: { "a/b": { type: "string" }, "c~d": { type: "integer" }, "e f": { type: "null" }, "%": { const: 1 } },
        prefixItems: [
          { $ref: "#/$defs/a~1b" },
          { $ref: "#/$defs/c~0d" },
          { $ref: "#/$defs/e%20f" },
          { $ref: "#/$defs/%25" }
        ]
      },
      valid: [["x", 1, null, 1]],
      invalid: [[1], ["x", "y"], ["x", 1, 0], ["x", 1, null, 2]],
      keyword: undefined
    },
    {
      name: "recursion through the document root",
      schema: { type: "object", properties: { children: { type: "array", items: { $ref: "#" } } }, required: ["name"] },
      valid: [{ name: "a", children: [{ name: "b", children: [] }] }],
      invalid: [{ name: "a", children: [{ children: [] }] }],
      keyword: "required"
    },
    {
      name: "$anchor",
      schema: { $defs: { x: { $anchor: "item", type: "boolean" } }, items: { $ref: "#item" } },
      valid: [[true]],
      invalid: [[1]],
      keyword: "type"
    },
    {
      name: "draft-07 $id anchor",
      schema: { $schema: D7, definitions: { x: { $id: "#item", type: "boolean" } }, items: { $ref: "#item" } },
      valid: [[true]],
      invalid: [[1]],
      keyword: "type"
    },
    {
      name: "2020-12 siblings apply",
      schema: { $defs: { s: { type: "string" } }, $ref: "#/$defs/s", minLength: 2 },
      valid: ["ab"],
      invalid: ["a", 1],
      keyword: undefined
    },
    {
      name: "draft-07 siblings are ignored",
      schema: { $schema: D7, definitions: { s: { type: "string" } }, $ref: "#/definitions/s", minLength: 2 },
      valid: ["a"],
      invalid: [1],
      keyword: "type",
      ajvDiffers: "Ajv applies keywords beside $ref in draft-07 too; draft-07 says they are ignored"
    },
    {
      name: "embedded resource by $id",
      schema: {
        $id: "https://schemas.example/root.json",
        $defs: { item: { $id: "item.json", $defs: { n: { type: "integer" } }, allOf: [{ $ref: "#/$defs/n" }] } },
        items: { $ref: "item.json" },
        properties: { direct: { $ref: "https://schemas.example/item.json#/$defs/n" } }
      },
      valid: [[1], { direct: 2 }],
      invalid: [["a"], { direct: "b" }],
      keyword: "type"
    },
    {
      name: "$ref beside $id resolves against that $id",
      schema: {
        $id: "https://schemas.example/root.json",
        $defs: { item: { $id: "item.json", $defs: { n: { type: "integer" } }, $ref: "#/$defs/n" } },
        items: { $ref: "item.json" }
      },
      valid: [[1]],
      invalid: [["a"]],
      keyword: "type",
      ajvDiffers: "Ajv overflows its stack on this schema"
    },
    {
      name: "$dynamicRef with a single dynamic anchor acts as $ref",
      schema: { $dynamicAnchor: "node", type: "array", items: { $dynamicRef: "#node" } },
      valid: [[], [[[]]]],
      invalid: [[1], [[1]]],
      keyword: "type"
    }
  ],
  unevaluatedProperties: [
    {
      name: "sees through in-place applicators",
      schema: {
        properties: { a: true },
        allOf: [{ properties: { b: true } }],
        anyOf: [{ properties: { c: { type: "string" } } }, { properties: { d: true } }],
        unevaluatedProperties: false
      },
      valid: [{ a: 1, b: 2 }, { c: "x" }, { c: "x", d: 1 }, { d: 1 }],
      invalid: [{ e: 1 }, { a: 1, x: 2 }, { c: 1, d: 1 }]
    },
    {
      name: "if/then and dependentSchemas",
      schema: {
        if: { properties: { kind: { const: "a" } } },
        then: { properties: { alpha: true } },
        dependentSchemas: { beta: { properties: { gamma: true } } },
        unevaluatedProperties: { type: "integer" }
      },
      valid: [{ kind: "a", alpha: "x" }, { beta: 1, gamma: "x" }, { other: 1 }],
      invalid: [{ kind: "b", alpha: "x" }, { gamma: "x" }],
      keyword: undefined
    },
    {
      name: "across $ref",
      schema: { $defs: { base: { properties: { id: true } } }, $ref: "#/$defs/base", unevaluatedProperties: false },
      valid: [{ id: 1 }],
      invalid: [{ id: 1, extra: 2 }]
    },
    {
      name: "a failed branch leaves nothing evaluated",
      schema: {
        anyOf: [{ properties: { a: { type: "string" } }, required: ["a"] }, { required: ["b"] }],
        unevaluatedProperties: false
      },
      valid: [{ a: "x" }],
      invalid: [{ a: 1, b: 1 }]
    },
    {
      name: "a failed branch's patternProperties evaluate nothing",
      schema: {
        anyOf: [{}, { patternProperties: { "^[cd]": false } }],
        unevaluatedProperties: { not: { type: "null" } }
      },
      valid: [{ a: 1 }, { d: 1 }],
      invalid: [{ d: null, a: -2 }],
      keyword: "not",
      ajvDiffers: "Ajv counts the names a failed branch's patternProperties match as evaluated"
    }
  ],
  unevaluatedItems: [
    {
      name: "prefixItems and items",
      schema: {
        anyOf: [{ prefixItems: [{ type: "string" }] }, { items: { type: "integer" } }],
        unevaluatedItems: false
      },
      valid: [["a"], [1, 2], []],
      invalid: [["a", true], [null], ["a", "b"]],
      ajvDiffers: "Ajv loses the annotation of items from the anyOf branch that holds"
    },
    {
      name: "contains marks the items it matched",
      schema: { contains: { type: "integer" }, unevaluatedItems: { type: "string" } },
      valid: [[1, 2], [1, "a"]],
      invalid: [[1, true]],
      keyword: "type",
      // 2020-12 section 11.2: unevaluatedItems reads the annotations of prefixItems, items and contains.
      ajvDiffers: "Ajv ignores the annotations of contains"
    },
    {
      name: "items evaluates everything",
      schema: { allOf: [{ items: true }], unevaluatedItems: false },
      valid: [[1, 2]],
      invalid: []
    }
  ]
}

describe("JsonSchema keywords", () => {
  for (const [keyword, cases] of Object.entries(tables)) {
    describe(keyword, () => {
      for (const testCase of cases) {
        it(testCase.name, () => {
          const validator = JsonSchema.compile(testCase.schema)
          assert.isTrue(Result.isSuccess(validator), `compiles: ${JSON.stringify(validator)}`)
          if (Result.isFailure(validator)) return
          for (const value of testCase.valid) {
            const verdict = validator.success.validate(value)
            assert.isTrue(Result.isSuccess(verdict), `${JSON.stringify(value)} is valid: ${JSON.stringify(verdict)}`)
          }
          const expectedKeyword = "keyword" in testCase ? testCase.keyword : keyword
          for (const value of testCase.invalid) {
            const verdict = validator.success.validate(value)
            assert.isTrue(Result.isFailure(verdict), `${JSON.stringify(value)} is invalid`)
            if (Result.isSuccess(verdict)) continue
            assert.strictEqual(verdict.failure._tag, "JsonSchemaMismatch")
            if (verdict.failure._tag !== "JsonSchemaMismatch") continue
            assert.isAbove(verdict.failure.issues.length, 0)
            if (expectedKeyword !== undefined) {
              assert.include(
                verdict.failure.issues.map((issue) => issue.keyword),
                expectedKeyword,
                `${JSON.stringify(value)}: ${JSON.stringify(verdict.failure.issues)}`
              )
            }
          }
          const oracle = oracles[dialectOf(testCase.schema)]
          const expectations = [
            ...testCase.valid.map((value) => [value, true] as const),
            ...testCase.invalid.map((value) => [value, false] as const)
          ]
          const ajvVerdicts = expectations.map(([value, expected]) => ({
            value,
            expected,
            ajv: oracle.verdict(testCase.schema, value)
          }))
          const agrees = ajvVerdicts.every(({ ajv, expected }) => ajv === expected)
          if (testCase.ajvDiffers === undefined) {
            assert.isTrue(agrees, `Ajv agrees: ${JSON.stringify(ajvVerdicts)}`)
          } else {
            // The divergence is real: the case documents it, so it must still exist.
            assert.isFalse(agrees, `Ajv was said to differ (${testCase.ajvDiffers}) but agrees`)
          }
        })
      }
    })
  }
})
