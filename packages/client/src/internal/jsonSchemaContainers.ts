/**
 * The JSON Schema keywords of objects and arrays.
 *
 * @internal
 */
import * as Model from "./jsonSchemaModel.js"
import * as Pattern from "./jsonSchemaPattern.js"
import * as Value from "./jsonSchemaValue.js"
import {
  countOf,
  enter,
  fresh,
  inPlace,
  invalid,
  namesOf,
  nodeFor,
  probe,
  quote,
  regexFor,
  subschema,
  subschemaList,
  subschemaMap
} from "./jsonSchemaCompiler.js"
import type { Check, Compiler, JsonObject, Node } from "./jsonSchemaCompiler.js"

/** The keywords of objects: required, properties, patternProperties, additionalProperties, sizes, names. */
export const compileObject = (
  c: Compiler,
  s: JsonObject,
  location: string,
  base: string,
  checks: Array<Check>
): void => {
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

/** The keywords of arrays: items, prefixItems, contains, sizes, uniqueItems. */
export const compileArray = (
  c: Compiler,
  s: JsonObject,
  location: string,
  base: string,
  checks: Array<Check>
): void => {
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

