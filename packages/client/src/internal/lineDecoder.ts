/**
 * Newline-delimited framing over a byte stream.
 *
 * The work is linear in the input: every byte is scanned for `\n` once (only the bytes of the newest chunk), a
 * line split across chunks is held and joined with a bounded number of copies of each byte (see pendingBytes.ts),
 * and each complete line is decoded from UTF-8 once, so a multi-byte character split between chunks decodes
 * correctly.
 *
 * @internal
 */

import * as PendingBytes from "./pendingBytes.js"

const LF = 0x0a
const CR = 0x0d

/**
 * What feeding bytes produced: the complete lines (terminator and a trailing `\r` removed, empty lines
 * skipped), or, in `"fail"` mode, the lines before a line that exceeded the limit.
 *
 * @internal
 */
export type PushResult =
  | { readonly _tag: "Lines"; readonly lines: ReadonlyArray<string> }
  | { readonly _tag: "Overflow"; readonly lines: ReadonlyArray<string>; readonly size: number }

/**
 * Counters of the work done, so tests can check that decoding stays linear in the input size.
 *
 * @internal
 */
export interface Stats {
  /** Bytes examined while looking for line terminators. */
  readonly scanned: number
  /** Bytes copied while holding and joining the pieces of lines split across chunks. */
  readonly copied: number
}

/**
 * @internal
 */
export interface LineDecoder {
  /** Feeds one chunk. The chunk is referenced, not copied, until its line completes: do not mutate it. */
  readonly push: (chunk: Uint8Array) => PushResult
  /** Ends the input: a last line without a terminator is returned as a complete line. */
  readonly end: () => PushResult
  readonly stats: () => Stats
}

/**
 * @internal
 */
export interface Options {
  /** Largest line, in bytes, without its terminator. */
  readonly maxLineBytes: number
  /**
   * `"fail"`: an over-long line stops the decoder and is reported as `Overflow` (protocol frames).
   * `"truncate"`: an over-long line is cut to `maxLineBytes` and the rest of it skipped (diagnostic output).
   */
  readonly overflow: "fail" | "truncate"
}

/**
 * @internal
 */
export const make = (options: Options): LineDecoder => {
  const max = options.maxLineBytes
  const decoder = new TextDecoder("utf-8")
  // the start of the line that waits for its terminator (see pendingBytes.ts)
  const pending = PendingBytes.make()
  let discarding = false
  let failed = false
  let scanned = 0

  // (a line inside one chunk is not copied: `take` gives `tail` itself when nothing is pending)
  const join = pending.take
  const reset = pending.clear

  const lastByte = (tail: Uint8Array): number | undefined =>
    tail.length > 0 ? tail[tail.length - 1] : pending.lastByte()

  const decode = (bytes: Uint8Array): string => {
    const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length
    return decoder.decode(end === bytes.length ? bytes : bytes.subarray(0, end))
  }

  // Completes the line made of the pending pieces and `tail`. Returns the overflowing size in "fail" mode.
  const complete = (tail: Uint8Array, lines: Array<string>): number | undefined => {
    const total = pending.size() + tail.length
    const size = lastByte(tail) === CR ? total - 1 : total
    if (size > max) {
      if (options.overflow === "fail") {
        failed = true
        reset()
        return size
      }
      lines.push(decoder.decode(join(tail, max)))
      return undefined
    }
    const text = decode(join(tail, total))
    if (text.length > 0) lines.push(text)
    return undefined
  }

  const push = (chunk: Uint8Array): PushResult => {
    const lines: Array<string> = []
    if (failed) return { _tag: "Lines", lines }
    let start = 0
    while (start < chunk.length) {
      const index = chunk.indexOf(LF, start)
      if (index === -1) {
        scanned += chunk.length - start
        break
      }
      scanned += index - start + 1
      const piece = chunk.subarray(start, index)
      start = index + 1
      if (discarding) {
        discarding = false
        reset()
        continue
      }
      const overflow = complete(piece, lines)
      if (overflow !== undefined) return { _tag: "Overflow", lines, size: overflow }
    }
    if (start < chunk.length && !discarding) {
      pending.add(chunk.subarray(start), false)
      // one byte of slack for a `\r` that may precede the terminator
      if (pending.size() > max + 1) {
        if (options.overflow === "fail") {
          const size = pending.size()
          failed = true
          reset()
          return { _tag: "Overflow", lines, size }
        }
        lines.push(decoder.decode(join(new Uint8Array(0), max)))
        discarding = true
      }
    }
    return { _tag: "Lines", lines }
  }

  const end = (): PushResult => {
    const lines: Array<string> = []
    if (failed) return { _tag: "Lines", lines }
    if (discarding || pending.size() === 0) {
      discarding = false
      reset()
      return { _tag: "Lines", lines }
    }
    const overflow = complete(new Uint8Array(0), lines)
    return overflow === undefined ? { _tag: "Lines", lines } : { _tag: "Overflow", lines, size: overflow }
  }

  return { push, end, stats: () => ({ scanned, copied: pending.copied() }) }
}
