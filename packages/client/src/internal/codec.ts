/** @internal */
import * as Either from "effect/Either"
import * as McpSchema from "../McpSchema.js"
import { TransportEvent } from "../Transport.js"
import { printable } from "./printable.js"
import * as protoKeys from "./protoKeys.js"

/**
 * What one text frame (a stdio line, an SSE `data` field, an HTTP body) decodes to: the messages it holds (a
 * JSON-RPC batch holds several) and a description of every part that was not a valid message.
 *
 * @internal
 */
export interface DecodedFrame {
  readonly messages: ReadonlyArray<McpSchema.JsonRpcMessage>
  readonly invalid: ReadonlyArray<string>
}

const PREVIEW = 200

const describe = (text: string): string => printable(text.length > PREVIEW ? `${text.slice(0, PREVIEW)}…` : text)

/** A container being written by {@link preview}: its elements (or its keys, for an object) and the next one. */
interface Open {
  readonly container: ReadonlyArray<unknown> | Readonly<Record<string, unknown>>
  readonly keys: ReadonlyArray<string> | undefined
  readonly count: number
  index: number
}

/** At most `max` own keys of `object`, without listing the others. */
const keysOf = (object: object, max: number): Array<string> => {
  const keys: Array<string> = []
  for (const key in object) {
    if (keys.length >= max) break
    if (Object.hasOwn(object, key)) keys.push(key)
  }
  return keys
}

/**
 * The start of a value's JSON text, at most `max` characters (then made `printable`), written without recursion
 * and without serializing the rest: `JSON.stringify` overflows the stack on a value nested some thousands deep
 * (which `JSON.parse` builds without complaint), and would serialize megabytes to show two hundred characters.
 * Every step writes at least one character, and the stack holds one cursor per open container, so the work is
 * bounded by `max` whatever the value's width and depth.
 *
 * @internal
 */
export const preview = (value: unknown, max: number = PREVIEW): string => {
  let out = ""
  const stack: Array<Open> = []
  // writes a scalar, or the opening of a container whose elements follow
  const begin = (current: unknown) => {
    if (Array.isArray(current)) {
      out += "["
      stack.push({ container: current, keys: undefined, count: Math.min(current.length, max), index: 0 })
    } else if (typeof current === "object" && current !== null) {
      out += "{"
      const keys = keysOf(current, max)
      stack.push({ container: current as Record<string, unknown>, keys, count: keys.length, index: 0 })
    } else if (typeof current === "string") {
      out += JSON.stringify(current.length > max ? current.slice(0, max) : current)
    } else {
      out += JSON.stringify(current) ?? "null"
    }
  }
  begin(value)
  while (stack.length > 0 && out.length <= max) {
    const open = stack[stack.length - 1]!
    if (open.index >= open.count) {
      out += open.keys === undefined ? "]" : "}"
      stack.pop()
      continue
    }
    if (open.index > 0) out += ","
    const index = open.index++
    if (open.keys === undefined) {
      begin((open.container as ReadonlyArray<unknown>)[index])
    } else {
      const key = open.keys[index]!
      out += `${JSON.stringify(key)}:`
      begin((open.container as Readonly<Record<string, unknown>>)[key])
    }
  }
  return printable(out.length > max || stack.length > 0 ? `${out.slice(0, max)}…` : out)
}

/**
 * Serializes one message compactly: JSON.stringify never emits a raw newline, so the result is one stdio line.
 *
 * @internal
 */
export const encode = (message: McpSchema.JsonRpcMessage): string => JSON.stringify(message)

/**
 * Decodes one text frame. Never throws: malformed JSON and values that are not JSON-RPC are reported in
 * `invalid` so the transport can log and drop them.
 *
 * @internal
 */
export const decodeFrame = (text: string): DecodedFrame => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { messages: [], invalid: [`malformed JSON: ${describe(text)}`] }
  }
  return decodeValue(parsed, text)
}

/**
 * Decodes an already parsed JSON value (a single message or a batch), given with its text when there is one. Every
 * frame from a server comes through here: its `__proto__` members are removed first (see `protoKeys`), looked for
 * only when the text may hold one.
 *
 * @internal
 */
export const decodeValue = (parsed: unknown, text?: string): DecodedFrame => {
  if (text === undefined || protoKeys.mayHold(text)) protoKeys.remove(parsed)
  if (Array.isArray(parsed)) {
    const messages: Array<McpSchema.JsonRpcMessage> = []
    const invalid: Array<string> = []
    for (const element of parsed) {
      const decoded = McpSchema.decodeMessage(element)
      if (Either.isRight(decoded)) messages.push(decoded.right)
      else invalid.push(`batch element is not JSON-RPC: ${preview(element)}`)
    }
    if (parsed.length === 0) invalid.push("empty batch")
    return { messages, invalid }
  }
  const decoded = McpSchema.decodeMessage(parsed)
  return Either.isRight(decoded)
    ? { messages: [decoded.right], invalid: [] }
    : { messages: [], invalid: [`not a JSON-RPC message: ${text === undefined ? preview(parsed) : describe(text)}`] }
}

/**
 * The event a message from the server becomes. `related` is the client request a server request belongs to
 * when the binding knows it (an HTTP response stream), else undefined.
 *
 * @internal
 */
export const toEvent = (
  message: McpSchema.JsonRpcMessage,
  related?: McpSchema.RequestId | undefined
): TransportEvent => {
  if ("method" in message) {
    return "id" in message
      ? TransportEvent.ServerRequest({ message, related })
      : TransportEvent.Notification({ message })
  }
  return TransportEvent.Response({ message })
}

/** A plain object (as JSON.parse makes them) without symbol keys. */
const isPlainObject = (value: unknown): value is object =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype &&
  Object.getOwnPropertySymbols(value).length === 0

/**
 * The `CallToolResult` of a result whose content is text blocks only (the usual shape), built by hand to the value
 * its schema decodes (with `McpSchema.preserve`) to; undefined for anything else, which the schema then decodes
 * (or refuses). Members are read as JSON.parse makes them: own, enumerable.
 *
 * @internal
 */
export const decodeTextToolResult = (raw: unknown): McpSchema.CallToolResult | undefined => {
  if (!isPlainObject(raw)) return undefined
  const content: Array<McpSchema.ContentBlock> = []
  let structured = false
  let structuredContent: unknown
  let isError: boolean | undefined
  let resultType: string | undefined
  for (const key in raw) {
    switch (key) {
      case "content": {
        const blocks = "content" in raw ? raw.content : undefined
        if (!Array.isArray(blocks)) return undefined
        for (let i = 0; i < blocks.length; i++) {
          const text = textOf(blocks[i])
          if (text === undefined) return undefined
          content.push({ type: "text", text })
        }
        break
      }
      case "structuredContent":
        structured = true
        structuredContent = "structuredContent" in raw ? raw.structuredContent : undefined
        break
      case "isError": {
        const value = "isError" in raw ? raw.isError : undefined
        if (typeof value !== "boolean") return undefined
        isError = value
        break
      }
      case "resultType": {
        const value = "resultType" in raw ? raw.resultType : undefined
        if (typeof value !== "string") return undefined
        resultType = value
        break
      }
      default:
        return undefined
    }
  }
  // the schema's order: content (defaulted), structuredContent, isError, resultType
  const result: {
    content: Array<McpSchema.ContentBlock>
    structuredContent?: unknown
    isError?: boolean
    resultType?: string
  } = { content }
  if (structured) result.structuredContent = structuredContent
  if (isError !== undefined) result.isError = isError
  if (resultType !== undefined) result.resultType = resultType
  return result
}

/** The text of a `{ type: "text", text }` block with no other member. */
const textOf = (block: unknown): string | undefined => {
  if (!isPlainObject(block)) return undefined
  let members = 0
  for (const key in block) {
    if (key !== "type" && key !== "text") return undefined
    members++
  }
  if (members !== 2 || !("type" in block) || block.type !== "text" || !("text" in block)) return undefined
  return typeof block.text === "string" ? block.text : undefined
}
