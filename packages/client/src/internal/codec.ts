/** @internal */
import * as Result from "effect/Result"
import * as McpError from "../McpError.js"
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
 * What one frame may hold before it is parsed: how deep its arrays and objects nest, and how many of them and of
 * the commas between values it holds (an upper bound of its values: a value is the first of its container or
 * follows a comma). The transports' `maxFrameDepth` and `maxFrameValues` options.
 *
 * @internal
 */
export interface FrameLimits {
  readonly maxDepth: number
  readonly maxValues: number
}

/**
 * The defaults of {@link FrameLimits}. A JSON Schema nests two levels per level of its data (`properties`, then the
 * property), and a message puts it some six levels down (`result.tools[i].inputSchema`): 512 levels hold a schema
 * of over 250 levels, far beyond what tools declare, while JSON.parse of 512 levels is as cheap as of a flat frame.
 * JSON.parse spends about as long on one value as on a few hundred bytes of a string (an array of 22 million empty
 * objects, 64 MiB, took 80 s and 2 GB, the same bytes in one string 0.4 s): a million values, more than any listing
 * page or result a client shows, cost about what parsing a 64 MiB string does.
 *
 * @internal
 */
export const defaultLimits: FrameLimits = { maxDepth: 512, maxValues: 1_000_000 }

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d

/**
 * Why {@link scanFrame} refused a frame: nesting deeper than `maxDepth`, or more values than `maxValues`; `at` is
 * the offset of the character that passed the limit.
 *
 * @internal
 */
export interface FrameRefusal {
  readonly limit: "maxFrameDepth" | "maxFrameValues"
  readonly max: number
  readonly at: number
}

/**
 * Checks a frame's text against the limits without parsing it: one pass over its characters, allocating nothing
 * (but the refusal), so its cost is linear in the text whatever the text. Strings are skipped (a bracket or comma
 * inside one counts for nothing; a backslash escapes the character after it), up to the end of the text when one
 * is never closed. Any text is accepted as input: on text that is not JSON the depth it counts may be off, but never
 * for the part JSON.parse reads before it fails (a valid prefix), so what JSON.parse builds is bounded either way.
 *
 * @internal
 */
export const scanFrame = (text: string, limits: FrameLimits): FrameRefusal | undefined => {
  const maxDepth = limits.maxDepth
  const maxValues = limits.maxValues
  const length = text.length
  let depth = 0
  let values = 0
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      // to the closing quote: the next one after an even run of backslashes (each run is counted once, for the
      // quote it precedes, so skipping strings stays linear; indexOf finds the quotes without a step per character)
      let end = text.indexOf("\"", i + 1)
      while (end !== -1) {
        let before = end - 1
        while (text.charCodeAt(before) === BACKSLASH) before--
        if ((end - before) % 2 === 1) break
        end = text.indexOf("\"", end + 1)
      }
      if (end === -1) return undefined
      i = end
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) return { limit: "maxFrameDepth", max: maxDepth, at: i }
      if (++values > maxValues) return { limit: "maxFrameValues", max: maxValues, at: i }
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--
    } else if (c === COMMA) {
      if (++values > maxValues) return { limit: "maxFrameValues", max: maxValues, at: i }
    }
  }
  return undefined
}

const refusalText = (refusal: FrameRefusal, text: string): string =>
  refusal.limit === "maxFrameDepth"
    ? `nested deeper than maxFrameDepth (${refusal.max}) at character ${refusal.at}: ${describe(text)}`
    : `more than maxFrameValues (${refusal.max}) values by character ${refusal.at}: ${describe(text)}`

/**
 * Decodes one text frame. Never throws: a frame past the limits (checked by {@link scanFrame} before JSON.parse
 * runs), malformed JSON and values that are not JSON-RPC are reported in `invalid` so the transport can log and
 * drop them.
 *
 * @internal
 */
export const decodeFrame = (text: string, limits: FrameLimits = defaultLimits): DecodedFrame => {
  const refusal = scanFrame(text, limits)
  if (refusal !== undefined) return { messages: [], invalid: [refusalText(refusal, text)] }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { messages: [], invalid: [`malformed JSON: ${describe(text)}`] }
  }
  return decodeValue(parsed, text)
}

/**
 * How often a connection's budget of refused frames is earned back in full, in milliseconds.
 *
 * @internal
 */
export const REFUSED_FRAMES_INTERVAL = 60_000

/**
 * The default of the transports' `maxRefusedFrames`: a refused frame a server sends costs it nothing, and is
 * never more than the server's mistake (a stray log line on stdout, a banner) a few times a minute.
 *
 * @internal
 */
export const defaultMaxRefusedFrames = 100

/**
 * A connection's budget of refused frames (malformed, past the limits, not JSON-RPC, too large): `max` at once,
 * earned back at `max` per {@link REFUSED_FRAMES_INTERVAL} (a token bucket, read on the given clock). `charge`
 * charges one frame and returns false when the budget had none left for it: the connection is then closed.
 *
 * @internal
 */
export interface RefusedFrames {
  readonly charge: () => boolean
}

/** @internal */
export const refusedFrames = (max: number, now: () => number): RefusedFrames => {
  let left = max
  let last = now()
  return {
    charge: () => {
      const time = now()
      left = Math.min(max, left + ((time - last) * max) / REFUSED_FRAMES_INTERVAL)
      last = time
      if (left < 1) return false
      left -= 1
      return true
    }
  }
}

/**
 * The error that closes a connection whose server spent its budget of refused frames, `last` the reason the last
 * frame was refused for.
 *
 * @internal
 */
export const tooManyRefusedFrames = (
  transport: McpError.TransportKind,
  max: number,
  last: string
): McpError.TransportError =>
  new McpError.TransportError({
    transport,
    reason: "TooManyRefusedFrames",
    detail: `the server sent more refused frames than maxRefusedFrames allows (${max} a minute); the last: ${last}`
  })

/** How many of a batch's invalid elements are described (and logged) one by one; the others are counted. */
const BATCH_PREVIEWS = 10

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
    let unnamed = 0
    for (const element of parsed) {
      const decoded = McpSchema.decodeMessage(element)
      if (Result.isSuccess(decoded)) messages.push(decoded.success)
      else if (invalid.length < BATCH_PREVIEWS) invalid.push(`batch element is not JSON-RPC: ${preview(element)}`)
      else unnamed++
    }
    if (unnamed > 0) invalid.push(`and ${unnamed} more batch elements that are not JSON-RPC`)
    if (parsed.length === 0) invalid.push("empty batch")
    return { messages, invalid }
  }
  const decoded = McpSchema.decodeMessage(parsed)
  return Result.isSuccess(decoded)
    ? { messages: [decoded.success], invalid: [] }
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
