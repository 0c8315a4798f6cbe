import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "fast-check"
import * as codec from "../src/internal/codec.js"
import * as lineDecoder from "../src/internal/lineDecoder.js"
import type * as McpSchema from "../src/McpSchema.js"
import { heapPerByte } from "./utils/heap.js"

const encoder = new TextEncoder()

const decodeAll = (decoder: lineDecoder.LineDecoder, chunks: ReadonlyArray<Uint8Array>): Array<string> => {
  const lines: Array<string> = []
  for (const chunk of chunks) {
    const result = decoder.push(chunk)
    assert.strictEqual(result._tag, "Lines")
    lines.push(...result.lines)
  }
  const last = decoder.end()
  assert.strictEqual(last._tag, "Lines")
  lines.push(...last.lines)
  return lines
}

const splitAt = (bytes: Uint8Array, cuts: ReadonlyArray<number>): Array<Uint8Array> => {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
  const chunks: Array<Uint8Array> = []
  let start = 0
  for (const point of [...points, bytes.length]) {
    chunks.push(bytes.subarray(start, point))
    start = point
  }
  return chunks
}

const text = FastCheck.oneof(
  FastCheck.string({ unit: "grapheme" }),
  FastCheck.constantFrom("😀", "漢字テスト", "🇫🇷🇯🇵", "é\u0301", "emoji 👩‍👩‍👧 and 中文", "\r\n\t\"\\")
)

const message: FastCheck.Arbitrary<McpSchema.JsonRpcMessage> = FastCheck.oneof(
  FastCheck.record({
    jsonrpc: FastCheck.constant("2.0" as const),
    id: FastCheck.oneof(FastCheck.integer(), FastCheck.string({ unit: "grapheme" })),
    method: text,
    params: FastCheck.record({ text, list: FastCheck.array(text, { maxLength: 3 }) })
  }),
  FastCheck.record({
    jsonrpc: FastCheck.constant("2.0" as const),
    method: text,
    params: FastCheck.record({ text })
  }),
  FastCheck.record({
    jsonrpc: FastCheck.constant("2.0" as const),
    id: FastCheck.integer(),
    result: FastCheck.record({ content: FastCheck.array(text, { maxLength: 4 }) })
  })
)

describe("LineDecoder", () => {
  it("messages split at arbitrary byte boundaries decode to the same messages", () => {
    const property = FastCheck.property(
      FastCheck.array(FastCheck.tuple(message, FastCheck.boolean()), { minLength: 1, maxLength: 12 }),
      FastCheck.array(FastCheck.nat(), { maxLength: 40 }),
      (messages, cuts) => {
        // some lines end with "\r\n", the encoder never emits a raw newline inside a message
        const bytes = encoder.encode(
          messages.map(([m, crlf]) => `${codec.encode(m)}${crlf ? "\r\n" : "\n"}`).join("")
        )
        const decoder = lineDecoder.make({ maxLineBytes: 1024 * 1024, overflow: "fail" })
        const lines = decodeAll(decoder, splitAt(bytes, cuts))
        const decoded = lines.flatMap((line) => {
          const frame = codec.decodeFrame(line)
          assert.deepStrictEqual(frame.invalid, [])
          return frame.messages
        })
        assert.deepStrictEqual(decoded, messages.map(([m]) => m))
        assert.strictEqual(decoder.stats().scanned, bytes.length)
        // linear: a small piece is gathered once (and its block grown by doubling), every line joined once
        assert.isAtMost(decoder.stats().copied, 3 * bytes.length)
      }
    )
    FastCheck.assert(property, { numRuns: 200 })
  })

  it("decodes a 16 MiB message fed in 64 KiB chunks with linear work", () => {
    // a 4-byte, a 3-byte and a 2-byte character, so chunk boundaries fall inside characters
    const unit = "😀漢é-"
    const payload = unit.repeat(Math.ceil((16 * 1024 * 1024) / encoder.encode(unit).length))
    const original: McpSchema.JsonRpcMessage = { jsonrpc: "2.0", id: 1, result: { payload } }
    const bytes = encoder.encode(`${codec.encode(original)}\n`)
    assert.isAtLeast(bytes.length, 16 * 1024 * 1024)
    const chunkSize = 64 * 1024
    const chunks: Array<Uint8Array> = []
    for (let offset = 0; offset < bytes.length; offset += chunkSize) {
      chunks.push(bytes.subarray(offset, offset + chunkSize))
    }
    const decoder = lineDecoder.make({ maxLineBytes: 64 * 1024 * 1024, overflow: "fail" })
    const lines = decodeAll(decoder, chunks)
    assert.strictEqual(lines.length, 1)
    const frame = codec.decodeFrame(lines[0])
    assert.deepStrictEqual(frame.messages, [original])
    // every byte scanned once for the terminator, the split line joined once
    assert.strictEqual(decoder.stats().scanned, bytes.length)
    assert.strictEqual(decoder.stats().copied, bytes.length - 1)
  })

  it("does not copy lines that lie within one chunk", () => {
    const bytes = encoder.encode("{\"a\":1}\n{\"b\":2}\r\n\n\r\n{\"c\":3}\n")
    const decoder = lineDecoder.make({ maxLineBytes: 100, overflow: "fail" })
    assert.deepStrictEqual(decodeAll(decoder, [bytes]), ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"])
    assert.deepStrictEqual(decoder.stats(), { scanned: bytes.length, copied: 0 })
  })

  it("returns a last line that has no terminator when the input ends", () => {
    const decoder = lineDecoder.make({ maxLineBytes: 100, overflow: "fail" })
    assert.deepStrictEqual(decodeAll(decoder, [encoder.encode("one\ntw"), encoder.encode("o")]), ["one", "two"])
  })

  it("reports a line over the limit as soon as the pending bytes exceed it, and stops", () => {
    const decoder = lineDecoder.make({ maxLineBytes: 8, overflow: "fail" })
    const first = decoder.push(encoder.encode("ok\n0123456789"))
    assert.deepStrictEqual(first, { _tag: "Overflow", lines: ["ok"], size: 10 })
    assert.deepStrictEqual(decoder.push(encoder.encode("\n{}\n")), { _tag: "Lines", lines: [] })
  })

  it("reports a complete line over the limit, but accepts one of exactly the limit followed by \\r\\n", () => {
    const exact = lineDecoder.make({ maxLineBytes: 4, overflow: "fail" })
    assert.deepStrictEqual(exact.push(encoder.encode("abcd\r\n")), { _tag: "Lines", lines: ["abcd"] })
    const over = lineDecoder.make({ maxLineBytes: 4, overflow: "fail" })
    assert.deepStrictEqual(over.push(encoder.encode("abcde\n")), { _tag: "Overflow", lines: [], size: 5 })
  })

  it("truncates over-long lines in truncate mode and carries on", () => {
    const decoder = lineDecoder.make({ maxLineBytes: 4, overflow: "truncate" })
    const lines = decodeAll(decoder, [encoder.encode("abcdefgh"), encoder.encode("ijk\nfour\nfives\nxy\n")])
    assert.deepStrictEqual(lines, ["abcd", "four", "five", "xy"])
  })

  it("decodes a multi-byte character split across chunks", () => {
    const bytes = encoder.encode("😀\n")
    const decoder = lineDecoder.make({ maxLineBytes: 100, overflow: "fail" })
    const lines = decodeAll(decoder, [bytes.subarray(0, 1), bytes.subarray(1, 3), bytes.subarray(3)])
    assert.deepStrictEqual(lines, ["😀"])
  })

  it("a line that never ends, trickled a byte per chunk, holds about two bytes of heap per byte", () => {
    const decoder = lineDecoder.make({ maxLineBytes: 64 * 1024 * 1024, overflow: "fail" })
    const perByte = heapPerByte(1_000_000, () => {
      for (let i = 0; i < 1_000_000; i++) decoder.push(Uint8Array.of(0x61))
    })
    // an object per piece held ~115 bytes per byte
    assert.isBelow(perByte, 8)
    // and the line is whole when it ends
    const result = decoder.push(encoder.encode("b\n"))
    assert.deepStrictEqual(result._tag === "Lines" ? result.lines.map((line) => line.length) : [], [1_000_001])
    assert.isAtMost(decoder.stats().copied, 3 * 1_000_001)
  })

  it("a line that never ends, in pieces of 4 KiB and of one byte by turns, holds at most about twice its bytes", () => {
    const decoder = lineDecoder.make({ maxLineBytes: 64 * 1024 * 1024, overflow: "fail" })
    const large = new Uint8Array(4096).fill(0x61)
    const perByte = heapPerByte(2000 * 4097, () => {
      for (let i = 0; i < 2000; i++) {
        decoder.push(large.slice())
        decoder.push(Uint8Array.of(0x62))
      }
    })
    // a block of 64 KiB for each byte between two large pieces held ~17 bytes per byte
    assert.isBelow(perByte, 2.5)
    const result = decoder.push(encoder.encode("\n"))
    const line = result._tag === "Lines" ? result.lines[0] ?? "" : ""
    assert.strictEqual(line.length, 2000 * 4097)
    assert.strictEqual(line.slice(4090, 4100), "aaaaaabaaa")
  })
})
