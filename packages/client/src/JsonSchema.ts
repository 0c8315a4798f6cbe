/**
 * JSON Schema validation for what servers send and users answer: a tool result's `structuredContent` against the
 * tool's `outputSchema`, and a form elicitation's answer against its `requestedSchema`.
 *
 * Dialects: 2020-12 (the default, MCP 2025-11-25 and later) and draft-07, chosen by the root `$schema`; any other
 * `$schema` is refused with `JsonSchemaError` (reason `UnsupportedDialect`). `$ref` resolves only inside the
 * document (`#`, JSON pointers, `$anchor`, embedded `$id`); a reference to anything else is refused (reason
 * `RemoteRef`) and never fetched. Validation is bounded: nesting beyond `maxDepth` and work beyond `maxSteps`
 * (against composition blow-ups and `$ref` loops) end it with a typed error instead of hanging.
 *
 * `format` is an annotation by default, as 2020-12 specifies. With `formats: "assert"` a few common formats are
 * checked, leniently: date, time, date-time, email, hostname, ipv4, ipv6, uri, uri-reference, uuid, regex.
 *
 * `pattern` and `patternProperties` run on a linear-time engine (RE2JS), never on the backtracking `RegExp`, so a
 * pattern such as `^(a+)+$` cannot stall the event loop; each match is charged to `maxSteps` in proportion to the
 * input's length times the pattern's program size, and a schema's patterns may compile to 50,000 program units
 * at most. A pattern means what ECMA-262 says (the native engine decides validity, then it is translated), but
 * what an automaton cannot match (lookahead, lookbehind, backreferences) is refused with `UnsupportedKeyword`.
 *
 * Not supported: `$dynamicRef` when two schemas declare the same `$dynamicAnchor` (refused with reason
 * `UnsupportedKeyword`), `content*` assertions (annotations), and vocabularies beyond the two dialects.
 *
 * Lenient where a schema written for the other dialect would otherwise be refused or misread: in 2020-12 an
 * `items` array is read as draft-07 tuples (with `additionalItems`) and `dependencies` is honoured; `$anchor`
 * works in draft-07; a boolean `exclusiveMinimum`/`exclusiveMaximum` (draft-04) makes `minimum`/`maximum`
 * exclusive; a `pattern` only the non-Unicode regular expression syntax accepts is still honoured; `multipleOf`
 * forgives floating-point rounding (0.3 is a multiple of 0.1). In draft-07, keywords beside `$ref` are ignored,
 * as that dialect specifies.
 *
 * @example
 * ```ts
 * import * as Result from "effect/Result"
 * import * as JsonSchema from "@conduit-mcp/client/JsonSchema"
 *
 * const schema = { type: "object", required: ["total"], properties: { total: { type: "number" } } }
 * const verdict = JsonSchema.validate(schema, { total: "12" })
 * if (Result.isFailure(verdict) && verdict.failure._tag === "JsonSchemaMismatch") {
 *   // [{ instancePath: "/total", keyword: "type", message: "must be number", schemaPath: "#/properties/total/type" }]
 *   verdict.failure.issues
 * }
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as internal from "./internal/jsonSchema.js"
import type * as Model from "./internal/jsonSchemaModel.js"
import * as Refs from "./internal/jsonSchemaRefs.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Dialect = "2020-12" | "draft-07"

/**
 * One reason a value does not match its schema: where in the value (`instancePath`, a JSON pointer, `""` for the
 * value itself), which keyword refused it, and where that keyword is in the schema (`schemaPath`, a URI fragment
 * such as `#/$defs/item/minimum`).
 *
 * @since 0.1.0
 * @category models
 */
export const Issue = Schema.Struct({
  instancePath: Schema.String,
  schemaPath: Schema.String,
  keyword: Schema.String,
  message: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export type Issue = typeof Issue.Type

/**
 * The schema cannot be used, or validating against it could not finish.
 *
 * - `UnsupportedDialect`: `$schema` names a dialect other than 2020-12 or draft-07.
 * - `InvalidSchema`: a keyword has a value of the wrong kind, a `pattern` is not a regular expression.
 * - `RemoteRef`: a `$ref` points outside the document (`https://…`, `other.json`); nothing is fetched.
 * - `UnresolvedRef`: a local `$ref` points at nothing.
 * - `UnsupportedKeyword`: a keyword this validator cannot honour faithfully, or a pattern that cannot be matched in
 *   bounded time (lookaround, backreferences).
 * - `DepthExceeded`: the schema, or the validation (a `$ref` loop, a deeply nested value), is nested deeper than
 *   `maxDepth`.
 * - `BudgetExceeded`: validation needed more than `maxSteps` steps (nested composition blowing up, patterns run
 *   on long strings), or the schema's patterns compile to too big a program.
 *
 * @since 0.1.0
 * @category errors
 */
export class JsonSchemaError extends Schema.TaggedError<JsonSchemaError>("@conduit-mcp/client/JsonSchemaError")(
  "JsonSchemaError",
  {
    reason: Schema.Literals([
      "UnsupportedDialect",
      "InvalidSchema",
      "RemoteRef",
      "UnresolvedRef",
      "UnsupportedKeyword",
      "DepthExceeded",
      "BudgetExceeded"
    ]),
    detail: Schema.String,
    schemaPath: Schema.optional(Schema.String)
  }
) {
  override get message(): string {
    return `${this.reason}: ${this.detail}${this.schemaPath !== undefined ? ` (at ${this.schemaPath})` : ""}`
  }
}

/**
 * The value does not match the schema. `issues` lists the reasons, at most `maxIssues` of them.
 *
 * @since 0.1.0
 * @category errors
 */
export class JsonSchemaMismatch
  extends Schema.TaggedError<JsonSchemaMismatch>("@conduit-mcp/client/JsonSchemaMismatch")("JsonSchemaMismatch", {
    issues: Schema.Array(Issue)
  })
{
  override get message(): string {
    return formatIssues(this.issues)
  }
}

/**
 * One line per issue, `"/path: message"`, for logs and error details.
 *
 * @since 0.1.0
 * @category utils
 */
export const formatIssues = (issues: ReadonlyArray<Issue>): string =>
  issues.map((issue) => `${issue.instancePath === "" ? "(value)" : issue.instancePath}: ${issue.message}`).join("\n")

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Deepest nesting of schema and of validation (each subschema applied is a level). Default 256. */
  readonly maxDepth?: number | undefined
  /** Most subschema applications (plus comparisons) one validation may make. Default 1,000,000. */
  readonly maxSteps?: number | undefined
  /** Most issues reported for one value. Default 20. */
  readonly maxIssues?: number | undefined
  /** `"annotation"` (default): `format` is not checked. `"assert"`: common formats are checked. */
  readonly formats?: "annotation" | "assert" | undefined
  /** The dialect of a schema without `$schema`. Default 2020-12. */
  readonly defaultDialect?: Dialect | undefined
}

/**
 * The limits used when an option is not given.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultOptions: Required<{ readonly [K in keyof Options]: NonNullable<Options[K]> }> = {
  maxDepth: 256,
  maxSteps: 1_000_000,
  maxIssues: 20,
  formats: "annotation",
  defaultDialect: "2020-12"
}

const resolveOptions = (options: Options | undefined): Model.Options => ({
  maxDepth: Math.max(1, options?.maxDepth ?? defaultOptions.maxDepth),
  maxSteps: Math.max(1, options?.maxSteps ?? defaultOptions.maxSteps),
  maxIssues: Math.max(1, options?.maxIssues ?? defaultOptions.maxIssues),
  formats: options?.formats ?? defaultOptions.formats,
  defaultDialect: options?.defaultDialect ?? defaultOptions.defaultDialect
})

const toError = (failure: Model.Failure): JsonSchemaError =>
  new JsonSchemaError({
    reason: failure.reason,
    detail: failure.detail,
    ...(failure.schemaPath !== undefined ? { schemaPath: failure.schemaPath } : {})
  })

/**
 * A compiled schema. `validate` is synchronous and allocates nothing beyond its bookkeeping when the value
 * matches; in `Effect.gen`, lift its `Result` with `Effect.fromResult`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Validator {
  readonly dialect: Dialect
  /** The schema this validator was compiled from. */
  readonly schema: unknown
  readonly validate: (value: unknown) => Result.Result<void, JsonSchemaMismatch | JsonSchemaError>
}

/**
 * Compiles a schema. Fails when the dialect is not supported, the schema is malformed, or a `$ref` does not
 * resolve inside the document. Compile once and reuse the validator (see `makeCache`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const compile = (schema: unknown, options?: Options): Result.Result<Validator, JsonSchemaError> => {
  const compiled = internal.compile(schema, resolveOptions(options))
  if (Result.isFailure(compiled)) return Result.fail(toError(compiled.failure))
  const program = compiled.success
  return Result.succeed({
    dialect: program.dialect,
    schema,
    validate: (value) => {
      const outcome = program.run(value)
      switch (outcome._tag) {
        case "Valid":
          return Result.void
        case "Invalid":
          return Result.fail(new JsonSchemaMismatch({ issues: outcome.issues }))
        case "Failed":
          return Result.fail(toError(outcome.failure))
      }
    }
  })
}

/**
 * Compiles and validates in one go. For a schema used more than once, compile it once instead.
 *
 * @since 0.1.0
 * @category validation
 */
export const validate = (
  schema: unknown,
  value: unknown,
  options?: Options
): Result.Result<void, JsonSchemaMismatch | JsonSchemaError> =>
  Result.flatMap(compile(schema, options), (validator) => validator.validate(value))

/**
 * The dialect a schema is written in: its `$schema`, or `defaultDialect` (2020-12 unless given).
 *
 * @since 0.1.0
 * @category utils
 */
export const dialectOf = (
  schema: unknown,
  defaultDialect: Dialect = "2020-12"
): Result.Result<Dialect, JsonSchemaError> =>
  Result.mapError(Refs.dialectOf(schema, defaultDialect), toError)

/**
 * Compiled validators keyed by schema identity: the same schema object compiles once. A tool catalogue keeps its
 * `outputSchema` objects until it is listed again, so a cache owned by a client compiles each tool's schema once
 * per listing. Compilation failures are remembered too. Entries go away with their schema objects.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cache {
  readonly compile: (schema: unknown) => Result.Result<Validator, JsonSchemaError>
  readonly validate: (schema: unknown, value: unknown) => Result.Result<void, JsonSchemaMismatch | JsonSchemaError>
}

/**
 * Creates a cache of compiled validators, all compiled with the same options.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeMakeCache = (options?: Options): Cache => {
  const entries = new WeakMap<object, Result.Result<Validator, JsonSchemaError>>()
  const booleans = new Map<boolean, Result.Result<Validator, JsonSchemaError>>()
  const compileCached = (schema: unknown): Result.Result<Validator, JsonSchemaError> => {
    if (typeof schema === "boolean") {
      const known = booleans.get(schema)
      if (known !== undefined) return known
      const compiled = compile(schema, options)
      booleans.set(schema, compiled)
      return compiled
    }
    if (typeof schema !== "object" || schema === null) return compile(schema, options)
    const known = entries.get(schema)
    if (known !== undefined) return known
    const compiled = compile(schema, options)
    entries.set(schema, compiled)
    return compiled
  }
  return {
    compile: compileCached,
    validate: (schema, value) => Result.flatMap(compileCached(schema), (validator) => validator.validate(value))
  }
}

/**
 * Creates a cache of compiled validators, all compiled with the same options.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeCache = (options?: Options): Effect.Effect<Cache> => Effect.sync(() => unsafeMakeCache(options))
