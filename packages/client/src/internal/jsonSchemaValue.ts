/** @internal */
import type { Context } from "./jsonSchemaModel.js"
import { abort, charge, makeContext } from "./jsonSchemaModel.js"

/**
 * A JSON object (not an array, not null).
 *
 * @internal
 */
export const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * An own property that holds a value: JSON has no `undefined`, and an inherited name such as `constructor` is
 * never a property of the document.
 *
 * @internal
 */
export const has = (object: { readonly [key: string]: unknown }, key: string): boolean =>
  Object.hasOwn(object, key) && object[key] !== undefined

/**
 * The bits of the JSON types, as in `type`. An integral number is both a number and an integer.
 *
 * @internal
 */
export const TypeBits = {
  null: 1,
  boolean: 2,
  object: 4,
  array: 8,
  number: 16,
  string: 32,
  integer: 64
} as const

/**
 * @internal
 */
export type TypeName = keyof typeof TypeBits

/**
 * @internal
 */
export const isTypeName = (name: string): name is TypeName => Object.hasOwn(TypeBits, name)

/**
 * The type bits of a value; 0 for something that is not JSON (undefined, a function, a bigint).
 *
 * @internal
 */
export const typeBits = (value: unknown): number => {
  switch (typeof value) {
    case "string":
      return TypeBits.string
    case "number":
      return Number.isInteger(value) ? TypeBits.number | TypeBits.integer : TypeBits.number
    case "boolean":
      return TypeBits.boolean
    case "object":
      return value === null ? TypeBits.null : Array.isArray(value) ? TypeBits.array : TypeBits.object
    default:
      return 0
  }
}

/**
 * The length of a string in Unicode code points, as `minLength` and `maxLength` count it (a surrogate pair is one
 * character).
 *
 * @internal
 */
export const codePointLength = (text: string): number => {
  let length = text.length
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        length--
        i++
      }
    }
  }
  return length
}

/**
 * JSON equality: numbers by value (1 equals 1.0), objects regardless of key order. Each visited value costs one
 * step; nesting deeper than the run allows aborts it.
 *
 * @internal
 */
export const equal = (a: unknown, b: unknown, ctx: Context, schemaPath: string, depth = 0): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (depth >= ctx.maxDepth) return abort(ctx, "DepthExceeded", schemaPath)
  if (!charge(ctx, 1, schemaPath)) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) {
      if (!equal(a[i], b[i], ctx, schemaPath, depth + 1)) return false
    }
    return true
  }
  if (Array.isArray(b) || !isObject(a) || !isObject(b)) return false
  const keys = Object.keys(a).filter((key) => a[key] !== undefined)
  if (keys.length !== Object.keys(b).filter((key) => b[key] !== undefined).length) return false
  for (const key of keys) {
    if (!has(b, key) || !equal(a[key], b[key], ctx, schemaPath, depth + 1)) return false
  }
  return true
}

/**
 * {@link equal} outside a validation run, for server data compared elsewhere (a hub's listings, a tool's enum).
 * False also when the values nest deeper than `maxDepth` or need more than `maxSteps` steps: the answer is then
 * "not known to be equal", which the caller treats as a difference.
 *
 * @internal
 */
export const equalWithin = (
  a: unknown,
  b: unknown,
  limits: { readonly maxDepth: number; readonly maxSteps: number }
): boolean => {
  const ctx = makeContext({ ...limits, maxIssues: 1, formats: "annotation", defaultDialect: "2020-12" }, false, false)
  return equal(a, b, ctx, "")
}

/**
 * A string that two JSON values share exactly when they are equal, for `uniqueItems` in linear time. Undefined
 * when the run was aborted on the way (too deep, or out of budget).
 *
 * @internal
 */
export const canonicalKey = (value: unknown, ctx: Context, schemaPath: string, depth = 0): string | undefined => {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value)
    case "number":
      return String(value)
    case "boolean":
      return value ? "t" : "f"
    case "object": {
      if (value === null) return "n"
      if (depth >= ctx.maxDepth) {
        abort(ctx, "DepthExceeded", schemaPath)
        return undefined
      }
      if (!charge(ctx, 1, schemaPath)) return undefined
      const parts: Array<string> = []
      if (Array.isArray(value)) {
        for (const item of value) {
          const key = canonicalKey(item, ctx, schemaPath, depth + 1)
          if (key === undefined) return undefined
          parts.push(key)
        }
        return `[${parts.join(",")}]`
      }
      if (!isObject(value)) return "?"
      for (const name of Object.keys(value).sort()) {
        if (value[name] === undefined) continue
        const key = canonicalKey(value[name], ctx, schemaPath, depth + 1)
        if (key === undefined) return undefined
        parts.push(`${JSON.stringify(name)}:${key}`)
      }
      return `{${parts.join(",")}}`
    }
    default:
      return "?"
  }
}
