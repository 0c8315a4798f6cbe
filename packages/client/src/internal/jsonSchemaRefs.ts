/** @internal */
import * as Result from "effect/Result"
import type { Dialect, Failure } from "./jsonSchemaModel.js"
import { escapeToken } from "./jsonSchemaModel.js"
import { has, isObject } from "./jsonSchemaValue.js"

/**
 * The base URI of a document without `$id`. Hierarchical, so a relative `$ref` still resolves to a URI, which is
 * then found to name nothing in the document.
 *
 * @internal
 */
export const DEFAULT_BASE = "json-schema:///root"

const DIALECT_URIS: ReadonlyArray<readonly [RegExp, Dialect]> = [
  [/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/, "2020-12"],
  [/^https?:\/\/json-schema\.org\/draft-07\/schema#?$/, "draft-07"]
]

/**
 * The dialect a `$schema` value names, or undefined for one we do not support.
 *
 * @internal
 */
export const dialectOfUri = (uri: string): Dialect | undefined => {
  const trimmed = uri.trim()
  for (const [pattern, dialect] of DIALECT_URIS) if (pattern.test(trimmed)) return dialect
  return undefined
}

/**
 * The dialect of a whole document: its root `$schema`, else the default.
 *
 * @internal
 */
export const dialectOf = (schema: unknown, fallback: Dialect): Result.Result<Dialect, Failure> => {
  if (!isObject(schema) || !has(schema, "$schema")) return Result.succeed(fallback)
  const uri = schema.$schema
  if (typeof uri !== "string") {
    return Result.fail({ reason: "InvalidSchema", detail: "$schema must be a string", schemaPath: "#/$schema" })
  }
  const dialect = dialectOfUri(uri)
  return dialect === undefined
    ? Result.fail({
      reason: "UnsupportedDialect",
      detail: `unsupported JSON Schema dialect ${JSON.stringify(uri)} (supported: 2020-12, draft-07)`,
      schemaPath: "#/$schema"
    })
    : Result.succeed(dialect)
}

/**
 * A schema resource: the document itself, or a subschema with its own `$id`.
 *
 * @internal
 */
export interface Resource {
  readonly uri: string
  readonly root: unknown
  readonly location: string
  readonly anchors: Map<string, unknown>
}

/**
 * Where a schema object sits: the base URI its references resolve against, and its JSON pointer in the document.
 *
 * @internal
 */
export interface Placement {
  readonly base: string
  readonly location: string
}

/**
 * What compiling needs to know about the document before it starts: its resources and anchors, where each schema
 * object sits, and whether anything uses `unevaluated*` (which turns annotation tracking on).
 *
 * @internal
 */
export interface DocumentIndex {
  readonly resources: Map<string, Resource>
  readonly placements: Map<object, Placement>
  readonly usesUnevaluated: boolean
  /** How many schemas declare each `$dynamicAnchor` name. */
  readonly dynamicAnchors: Map<string, number>
}

const SINGLE = [
  "additionalProperties",
  "propertyNames",
  "additionalItems",
  "contains",
  "not",
  "if",
  "then",
  "else",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contentSchema",
  "items"
]
const LISTS = ["allOf", "anyOf", "oneOf", "prefixItems", "items"]
const MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"]

const ANCHOR = /^[A-Za-z_][-A-Za-z0-9._]*$/

const resolveUri = (reference: string, base: string): URL | undefined =>
  Result.getOrUndefined(Result.try(() => new URL(reference, base)))

const withoutFragment = (url: URL): string => {
  const copy = new URL(url.href)
  copy.hash = ""
  return copy.href
}

interface Pending {
  readonly schema: unknown
  readonly base: string
  readonly location: string
  readonly depth: number
}

/**
 * Walks every schema position of the document (iteratively, so a deep document cannot overflow the stack) and
 * records resources, anchors and placements.
 *
 * @internal
 */
export const indexDocument = (
  root: unknown,
  dialect: Dialect,
  maxDepth: number
): Result.Result<DocumentIndex, Failure> => {
  const resources = new Map<string, Resource>()
  const placements = new Map<object, Placement>()
  const dynamicAnchors = new Map<string, number>()
  let usesUnevaluated = false
  const rootResource: Resource = { uri: DEFAULT_BASE, root, location: "#", anchors: new Map() }
  resources.set(DEFAULT_BASE, rootResource)
  const resourceOf = new Map<string, Resource>([[DEFAULT_BASE, rootResource]])
  const stack: Array<Pending> = [{ schema: root, base: DEFAULT_BASE, location: "#", depth: 0 }]
  const fail = (reason: Failure["reason"], detail: string, schemaPath: string) =>
    Result.fail<Failure>({ reason, detail, schemaPath })

  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { depth, location, schema } = item
    let base = item.base
    if (!isObject(schema) || placements.has(schema)) continue
    if (depth > maxDepth) return fail("DepthExceeded", `schema nested deeper than ${maxDepth} levels`, location)
    if (depth > 0 && has(schema, "$schema")) {
      const nested = typeof schema.$schema === "string" ? dialectOfUri(schema.$schema) : undefined
      if (nested !== dialect) {
        const declared = String(schema.$schema)
        return fail("UnsupportedDialect", `a subschema declares a different dialect: ${declared}`, location)
      }
    }
    const ignoresSiblings = dialect === "draft-07" && has(schema, "$ref")
    if (has(schema, "$id") && !ignoresSiblings) {
      const id = schema.$id
      if (typeof id !== "string") return fail("InvalidSchema", "$id must be a string", `${location}/$id`)
      if (dialect === "draft-07" && id.startsWith("#")) {
        const anchor = id.slice(1)
        if (ANCHOR.test(anchor)) {
          const resource = resourceOf.get(base) ?? rootResource
          if (resource.anchors.has(anchor)) return fail("InvalidSchema", `duplicate anchor #${anchor}`, location)
          resource.anchors.set(anchor, schema)
        }
      } else {
        const url = resolveUri(id, base)
        if (url === undefined) return fail("InvalidSchema", `$id ${JSON.stringify(id)} is not a URI`, location)
        if (dialect === "2020-12" && url.hash !== "" && url.hash !== "#") {
          return fail("InvalidSchema", `$id ${JSON.stringify(id)} must not have a fragment`, location)
        }
        const uri = withoutFragment(url)
        const existing = resources.get(uri)
        if (existing !== undefined && existing.root !== schema) {
          return fail("InvalidSchema", `duplicate $id ${JSON.stringify(id)}`, location)
        }
        const resource: Resource = { uri, root: schema, location, anchors: new Map() }
        resources.set(uri, resource)
        resourceOf.set(uri, resource)
        base = uri
        const anchor = url.hash.slice(1)
        if (dialect === "draft-07" && anchor !== "" && ANCHOR.test(anchor)) resource.anchors.set(anchor, schema)
      }
    }
    for (const keyword of ["$anchor", "$dynamicAnchor"]) {
      if (!has(schema, keyword)) continue
      const anchor = schema[keyword]
      if (typeof anchor !== "string" || !ANCHOR.test(anchor)) {
        return fail("InvalidSchema", `${keyword} must be a plain name`, `${location}/${keyword}`)
      }
      const resource = resourceOf.get(base) ?? rootResource
      const known = resource.anchors.get(anchor)
      if (known !== undefined && known !== schema) return fail("InvalidSchema", `duplicate anchor #${anchor}`, location)
      resource.anchors.set(anchor, schema)
      if (keyword === "$dynamicAnchor") dynamicAnchors.set(anchor, (dynamicAnchors.get(anchor) ?? 0) + 1)
    }
    placements.set(schema, { base, location })
    if (dialect === "2020-12" && (has(schema, "unevaluatedProperties") || has(schema, "unevaluatedItems"))) {
      usesUnevaluated = true
    }
    const push = (child: unknown, childLocation: string) => {
      if (isObject(child)) stack.push({ schema: child, base, location: childLocation, depth: depth + 1 })
    }
    for (const keyword of SINGLE) if (has(schema, keyword)) push(schema[keyword], `${location}/${keyword}`)
    for (const keyword of LISTS) {
      const list = schema[keyword]
      if (has(schema, keyword) && Array.isArray(list)) {
        list.forEach((child, i) => push(child, `${location}/${keyword}/${i}`))
      }
    }
    for (const keyword of MAPS) {
      const map = schema[keyword]
      if (!has(schema, keyword) || !isObject(map)) continue
      for (const name of Object.keys(map)) push(map[name], `${location}/${keyword}/${escapeToken(name)}`)
    }
  }
  return Result.succeed({ resources, placements, usesUnevaluated, dynamicAnchors })
}

/**
 * Where a `$ref` leads: the target schema, the base URI its own references resolve against, and its location.
 *
 * @internal
 */
export interface Target {
  readonly schema: unknown
  readonly base: string
  readonly location: string
}

const unescapeToken = (token: string): string => token.replace(/~1/g, "/").replace(/~0/g, "~")

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/

/**
 * Resolves a `$ref` against the base URI of the schema holding it. Only references into the document itself
 * resolve: anything else is refused as a remote reference, and nothing is ever fetched.
 *
 * @internal
 */
export const resolveRef = (
  index: DocumentIndex,
  reference: string,
  base: string,
  schemaPath: string
): Result.Result<Target, Failure> => {
  let resourceUri: string
  let rawFragment: string
  if (reference.startsWith("#")) {
    resourceUri = base
    rawFragment = reference.slice(1)
  } else {
    const url = resolveUri(reference, base)
    if (url === undefined) {
      return Result.fail({ reason: "RemoteRef", detail: `remote $ref not fetched: ${reference}`, schemaPath })
    }
    rawFragment = url.hash.slice(1)
    resourceUri = withoutFragment(url)
  }
  const resource = index.resources.get(resourceUri)
  if (resource === undefined) {
    return Result.fail({ reason: "RemoteRef", detail: `remote $ref not fetched: ${reference}`, schemaPath })
  }
  const fragment = Result.getOrUndefined(Result.try(() => decodeURIComponent(rawFragment)))
  if (fragment === undefined) {
    return Result.fail({ reason: "InvalidSchema", detail: `malformed $ref ${JSON.stringify(reference)}`, schemaPath })
  }
  const unresolved = () =>
    Result.fail<Failure>({ reason: "UnresolvedRef", detail: `$ref ${reference} points at nothing`, schemaPath })
  const placed = (schema: unknown, fallbackLocation: string): Target => {
    const placement = isObject(schema) ? index.placements.get(schema) : undefined
    return placement !== undefined
      ? { schema, base: placement.base, location: placement.location }
      : { schema, base: resource.uri, location: fallbackLocation }
  }
  if (fragment === "") return Result.succeed(placed(resource.root, resource.location))
  if (!fragment.startsWith("/")) {
    const anchored = resource.anchors.get(fragment)
    return anchored === undefined ? unresolved() : Result.succeed(placed(anchored, resource.location))
  }
  let current: unknown = resource.root
  for (const raw of fragment.slice(1).split("/")) {
    const token = unescapeToken(raw)
    if (Array.isArray(current)) {
      if (!ARRAY_INDEX.test(token) || Number(token) >= current.length) return unresolved()
      current = current[Number(token)]
    } else if (isObject(current) && has(current, token)) {
      current = current[token]
    } else {
      return unresolved()
    }
  }
  const pointerLocation = resource.location === "#" ? `#${fragment}` : `${resource.location}${fragment}`
  return Result.succeed(placed(current, pointerLocation))
}
