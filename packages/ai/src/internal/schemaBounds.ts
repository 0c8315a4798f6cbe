/**
 * The bounds of a JSON Schema given to a model. A provider serializes every tool's schema into its request with
 * `JSON.stringify`, which recurses: a schema nested some thousands deep (which `JSON.parse` builds without
 * complaint) throws `RangeError` there, and one large schema costs every request its size. Both are measured here
 * without recursion, stopping as soon as a bound is passed, so the cost is bounded by the bounds, not the schema.
 *
 * @internal
 */

/** @internal */
export interface Excess {
  readonly reason: "SchemaDepth" | "SchemaSize"
  readonly detail: string
}

/** The length `JSON.stringify` gives a scalar (`null` for what it cannot write). */
const scalarLength = (value: unknown): number => {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value).length
    case "number":
      return Number.isFinite(value) ? String(value).length : 4
    case "boolean":
      return value ? 4 : 5
    default:
      return 4
  }
}

/**
 * Whether a schema passes `maxDepth` levels of nesting (the schema itself is level 1, each object or array inside
 * one more) or `maxLength` characters of compact JSON text; undefined when it fits.
 *
 * @internal
 */
export const check = (schema: unknown, maxDepth: number, maxLength: number): Excess | undefined => {
  const deep: Excess = { reason: "SchemaDepth", detail: `its inputSchema is nested deeper than ${maxDepth} levels` }
  const long: Excess = {
    reason: "SchemaSize",
    detail: `its inputSchema is longer than ${maxLength} characters of JSON`
  }
  let length = 0
  const values: Array<unknown> = [schema]
  const depths: Array<number> = [1]
  while (values.length > 0) {
    const value = values.pop()
    const depth = depths.pop()!
    if (typeof value !== "object" || value === null) {
      // a string longer than what is left is not escaped to be measured
      if (typeof value === "string" && value.length + 2 > maxLength - length) return long
      length += scalarLength(value)
      if (length > maxLength) return long
      continue
    }
    if (depth > maxDepth) return deep
    if (Array.isArray(value)) {
      length += 1 + Math.max(1, value.length)
      if (length > maxLength) return long
      for (let i = 0; i < value.length; i++) {
        values.push(value[i])
        depths.push(depth + 1)
      }
      continue
    }
    let members = 0
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue
      // the key, its colon, and the comma or brace after the member
      length += scalarLength(key) + 2
      if (length > maxLength) return long
      values.push((value as Record<string, unknown>)[key])
      depths.push(depth + 1)
      members++
    }
    if (members === 0) length += 2
    else length += 1
    if (length > maxLength) return long
  }
  return undefined
}
