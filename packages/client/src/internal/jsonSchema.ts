/** @internal */
import * as Result from "effect/Result"
import { formats } from "./jsonSchemaFormats.js"
import type { Dialect, Failure, Issue, Options } from "./jsonSchemaModel.js"
import * as Model from "./jsonSchemaModel.js"
import * as Pattern from "./jsonSchemaPattern.js"
import * as Refs from "./jsonSchemaRefs.js"
import * as Value from "./jsonSchemaValue.js"
import { compileComposition, compileRef, compileUnevaluated } from "./jsonSchemaApplicators.js"
import { countOf, fresh, invalid, nodeFor, numberOf, preview, quote, regexFor } from "./jsonSchemaCompiler.js"
import type { Check, Compiler, JsonObject } from "./jsonSchemaCompiler.js"
import { compileArray, compileObject } from "./jsonSchemaContainers.js"

const compileSchema = (c: Compiler, s: JsonObject, location: string, base: string): ReadonlyArray<Check> => {
  const at = (keyword: string) => `${location}/${keyword}`
  const checks: Array<Check> = []

  if (c.dialect === "draft-07" && Value.has(s, "$ref")) {
    // draft-07: a $ref replaces its schema; sibling keywords are ignored.
    const ref = compileRef(c, s, "$ref", location, base)
    return ref === undefined ? [] : [ref]
  }

  // -- any type ---------------------------------------------------------------------------------------------
  if (Value.has(s, "type")) {
    const raw = s.type
    const names = typeof raw === "string" ? [raw] : Array.isArray(raw) && raw.length > 0 ? raw : undefined
    let mask = 0
    for (const name of names ?? []) {
      if (typeof name !== "string" || !Value.isTypeName(name)) {
        invalid(c, `unknown type ${preview(name)}`, at("type"))
        break
      }
      mask |= Value.TypeBits[name]
    }
    if (names === undefined) invalid(c, "type must be a type name or a non-empty array of them", at("type"))
    const expected = (names ?? []).join(" or ")
    checks.push((value, ctx) =>
      (Value.typeBits(value) & mask) !== 0 || Model.report(ctx, "type", at("type"), `must be ${expected}`)
    )
  }
  if (Value.has(s, "enum")) {
    const members = s.enum
    if (!Array.isArray(members)) invalid(c, "enum must be an array", at("enum"))
    else {
      const primitives = new Set<unknown>()
      const composites: Array<unknown> = []
      for (const member of members) {
        if (typeof member === "object" && member !== null) composites.push(member)
        else primitives.add(member)
      }
      const message = `must be one of ${preview(members)}`
      checks.push((value, ctx) => {
        if (typeof value !== "object" || value === null) {
          if (primitives.has(value)) return true
        } else {
          if (!Model.charge(ctx, composites.length, at("enum"))) return false
          for (const member of composites) if (Value.equal(value, member, ctx, at("enum"))) return true
        }
        return Model.report(ctx, "enum", at("enum"), message)
      })
    }
  }
  if (Object.hasOwn(s, "const")) {
    const expected = s.const
    const message = `must be ${preview(expected)}`
    checks.push((value, ctx) =>
      Value.equal(value, expected, ctx, at("const")) || Model.report(ctx, "const", at("const"), message)
    )
  }

  // -- numbers ----------------------------------------------------------------------------------------------
  compileNumber(c, s, location, checks)

  // -- strings ----------------------------------------------------------------------------------------------
  const minLength = countOf(c, s, "minLength", location)
  const maxLength = countOf(c, s, "maxLength", location)
  if (minLength !== undefined) {
    checks.push((value, ctx) =>
      typeof value !== "string" || value.length >= minLength * 2 ||
      (value.length >= minLength && Value.codePointLength(value) >= minLength) ||
      Model.report(ctx, "minLength", at("minLength"), `must have at least ${minLength} characters`)
    )
  }
  if (maxLength !== undefined) {
    checks.push((value, ctx) =>
      typeof value !== "string" || value.length <= maxLength || Value.codePointLength(value) <= maxLength ||
      Model.report(ctx, "maxLength", at("maxLength"), `must have at most ${maxLength} characters`)
    )
  }
  if (Value.has(s, "pattern")) {
    const pattern = s.pattern
    const regex = typeof pattern === "string"
      ? regexFor(c, pattern, at("pattern"))
      : invalid(c, "pattern must be a string", at("pattern"))
    if (regex !== undefined) {
      const message = `must match the pattern ${quote(regex.source)}`
      checks.push((value, ctx) =>
        typeof value !== "string" ||
        (Model.charge(ctx, Pattern.cost(regex, value), at("pattern")) && regex.test(value)) ||
        (ctx.aborted === undefined && Model.report(ctx, "pattern", at("pattern"), message))
      )
    }
  }
  if (Value.has(s, "format")) {
    const name = s.format
    if (typeof name !== "string") invalid(c, "format must be a string", at("format"))
    const test = typeof name === "string" && c.options.formats === "assert" ? formats.get(name) : undefined
    if (test !== undefined) {
      checks.push((value, ctx) =>
        typeof value !== "string" || test(value) ||
        Model.report(ctx, "format", at("format"), `must be a valid ${name}`)
      )
    }
  }

  // -- objects and arrays -----------------------------------------------------------------------------------
  compileObject(c, s, location, base, checks)
  compileArray(c, s, location, base, checks)

  // -- in-place applicators ---------------------------------------------------------------------------------
  const ref = compileRef(c, s, "$ref", location, base)
  if (ref !== undefined) checks.push(ref)
  if (c.dialect === "2020-12") {
    const dynamicRef = compileRef(c, s, "$dynamicRef", location, base)
    if (dynamicRef !== undefined) checks.push(dynamicRef)
  }
  compileComposition(c, s, location, base, checks)

  // -- unevaluated* (2020-12), after every keyword whose annotations they read ------------------------------
  if (c.dialect === "2020-12") compileUnevaluated(c, s, location, base, checks)
  return checks
}

const compileNumber = (c: Compiler, s: JsonObject, location: string, checks: Array<Check>): void => {
  const at = (keyword: string) => `${location}/${keyword}`
  const minimum = numberOf(c, s, "minimum", location)
  const maximum = numberOf(c, s, "maximum", location)
  // exclusiveMinimum/Maximum are numbers since draft-06; a boolean is the draft-04 form, which makes
  // minimum/maximum exclusive. Both are accepted in either dialect.
  const exclusive = (key: string): number | boolean | undefined => {
    if (!Value.has(s, key)) return undefined
    const value = s[key]
    return typeof value === "boolean" ? value : numberOf(c, s, key, location)
  }
  const exclusiveMinimum = exclusive("exclusiveMinimum")
  const exclusiveMaximum = exclusive("exclusiveMaximum")
  if (minimum !== undefined) {
    if (exclusiveMinimum === true) {
      checks.push((value, ctx) =>
        typeof value !== "number" || value > minimum ||
        Model.report(ctx, "exclusiveMinimum", at("exclusiveMinimum"), `must be > ${minimum}`)
      )
    } else {
      checks.push((value, ctx) =>
        typeof value !== "number" || value >= minimum ||
        Model.report(ctx, "minimum", at("minimum"), `must be >= ${minimum}`)
      )
    }
  }
  if (maximum !== undefined) {
    if (exclusiveMaximum === true) {
      checks.push((value, ctx) =>
        typeof value !== "number" || value < maximum ||
        Model.report(ctx, "exclusiveMaximum", at("exclusiveMaximum"), `must be < ${maximum}`)
      )
    } else {
      checks.push((value, ctx) =>
        typeof value !== "number" || value <= maximum ||
        Model.report(ctx, "maximum", at("maximum"), `must be <= ${maximum}`)
      )
    }
  }
  if (typeof exclusiveMinimum === "number") {
    checks.push((value, ctx) =>
      typeof value !== "number" || value > exclusiveMinimum ||
      Model.report(ctx, "exclusiveMinimum", at("exclusiveMinimum"), `must be > ${exclusiveMinimum}`)
    )
  }
  if (typeof exclusiveMaximum === "number") {
    checks.push((value, ctx) =>
      typeof value !== "number" || value < exclusiveMaximum ||
      Model.report(ctx, "exclusiveMaximum", at("exclusiveMaximum"), `must be < ${exclusiveMaximum}`)
    )
  }
  const multipleOf = numberOf(c, s, "multipleOf", location)
  if (multipleOf !== undefined) {
    if (multipleOf <= 0) invalid(c, "multipleOf must be greater than 0", at("multipleOf"))
    checks.push((value, ctx) =>
      typeof value !== "number" || isMultiple(value, multipleOf) ||
      Model.report(ctx, "multipleOf", at("multipleOf"), `must be a multiple of ${multipleOf}`)
    )
  }
}

/**
 * `value` is a multiple of `divisor`. Exact for integers; for fractions the quotient may be off by a rounding
 * error (0.3 / 0.1 is 2.9999999999999996), which is forgiven within a relative 1e-9.
 */
const isMultiple = (value: number, divisor: number): boolean => {
  if (Number.isInteger(value) && Number.isInteger(divisor)) return value % divisor === 0
  const quotient = value / divisor
  if (!Number.isFinite(quotient)) return value % divisor === 0
  return Math.abs(quotient - Math.round(quotient)) <= 1e-9 * Math.max(1, Math.abs(quotient))
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * The verdict of one validation.
 *
 * @internal
 */
export type Outcome =
  | { readonly _tag: "Valid" }
  | { readonly _tag: "Invalid"; readonly issues: ReadonlyArray<Issue> }
  | { readonly _tag: "Failed"; readonly failure: Failure }

/**
 * A compiled schema, ready to validate any number of values.
 *
 * @internal
 */
export interface Program {
  readonly dialect: Dialect
  readonly run: (value: unknown) => Outcome
}

const VALID: Outcome = { _tag: "Valid" }

/**
 * Compiles a schema document. Nothing is fetched: a reference outside the document fails the compilation.
 *
 * @internal
 */
export const compile = (schema: unknown, options: Options): Result.Result<Program, Failure> => {
  const dialect = Refs.dialectOf(schema, options.defaultDialect)
  if (Result.isFailure(dialect)) return Result.fail(dialect.failure)
  if (typeof schema !== "boolean" && !Value.isObject(schema)) {
    return Result.fail({ reason: "InvalidSchema", detail: "a schema must be an object or a boolean", schemaPath: "#" })
  }
  const index = Refs.indexDocument(schema, dialect.success, options.maxDepth)
  if (Result.isFailure(index)) return Result.fail(index.failure)
  const c: Compiler = {
    dialect: dialect.success,
    options,
    index: index.success,
    nodes: new Map(),
    queue: [],
    patterns: new Map(),
    patternSize: 0,
    failure: undefined,
    schemaChecks: (s, location, base) => compileSchema(c, s, location, base)
  }
  const root = nodeFor(c, schema, Refs.DEFAULT_BASE, "#")
  for (let job = c.queue.pop(); job !== undefined && c.failure === undefined; job = c.queue.pop()) job()
  if (c.failure !== undefined) return Result.fail(c.failure)
  const tracking = index.success.usesUnevaluated
  const run = (value: unknown): Outcome => {
    // A first pass that stops at the first failure: the usual verdict, "valid", costs no more than that.
    const quick = Model.makeContext(options, tracking, false)
    const valid = root.validate(value, quick, fresh(quick))
    if (quick.aborted !== undefined) return { _tag: "Failed", failure: quick.aborted }
    if (valid) return VALID
    const full = Model.makeContext(options, tracking, true)
    root.validate(value, full, fresh(full))
    if (full.issues.length > 0) return { _tag: "Invalid", issues: full.issues }
    if (full.aborted !== undefined) return { _tag: "Failed", failure: full.aborted }
    return { _tag: "Invalid", issues: [{ instancePath: "", schemaPath: "#", keyword: "", message: "does not match" }] }
  }
  return Result.succeed({ dialect: dialect.success, run })
}
