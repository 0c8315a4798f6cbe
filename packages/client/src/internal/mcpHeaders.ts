/**
 * The request metadata headers of modern Streamable HTTP (2026-07-28, `basic/transports/streamable-http.mdx`,
 * "Request Metadata"): `Mcp-Method`, `Mcp-Name`, and the `Mcp-Param-{Name}` headers mirrored from tool arguments
 * whose `inputSchema` property carries `x-mcp-header`. Pure functions, no I/O.
 *
 * @internal
 */
import * as McpSchema from "../McpSchema.js"
import { methodOf } from "./mcpMethods.js"

/** @internal */
export const SENTINEL_PREFIX = "=?base64?"

/** @internal */
export const SENTINEL_SUFFIX = "?="

/** @internal */
export const PARAM_PREFIX = "Mcp-Param-"

/** @internal */
export const X_MCP_HEADER = "x-mcp-header"

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

const encoder = new TextEncoder()

/**
 * Standard base64 (with padding) of the UTF-8 bytes of `text`.
 *
 * @internal
 */
export const base64Utf8 = (text: string): string => {
  const bytes = encoder.encode(text)
  const out: Array<string> = []
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out.push(BASE64[n >> 18]!, BASE64[(n >> 12) & 63]!, BASE64[(n >> 6) & 63]!, BASE64[n & 63]!)
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = bytes[i]! << 16
    out.push(BASE64[n >> 18]!, BASE64[(n >> 12) & 63]!, "==")
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8)
    out.push(BASE64[n >> 18]!, BASE64[(n >> 12) & 63]!, BASE64[(n >> 6) & 63]!, "=")
  }
  return out.join("")
}

/**
 * Whether `value` looks like the Base64 sentinel. A plain value that does is encoded too, so the server cannot
 * mistake it for an encoded one.
 *
 * @internal
 */
export const looksLikeSentinel = (value: string): boolean =>
  value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX)

/**
 * Whether `value` can travel as a plain header value: visible ASCII and spaces only (no control character, no
 * CR/LF, no tab, nothing outside ASCII), no leading or trailing space, and not sentinel-like.
 *
 * @internal
 */
export const isPlainSafe = (value: string): boolean => {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c < 0x20 || c > 0x7e) return false
  }
  if (value.startsWith(" ") || value.endsWith(" ")) return false
  return !looksLikeSentinel(value)
}

/**
 * Encodes a value for `Mcp-Name` or `Mcp-Param-*`: as is when it is plain-safe, else as
 * `=?base64?<base64 of its UTF-8 bytes>?=`. The result never contains a byte a header cannot carry.
 *
 * @internal
 */
export const encodeValue = (value: string): string =>
  isPlainSafe(value) ? value : `${SENTINEL_PREFIX}${base64Utf8(value)}${SENTINEL_SUFFIX}`

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/**
 * RFC 9110 `token` (`1*tchar`): what a header field name may be.
 *
 * @internal
 */
export const isToken = (value: string): boolean => TOKEN.test(value)

/**
 * One `x-mcp-header` declaration of a tool: the header suffix, the property path from the root of the
 * `inputSchema` (the chain of `properties` keys), and the declared type.
 *
 * @internal
 */
export interface ParamHeader {
  readonly name: string
  readonly path: ReadonlyArray<string>
  readonly type: "string" | "integer" | "boolean" | "number"
}

/**
 * What the `x-mcp-header` declarations of one tool amount to: the headers to mirror, or why the tool is invalid.
 *
 * @internal
 */
export type ToolHeaders =
  | { readonly _tag: "Valid"; readonly headers: ReadonlyArray<ParamHeader> }
  | { readonly _tag: "Invalid"; readonly reason: string }

/**
 * Options of the `x-mcp-header` checks.
 *
 * @internal
 */
export interface ToolHeaderOptions {
  /**
   * Accept `x-mcp-header` on `number` properties. The spec forbids it; some published conformance scenarios
   * expect it to be mirrored. Off by default.
   */
  readonly allowNumber?: boolean | undefined
}

type JsonObject = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// Keywords whose value is data, not a schema: an `x-mcp-header` key inside them is not an annotation.
const DATA_KEYWORDS: ReadonlySet<string> = new Set(["const", "enum", "default", "examples"])
// Keywords whose value maps names to subschemas (besides `properties`, which is the reachable chain).
const SCHEMA_MAPS: ReadonlySet<string> = new Set(["patternProperties", "dependentSchemas", "$defs", "definitions"])

const pathText = (path: ReadonlyArray<string>): string => path.length === 0 ? "<root>" : path.join(".")

/**
 * Checks the `x-mcp-header` declarations of a tool's `inputSchema` (2026-07-28 `server/tools.mdx`): each value
 * a non-empty RFC 9110 token, unique ignoring case, on a `string` / `integer` / `boolean` property that is
 * statically reachable from the root through `properties` keys alone. An annotation anywhere else (under
 * `items`, a composition or conditional keyword, `$defs`, `additionalProperties`, ...) makes the tool invalid.
 *
 * @internal
 */
export const toolHeaders = (inputSchema: unknown, options: ToolHeaderOptions = {}): ToolHeaders => {
  const headers: Array<ParamHeader> = []
  const seen = new Map<string, string>()

  const visit = (node: unknown, path: ReadonlyArray<string>, reachable: boolean): string | undefined => {
    if (Array.isArray(node)) {
      for (const element of node) {
        const fault = visit(element, path, false)
        if (fault !== undefined) return fault
      }
      return undefined
    }
    if (!isObject(node)) return undefined
    if (Object.hasOwn(node, X_MCP_HEADER)) {
      const fault = declare(node, path, reachable)
      if (fault !== undefined) return fault
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === X_MCP_HEADER || DATA_KEYWORDS.has(key)) continue
      if (key === "properties" && isObject(value)) {
        for (const [name, child] of Object.entries(value)) {
          const fault = visit(child, [...path, name], reachable)
          if (fault !== undefined) return fault
        }
      } else if (SCHEMA_MAPS.has(key) && isObject(value)) {
        for (const child of Object.values(value)) {
          const fault = visit(child, [...path, `<${key}>`], false)
          if (fault !== undefined) return fault
        }
      } else {
        const fault = visit(value, [...path, `<${key}>`], false)
        if (fault !== undefined) return fault
      }
    }
    return undefined
  }

  const declare = (schema: JsonObject, path: ReadonlyArray<string>, reachable: boolean): string | undefined => {
    const where = pathText(path)
    if (!reachable || path.length === 0) {
      return `${where}: x-mcp-header is only allowed on a property reachable from the root through "properties" alone`
    }
    const name = schema[X_MCP_HEADER]
    if (typeof name !== "string" || name.length === 0) return `${where}: x-mcp-header must be a non-empty string`
    if (!isToken(name)) return `${where}: x-mcp-header ${JSON.stringify(name)} is not an HTTP token`
    const type = schema.type
    if (type !== "string" && type !== "integer" && type !== "boolean" && type !== "number") {
      return `${where}: x-mcp-header is only allowed on string, integer and boolean properties (type ${
        JSON.stringify(type) ?? "missing"
      })`
    }
    if (type === "number" && options.allowNumber !== true) {
      return `${where}: x-mcp-header is not allowed on a number property`
    }
    const lower = name.toLowerCase()
    const previous = seen.get(lower)
    if (previous !== undefined) {
      return `x-mcp-header ${JSON.stringify(name)} repeats ${JSON.stringify(previous)} (names ignore case)`
    }
    seen.set(lower, name)
    headers.push({ name, path, type })
    return undefined
  }

  const fault = visit(inputSchema, [], true)
  return fault === undefined ? { _tag: "Valid", headers } : { _tag: "Invalid", reason: fault }
}

const valueAt = (root: unknown, path: ReadonlyArray<string>): unknown => {
  let node = root
  for (const key of path) {
    if (!isObject(node) || !Object.hasOwn(node, key)) return undefined
    node = node[key]
  }
  return node
}

/**
 * The text of a primitive argument value, or undefined when it yields no header: absent, `null`, a structure, a
 * non-finite number or an integer outside the safe range.
 *
 * @internal
 */
export const primitiveText = (value: unknown): string | undefined => {
  switch (typeof value) {
    case "string":
      return value
    case "boolean":
      return value ? "true" : "false"
    case "number":
      if (!Number.isFinite(value)) return undefined
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) return undefined
      return String(value)
    default:
      return undefined
  }
}

/**
 * The `Mcp-Param-*` headers of one `tools/call`, read from its `arguments` at each declaration's exact path and
 * encoded. A missing or `null` value omits its header.
 *
 * @internal
 */
export const paramHeaders = (
  declarations: ReadonlyArray<ParamHeader>,
  args: unknown
): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const declaration of declarations) {
    const text = primitiveText(valueAt(args, declaration.path))
    if (text !== undefined) headers[`${PARAM_PREFIX}${declaration.name}`] = encodeValue(text)
  }
  return headers
}


/**
 * `Mcp-Method` and, for the methods that have one, `Mcp-Name` (encoded). A method name that cannot travel as a
 * plain header value is refused rather than sent raw.
 *
 * @internal
 */
export const standardHeaders = (
  message: McpSchema.JsonRpcRequest | McpSchema.JsonRpcNotification,
  /** The field the client's definition of the method names (`WireOptions.nameField`); absent: the specification's. */
  nameField?: string | undefined
): { readonly _tag: "Headers"; readonly headers: Record<string, string> } | {
  readonly _tag: "Refused"
  readonly reason: string
} => {
  if (message.method.length === 0 || !isPlainSafe(message.method)) {
    return { _tag: "Refused", reason: `the method name ${JSON.stringify(message.method)} cannot be sent as a header` }
  }
  const headers: Record<string, string> = { "Mcp-Method": message.method }
  // the body field `Mcp-Name` mirrors, by the method's definition
  const field = nameField ?? methodOf(message.method)?.nameField
  if (field !== undefined && "id" in message && isObject(message.params)) {
    const value = message.params[field]
    if (typeof value === "string") headers["Mcp-Name"] = encodeValue(value)
  }
  return { _tag: "Headers", headers }
}

/**
 * The `x-mcp-header` declarations of every tool of a `tools/list` result: the valid ones by tool name, and the
 * invalid ones with their reasons (the caller warns about those and leaves them out).
 *
 * @internal
 */
export const indexTools = (
  result: unknown,
  options: ToolHeaderOptions = {}
): {
  readonly valid: ReadonlyMap<string, ReadonlyArray<ParamHeader>>
  readonly invalid: ReadonlyArray<{ readonly tool: string; readonly reason: string }>
} => {
  const valid = new Map<string, ReadonlyArray<ParamHeader>>()
  const invalid: Array<{ readonly tool: string; readonly reason: string }> = []
  const tools = isObject(result) && Array.isArray(result.tools) ? result.tools : []
  for (const tool of tools) {
    if (!isObject(tool) || typeof tool.name !== "string") continue
    const checked = toolHeaders(tool.inputSchema, options)
    if (checked._tag === "Valid") valid.set(tool.name, checked.headers)
    else invalid.push({ tool: tool.name, reason: checked.reason })
  }
  return { valid, invalid }
}

/**
 * Header names (lower case) the transport owns: a caller-supplied header with one of these names is dropped, so
 * it can never disagree with the body or smuggle credentials.
 *
 * @internal
 */
export const OWNED_HEADERS: ReadonlySet<string> = new Set([
  "accept",
  "authorization",
  "content-length",
  "content-type",
  "host",
  "last-event-id",
  "mcp-method",
  "mcp-name",
  "mcp-protocol-version",
  "mcp-session-id",
  "transfer-encoding"
])

/**
 * Keeps the caller-supplied `Mcp-Param-*` headers that are safe to send: a token name with the `Mcp-Param-`
 * prefix and a value a header can carry (already encoded by the caller). Returns the kept headers and a reason
 * for each dropped one.
 *
 * @internal
 */
export const sanitizeParamHeaders = (
  supplied: Readonly<Record<string, string>>
): { readonly headers: Record<string, string>; readonly dropped: ReadonlyArray<string> } => {
  const headers: Record<string, string> = {}
  const dropped: Array<string> = []
  for (const [name, value] of Object.entries(supplied)) {
    if (!isToken(name) || !name.toLowerCase().startsWith(PARAM_PREFIX.toLowerCase())) {
      dropped.push(`${JSON.stringify(name)} is not an Mcp-Param-* header name`)
    } else if (typeof value !== "string" || !(isPlainSafe(value) || isEncoded(value))) {
      dropped.push(`the value of ${name} is not a safe header value`)
    } else {
      headers[name] = value
    }
  }
  return { headers, dropped }
}

const ENCODED = /^=\?base64\?(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?\?=$/

/**
 * Whether `value` is a well-formed Base64 sentinel.
 *
 * @internal
 */
export const isEncoded = (value: string): boolean => ENCODED.test(value)

/**
 * The protocol version a message claims in its modern `_meta` envelope, if any.
 *
 * @internal
 */
export const protocolVersionOf = (message: McpSchema.JsonRpcRequest | McpSchema.JsonRpcNotification) => {
  const params = message.params
  if (!isObject(params) || !isObject(params._meta)) return undefined
  const version = params._meta[McpSchema.MetaKeys.protocolVersion]
  return typeof version === "string" ? version : undefined
}
