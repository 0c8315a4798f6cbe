/**
 * The JSON Schema compiler's parts shared by every keyword: compiled nodes (memoized per schema object, compiled
 * from a queue so recursive documents need no recursion), running a node on a value or a child of it, and reading
 * keyword values with their errors.
 *
 * @internal
 */
import * as Result from "effect/Result"
import type { Context, Dialect, Evaluated, Failure, Options } from "./jsonSchemaModel.js"
import * as Model from "./jsonSchemaModel.js"
import * as Pattern from "./jsonSchemaPattern.js"
import type * as Refs from "./jsonSchemaRefs.js"
import * as Value from "./jsonSchemaValue.js"

/**
 * Checks one value against one compiled schema (or one keyword of it). `ev` is the annotation record of the
 * value, present only when the document uses `unevaluated*`.
 */
export type Check = (value: unknown, ctx: Context, ev: Evaluated | undefined) => boolean

/**
 * A compiled schema. References hold the node itself, whose `validate` is filled in once its schema is compiled,
 * so recursive documents compile to cyclic graphs without recursion in the compiler.
 */
export interface Node {
  validate: Check
  readonly location: string
  /** The `false` schema: its failures read better as the parent keyword's ("no additional property 'x'"). */
  readonly never: boolean
}

export type JsonObject = { readonly [key: string]: unknown }

export interface Compiler {
  readonly dialect: Dialect
  readonly options: Options
  readonly index: Refs.DocumentIndex
  readonly nodes: Map<object, Node>
  readonly queue: Array<() => void>
  readonly patterns: Map<string, Pattern.Pattern | undefined>
  /** The program size of the patterns compiled so far (compiling costs time in proportion). */
  patternSize: number
  failure: Failure | undefined
  /** The checks of one schema object (the compiler's entry point, called for each node taken from the queue). */
  readonly schemaChecks: (s: JsonObject, location: string, base: string) => ReadonlyArray<Check>
}

export const TRUE_NODE: Node = { validate: () => true, location: "#", never: false }

export const falseNode = (location: string): Node => ({
  validate: (_value, ctx) => Model.report(ctx, "false", location, "no value is allowed here"),
  location,
  never: true
})

export const fail = (c: Compiler, reason: Failure["reason"], detail: string, schemaPath: string): undefined => {
  if (c.failure === undefined) c.failure = { reason, detail, schemaPath }
  return undefined
}

export const invalid = (c: Compiler, detail: string, schemaPath: string): undefined =>
  fail(c, "InvalidSchema", detail, schemaPath)

/**
 * The node of a schema, compiled later from the queue (memoized by object identity, so every schema object is
 * compiled once however many references lead to it).
 */
export const nodeFor = (c: Compiler, schema: unknown, base: string, location: string): Node => {
  if (schema === true) return TRUE_NODE
  if (schema === false) return falseNode(location)
  if (!Value.isObject(schema)) {
    invalid(c, "a schema must be an object or a boolean", location)
    return TRUE_NODE
  }
  const known = c.nodes.get(schema)
  if (known !== undefined) return known
  const placement = c.index.placements.get(schema)
  const node: Node = { validate: TRUE_NODE.validate, location: placement?.location ?? location, never: false }
  c.nodes.set(schema, node)
  c.queue.push(() => {
    node.validate = sequence(c.schemaChecks(schema, node.location, placement?.base ?? base), node.location)
  })
  return node
}

/** Runs a schema's checks in order; stops at the first failure unless the run collects issues. */
export const sequence = (checks: ReadonlyArray<Check>, location: string): Check => (value, ctx, ev) => {
  if (ctx.aborted !== undefined) return false
  if (++ctx.steps > ctx.maxSteps) return Model.abort(ctx, "BudgetExceeded", location)
  if (ctx.depth >= ctx.maxDepth) return Model.abort(ctx, "DepthExceeded", location)
  ctx.depth++
  let ok = true
  for (let i = 0; i < checks.length; i++) {
    if (!checks[i](value, ctx, ev)) {
      ok = false
      if (!ctx.collect) break
    }
  }
  ctx.depth--
  return ok
}

export const fresh = (ctx: Context): Evaluated | undefined => ctx.tracking ? Model.evaluated() : undefined

/** Applies a node to a child of the value (a property or an item). */
export const enter = (node: Node, value: unknown, key: string | number, ctx: Context): boolean => {
  ctx.path.push(key)
  const ok = node.validate(value, ctx, fresh(ctx))
  ctx.path.pop()
  return ok
}

/**
 * Applies a node to the value itself (allOf, $ref, then). The subschema sees only its own annotations, and hands
 * them to the parent only when it holds.
 */
export const inPlace = (node: Node, value: unknown, ctx: Context, ev: Evaluated | undefined): boolean => {
  if (ev === undefined) return node.validate(value, ctx, undefined)
  const sub = Model.evaluated()
  const ok = node.validate(value, ctx, sub)
  if (ok) Model.mergeEvaluated(ev, sub)
  return ok
}

/** Applies a node whose failure is not, by itself, an issue of the value (a branch of anyOf, a `not`). */
export const probe = (node: Node, value: unknown, ctx: Context, ev: Evaluated | undefined): boolean => {
  const collect = ctx.collect
  ctx.collect = false
  const ok = node.validate(value, ctx, ev)
  ctx.collect = collect && ctx.aborted === undefined
  return ok
}

/** A short rendering of a schema value for messages; bounded, since the value may be large or deeply nested. */
export const preview = (value: unknown): string => {
  const text = render(value, 3)
  return text.length > 80 ? `${text.slice(0, 80)}…` : text
}

export const render = (value: unknown, depth: number): string => {
  if (typeof value !== "object" || value === null) {
    return typeof value === "string" ? JSON.stringify(value) : String(value)
  }
  if (depth === 0) return Array.isArray(value) ? "[…]" : "{…}"
  if (Array.isArray(value)) return `[${value.slice(0, 10).map((item) => render(item, depth - 1)).join(",")}]`
  const entries = Object.entries(value).slice(0, 10)
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${render(item, depth - 1)}`).join(",")}}`
}

export const quote = (name: string): string => JSON.stringify(name)

// ---------------------------------------------------------------------------------------------------------------
// Reading keyword values. A malformed keyword makes the whole schema invalid: guessing what it meant could accept
// values its author meant to refuse, or the reverse.

export const numberOf = (c: Compiler, s: JsonObject, key: string, location: string): number | undefined => {
  if (!Value.has(s, key)) return undefined
  const value = s[key]
  return typeof value === "number" && Number.isFinite(value)
    ? value
    : invalid(c, `${key} must be a number`, `${location}/${key}`)
}

export const countOf = (c: Compiler, s: JsonObject, key: string, location: string): number | undefined => {
  if (!Value.has(s, key)) return undefined
  const value = s[key]
  return typeof value === "number" && Number.isInteger(value) && value >= 0
    ? value
    : invalid(c, `${key} must be a non-negative integer`, `${location}/${key}`)
}

export const namesOf = (c: Compiler, value: unknown, path: string): ReadonlyArray<string> | undefined => {
  if (!Array.isArray(value)) return invalid(c, "must be an array of strings", path)
  const names: Array<string> = []
  for (const name of value) {
    if (typeof name !== "string") return invalid(c, "must be an array of strings", path)
    names.push(name)
  }
  return names
}

export const subschema = (c: Compiler, s: JsonObject, key: string, base: string, location: string): Node | undefined =>
  Value.has(s, key) ? nodeFor(c, s[key], base, `${location}/${key}`) : undefined

export const subschemaList = (
  c: Compiler,
  s: JsonObject,
  key: string,
  base: string,
  location: string,
  allowEmpty = false
): ReadonlyArray<Node> | undefined => {
  if (!Value.has(s, key)) return undefined
  const list = s[key]
  if (!Array.isArray(list) || (list.length === 0 && !allowEmpty)) {
    return invalid(c, `${key} must be a non-empty array of schemas`, `${location}/${key}`)
  }
  return list.map((item, i) => nodeFor(c, item, base, `${location}/${key}/${i}`))
}

export const subschemaMap = (
  c: Compiler,
  s: JsonObject,
  key: string,
  base: string,
  location: string
): ReadonlyArray<readonly [string, Node]> | undefined => {
  if (!Value.has(s, key)) return undefined
  const map = s[key]
  if (!Value.isObject(map)) return invalid(c, `${key} must be an object of schemas`, `${location}/${key}`)
  return Object.keys(map).map((name) =>
    [name, nodeFor(c, map[name], base, `${location}/${key}/${Model.escapeToken(name)}`)] as const
  )
}

/**
 * The compiled programs of one schema may add up to this size: compiling takes 1 to 10 microseconds per unit, so
 * a schema cannot spend much more than a quarter of a second compiling patterns (a pattern is refused before it
 * is compiled when its estimated size is more than what is left, see `Pattern.compile`).
 */
export const MAX_PATTERN_SIZE = 50_000

export const regexFor = (c: Compiler, pattern: string, path: string): Pattern.Pattern | undefined => {
  if (c.patterns.has(pattern)) return c.patterns.get(pattern)
  if (c.patternSize > MAX_PATTERN_SIZE) {
    c.patterns.set(pattern, undefined)
    return fail(c, "BudgetExceeded", `the schema's patterns compile to more than ${MAX_PATTERN_SIZE} units`, path)
  }
  const compiled = Pattern.compile(pattern, MAX_PATTERN_SIZE - c.patternSize)
  const regex = Result.getOrUndefined(compiled)
  c.patterns.set(pattern, regex)
  if (Result.isFailure(compiled)) return fail(c, compiled.failure.reason, compiled.failure.detail, path)
  c.patternSize += compiled.success.size
  return regex
}

