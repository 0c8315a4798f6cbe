/**
 * A Server-Sent Events decoder (the WHATWG "event stream interpretation"): a pure incremental parser over raw bytes
 * (the HTTP transport feeds it a body's chunks, see `forEachSseItem`).
 *
 * Lines are split on the bytes CR, LF and CRLF before decoding, so a chunk boundary anywhere (inside a CRLF pair,
 * inside a multi-byte UTF-8 sequence) changes nothing, and the size of an event is counted in bytes. A partial line
 * is held in memory proportional to its size and joined when it completes (see pendingBytes.ts), so a very large
 * event costs linear time and space whatever its chunks.
 *
 * @internal
 */
import * as McpError from "../McpError.js"
import * as PendingBytes from "./pendingBytes.js"

/**
 * What the decoder reports, in stream order:
 * - `Event`: a dispatched event (`event` defaults to `"message"`; `id` is the last event id buffer, `""` if none);
 * - `Id`: an `id` field was read (reported at once, so a stream that breaks before the event is dispatched still
 *   knows where to resume);
 * - `Retry`: a valid `retry` field, in milliseconds.
 *
 * @internal
 */
export type SseItem =
  | { readonly _tag: "Event"; readonly event: string; readonly data: string; readonly id: string }
  | { readonly _tag: "Id"; readonly id: string }
  | { readonly _tag: "Retry"; readonly millis: number }

/**
 * The result of pushing one chunk: the items it completed, and the size of the event when it outgrew the limit
 * (the parser is then unusable).
 *
 * @internal
 */
export interface PushResult {
  readonly items: ReadonlyArray<SseItem>
  readonly tooLarge: number | undefined
}

/**
 * An incremental parser. Whatever is pending when the input ends is an incomplete event and is discarded, as the
 * standard requires, so there is nothing to flush.
 *
 * @internal
 */
export interface Parser {
  readonly push: (chunk: Uint8Array) => PushResult
}

const CR = 13
const LF = 10
const COLON = 58
const SPACE = 32

const isDigits = /^[0-9]+$/

/**
 * Makes a parser. `maxEventBytes` bounds the bytes of one event: every line from the previous blank line on,
 * including the partial line being read.
 *
 * @internal
 */
export const makeParser = (options: { readonly maxEventBytes: number }): Parser => {
  // BOMs are handled by hand: only the one at the very start of the stream is dropped
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true })
  const limit = options.maxEventBytes
  // the start of the line that waits for its end (see pendingBytes.ts)
  const pending = PendingBytes.make()
  let afterCR = false
  let atStart = true
  let eventBytes = 0
  let dataLines: Array<string> = []
  let eventType = ""
  let lastEventId = ""
  let failed: number | undefined

  // (a line inside one chunk is not copied: `take` gives it itself when nothing is pending)
  const takeLine = (chunk: Uint8Array, start: number, end: number): Uint8Array =>
    pending.take(chunk.subarray(start, end), Infinity)

  const processLine = (bytes: Uint8Array, items: Array<SseItem>): void => {
    let line = bytes
    if (atStart) {
      atStart = false
      // a UTF-8 byte order mark at the very start of the stream is not part of the first line
      if (line.length >= 3 && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf) line = line.subarray(3)
    }
    if (line.length === 0) {
      eventBytes = 0
      if (dataLines.length === 0) {
        eventType = ""
        return
      }
      const event = eventType === "" ? "message" : eventType
      items.push({ _tag: "Event", event, data: dataLines.join("\n"), id: lastEventId })
      dataLines = []
      eventType = ""
      return
    }
    if (line[0] === COLON) return
    const colon = line.indexOf(COLON)
    const field = decoder.decode(colon === -1 ? line : line.subarray(0, colon))
    let value = ""
    if (colon !== -1) {
      const from = line[colon + 1] === SPACE ? colon + 2 : colon + 1
      value = decoder.decode(line.subarray(from))
    }
    switch (field) {
      case "event":
        eventType = value
        return
      case "data":
        dataLines.push(value)
        return
      case "id":
        if (value.includes("\u0000")) return
        lastEventId = value
        items.push({ _tag: "Id", id: value })
        return
      case "retry":
        if (isDigits.test(value)) items.push({ _tag: "Retry", millis: Number(value) })
        return
      default:
        return
    }
  }

  const push = (chunk: Uint8Array): PushResult => {
    const items: Array<SseItem> = []
    if (failed !== undefined) return { items, tooLarge: failed }
    let position = 0
    if (afterCR && chunk.length > 0) {
      afterCR = false
      if (chunk[0] === LF) position = 1
    }
    // next CR and LF at or after `position`, found once each: no rescanning of the chunk
    let nextCR = chunk.indexOf(CR, position)
    let nextLF = chunk.indexOf(LF, position)
    while (position < chunk.length) {
      if (nextCR !== -1 && nextCR < position) nextCR = chunk.indexOf(CR, position)
      if (nextLF !== -1 && nextLF < position) nextLF = chunk.indexOf(LF, position)
      const end = nextCR === -1 ? nextLF : nextLF === -1 ? nextCR : Math.min(nextCR, nextLF)
      if (end === -1) break
      const size = eventBytes + pending.size() + (end - position)
      if (size > limit) {
        failed = size
        return { items, tooLarge: size }
      }
      const line = takeLine(chunk, position, end)
      eventBytes += line.length
      processLine(line, items)
      position = end + 1
      if (chunk[end] === CR) {
        if (end + 1 < chunk.length) {
          if (chunk[end + 1] === LF) position = end + 2
        } else {
          afterCR = true
        }
      }
    }
    if (position < chunk.length) {
      const rest = chunk.subarray(position)
      // the chunk may be a view on a buffer the producer reuses: keep a copy of what waits for the next chunk
      pending.add(rest, true)
      const size = eventBytes + pending.size()
      if (size > limit) {
        failed = size
        return { items, tooLarge: size }
      }
    }
    return { items, tooLarge: undefined }
  }

  return { push }
}

/**
 * The failure for an event larger than `maxEventBytes`.
 *
 * @internal
 */
export const tooLarge = (size: number, maxEventBytes: number): McpError.TransportError =>
  new McpError.TransportError({
    transport: "http",
    reason: "FrameTooLarge",
    detail: `an SSE event of at least ${size} bytes exceeds maxEventBytes (${maxEventBytes})`
  })
