/**
 * The validator against Ajv on random schemas drawn from a keyword grammar and random JSON values: every verdict
 * must be Ajv's. The grammar leaves out the corners where the two are known to differ on purpose (see
 * JsonSchema.keywords.test.ts, `ajvDiffers`): decimal multipleOf, keywords beside `$ref` in draft-07,
 * unevaluatedItems, `if` without `then`/`else`, and `contains` in a subschema applied to several items or
 * properties (`containsInLoop`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import * as JsonSchema from "../src/JsonSchema.js"
import * as AjvOracle from "./utils/ajvOracle.js"

type Dialect = AjvOracle.Dialect
type Entry = readonly [string, unknown]
type Entries = ReadonlyArray<Entry>

const D7 = "http://json-schema.org/draft-07/schema#"
const NAMES = ["a", "b", "c"] as const
const KEYS = ["a", "b", "c", "d"] as const
const STRINGS = ["", "a", "b", "ab", "abc", "ba", "1", "😀", "é"] as const
const NUMBERS = [-2, -1, -0.5, 0, 1, 1.5, 2, 2.5, 3] as const

/** Small JSON values, drawn from pools the schemas also draw from, so that both verdicts are common. */
const jsonValue: FastCheck.Arbitrary<unknown> = FastCheck.letrec<{ value: unknown }>((tie) => ({
  value: FastCheck.oneof(
    { depthSize: "small", maxDepth: 3 },
    FastCheck.constant(null),
    FastCheck.boolean(),
    FastCheck.constantFrom(...NUMBERS),
    FastCheck.constantFrom(...STRINGS),
    FastCheck.array(tie("value"), { maxLength: 3 }),
    FastCheck.dictionary(FastCheck.constantFrom(...KEYS), tie("value"), { maxKeys: 3 })
  )
})).value

/** A key two JSON values share exactly when they are equal (objects in any key order). */
const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(",")}]`
    : typeof value === "object" && value !== null
    ? `{${Object.entries(value).sort(([a], [b]) => a < b ? -1 : 1).map(([k, v]) => `${k}:${canonical(v)}`).join(",")}}`
    : JSON.stringify(value)

const one = (key: string, value: FastCheck.Arbitrary<unknown>): FastCheck.Arbitrary<Entries> =>
  value.map((v) => [[key, v]])

const count = (max: number) => FastCheck.integer({ min: 0, max })
const maybe = <A>(arbitrary: FastCheck.Arbitrary<A>) => FastCheck.option(arbitrary, { nil: undefined })
/** The entry `[key, value]`, or none when the value is absent. */
const optional = (key: string, value: unknown): Entries => value === undefined ? [] : [[key, value]]
/** Objects keyed by property names (dependencies and the like). */
const byName = <A>(value: FastCheck.Arbitrary<A>) =>
  FastCheck.dictionary(FastCheck.constantFrom(...NAMES), value, { minKeys: 1, maxKeys: 2 })
const number = FastCheck.constantFrom(-1, 0, 1, 1.5, 2)

/**
 * Schemas of one dialect. `refs`: whether `$ref` may appear (to the two definitions of the document, and to the
 * root from places that descend into the value, so recursion always ends).
 */
const schemaArbitrary = (dialect: Dialect, refs: boolean, maxDepth: number): FastCheck.Arbitrary<unknown> =>
  FastCheck.letrec<{ schema: unknown; child: unknown; object: unknown }>((tie) => {
    const schema = tie("schema")
    const child = tie("child")
    const list = FastCheck.array(schema, { minLength: 1, maxLength: 3 })
    const tuple = FastCheck.array(child, { minLength: 1, maxLength: 2 })
    const definitions = dialect === "draft-07" ? "definitions" : "$defs"
    const patterns = FastCheck.dictionary(FastCheck.constantFrom("^a", "b$", "^[cd]"), child, { maxKeys: 2 })
    const refTargets = [`#/${definitions}/d0`, `#/${definitions}/d1`]
    const keywords: Array<FastCheck.Arbitrary<Entries>> = [
      one("type", FastCheck.oneof(
        FastCheck.constantFrom("null", "boolean", "object", "array", "number", "string", "integer"),
        FastCheck.subarray(["null", "boolean", "object", "array", "number", "string", "integer"], { minLength: 1 })
      )),
      one("enum", FastCheck.uniqueArray(jsonValue, { minLength: 1, maxLength: 3, selector: canonical })),
      one("const", jsonValue),
      one("minimum", number),
      one("maximum", number),
      one("exclusiveMinimum", number),
      one("exclusiveMaximum", number),
      one("multipleOf", FastCheck.constantFrom(1, 2, 0.5)),
      one("minLength", count(3)),
      one("maxLength", count(3)),
      one("pattern", FastCheck.constantFrom("^a", "b$", "^[ab]*$", "\\d", "^.$", "^\\p{L}+$")),
      one("format", FastCheck.constantFrom("email", "date-time", "uri")),
      one("required", FastCheck.subarray([...NAMES], { minLength: 1 })),
      one("properties", FastCheck.dictionary(FastCheck.constantFrom(...NAMES), child, { maxKeys: 3 })),
      one("patternProperties", patterns),
      one("additionalProperties", child),
      one("propertyNames", schema),
      one("minProperties", count(2)),
      one("maxProperties", count(2)),
      one("dependencies", byName(FastCheck.oneof(FastCheck.subarray([...KEYS]), schema))),
      one("items", child),
      one("contains", schema),
      one("minItems", count(3)),
      one("maxItems", count(3)),
      one("uniqueItems", FastCheck.boolean()),
      one("allOf", list),
      one("anyOf", list),
      one("oneOf", list),
      one("not", schema),
      FastCheck.tuple(schema, maybe(schema), maybe(schema)).map(([condition, then, otherwise]): Entries => [
        ["if", condition],
        ...optional("then", then === undefined && otherwise === undefined ? true : then),
        ...optional("else", otherwise)
      ])
    ]
    if (dialect === "2020-12") {
      keywords.push(
        one("dependentRequired", byName(FastCheck.subarray([...KEYS]))),
        one("dependentSchemas", byName(schema)),
        FastCheck.tuple(tuple, maybe(child)).map(([prefix, rest]): Entries => [
          ["prefixItems", prefix],
          ...optional("items", rest)
        ]),
        FastCheck.tuple(schema, maybe(count(2)), maybe(count(2))).map(([contains, min, max]): Entries => [
          ["contains", contains],
          ...optional("minContains", min),
          ...optional("maxContains", max)
        ]),
        one("unevaluatedProperties", child)
      )
      if (refs) keywords.push(one("$ref", FastCheck.constantFrom(...refTargets)))
    } else {
      keywords.push(
        FastCheck.tuple(tuple, maybe(child)).map(([prefix, rest]): Entries => [
          ["items", prefix],
          ...optional("additionalItems", rest)
        ])
      )
    }
    const object = FastCheck.array(FastCheck.oneof(...keywords), { minLength: 1, maxLength: 3 })
      .map((entries) => {
        const flat = entries.flat()
        // Ajv skips `contains` on an array shorter than a tuple (prefixItems, draft-07 items array) beside it.
        const hasTuple = flat.some(([key, value]) =>
          key === "prefixItems" || (key === "items" && Array.isArray(value))
        )
        return Object.fromEntries(hasTuple ? flat.filter(([key]) => !key.endsWith("ontains")) : flat)
      })
    // draft-07 ignores everything beside $ref, and Ajv does not: there a $ref stands alone.
    const standaloneRef = refs ? [FastCheck.constantFrom(...refTargets).map(($ref) => ({ $ref }))] : []
    return {
      schema: FastCheck.oneof(
        { depthSize: "small", maxDepth },
        { arbitrary: FastCheck.boolean(), weight: 1 },
        { arbitrary: tie("object"), weight: 8 },
        ...standaloneRef.map((arbitrary) => ({ arbitrary, weight: 1 }))
      ),
      child: refs
        ? FastCheck.oneof({ arbitrary: schema, weight: 6 }, { arbitrary: FastCheck.constant({ $ref: "#" }), weight: 1 })
        : schema,
      object
    }
  }).schema

const isRecord = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The keywords whose subschema applies to several items or properties of one value, one after the other. */
const LOOPS = new Set([
  "items",
  "prefixItems",
  "additionalItems",
  "additionalProperties",
  "patternProperties",
  "unevaluatedItems",
  "unevaluatedProperties"
])

/**
 * Whether `contains` (or a `$ref` that may lead to one) sits under a keyword of {@link LOOPS}. There Ajv lets an
 * empty array pass `contains` when an earlier item or property passed it (its generated loop keeps the earlier
 * verdict): `{ "additionalProperties": { "contains": { "type": "string" } } }` accepts `{ "a": [""], "c": [] }`
 * and refuses `{ "c": [], "a": [""] }`. The validator refuses both, as the specification asks.
 */
const containsInLoop = (schema: unknown, inLoop: boolean, refMayContain: boolean): boolean => {
  if (Array.isArray(schema)) return schema.some((item) => containsInLoop(item, inLoop, refMayContain))
  if (!isRecord(schema)) return false
  return Object.entries(schema).some(([key, value]) =>
    inLoop && (key === "contains" || (key === "$ref" && refMayContain)) ||
    containsInLoop(value, inLoop || LOOPS.has(key), refMayContain)
  )
}

/** A document: a root schema and two definitions it may reference. */
const documentArbitrary = (dialect: Dialect): FastCheck.Arbitrary<unknown> =>
  FastCheck.tuple(
    schemaArbitrary(dialect, true, 3),
    schemaArbitrary(dialect, false, 2),
    schemaArbitrary(dialect, false, 2)
  ).filter(([root, d0, d1]) => {
    // Ajv keeps the annotations of a failed `if` and drops those of a passing one when unevaluatedProperties
    // reads them (the official test suite agrees with this validator there), and counts the names a failed
    // branch's patternProperties match as evaluated (JsonSchema.keywords.test.ts has the case): keep them apart.
    const text = JSON.stringify([root, d0, d1])
    return !(text.includes("\"unevaluatedProperties\"") &&
      (text.includes("\"if\"") || text.includes("\"patternProperties\""))) &&
      !containsInLoop([root, d0, d1], false, text.includes("\"contains\""))
  }).map(([root, d0, d1]) => {
    const definitions = { [dialect === "draft-07" ? "definitions" : "$defs"]: { d0, d1 } }
    const body = isRecord(root) ? root : root === false ? { not: {} } : {}
    return dialect === "draft-07" ? { $schema: D7, ...body, ...definitions } : { ...body, ...definitions }
  })

/** Whether a JSON pointer leads to something in the value. */
const exists = (value: unknown, pointer: string): boolean => {
  let current = value
  for (const raw of pointer === "" ? [] : pointer.slice(1).split("/")) {
    const token = raw.replace(/~1/g, "/").replace(/~0/g, "~")
    if (Array.isArray(current) && /^\d+$/.test(token) && Number(token) < current.length) {
      current = current[Number(token)]
    } else if (isRecord(current) && Object.hasOwn(current, token)) {
      current = current[token]
    } else {
      return false
    }
  }
  return true
}

describe("JsonSchema agrees with Ajv", () => {
  for (const dialect of ["2020-12", "draft-07"] as const) {
    it(`${dialect}: random schemas and values`, () => {
      const oracle = AjvOracle.make(dialect)
      const verdicts = { valid: 0, invalid: 0, ajvCrashed: 0 }
      FastCheck.assert(
        FastCheck.property(
          documentArbitrary(dialect),
          FastCheck.array(jsonValue, { minLength: 1, maxLength: 6 }),
          (schema, values) => {
            const compiled = JsonSchema.compile(schema)
            if (Result.isFailure(compiled)) {
              // Ajv must refuse it too.
              const theirs = oracle.verdict(schema, values[0])
              return typeof theirs === "object" && theirs.stage === "compile"
            }
            for (const value of values) {
              const ours = compiled.success.validate(value)
              const theirs = oracle.verdict(schema, value)
              if (Result.isFailure(ours) && ours.failure._tag === "JsonSchemaError") return false
              if (typeof theirs === "object" && theirs.stage === "run") {
                verdicts.ajvCrashed++
                continue
              }
              if (Result.isSuccess(ours) !== theirs) return false
              if (Result.isSuccess(ours)) {
                verdicts.valid++
                continue
              }
              verdicts.invalid++
              if (ours.failure._tag !== "JsonSchemaMismatch" || ours.failure.issues.length === 0) return false
              for (const issue of ours.failure.issues) {
                if (!exists(value, issue.instancePath) || !issue.schemaPath.startsWith("#")) return false
              }
            }
            return true
          }
        ),
        { numRuns: 1500 }
      )
      // Both verdicts must be common, or the comparison says little.
      assert.isAbove(verdicts.valid, 1000)
      assert.isAbove(verdicts.invalid, 1000)
      // Ajv's generated code crashing is rare; if it were common the comparison would be hollow.
      assert.isBelow(verdicts.ajvCrashed, verdicts.valid / 100)
    }, 120_000)
  }
})
