/** @internal */
import * as Either from "effect/Either"
import { formats } from "./jsonSchemaFormats.js"
import type { Context, Dialect, Evaluated, Failure, Issue, Options } from "./jsonSchemaModel.js"
import * as Model from "./jsonSchemaModel.js"
import * as Pattern from "./jsonSchemaPattern.js"
import * as Refs from "./jsonSchemaRefs.js"
import * as Value from "./jsonSchemaValue.js"

/**
 * Checks one value against one compiled schema (or one keyword of it). `ev` is the annotation record of the
 * value, present only when the document uses `unevaluated*`.
 */
type Check = (value: unknown, ctx: Context, ev: Evaluated | undefined) => boolean

/**
 * A compiled schema. References hold the node itself, whose `validate` is filled in once its schema is compiled,
 * so recursive documents compile to cyclic graphs without recursion in the compiler.
 */
interface Node {
  validate: Check
  readonly location: string
  /** The `false` schema: its failures read better as the parent keyword's ("no additional property 'x'"). */
  readonly never: boolean
}

type JsonObject = { readonly [key: string]: unknown }

interface Compiler {
  readonly dialect: Dialect
  readonly options: Options
  readonly index: Refs.DocumentIndex
  readonly nodes: Map<object, Node>
  readonly queue: Array<() => void>
  readonly patterns: Map<string, Pattern.Pattern | undefined>
  /** The program size of the patterns compiled so far (compiling costs time in proportion). */
  patternSize: number
  failure: Failure | undefined
}

const TRUE_NODE: Node = { validate: () => true, location: "#", never: false }

const falseNode = (location: string): Node => ({
  validate: (_value, ctx) => Model.report(ctx, "false", location, "no value is allowed here"),
  location,
  never: true
})

const fail = (c: Compiler, reason: Failure["reason"], detail: string, schemaPath: string): undefined => {
  if (c.failure === undefined) c.failure = { reason, detail, schemaPath }
  return undefined
}

const invalid = (c: Compiler, detail: string, schemaPath: string): undefined =>
  fail(c, "InvalidSchema", detail, schemaPath)

/**
 * The node of a schema, compiled later from the queue (memoized by object identity, so every schema object is
 * compiled once however many references lead to it).
 */
const nodeFor = (c: Compiler, schema: unknown, base: string, location: string): Node => {
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
    node.validate = sequence(compileSchema(c, schema, node.location, placement?.base ?? base), node.location)
  })
  return node
}

/** Runs a schema's checks in order; stops at the first failure unless the run collects issues. */
const sequence = (checks: ReadonlyArray<Check>, location: string): Check => (value, ctx, ev) => {
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

const fresh = (ctx: Context): Evaluated | undefined => ctx.tracking ? Model.evaluated() : undefined

/** Applies a node to a child of the value (a property or an item). */
const enter = (node: Node, value: unknown, key: string | number, ctx: Context): boolean => {
  ctx.path.push(key)
  const ok = node.validate(value, ctx, fresh(ctx))
  ctx.path.pop()
  return ok
}

/**
 * Applies a node to the value itself (allOf, $ref, then). The subschema sees only its own annotations, and hands
 * them to the parent only when it holds.
 */
const inPlace = (node: Node, value: unknown, ctx: Context, ev: Evaluated | undefined): boolean => {
  if (ev === undefined) return node.validate(value, ctx, undefined)
  const sub = Model.evaluated()
  const ok = node.validate(value, ctx, sub)
  if (ok) Model.mergeEvaluated(ev, sub)
  return ok
}

/** Applies a node whose failure is not, by itself, an issue of the value (a branch of anyOf, a `not`). */
const probe = (node: Node, value: unknown, ctx: Context, ev: Evaluated | undefined): boolean => {
  const collect = ctx.collect
  ctx.collect = false
  const ok = node.validate(value, ctx, ev)
  ctx.collect = collect && ctx.aborted === undefined
  return ok
}

/** A short rendering of a schema value for messages; bounded, since the value may be large or deeply nested. */
const preview = (value: unknown): string => {
  const text = render(value, 3)
  return text.length > 80 ? `${text.slice(0, 80)}…` : text
}

const render = (value: unknown, depth: number): string => {
  if (typeof value !== "object" || value === null) {
    return typeof value === "string" ? JSON.stringify(value) : String(value)
  }
  if (depth === 0) return Array.isArray(value) ? "[…]" : "{…}"
  if (Array.isArray(value)) return `[${value.slice(0, 10).map((item) => render(item, depth - 1)).join(",")}]`
  const entries = Object.entries(value).slice(0, 10)
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${render(item, depth - 1)}`).join(",")}}`
}

const quote = (name: string): string => JSON.stringify(name)

// ---------------------------------------------------------------------------------------------------------------
// Reading keyword values. A malformed keyword makes the whole schema invalid: guessing what it meant could accept
// values its author meant to refuse, or the reverse.

const numberOf = (c: Compiler, s: JsonObject, key: string, location: string): number | undefined => {
  if (!Value.has(s, key)) return undefined
  const value = s[key]
  return typeof value === "number" && Number.isFinite(value)
    ? value
    : invalid(c, `${key} must be a number`, `${location}/${key}`)
}

const countOf = (c: Compiler, s: JsonObject, key: string, location: string): number | undefined => {
  if (!Value.has(s, key)) return undefined
  const value = s[key]
  return typeof value === "number" && Number.isInteger(value) && value >= 0
    ? value
    : invalid(c, `${key} must be a non-negative integer`, `${location}/${key}`)
}

const namesOf = (c: Compiler, value: unknown, path: string): ReadonlyArray<string> | undefined => {
  if (!Array.isArray(value)) return invalid(c, "must be an array of strings", path)
  const names: Array<string> = []
  for (const name of value) {
    if (typeof name !== "string") return invalid(c, "must be an array of strings", path)
    names.push(name)
  }
  return names
}

const subschema = (c: Compiler, s: JsonObject, key: string, base: string, location: string): Node | undefined =>
  Value.has(s, key) ? nodeFor(c, s[key], base, `${location}/${key}`) : undefined

const subschemaList = (
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

const subschemaMap = (
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
 * The compiled programs of one schema may add up to this size: compiling takes 3 to 10 microseconds per unit, so
 * a schema cannot spend much more than a quarter of a second compiling patterns.
 */
const MAX_PATTERN_SIZE = 50_000

const regexFor = (c: Compiler, pattern: string, path: string): Pattern.Pattern | undefined => {
  if (c.patterns.has(pattern)) return c.patterns.get(pattern)
  if (c.patternSize > MAX_PATTERN_SIZE) {
    c.patterns.set(pattern, undefined)
    return fail(c, "BudgetExceeded", `the schema's patterns compile to more than ${MAX_PATTERN_SIZE} units`, path)
  }
  const compiled = Pattern.compile(pattern)
  const regex = Either.getOrUndefined(compiled)
  c.patterns.set(pattern, regex)
  if (Either.isLeft(compiled)) return fail(c, compiled.left.reason, compiled.left.detail, path)
  c.patternSize += compiled.right.size
  return regex
}

// ---------------------------------------------------------------------------------------------------------------

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

const compileObject = (c: Compiler, s: JsonObject, location: string, base: string, checks: Array<Check>): void => {
  const at = (keyword: string) => `${location}/${keyword}`
  if (Value.has(s, "required")) {
    const names = namesOf(c, s.required, at("required")) ?? []
    if (names.length > 0) {
      checks.push((value, ctx) => {
        if (!Value.isObject(value)) return true
        let ok = true
        for (const name of names) {
          if (!Value.has(value, name)) {
            ok = Model.report(ctx, "required", at("required"), `must have required property ${quote(name)}`)
            if (!ctx.collect) return false
          }
        }
        return ok
      })
    }
  }
  const minProperties = countOf(c, s, "minProperties", location)
  const maxProperties = countOf(c, s, "maxProperties", location)
  if (minProperties !== undefined || maxProperties !== undefined) {
    checks.push((value, ctx) => {
      if (!Value.isObject(value)) return true
      const count = Object.keys(value).length
      if (minProperties !== undefined && count < minProperties) {
        return Model.report(ctx, "minProperties", at("minProperties"), `must have at least ${minProperties} properties`)
      }
      if (maxProperties !== undefined && count > maxProperties) {
        return Model.report(ctx, "maxProperties", at("maxProperties"), `must have at most ${maxProperties} properties`)
      }
      return true
    })
  }

  // dependentRequired (2020-12), and the array form of draft-07's `dependencies` (kept in 2020-12 as well, where
  // schemas written for draft-07 without `$schema` still use it).
  const requiredPairs: Array<readonly [string, ReadonlyArray<string>, string]> = []
  const schemaPairs: Array<readonly [string, Node]> = []
  if (Value.has(s, "dependencies")) {
    const map = s.dependencies
    if (!Value.isObject(map)) invalid(c, "dependencies must be an object", at("dependencies"))
    else {
      for (const name of Object.keys(map)) {
        const path = `${at("dependencies")}/${Model.escapeToken(name)}`
        const entry = map[name]
        if (Array.isArray(entry)) requiredPairs.push([name, namesOf(c, entry, path) ?? [], "dependencies"])
        else schemaPairs.push([name, nodeFor(c, entry, base, path)])
      }
    }
  }
  if (c.dialect === "2020-12" && Value.has(s, "dependentRequired")) {
    const map = s.dependentRequired
    if (!Value.isObject(map)) invalid(c, "dependentRequired must be an object", at("dependentRequired"))
    else {
      for (const name of Object.keys(map)) {
        const path = `${at("dependentRequired")}/${Model.escapeToken(name)}`
        requiredPairs.push([name, namesOf(c, map[name], path) ?? [], "dependentRequired"])
      }
    }
  }
  if (requiredPairs.length > 0) {
    checks.push((value, ctx) => {
      if (!Value.isObject(value)) return true
      let ok = true
      for (const [name, needed, keyword] of requiredPairs) {
        if (!Value.has(value, name)) continue
        for (const other of needed) {
          if (!Value.has(value, other)) {
            ok = Model.report(
              ctx,
              keyword,
              at(keyword),
              `must have property ${quote(other)} when property ${quote(name)} is present`
            )
            if (!ctx.collect) return false
          }
        }
      }
      return ok
    })
  }
  if (c.dialect === "2020-12") schemaPairs.push(...(subschemaMap(c, s, "dependentSchemas", base, location) ?? []))
  if (schemaPairs.length > 0) {
    checks.push((value, ctx, ev) => {
      if (!Value.isObject(value)) return true
      let ok = true
      for (const [name, node] of schemaPairs) {
        if (Value.has(value, name) && !inPlace(node, value, ctx, ev)) {
          ok = false
          if (!ctx.collect) return false
        }
      }
      return ok
    })
  }

  const propertyNames = subschema(c, s, "propertyNames", base, location)
  if (propertyNames !== undefined) {
    checks.push((value, ctx) => {
      if (!Value.isObject(value)) return true
      let ok = true
      for (const key of Object.keys(value)) {
        if (!probe(propertyNames, key, ctx, fresh(ctx))) {
          ok = Model.report(ctx, "propertyNames", at("propertyNames"), `property name ${quote(key)} is invalid`)
          if (!ctx.collect) return false
        }
      }
      return ok
    })
  }

  const properties = new Map(subschemaMap(c, s, "properties", base, location) ?? [])
  const patterns: Array<readonly [Pattern.Pattern, Node]> = []
  for (const [pattern, node] of subschemaMap(c, s, "patternProperties", base, location) ?? []) {
    const regex = regexFor(c, pattern, `${at("patternProperties")}/${Model.escapeToken(pattern)}`)
    if (regex !== undefined) patterns.push([regex, node])
  }
  const additional = subschema(c, s, "additionalProperties", base, location)
  if (properties.size > 0 || patterns.length > 0 || additional !== undefined) {
    checks.push((value, ctx, ev) => {
      if (!Value.isObject(value)) return true
      let ok = true
      for (const key of Object.keys(value)) {
        const item = value[key]
        if (item === undefined) continue
        let matched = false
        const node = properties.get(key)
        if (node !== undefined) {
          matched = true
          if (!enter(node, item, key, ctx)) {
            ok = false
            if (!ctx.collect) return false
          }
        }
        for (const [regex, node] of patterns) {
          if (!Model.charge(ctx, Pattern.cost(regex, key), at("patternProperties"))) return false
          if (!regex.test(key)) continue
          matched = true
          if (!enter(node, item, key, ctx)) {
            ok = false
            if (!ctx.collect) return false
          }
        }
        if (!matched && additional !== undefined) {
          const valid = additional.never
            ? Model.report(
              ctx,
              "additionalProperties",
              at("additionalProperties"),
              `must not have additional property ${quote(key)}`
            )
            : enter(additional, item, key, ctx)
          if (!valid) {
            ok = false
            if (!ctx.collect) return false
          }
        }
        if (ev !== undefined && matched) (ev.props ??= new Set()).add(key)
      }
      if (ev !== undefined && additional !== undefined) ev.allProps = true
      return ok
    })
  }
}

const compileArray = (c: Compiler, s: JsonObject, location: string, base: string, checks: Array<Check>): void => {
  const at = (keyword: string) => `${location}/${keyword}`
  let prefix: ReadonlyArray<Node> = []
  let rest: Node | undefined
  let restKeyword = "items"
  if (c.dialect === "2020-12" && Value.has(s, "prefixItems")) {
    prefix = subschemaList(c, s, "prefixItems", base, location) ?? []
    if (Array.isArray(s.items)) invalid(c, "items must be a schema when prefixItems is present", at("items"))
    else rest = subschema(c, s, "items", base, location)
  } else if (Array.isArray(s.items)) {
    // draft-07 tuples; in 2020-12 (where `items` is a single schema) read the same way, since schemas written
    // for draft-07 often arrive without `$schema`.
    prefix = subschemaList(c, s, "items", base, location, true) ?? []
    rest = subschema(c, s, "additionalItems", base, location)
    restKeyword = "additionalItems"
  } else {
    rest = subschema(c, s, "items", base, location)
  }
  if (prefix.length > 0 || rest !== undefined) {
    const count = prefix.length
    checks.push((value, ctx, ev) => {
      if (!Array.isArray(value)) return true
      let ok = true
      const head = Math.min(count, value.length)
      for (let i = 0; i < head; i++) {
        if (!enter(prefix[i], value[i], i, ctx)) {
          ok = false
          if (!ctx.collect) return false
        }
      }
      if (rest !== undefined && value.length > count) {
        if (rest.never) {
          ok = Model.report(ctx, restKeyword, at(restKeyword), `must have at most ${count} items`)
        } else {
          for (let i = count; i < value.length; i++) {
            if (!enter(rest, value[i], i, ctx)) {
              ok = false
              if (!ctx.collect) return false
            }
          }
        }
      }
      if (ev !== undefined) {
        if (head > ev.items) ev.items = head
        if (rest !== undefined) ev.allItems = true
      }
      return ok
    })
  }

  const contains = subschema(c, s, "contains", base, location)
  if (contains !== undefined) {
    const minContains = c.dialect === "2020-12" ? countOf(c, s, "minContains", location) ?? 1 : 1
    const maxContains = c.dialect === "2020-12" ? countOf(c, s, "maxContains", location) : undefined
    checks.push((value, ctx, ev) => {
      if (!Array.isArray(value)) return true
      let count = 0
      const exhaustive = ev !== undefined || maxContains !== undefined
      for (let i = 0; i < value.length; i++) {
        ctx.path.push(i)
        const matched = probe(contains, value[i], ctx, fresh(ctx))
        ctx.path.pop()
        if (ctx.aborted !== undefined) return false
        if (matched) {
          count++
          if (ev !== undefined) (ev.itemSet ??= new Set()).add(i)
          if (!exhaustive && count >= minContains) break
        }
      }
      if (count < minContains) {
        return minContains === 1
          ? Model.report(ctx, "contains", at("contains"), "must contain at least one valid item")
          : Model.report(ctx, "minContains", at("minContains"), `must contain at least ${minContains} valid items`)
      }
      if (maxContains !== undefined && count > maxContains) {
        return Model.report(ctx, "maxContains", at("maxContains"), `must contain at most ${maxContains} valid items`)
      }
      return true
    })
  }
  const minItems = countOf(c, s, "minItems", location)
  const maxItems = countOf(c, s, "maxItems", location)
  if (minItems !== undefined || maxItems !== undefined) {
    checks.push((value, ctx) => {
      if (!Array.isArray(value)) return true
      if (minItems !== undefined && value.length < minItems) {
        return Model.report(ctx, "minItems", at("minItems"), `must have at least ${minItems} items`)
      }
      if (maxItems !== undefined && value.length > maxItems) {
        return Model.report(ctx, "maxItems", at("maxItems"), `must have at most ${maxItems} items`)
      }
      return true
    })
  }
  if (Value.has(s, "uniqueItems")) {
    if (typeof s.uniqueItems !== "boolean") invalid(c, "uniqueItems must be a boolean", at("uniqueItems"))
    if (s.uniqueItems === true) {
      checks.push((value, ctx) => {
        if (!Array.isArray(value) || value.length < 2) return true
        const seen = new Map<string, number>()
        for (let i = 0; i < value.length; i++) {
          const key = Value.canonicalKey(value[i], ctx, at("uniqueItems"))
          if (key === undefined) return false
          const first = seen.get(key)
          if (first !== undefined) {
            return Model.report(
              ctx,
              "uniqueItems",
              at("uniqueItems"),
              `must not have duplicate items (items ${first} and ${i} are identical)`
            )
          }
          seen.set(key, i)
        }
        return true
      })
    }
  }
}

const compileRef = (
  c: Compiler,
  s: JsonObject,
  keyword: "$ref" | "$dynamicRef",
  location: string,
  base: string
): Check | undefined => {
  if (!Value.has(s, keyword)) return undefined
  const path = `${location}/${keyword}`
  const reference = s[keyword]
  if (typeof reference !== "string") return invalid(c, `${keyword} must be a string`, path)
  const resolved = Refs.resolveRef(c.index, reference, base, path)
  if (Either.isLeft(resolved)) return fail(c, resolved.left.reason, resolved.left.detail, path)
  const target = resolved.right
  if (keyword === "$dynamicRef") {
    // Without a second schema declaring the same dynamic anchor, dynamic resolution can only land where $ref
    // does. With one, the result depends on the dynamic scope, which this validator does not track.
    const anchor = reference.slice(reference.indexOf("#") + 1)
    const declared = Value.isObject(target.schema) && target.schema.$dynamicAnchor === anchor
    if (declared && (c.index.dynamicAnchors.get(anchor) ?? 0) > 1) {
      return fail(c, "UnsupportedKeyword", `$dynamicRef ${reference} needs dynamic scope resolution`, path)
    }
  }
  const node = nodeFor(c, target.schema, target.base, target.location)
  return (value, ctx, ev) => inPlace(node, value, ctx, ev)
}

const compileComposition = (
  c: Compiler,
  s: JsonObject,
  location: string,
  base: string,
  checks: Array<Check>
): void => {
  const at = (keyword: string) => `${location}/${keyword}`
  const allOf = subschemaList(c, s, "allOf", base, location)
  if (allOf !== undefined) {
    checks.push((value, ctx, ev) => {
      let ok = true
      for (const node of allOf) {
        if (!inPlace(node, value, ctx, ev)) {
          ok = false
          if (!ctx.collect) return false
        }
      }
      return ok
    })
  }
  const anyOf = subschemaList(c, s, "anyOf", base, location)
  if (anyOf !== undefined) {
    checks.push((value, ctx, ev) => {
      let matched = false
      for (const node of anyOf) {
        // With annotations tracked every branch runs: each one that matches marks what it evaluated.
        const sub = ev === undefined ? undefined : Model.evaluated()
        if (probe(node, value, ctx, sub)) {
          matched = true
          if (sub === undefined || ev === undefined) break
          Model.mergeEvaluated(ev, sub)
        }
        if (ctx.aborted !== undefined) return false
      }
      return matched || Model.report(ctx, "anyOf", at("anyOf"), "must match at least one schema in anyOf")
    })
  }
  const oneOf = subschemaList(c, s, "oneOf", base, location)
  if (oneOf !== undefined) {
    checks.push((value, ctx, ev) => {
      let first = -1
      let firstEvaluated: Evaluated | undefined
      for (let i = 0; i < oneOf.length; i++) {
        const sub = ev === undefined ? undefined : Model.evaluated()
        const matched = probe(oneOf[i], value, ctx, sub)
        if (ctx.aborted !== undefined) return false
        if (!matched) continue
        if (first >= 0) {
          return Model.report(
            ctx,
            "oneOf",
            at("oneOf"),
            `must match exactly one schema in oneOf (matches ${first} and ${i})`
          )
        }
        first = i
        firstEvaluated = sub
      }
      if (first < 0) return Model.report(ctx, "oneOf", at("oneOf"), "must match exactly one schema in oneOf")
      if (ev !== undefined && firstEvaluated !== undefined) Model.mergeEvaluated(ev, firstEvaluated)
      return true
    })
  }
  const not = subschema(c, s, "not", base, location)
  if (not !== undefined) {
    checks.push((value, ctx) => {
      const matched = probe(not, value, ctx, fresh(ctx))
      if (ctx.aborted !== undefined) return false
      return !matched || Model.report(ctx, "not", at("not"), "must not match the schema in not")
    })
  }
  const condition = subschema(c, s, "if", base, location)
  const then = subschema(c, s, "then", base, location)
  const otherwise = subschema(c, s, "else", base, location)
  // `if` alone asserts nothing, but its annotations still count for unevaluated*.
  if (condition !== undefined && (then !== undefined || otherwise !== undefined || c.index.usesUnevaluated)) {
    checks.push((value, ctx, ev) => {
      const sub = ev === undefined ? undefined : Model.evaluated()
      const holds = probe(condition, value, ctx, sub)
      if (ctx.aborted !== undefined) return false
      if (holds && ev !== undefined && sub !== undefined) Model.mergeEvaluated(ev, sub)
      const branch = holds ? then : otherwise
      if (branch === undefined || inPlace(branch, value, ctx, ev)) return true
      const keyword = holds ? "then" : "else"
      return Model.report(
        ctx,
        keyword,
        at(keyword),
        `must match the "${keyword}" schema (the "if" schema ${holds ? "matches" : "does not match"})`
      )
    })
  }
}

const compileUnevaluated = (
  c: Compiler,
  s: JsonObject,
  location: string,
  base: string,
  checks: Array<Check>
): void => {
  const at = (keyword: string) => `${location}/${keyword}`
  const properties = subschema(c, s, "unevaluatedProperties", base, location)
  if (properties !== undefined) {
    checks.push((value, ctx, ev) => {
      if (!Value.isObject(value) || ev === undefined || ev.allProps) return true
      let ok = true
      for (const key of Object.keys(value)) {
        if (value[key] === undefined || ev.props?.has(key) === true) continue
        const valid = properties.never
          ? Model.report(
            ctx,
            "unevaluatedProperties",
            at("unevaluatedProperties"),
            `must not have unevaluated property ${quote(key)}`
          )
          : enter(properties, value[key], key, ctx)
        if (!valid) {
          ok = false
          if (!ctx.collect) return false
        }
      }
      ev.allProps = true
      return ok
    })
  }
  const items = subschema(c, s, "unevaluatedItems", base, location)
  if (items !== undefined) {
    checks.push((value, ctx, ev) => {
      if (!Array.isArray(value) || ev === undefined || ev.allItems) return true
      let ok = true
      for (let i = ev.items; i < value.length; i++) {
        if (ev.itemSet?.has(i) === true) continue
        const valid = items.never
          ? Model.report(ctx, "unevaluatedItems", at("unevaluatedItems"), `must not have unevaluated item ${i}`)
          : enter(items, value[i], i, ctx)
        if (!valid) {
          ok = false
          if (!ctx.collect) return false
        }
      }
      ev.allItems = true
      return ok
    })
  }
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
export const compile = (schema: unknown, options: Options): Either.Either<Program, Failure> => {
  const dialect = Refs.dialectOf(schema, options.defaultDialect)
  if (Either.isLeft(dialect)) return Either.left(dialect.left)
  if (typeof schema !== "boolean" && !Value.isObject(schema)) {
    return Either.left({ reason: "InvalidSchema", detail: "a schema must be an object or a boolean", schemaPath: "#" })
  }
  const index = Refs.indexDocument(schema, dialect.right, options.maxDepth)
  if (Either.isLeft(index)) return Either.left(index.left)
  const c: Compiler = {
    dialect: dialect.right,
    options,
    index: index.right,
    nodes: new Map(),
    queue: [],
    patterns: new Map(),
    patternSize: 0,
    failure: undefined
  }
  const root = nodeFor(c, schema, Refs.DEFAULT_BASE, "#")
  for (let job = c.queue.pop(); job !== undefined && c.failure === undefined; job = c.queue.pop()) job()
  if (c.failure !== undefined) return Either.left(c.failure)
  const tracking = index.right.usesUnevaluated
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
  return Either.right({ dialect: dialect.right, run })
}
