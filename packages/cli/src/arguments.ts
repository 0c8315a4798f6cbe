/**
 * The arguments of `tools call` and `prompts get`, read and checked before any call: the JSON object, then each
 * `--arg key=value` read by the type the tool's input schema declares for it (numbers, booleans, null, arrays from a
 * JSON array or a comma list, objects from JSON, nested keys with dots), then the whole against the schema. Every
 * mistake is a usage error naming the argument and what it expects, whatever the server would have said.
 *
 * @since 0.1.0
 */
import * as JsonSchema from "@conduit-mcp/client/JsonSchema"
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { UsageError } from "./errors.js"

type Json = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const JsonObject = Schema.fromJsonString(Schema.Record(Schema.String, Schema.Unknown))
const decodeJsonObject = Schema.decodeUnknownResult(JsonObject)

/**
 * Reads the optional `<json-arguments>` positional argument: a JSON object.
 *
 * @since 0.1.0
 * @category arguments
 */
export const parseJsonArguments = (text: Option.Option<string>): Result.Result<Json, UsageError> =>
  Option.match(text, {
    onNone: () => Result.succeed({}),
    onSome: (raw) =>
      Result.mapError(
        decodeJsonObject(raw),
        () => new UsageError({ message: `the arguments must be a JSON object, such as '{"text":"hi"}'; got ${raw}` })
      )
  })

/**
 * Reads `--arg key=value` options (the value may contain `=`).
 *
 * @since 0.1.0
 * @category arguments
 */
export const parseKeyValues = (
  list: ReadonlyArray<string>
): Result.Result<ReadonlyArray<readonly [string, string]>, UsageError> => {
  const pairs: Array<readonly [string, string]> = []
  for (const item of list) {
    const index = item.indexOf("=")
    if (index <= 0) return Result.fail(new UsageError({ message: `--arg must be key=value, got ${JSON.stringify(item)}` }))
    pairs.push([item.slice(0, index), item.slice(index + 1)])
  }
  return Result.succeed(pairs)
}

const typesOf = (property: unknown): ReadonlyArray<string> => {
  if (!isRecord(property)) return []
  if (Array.isArray(property.type)) return property.type.filter((t): t is string => typeof t === "string")
  if (typeof property.type === "string") return [property.type]
  if (Array.isArray(property.enum)) {
    return [...new Set(property.enum.map((v) => v === null ? "null" : Array.isArray(v) ? "array" : typeof v))]
  }
  return []
}

/**
 * What an argument expects, in words: `a number`, `one of: a, b`, `true or false`.
 *
 * @since 0.1.0
 * @category arguments
 */
export const expected = (property: unknown): string => {
  if (isRecord(property) && Array.isArray(property.enum)) {
    return `one of: ${property.enum.map((v) => typeof v === "string" ? v : JSON.stringify(v)).join(", ")}`
  }
  const types = typesOf(property)
  if (types.length === 0) return "any JSON value or text"
  return types.map((t) =>
    t === "integer" ? "an integer" : t === "number" ? "a number" : t === "boolean" ? "true or false" : t === "array"
      ? "a list (a JSON array or a comma list)" : t === "object" ? "a JSON object" : t === "null" ? "null" : "text"
  ).join(" or ")
}

const parseJson = (text: string): Option.Option<unknown> => Option.liftThrowable(JSON.parse)(text)

const booleans: Readonly<Record<string, boolean>> = {
  true: true, false: false, yes: true, no: false, on: true, off: false, "1": true, "0": false
}

/**
 * Reads the text of one `--arg` as the type the schema declares for it; `None` when it cannot be read as any of
 * them. A property without a type takes JSON when the text parses, else the text itself.
 *
 * @since 0.1.0
 * @category arguments
 */
export const coerceArgument = (raw: string, property: unknown): Option.Option<unknown> => {
  const types = typesOf(property)
  if (types.length === 0) return Option.some(Option.getOrElse(parseJson(raw), () => raw))
  const attempts: Array<() => Option.Option<unknown>> = []
  for (const type of types) {
    switch (type) {
      case "null":
        attempts.unshift(() => raw === "null" ? Option.some(null) : Option.none())
        break
      case "integer":
      case "number":
        attempts.push(() => {
          const value = raw.trim() === "" ? Number.NaN : Number(raw)
          return Number.isFinite(value) && (type === "number" || Number.isInteger(value)) ? Option.some(value) : Option.none()
        })
        break
      case "boolean":
        attempts.push(() => Option.fromNullishOr(booleans[raw.toLowerCase()]))
        break
      case "array":
        attempts.push(() => {
          if (raw.trim().startsWith("[")) return Option.filter(parseJson(raw), Array.isArray)
          const items = isRecord(property) ? property.items : undefined
          const parts = raw === "" ? [] : raw.split(",").map((part) => part.trim())
          const read = parts.map((part) => coerceArgument(part, items))
          return read.every(Option.isSome) ? Option.some(read.map((item) => item.value)) : Option.none()
        })
        break
      case "object":
        attempts.push(() => Option.filter(parseJson(raw), isRecord))
        break
      case "string":
        attempts.push(() => Option.some(raw))
        break
    }
  }
  for (const attempt of attempts) {
    const value = attempt()
    if (Option.isSome(value)) return value
  }
  return Option.none()
}

/** Puts `value` at the dotted `key` (`address.city`), unless the schema names the dotted key itself. */
const place = (target: Record<string, unknown>, schema: Json, key: string, value: unknown): void => {
  const properties = isRecord(schema.properties) ? schema.properties : {}
  const parts = key in properties || !key.includes(".") ? [key] : key.split(".")
  let node = target
  for (const part of parts.slice(0, -1)) {
    const next = node[part]
    const child: Record<string, unknown> = isRecord(next) ? { ...next } : {}
    node[part] = child
    node = child
  }
  node[parts[parts.length - 1]] = value
}

/** The schema of the dotted `key`, or undefined when the schema does not name it. */
const propertyAt = (schema: Json, key: string): unknown => {
  const properties = isRecord(schema.properties) ? schema.properties : {}
  if (key in properties) return properties[key]
  let node: unknown = schema
  for (const part of key.split(".")) {
    const children = isRecord(node) && isRecord(node.properties) ? node.properties : undefined
    if (children === undefined || !(part in children)) return undefined
    node = children[part]
  }
  return node
}

const closedTo = (schema: Json): boolean =>
  isRecord(schema.properties) && Object.keys(schema.properties).length > 0 && schema.additionalProperties !== true &&
  !isRecord(schema.additionalProperties)

/**
 * The arguments of a tool call, checked against the tool's input schema.
 *
 * @since 0.1.0
 * @category arguments
 */
export const toolArguments = (
  tool: McpSchema.Tool,
  json: Option.Option<string>,
  args: ReadonlyArray<string>
): Result.Result<Json, UsageError> =>
  Result.gen(function*() {
    const schema: Json = isRecord(tool.inputSchema) ? tool.inputSchema : {}
    const fail = (message: string) => Result.fail(new UsageError({ message: `tools call ${tool.name}: ${message}` }))
    const base = yield* parseJsonArguments(json)
    const pairs = yield* parseKeyValues(args)
    const names = isRecord(schema.properties) ? Object.keys(schema.properties) : []
    const merged: Record<string, unknown> = { ...base }
    for (const [key, raw] of pairs) {
      const property = propertyAt(schema, key)
      if (property === undefined && closedTo(schema)) {
        return yield* fail(`unknown argument ${JSON.stringify(key)} (the tool takes: ${names.join(", ")})`)
      }
      const value = coerceArgument(raw, property)
      if (Option.isNone(value)) {
        return yield* fail(`--arg ${key}: expected ${expected(property)}, got ${JSON.stringify(raw)}`)
      }
      place(merged, schema, key, value.value)
    }
    for (const key of Object.keys(merged)) {
      if (!names.includes(key) && closedTo(schema)) {
        return yield* fail(`unknown argument ${JSON.stringify(key)} (the tool takes: ${names.join(", ")})`)
      }
    }
    const required = Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : []
    const missing = required.filter((name) => !(name in merged))
    if (missing.length > 0) {
      const properties = isRecord(schema.properties) ? schema.properties : {}
      return yield* fail(
        `missing ${missing.map((name) => `${name} (${expected(properties[name])})`).join(", ")}; give --arg ${missing[0]}=...`
      )
    }
    const checked = JsonSchema.validate(schema, merged, { maxSteps: 100_000 })
    if (Result.isFailure(checked) && checked.failure._tag === "JsonSchemaMismatch") {
      const issue = checked.failure.issues[0]
      const where = issue.instancePath === "" ? "the arguments" : issue.instancePath.slice(1).replaceAll("/", ".")
      return yield* fail(`${where}: ${issue.message}`)
    }
    return merged
  })

/**
 * The arguments of a prompt (strings), checked against the arguments the prompt declares.
 *
 * @since 0.1.0
 * @category arguments
 */
export const promptArguments = (
  prompt: McpSchema.Prompt,
  json: Option.Option<string>,
  args: ReadonlyArray<string>
): Result.Result<Readonly<Record<string, string>>, UsageError> =>
  Result.gen(function*() {
    const base = yield* parseJsonArguments(json)
    const pairs = yield* parseKeyValues(args)
    const merged: Record<string, string> = {}
    for (const [key, value] of Object.entries(base)) merged[key] = typeof value === "string" ? value : JSON.stringify(value)
    for (const [key, value] of pairs) merged[key] = value
    const declared = prompt.arguments ?? []
    const names = declared.map((argument) => argument.name)
    const fail = (message: string) => Result.fail(new UsageError({ message: `prompts get ${prompt.name}: ${message}` }))
    for (const key of Object.keys(merged)) {
      if (!names.includes(key)) {
        return yield* fail(
          `unknown argument ${JSON.stringify(key)} (${names.length > 0 ? `the prompt takes: ${names.join(", ")}` : "the prompt takes none"})`
        )
      }
    }
    const missing = declared.filter((argument) => argument.required === true && !(argument.name in merged))
    if (missing.length > 0) {
      return yield* fail(`missing ${missing.map((argument) => argument.name).join(", ")}; give --arg ${missing[0].name}=...`)
    }
    return merged
  })
