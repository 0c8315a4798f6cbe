/** @internal */
import * as Either from "effect/Either"
import * as McpSchema from "../McpSchema.js"
import { TransportEvent } from "../Transport.js"

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

const describe = (text: string): string => text.length > 200 ? `${text.slice(0, 200)}…` : text

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
 * Decodes an already parsed JSON value (a single message or a batch).
 *
 * @internal
 */
export const decodeValue = (parsed: unknown, text?: string): DecodedFrame => {
  if (Array.isArray(parsed)) {
    const messages: Array<McpSchema.JsonRpcMessage> = []
    const invalid: Array<string> = []
    for (const element of parsed) {
      const decoded = McpSchema.decodeMessage(element)
      if (Either.isRight(decoded)) messages.push(decoded.right)
      else invalid.push(`batch element is not JSON-RPC: ${describe(JSON.stringify(element) ?? "")}`)
    }
    if (parsed.length === 0) invalid.push("empty batch")
    return { messages, invalid }
  }
  const decoded = McpSchema.decodeMessage(parsed)
  return Either.isRight(decoded)
    ? { messages: [decoded.right], invalid: [] }
    : { messages: [], invalid: [`not a JSON-RPC message: ${describe(text ?? JSON.stringify(parsed) ?? "")}`] }
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

const callToolResultKeys = new Set(["content", "structuredContent", "isError", "resultType"])

/**
 * The `CallToolResult` of a plain result whose content is text blocks only (the usual shape), built by hand to
 * the value its schema decodes (with `McpSchema.preserve`) to; undefined for anything else, which the schema then
 * decodes (or refuses).
 *
 * @internal
 */
export const decodeTextToolResult = (raw: unknown): McpSchema.CallToolResult | undefined => {
  if (typeof raw !== "object" || raw === null || Object.getPrototypeOf(raw) !== Object.prototype) return undefined
  for (const key of Reflect.ownKeys(raw)) if (typeof key !== "string" || !callToolResultKeys.has(key)) return undefined
  const content: Array<McpSchema.ContentBlock> = []
  if ("content" in raw) {
    const blocks = raw.content
    if (!Array.isArray(blocks)) return undefined
    for (const block of blocks) {
      const text = textBlock(block)
      if (text === undefined) return undefined
      content.push({ type: "text", text })
    }
  }
  // present members must have their type (an optional member present as undefined is the schema's business)
  const isError = "isError" in raw ? raw.isError : undefined
  if ("isError" in raw && typeof isError !== "boolean") return undefined
  const resultType = "resultType" in raw ? raw.resultType : undefined
  if ("resultType" in raw && typeof resultType !== "string") return undefined
  return {
    content,
    ...("structuredContent" in raw ? { structuredContent: raw.structuredContent } : {}),
    ...(typeof isError === "boolean" ? { isError } : {}),
    ...(typeof resultType === "string" ? { resultType } : {})
  }
}

/** The text of a `{ type: "text", text }` block with no other member. */
const textBlock = (block: unknown): string | undefined => {
  if (typeof block !== "object" || block === null || Object.getPrototypeOf(block) !== Object.prototype) return undefined
  if (Reflect.ownKeys(block).length !== 2 || !("type" in block) || block.type !== "text" || !("text" in block)) return undefined
  return typeof block.text === "string" ? block.text : undefined
}
