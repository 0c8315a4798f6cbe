import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Path from "node:path"
import * as JsonSchema from "../src/JsonSchema.js"
import * as AjvOracle from "./utils/ajvOracle.js"
import * as SchemaValidator from "./utils/schemaValidator.js"

const D7 = "http://json-schema.org/draft-07/schema#"

/** The error a schema fails to compile with. */
const compileError = (schema: unknown, options?: JsonSchema.Options): JsonSchema.JsonSchemaError => {
  const compiled = JsonSchema.compile(schema, options)
  return Result.isFailure(compiled) ? compiled.failure : assert.fail(`${JSON.stringify(schema)} must not compile`)
}

const validator = (schema: unknown, options?: JsonSchema.Options): JsonSchema.Validator => {
  const compiled = JsonSchema.compile(schema, options)
  return Result.isSuccess(compiled)
    ? compiled.success
    : assert.fail(`${JSON.stringify(schema)} must compile: ${compiled.failure.message}`)
}

/** The issues of a value that does not match. */
const issuesOf = (verdict: Result.Result<void, JsonSchema.JsonSchemaMismatch | JsonSchema.JsonSchemaError>) => {
  if (Result.isSuccess(verdict)) return assert.fail("expected a mismatch, the value is valid")
  if (verdict.failure._tag !== "JsonSchemaMismatch") return assert.fail(`expected a mismatch, got ${verdict.failure.message}`)
  return verdict.failure.issues
}

/** The error of a validation that could not finish. */
const failureOf = (verdict: Result.Result<void, JsonSchema.JsonSchemaMismatch | JsonSchema.JsonSchemaError>) => {
  if (Result.isSuccess(verdict)) return assert.fail("expected a failure, the value is valid")
  if (verdict.failure._tag !== "JsonSchemaError") return assert.fail(`expected a failure, got ${verdict.failure.message}`)
  return verdict.failure
}

/** An array nested `depth` levels deep, built without recursion. */
const nested = (depth: number): unknown => {
  let value: unknown = []
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

describe("JsonSchema", () => {
  describe("dialects", () => {
    it("reads a schema without $schema as 2020-12, and $schema chooses draft-07", () => {
      assert.strictEqual(validator({ type: "string" }).dialect, "2020-12")
      assert.strictEqual(validator({ $schema: "https://json-schema.org/draft/2020-12/schema" }).dialect, "2020-12")
      assert.strictEqual(validator({ $schema: D7 }).dialect, "draft-07")
      assert.strictEqual(validator({ $schema: "http://json-schema.org/draft-07/schema" }).dialect, "draft-07")
      assert.strictEqual(validator(true).dialect, "2020-12")
      assert.strictEqual(validator({}, { defaultDialect: "draft-07" }).dialect, "draft-07")
      assert.deepStrictEqual(JsonSchema.dialectOf({ $schema: D7 }), Result.succeed("draft-07"))
    })

    it("validates by dialect: the same keywords mean different things", () => {
      const tuple = { prefixItems: [{ type: "string" }], items: { type: "integer" } }
      assert.isTrue(Result.isSuccess(JsonSchema.validate(tuple, ["a", 1])))
      assert.isTrue(Result.isFailure(JsonSchema.validate(tuple, ["a", "b"])))
      // draft-07 knows neither prefixItems nor a schema after it: `items` applies to every item.
      assert.isTrue(Result.isFailure(JsonSchema.validate({ $schema: D7, ...tuple }, ["a", 1])))
      assert.isTrue(Result.isSuccess(JsonSchema.validate({ $schema: D7, ...tuple }, [1, 2])))
    })

    it("refuses every other dialect with a typed error", () => {
      for (
        const uri of [
          "http://json-schema.org/draft-04/schema#",
          "http://json-schema.org/draft-06/schema#",
          "https://json-schema.org/draft/2019-09/schema",
          "https://example.com/my-meta-schema"
        ]
      ) {
        const error = compileError({ $schema: uri, type: "string" })
        assert.strictEqual(error._tag, "JsonSchemaError")
        assert.strictEqual(error.reason, "UnsupportedDialect", uri)
        assert.include(error.detail, uri)
      }
      assert.strictEqual(compileError({ $schema: 7 }).reason, "InvalidSchema")
      assert.strictEqual(
        compileError({ $defs: { x: { $schema: D7 } } }).reason,
        "UnsupportedDialect",
        "a subschema in another dialect"
      )
      assert.isTrue(Result.isFailure(JsonSchema.dialectOf({ $schema: "http://json-schema.org/draft-04/schema#" })))
    })
  })

  describe("references", () => {
    it("never dereferences a network or external $ref", () => {
      for (
        const ref of [
          "https://example.com/schemas/item.json",
          "http://example.com/item.json#/$defs/x",
          "other.json",
          "./other.json#/definitions/x",
          "urn:example:item",
          "//example.com/item.json"
        ]
      ) {
        const error = compileError({ properties: { item: { $ref: ref } } })
        assert.strictEqual(error.reason, "RemoteRef", ref)
        assert.strictEqual(error.detail, `remote $ref not fetched: ${ref}`)
        assert.strictEqual(error.schemaPath, "#/properties/item/$ref")
      }
    })

    it.live("a remote $ref to a listening server sends it nothing", () =>
      Effect.gen(function*() {
        let requests = 0
        const server = Http.createServer((_request, response) => {
          requests++
          response.end(JSON.stringify({ type: "string" }))
        })
        yield* Effect.acquireRelease(
          Effect.callback<void>((resume) => {
            server.listen(0, "127.0.0.1", () => resume(Effect.void))
          }),
          () =>
            Effect.callback<void>((resume) => {
              server.close(() => resume(Effect.void))
            })
        )
        const address: string | Net.AddressInfo | null = server.address()
        assert.isTrue(address !== null && typeof address === "object")
        const port = address !== null && typeof address === "object" ? address.port : 0
        const url = `http://127.0.0.1:${port}/schema.json`
        const error = compileError({ $ref: url })
        assert.strictEqual(error.reason, "RemoteRef")
        // Give a fetch, had one been started, the time to arrive.
        yield* Effect.sleep("100 millis")
        assert.strictEqual(requests, 0)
      }).pipe(Effect.scoped))

    it("resolves $id-relative references inside the document, and refuses the rest", () => {
      const schema = {
        $id: "https://schemas.example/root.json",
        $defs: { name: { $id: "name.json", type: "string", minLength: 1 } },
        properties: {
          name: { $ref: "name.json" },
          same: { $ref: "https://schemas.example/name.json" },
          elsewhere: { $ref: "https://schemas.example/other.json" }
        }
      }
      const error = compileError(schema)
      assert.strictEqual(error.reason, "RemoteRef")
      assert.include(error.detail, "https://schemas.example/other.json")
      const { elsewhere: _, ...local } = schema.properties
      const compiled = validator({ ...schema, properties: local })
      assert.isTrue(Result.isSuccess(compiled.validate({ name: "a", same: "b" })))
      assert.isTrue(Result.isFailure(compiled.validate({ name: "" })))
    })

    it("a local $ref that points at nothing is UnresolvedRef", () => {
      for (const ref of ["#/$defs/missing", "#/definitions/a/0", "#missing-anchor", "#/properties/a~1b"]) {
        assert.strictEqual(compileError({ definitions: { a: {} }, $ref: ref }).reason, "UnresolvedRef", ref)
      }
      assert.strictEqual(compileError({ $ref: 1 }).reason, "InvalidSchema")
      assert.strictEqual(compileError({ $ref: "#/$defs/%E0%A4%A" }).reason, "InvalidSchema")
    })

    it("reads anchors and ids by dialect", () => {
      assert.strictEqual(compileError({ $defs: { a: { $id: "#a" } } }).reason, "InvalidSchema", "2020-12 $id fragment")
      assert.strictEqual(
        compileError({ $defs: { a: { $anchor: "x" }, b: { $anchor: "x" } } }).reason,
        "InvalidSchema",
        "duplicate anchor"
      )
      assert.strictEqual(compileError({ $defs: { a: { $anchor: "1x" } } }).reason, "InvalidSchema")
    })

    it("refuses $dynamicRef when its target depends on the dynamic scope", () => {
      const schema = {
        $id: "https://schemas.example/list",
        $dynamicAnchor: "item",
        $defs: { strings: { $id: "strings", $dynamicAnchor: "item", type: "string" } },
        items: { $dynamicRef: "#item" }
      }
      const error = compileError(schema)
      assert.strictEqual(error.reason, "UnsupportedKeyword")
      assert.include(error.detail, "$dynamicRef")
    })
  })

  describe("bounded cost", () => {
    /** `levels` definitions, each an anyOf of two references to the next: 2^levels paths to the last one. */
    const explosion = (levels: number) => {
      const $defs: Record<string, unknown> = { [`d${levels}`]: { type: "string" } }
      for (let i = levels - 1; i >= 0; i--) {
        const next = { $ref: `#/$defs/d${i + 1}` }
        $defs[`d${i}`] = { anyOf: [next, next] }
      }
      return { $defs, $ref: "#/$defs/d0" }
    }

    it("nested anyOf whose paths multiply ends in BudgetExceeded", () => {
      const compiled = validator(explosion(40))
      const error = failureOf(compiled.validate(1))
      assert.strictEqual(error.reason, "BudgetExceeded")
      assert.include(error.message, "1000000 steps")
      // A value that matches takes the first path only.
      assert.isTrue(Result.isSuccess(compiled.validate("a")))
      // The budget is an option.
      assert.strictEqual(failureOf(validator(explosion(8), { maxSteps: 100 }).validate(1)).reason, "BudgetExceeded")
      assert.strictEqual(issuesOf(validator(explosion(8)).validate(1))[0].keyword, "anyOf")
    })

    it("oneOf and not over an exploding definition are bounded too", () => {
      const { $defs } = explosion(40)
      const oneOf = validator({ $defs, oneOf: [{ $ref: "#/$defs/d0" }, { type: "number" }] })
      assert.strictEqual(failureOf(oneOf.validate(1)).reason, "BudgetExceeded")
      const not = validator({ $defs, not: { $ref: "#/$defs/d0" } })
      assert.strictEqual(failureOf(not.validate(1)).reason, "BudgetExceeded")
    })

    it("uniqueItems over many large items is charged to the budget", () => {
      const big = Array.from({ length: 2000 }, (_, i) => ({ id: i, tags: Array.from({ length: 50 }, (_, j) => j) }))
      assert.isTrue(Result.isSuccess(validator({ uniqueItems: true }).validate(big)))
      assert.strictEqual(
        failureOf(validator({ uniqueItems: true }, { maxSteps: 1_000 }).validate(big)).reason,
        "BudgetExceeded"
      )
    })

    it("$ref loops that consume nothing end in DepthExceeded", () => {
      const loops = [
        { $ref: "#" },
        { $defs: { a: { $ref: "#/$defs/b" }, b: { allOf: [{ $ref: "#/$defs/a" }] } }, $ref: "#/$defs/a" },
        { anyOf: [{ not: { $ref: "#" } }] },
        { $schema: D7, definitions: { a: { $ref: "#/definitions/a" } }, $ref: "#/definitions/a" }
      ]
      for (const schema of loops) {
        const error = failureOf(validator(schema).validate({ any: "value" }))
        assert.strictEqual(error.reason, "DepthExceeded", JSON.stringify(schema))
      }
    })

    it("a loop that is never reached costs nothing", () => {
      const compiled = validator({ anyOf: [{ type: "string" }, { $ref: "#" }] })
      assert.isTrue(Result.isSuccess(compiled.validate("a")))
      assert.strictEqual(failureOf(compiled.validate(1)).reason, "DepthExceeded")
    })

    it("a deeply nested value is refused with DepthExceeded, without exhausting the stack", () => {
      const deep = nested(100_000)
      const schemas = [{ items: { $ref: "#" } }, { uniqueItems: true }, { const: nested(100_000) }, {
        enum: [1, nested(100_000)]
      }]
      for (const [i, schema] of schemas.entries()) {
        const verdict = validator(schema).validate(i < 2 ? [deep, deep] : deep)
        assert.strictEqual(failureOf(verdict).reason, "DepthExceeded", `schema ${i}`)
      }
      // Recursion within the limit is fine.
      assert.isTrue(Result.isSuccess(validator({ items: { $ref: "#" } }).validate(nested(100))))
      assert.strictEqual(
        failureOf(validator({ items: { $ref: "#" } }, { maxDepth: 50 }).validate(nested(100))).reason,
        "DepthExceeded"
      )
    })

    it("a deeply nested schema is refused at compile time, without exhausting the stack", () => {
      let schema: unknown = { type: "string" }
      for (let i = 0; i < 100_000; i++) schema = { not: schema }
      assert.strictEqual(compileError(schema).reason, "DepthExceeded")
    })

    it("a large valid value stays within the default budget", () => {
      const schema = {
        type: "array",
        items: {
          type: "object",
          required: ["id", "name"],
          properties: {
            id: { type: "integer" },
            name: { type: "string" },
            tags: { type: "array", items: { type: "string" } }
          }
        }
      }
      const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `row ${i}`, tags: ["a", "b"] }))
      assert.isTrue(Result.isSuccess(validator(schema).validate(rows)))
    })
  })

  describe("issues", () => {
    it("carry the instance path (escaped), the keyword and its schema location", () => {
      const schema = {
        $defs: { count: { type: "integer", minimum: 0 } },
        properties: { "a/b": { items: { properties: { "~n": { $ref: "#/$defs/count" } } } } }
      }
      const issues = issuesOf(JsonSchema.validate(schema, { "a/b": [{ "~n": 1 }, { "~n": -1 }] }))
      assert.deepStrictEqual(issues, [{
        instancePath: "/a~1b/1/~0n",
        schemaPath: "#/$defs/count/minimum",
        keyword: "minimum",
        message: "must be >= 0"
      }])
    })

    it("lists every issue, up to maxIssues", () => {
      const schema = {
        type: "object",
        required: ["a", "b"],
        properties: { c: { type: "string" }, d: { type: "string" } }
      }
      const issues = issuesOf(JsonSchema.validate(schema, { c: 1, d: 2 }))
      assert.deepStrictEqual(
        issues.map((issue) => [issue.instancePath, issue.keyword]),
        [["", "required"], ["", "required"], ["/c", "type"], ["/d", "type"]]
      )
      assert.strictEqual(issuesOf(JsonSchema.validate(schema, { c: 1, d: 2 }, { maxIssues: 2 })).length, 2)
    })

    it("a failed composition is one issue, not the issues of each branch", () => {
      const issues = issuesOf(JsonSchema.validate({ anyOf: [{ type: "string" }, { type: "integer" }] }, 1.5))
      assert.deepStrictEqual(issues.map((issue) => issue.keyword), ["anyOf"])
      const oneOf = issuesOf(JsonSchema.validate({ oneOf: [{ type: "number" }, { type: "integer" }] }, 1))
      assert.include(oneOf[0].message, "matches 0 and 1")
    })

    it("additionalProperties: false names the property", () => {
      const schema = { properties: { a: true }, additionalProperties: false }
      const issues = issuesOf(JsonSchema.validate(schema, { a: 1, z: 2 }))
      assert.deepStrictEqual(issues, [{
        instancePath: "",
        schemaPath: "#/additionalProperties",
        keyword: "additionalProperties",
        message: "must not have additional property \"z\""
      }])
    })

    it("JsonSchemaMismatch reads well in logs", () => {
      const schema = { properties: { total: { type: "number" } }, required: ["id"] }
      const verdict = JsonSchema.validate(schema, { total: "1" })
      assert.isTrue(Result.isFailure(verdict))
      if (Result.isFailure(verdict)) {
        assert.strictEqual(verdict.failure.message, "(value): must have required property \"id\"\n/total: must be number")
      }
    })
  })

  describe("malformed schemas", () => {
    const malformed: ReadonlyArray<unknown> = [
      "string",
      null,
      [],
      { type: "strnig" },
      { type: [] },
      { minLength: -1 },
      { maxItems: 1.5 },
      { minimum: "0" },
      { multipleOf: 0 },
      { required: "a" },
      { required: [1] },
      { enum: "a" },
      { properties: [] },
      { properties: { a: 1 } },
      { allOf: [] },
      { anyOf: {} },
      { not: "x" },
      { pattern: "(" },
      { pattern: 1 },
      { patternProperties: { "[": true } },
      { dependentRequired: { a: "b" } },
      { uniqueItems: "yes" },
      { format: 1 },
      { $defs: { a: { $id: 1 } } }
    ]
    it("are refused with InvalidSchema and the location of the fault", () => {
      for (const schema of malformed) {
        const error = compileError(schema)
        assert.strictEqual(error.reason, "InvalidSchema", JSON.stringify(schema))
        assert.isTrue(error.schemaPath?.startsWith("#"), JSON.stringify(error))
      }
      assert.strictEqual(compileError({ properties: { a: { minLength: "2" } } }).schemaPath, "#/properties/a/minLength")
    })

    it("unknown keywords are ignored", () => {
      assert.isTrue(Result.isSuccess(JsonSchema.validate({ "x-ui": { widget: 1 }, title: "T", examples: [1] }, 2)))
    })
  })

  describe("formats", () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, ReadonlyArray<string>]> = [
      ["date", ["2024-02-29", "1999-12-31"], ["2023-02-29", "2024-13-01", "24-01-01", "2024-01-01T00:00:00Z"]],
      ["time", ["23:59:59Z", "08:30:00.5+02:00", "23:59:60Z"], ["24:00:00Z", "08:30:00", "12:00:60Z"]],
      ["date-time", ["2024-05-01T12:00:00Z", "2024-05-01t12:00:00.123-07:00"], ["2024-05-01", "2024-05-01T25:00:00Z"]],
      ["email", ["user@example.com", "first.last+tag@sub.example.org", "\"quoted name\"@example.com"], [
        "user",
        "@example.com",
        "a b@example.com",
        "user@"
      ]],
      ["hostname", ["example.com", "localhost", "a-b.c"], ["-a.com", "a..b", "a_b.com"]],
      ["ipv4", ["127.0.0.1", "255.255.255.255"], ["256.0.0.1", "1.2.3", "01.2.3.4"]],
      ["ipv6", ["::1", "2001:db8::8a2e:370:7334", "::ffff:192.0.2.1"], [
        "1:2:3:4:5:6:7:8:9",
        "2001:db8:::1",
        "12345::"
      ]],
      ["uri", ["https://example.com/a?b#c", "urn:isbn:0451450523", "mailto:a@b.c"], [
        "/relative/path",
        "no scheme",
        ""
      ]],
      ["uuid", ["123e4567-e89b-12d3-a456-426614174000"], [
        "123e4567e89b12d3a456426614174000",
        "g23e4567-e89b-12d3-a456-426614174000"
      ]],
      ["regex", ["^a+$", "\\p{L}"], ["(", "[a-"]]
    ]
    it("are annotations by default", () => {
      for (const [format, , invalid] of cases) {
        for (const value of invalid) assert.isTrue(Result.isSuccess(JsonSchema.validate({ format }, value)), format)
      }
    })

    it("with formats: \"assert\", common formats are checked", () => {
      for (const [format, valid, invalid] of cases) {
        const compiled = validator({ format }, { formats: "assert" })
        for (const value of valid) assert.isTrue(Result.isSuccess(compiled.validate(value)), `${format}: ${value}`)
        for (const value of invalid) {
          const issues = issuesOf(compiled.validate(value))
          assert.strictEqual(issues[0].keyword, "format", `${format}: ${value}`)
        }
        // Formats apply to strings only; an unknown format is still an annotation.
        assert.isTrue(Result.isSuccess(compiled.validate(42)))
      }
      assert.isTrue(Result.isSuccess(JsonSchema.validate({ format: "x-custom" }, "anything", { formats: "assert" })))
    })
  })

  describe("cache", () => {
    it("compiles each schema object once and remembers failures", () => {
      const cache = JsonSchema.unsafeMakeCache()
      const schema = { type: "object", properties: { n: { type: "integer" } } }
      const first = cache.compile(schema)
      assert.isTrue(Result.isSuccess(first))
      assert.strictEqual(cache.compile(schema), first, "the same validator for the same object")
      assert.notStrictEqual(cache.compile({ ...schema }), first, "another object is another entry")
      const remote = { $ref: "https://example.com/s.json" }
      assert.strictEqual(cache.compile(remote), cache.compile(remote))
      assert.isTrue(Result.isFailure(cache.validate(remote, 1)))
      assert.isTrue(Result.isSuccess(cache.validate(schema, { n: 1 })))
      assert.isTrue(Result.isFailure(cache.validate(schema, { n: "1" })))
      assert.isTrue(Result.isSuccess(cache.validate(true, 1)))
      assert.isTrue(Result.isFailure(cache.validate(false, 1)))
    })

    it.effect("makeCache, and verdicts yielded in Effect.gen", () =>
      Effect.gen(function*() {
        const cache = yield* JsonSchema.makeCache({ maxIssues: 1 })
        const schema = { type: "object", required: ["approve"], properties: { approve: { type: "boolean" } } }
        yield* Effect.fromResult(cache.validate(schema, { approve: true }))
        const error = yield* Effect.flip(Effect.fromResult(cache.validate(schema, { approve: "yes" })))
        assert.strictEqual(error._tag, "JsonSchemaMismatch")
        const caught = yield* Effect.fromResult(
          cache.validate({ $schema: "http://json-schema.org/draft-04/schema#" }, 1)
        ).pipe(Effect.catchTag("JsonSchemaError", (e) => Effect.succeed(e.reason)))
        assert.strictEqual(caught, "UnsupportedDialect")
      }))
  })

  describe("MCP schemas", () => {
    const revisions = SchemaValidator.REVISIONS
    const load = (revision: SchemaValidator.Revision): Record<string, unknown> =>
      JSON.parse(Fs.readFileSync(SchemaValidator.schemaPath(revision), "utf8"))

    /** The revision's schema document with its root pointing at one definition. */
    const definition = (revision: SchemaValidator.Revision, document: Record<string, unknown>, name: string) => ({
      ...document,
      $ref: `#/${SchemaValidator.definitionsKey(revision)}/${name}`
    })

    it("every revision's schema compiles, in its own dialect", () => {
      for (const revision of revisions) {
        const compiled = validator(load(revision))
        const expected = SchemaValidator.definitionsKey(revision) === "$defs" ? "2020-12" : "draft-07"
        assert.strictEqual(compiled.dialect, expected, revision)
      }
    })

    it("the 2026-07-28 examples validate, and broken copies get Ajv's verdict", () => {
      const revision = "2026-07-28"
      const document = load(revision)
      const oracle = AjvOracle.make("2020-12")
      oracle.addDocument("mcp", document)
      const examples = Path.join(SchemaValidator.specDirectory, revision, "examples")
      let checked = 0
      for (const name of Fs.readdirSync(examples)) {
        const compiled = validator(definition(revision, document, name))
        const reference = { $ref: `mcp#/$defs/${name}` }
        for (const file of Fs.readdirSync(Path.join(examples, name))) {
          const example: unknown = JSON.parse(Fs.readFileSync(Path.join(examples, name, file), "utf8"))
          const verdict = compiled.validate(example)
          assert.isTrue(Result.isSuccess(verdict), `${name}/${file}: ${JSON.stringify(verdict)}`)
          const broken = typeof example === "object" && example !== null && !Array.isArray(example)
            ? [{ ...example, _meta: 1 }, Object.fromEntries(Object.keys(example).map((key) => [key, null])), []]
            : [{ unexpected: true }]
          for (const value of broken) {
            assert.strictEqual(
              Result.isSuccess(compiled.validate(value)),
              oracle.verdict(reference, value),
              `${name}/${file} broken: ${JSON.stringify(value).slice(0, 200)}`
            )
          }
          checked++
        }
      }
      assert.isAbove(checked, 80)
    })
  })

  describe("elicitation answers", () => {
    it("a form's requested schema checks the content, defaults and all", () => {
      const requestedSchema = {
        type: "object",
        required: ["approve"],
        properties: {
          approve: { type: "boolean", title: "Approve deployment" },
          reason: { type: "string", maxLength: 20, default: "" },
          env: { type: "string", enum: ["staging", "prod"] },
          replicas: { type: "integer", minimum: 1, maximum: 5 },
          contact: { type: "string", format: "email" }
        }
      }
      const compiled = validator(requestedSchema, { formats: "assert" })
      const answer = { approve: true, env: "prod", replicas: 2, contact: "a@b.example" }
      assert.isTrue(Result.isSuccess(compiled.validate(answer)))
      const issues = issuesOf(compiled.validate({ env: "dev", replicas: 2.5, reason: "x".repeat(21), contact: "nope" }))
      assert.sameMembers(
        issues.map((issue) => `${issue.instancePath} ${issue.keyword}`),
        [" required", "/reason maxLength", "/env enum", "/replicas type", "/contact format"]
      )
    })
  })
})
