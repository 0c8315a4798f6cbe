/**
 * The JSON Schema keywords that apply other schemas in place: references, composition (allOf, anyOf, oneOf, not,
 * if/then/else, dependentSchemas) and unevaluated properties and items.
 *
 * @internal
 */
import * as Result from "effect/Result"
import type { Evaluated } from "./jsonSchemaModel.js"
import * as Model from "./jsonSchemaModel.js"
import * as Refs from "./jsonSchemaRefs.js"
import * as Value from "./jsonSchemaValue.js"
import {
  enter,
  fail,
  fresh,
  inPlace,
  invalid,
  nodeFor,
  probe,
  quote,
  subschema,
  subschemaList
} from "./jsonSchemaCompiler.js"
import type { Check, Compiler, JsonObject } from "./jsonSchemaCompiler.js"

/** `$ref` (and `$dynamicRef`): the referenced schema, applied in place. */
export const compileRef = (
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
  if (Result.isFailure(resolved)) return fail(c, resolved.failure.reason, resolved.failure.detail, path)
  const target = resolved.success
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

/** allOf, anyOf, oneOf, not, if/then/else and dependentSchemas. */
export const compileComposition = (
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

/** unevaluatedProperties and unevaluatedItems (2020-12): what no other keyword evaluated. */
export const compileUnevaluated = (
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

