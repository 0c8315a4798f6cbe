/**
 * Bodies of `TypedTool`: the comparison of a Schema's JSON Schema with a server's advertised `inputSchema`, and the
 * decoding of a `tools/call` result.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import type * as McpSchema from "../McpSchema.js"
import * as Codec from "./codec.js"
import * as protoKeys from "./protoKeys.js"
import { textOf, toolFailed } from "./toolResult.js"
import * as Value from "./jsonSchemaValue.js"

/** @internal */
export type IssueReason = "NotAdvertised" | "MissingRequired" | "WrongType" | "UnknownProperty"

/** @internal */
export interface Issue {
  readonly path: string
  readonly reason: IssueReason
  readonly detail: string
}

type Json = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isName = (value: unknown): value is string => typeof value === "string"

const MAX_DEPTH = 32

// the most enum values an issue's detail names
const SHOWN = 20
// an enum value is compared within these limits; one that needs more cannot be shown to be accepted
const ENUM_LIMITS = { maxDepth: MAX_DEPTH, maxSteps: 100_000 } as const

const PREVIEW = 80

/** A reference token with its percent-escapes decoded; undefined when they are malformed (`%E0%A4%A`). */
const decodeToken = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}

/**
 * Follows a document-local `$ref` (`#/$defs/X`, `#/definitions/X`) of `root`; anything else, a reference that
 * does not resolve or one with malformed percent-escapes among them, is left as it is.
 */
const deref = (root: Json, schema: unknown, depth = 0): unknown => {
  if (!isObject(schema) || typeof schema.$ref !== "string" || depth > MAX_DEPTH) return schema
  const ref = schema.$ref
  if (!ref.startsWith("#/")) return schema
  let target: unknown = root
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeToken(raw)?.replace(/~1/g, "/").replace(/~0/g, "~")
    if (key === undefined || !isObject(target) || !Object.hasOwn(target, key)) return schema
    target = target[key]
  }
  return deref(root, target, depth + 1)
}

const JSON_TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"] as const
type JsonType = typeof JSON_TYPES[number]

const typeOfValue = (value: unknown): JsonType =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "array"
    : typeof value === "number"
    ? (Number.isInteger(value) ? "integer" : "number")
    : typeof value === "string"
    ? "string"
    : typeof value === "boolean"
    ? "boolean"
    : "object"

/**
 * The JSON types a schema admits, or `undefined` when it does not say (no `type`, `enum`, `const` or union of
 * those): such a schema is not compared.
 */
const typesOf = (root: Json, schema: unknown, depth = 0): ReadonlySet<JsonType> | undefined => {
  const resolved = deref(root, schema)
  if (!isObject(resolved) || depth > MAX_DEPTH) return undefined
  if (Object.hasOwn(resolved, "const")) return new Set([typeOfValue(resolved.const)])
  if (Array.isArray(resolved.enum)) return new Set(resolved.enum.map(typeOfValue))
  if (typeof resolved.type === "string") return new Set([resolved.type as JsonType])
  // only names: anything else in the list means no type, and would reach the issue's text through String()
  if (Array.isArray(resolved.type)) return new Set(resolved.type.filter(isName) as ReadonlyArray<JsonType>)
  const members = Array.isArray(resolved.anyOf)
    ? resolved.anyOf
    : Array.isArray(resolved.oneOf)
    ? resolved.oneOf
    : undefined
  if (members === undefined) return undefined
  const all = new Set<JsonType>()
  for (const member of members) {
    const types = typesOf(root, member, depth + 1)
    if (types === undefined) return undefined
    for (const type of types) all.add(type)
  }
  return all
}

// a number and an integer are treated as compatible both ways: a Schema.Number sent to an integer parameter is
// the caller's business (the server validates it), and flagging it would reject most hand-written tools
const accepts = (theirs: ReadonlySet<JsonType>, type: JsonType): boolean =>
  theirs.has(type) || (type === "integer" && theirs.has("number")) || (type === "number" && theirs.has("integer"))

const enumOf = (root: Json, schema: unknown): ReadonlyArray<unknown> | undefined => {
  const resolved = deref(root, schema)
  if (!isObject(resolved)) return undefined
  if (Object.hasOwn(resolved, "const")) return [resolved.const]
  return Array.isArray(resolved.enum) ? resolved.enum : undefined
}

const describeTypes = (types: ReadonlySet<JsonType>): string => [...types].join(" or ")

const childPath = (path: string, key: string): string => `${path}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`

interface Side {
  readonly root: Json
  readonly schema: unknown
}

/**
 * Whether every value `ours` may produce is one `theirs` accepts, as far as required properties, JSON types and
 * enumerations go (formats, ranges and patterns are the server's to check).
 */
const compare = (ours: Side, theirs: Side, path: string, issues: Array<Issue>, depth: number): void => {
  if (depth > MAX_DEPTH) return
  const ourSchema = deref(ours.root, ours.schema)
  const theirSchema = deref(theirs.root, theirs.schema)
  if (!isObject(theirSchema) || !isObject(ourSchema)) return
  const theirTypes = typesOf(theirs.root, theirSchema)
  const ourTypes = typesOf(ours.root, ourSchema)
  if (theirTypes !== undefined && ourTypes !== undefined) {
    const wrong = [...ourTypes].filter((type) => !accepts(theirTypes, type))
    if (wrong.length > 0) {
      issues.push({
        path,
        reason: "WrongType",
        detail: `the server expects ${describeTypes(theirTypes)}; the Schema may give ${wrong.join(" or ")}`
      })
      return
    }
  }
  const theirEnum = enumOf(theirs.root, theirSchema)
  if (theirEnum !== undefined) {
    const ourEnum = enumOf(ours.root, ourSchema)
    // server values may nest arbitrarily deep: compared and shown within bounds, never through JSON.stringify
    const outside = (ourEnum ?? []).filter((value) =>
      !theirEnum.some((allowed) => Value.equalWithin(value, allowed, ENUM_LIMITS))
    )
    if (ourEnum === undefined || outside.length > 0) {
      // (at most SHOWN values: a server's enum may be as long as it likes)
      const show = (values: ReadonlyArray<unknown>) => {
        const shown = values.slice(0, SHOWN).map((value) => Codec.preview(value, PREVIEW)).join(", ")
        return values.length > SHOWN ? `${shown} and ${values.length - SHOWN} more` : shown
      }
      issues.push({
        path,
        reason: "WrongType",
        detail: `the server accepts only ${show(theirEnum)}; the Schema ${
          ourEnum === undefined ? "is not limited to those" : `may give ${show(outside)}`
        }`
      })
      return
    }
  }
  const isObjectSchema = (schema: Json, types: ReadonlySet<JsonType> | undefined) =>
    types?.has("object") === true || (types === undefined && isObject(schema.properties))
  if (isObjectSchema(theirSchema, theirTypes) && isObjectSchema(ourSchema, ourTypes)) {
    compareObjects(ours, ourSchema, theirs, theirSchema, path, issues, depth)
    return
  }
  if (theirTypes?.has("array") === true && ourTypes?.has("array") === true && isObject(ourSchema.items)) {
    compare(
      { root: ours.root, schema: ourSchema.items },
      { root: theirs.root, schema: theirSchema.items },
      `${path}/items`,
      issues,
      depth + 1
    )
  }
}

const compareObjects = (
  ours: Side,
  ourSchema: Json,
  theirs: Side,
  theirSchema: Json,
  path: string,
  issues: Array<Issue>,
  depth: number
): void => {
  const ourProperties = isObject(ourSchema.properties) ? ourSchema.properties : {}
  const theirProperties = isObject(theirSchema.properties) ? theirSchema.properties : {}
  const ourRequired = new Set(Array.isArray(ourSchema.required) ? ourSchema.required.map(String) : [])
  // a server's entry that is not a name (an array nested some thousands deep overflows String()) names nothing
  const theirRequired = Array.isArray(theirSchema.required) ? theirSchema.required.filter(isName) : []
  for (const name of theirRequired) {
    if (ourRequired.has(name)) continue
    issues.push({
      path: childPath(path, name),
      reason: "MissingRequired",
      detail: Object.hasOwn(ourProperties, name)
        ? `the server requires "${name}"; the Schema makes it optional`
        : `the server requires "${name}"; the Schema does not have it`
    })
  }
  for (const [name, ourProperty] of Object.entries(ourProperties)) {
    if (Object.hasOwn(theirProperties, name)) {
      compare(
        { root: ours.root, schema: ourProperty },
        { root: theirs.root, schema: theirProperties[name] },
        childPath(path, name),
        issues,
        depth + 1
      )
    } else if (theirSchema.additionalProperties === false) {
      issues.push({
        path: childPath(path, name),
        reason: "UnknownProperty",
        detail: `the server does not take "${name}" (and no other property than ${
          Object.keys(theirProperties).map((key) => `"${key}"`).join(", ") || "none"
        })`
      })
    } else if (isObject(theirSchema.additionalProperties)) {
      compare(
        { root: ours.root, schema: ourProperty },
        { root: theirs.root, schema: theirSchema.additionalProperties },
        childPath(path, name),
        issues,
        depth + 1
      )
    }
  }
}

// What Effect 4 generates for a schema describes its JSON codec (`Schema.toCodecJson`): a `Number` also takes the
// strings "NaN", "Infinity" and "-Infinity", and an `optional` member also takes `null`. The parameters are
// encoded with the schema itself, which gives neither, so the comparison must not see those branches (it would
// report a WrongType the Schema can never produce). The server's `jsonSchemaOf` leaves out the same branches.
const isNonFiniteBranch = (member: unknown): boolean => {
  if (!isObject(member) || member.type !== "string" || !Array.isArray(member.enum)) return false
  const values = member.enum as ReadonlyArray<unknown>
  return values.length === 3 && ["NaN", "Infinity", "-Infinity"].every((value) => values.includes(value))
}

const isNullBranch = (member: unknown): boolean =>
  isObject(member) && member.type === "null" && Object.keys(member).length === 1

// an `optional(NullOr(X))` member is `X | null | undefined`: one `null` branch is enough
const secondNullBranch = () => {
  let seen = false
  return (member: unknown): boolean => {
    if (!isNullBranch(member)) return false
    if (seen) return true
    seen = true
    return false
  }
}

/** An `anyOf` without the given branches: the one branch left in its place when a single one remains. */
const withoutBranches = (node: Json, drop: (member: unknown) => boolean): Json => {
  if (!Array.isArray(node.anyOf)) return node
  const kept = (node.anyOf as ReadonlyArray<unknown>).filter((member) => !drop(member))
  if (kept.length === node.anyOf.length) return node
  const rest = Object.fromEntries(Object.entries(node).filter(([key]) => key !== "anyOf"))
  return kept.length === 1 && isObject(kept[0]) ? { ...kept[0], ...rest } : { ...rest, anyOf: kept }
}

const takesNull = (ast: AST.AST): boolean => AST.isNull(ast) || (AST.isUnion(ast) && ast.types.some(takesNull))

// whether a member's type takes `undefined` but not `null` (an `optional` member, not a `NullOr` one)
const takesUndefinedOnly = (ast: AST.AST): boolean =>
  AST.isUnion(ast) && ast.types.some(AST.isUndefined) && !takesNull(ast)

const unsuspend = (ast: AST.AST | undefined): AST.AST | undefined => {
  let current = ast
  for (let i = 0; current !== undefined && AST.isSuspend(current) && i < MAX_DEPTH; i++) current = current.thunk()
  return current
}

/** The AST of a keyword's subschema, where the encoded AST says which one it is; undefined when it does not. */
const childAst = (ast: AST.AST | undefined, key: string): ((index: number) => AST.AST | undefined) | undefined => {
  if (ast === undefined) return undefined
  if (AST.isArrays(ast)) {
    if (key === "items" && ast.rest.length === 1) return () => ast.rest[0]
    if (key === "prefixItems") return (index) => ast.elements[index]
  }
  if (AST.isObjects(ast) && key === "additionalProperties" && ast.indexSignatures.length === 1) {
    return () => ast.indexSignatures[0].type
  }
  return undefined
}

/** Leaves out the codec's branches, everywhere in the document; `ast` follows it through objects and arrays. */
const forEncoding = (node: unknown, ast: AST.AST | undefined, depth = 0): unknown => {
  if (Array.isArray(node)) return node.map((item) => forEncoding(item, undefined, depth + 1))
  if (!isObject(node)) return node
  const resolved = depth > MAX_DEPTH ? undefined : unsuspend(ast)
  const objects = resolved !== undefined && AST.isObjects(resolved) ? resolved : undefined
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(withoutBranches(node, isNonFiniteBranch))) {
    if (key === "properties" && isObject(value)) {
      const properties: Record<string, unknown> = {}
      for (const [name, property] of Object.entries(value)) {
        const signature = objects?.propertySignatures.find((candidate) => candidate.name === name)
        const optional = signature !== undefined && AST.isOptional(signature.type) &&
          takesUndefinedOnly(signature.type)
        const cleaned = !isObject(property) ? property : optional
          ? withoutBranches(property, isNullBranch)
          : withoutBranches(property, secondNullBranch())
        properties[name] = forEncoding(cleaned, signature?.type, depth + 1)
      }
      out[key] = properties
    } else {
      const child = childAst(resolved, key)
      out[key] = Array.isArray(value)
        ? value.map((item, index) => forEncoding(item, child?.(index), depth + 1))
        : forEncoding(value, child?.(0), depth + 1)
    }
  }
  return out
}

/**
 * The JSON Schema of what a Schema encodes to (objects closed, as Effect 3 wrote them), with its own definitions
 * under `$defs`.
 */
export const jsonSchemaOf = <S extends Schema.Top>(schema: S): Json => {
  const encoded = AST.toEncoded(schema.ast)
  // Effect reads an empty struct as "any non-nullish value"; as tool arguments it can only be an empty object
  if (AST.isObjects(encoded) && encoded.propertySignatures.length === 0 && encoded.indexSignatures.length === 0) {
    return { type: "object", properties: {} }
  }
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  const root = forEncoding(document.schema, encoded) as Json
  const definitions = forEncoding(document.definitions, undefined) as Json
  return Object.keys(definitions).length > 0 ? { ...root, $defs: definitions } : root
}

/** Every way `ours` may send what `advertised.inputSchema` refuses. */
export const inputIssues = (ours: Json, advertised: McpSchema.Tool): ReadonlyArray<Issue> => {
  const issues: Array<Issue> = []
  compare({ root: ours, schema: ours }, { root: advertised.inputSchema, schema: advertised.inputSchema }, "", issues, 0)
  return issues
}

/** The text of an `isError` result, for the failure's message. */
export const errorText = textOf

export { toolFailed }

/**
 * Decodes a successful result: `structuredContent` when there is any, otherwise the text content, first as the
 * string itself, then as JSON when the text parses as JSON and the string did not decode. The text is a server's
 * string, as large as a frame and not checked as one: it is parsed only within the frame limits' defaults
 * (`Codec.scanFrame`), else it decodes as the string alone.
 */
export const decodeResult = <R, RI>(
  schema: Schema.Codec<R, RI>,
  result: McpSchema.CallToolResult
): Effect.Effect<R, Schema.SchemaError> => {
  const decode = Schema.decodeUnknownEffect(schema)
  if (result.structuredContent !== undefined) return decode(result.structuredContent)
  const text = textOf(result)
  return Effect.catch(decode(text), (asText) => {
    if (Codec.scanFrame(text, Codec.defaultLimits) !== undefined) return Effect.fail(asText)
    const parsed = Result.try(() => protoKeys.parse(text))
    return Result.isSuccess(parsed) ? decode(parsed.success) : Effect.fail(asText)
  })
}
