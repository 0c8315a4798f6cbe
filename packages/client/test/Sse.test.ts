import * as Cause from "effect/Cause"
import * as Option from "effect/Option"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Body from "../src/internal/httpResponse.js"
import * as Sse from "../src/internal/sse.js"
import { heapPerByte } from "./utils/heap.js"

const encoder = new TextEncoder()
const bytes = (text: string) => encoder.encode(text)

const parseChunks = (chunks: ReadonlyArray<Uint8Array>, maxEventBytes = 1024 * 1024) => {
  const parser = Sse.makeParser({ maxEventBytes })
  const items: Array<Sse.SseItem> = []
  for (const chunk of chunks) {
    const result = parser.push(chunk)
    items.push(...result.items)
    if (result.tooLarge !== undefined) return { items, tooLarge: result.tooLarge }
  }
  return { items, tooLarge: undefined }
}

const parse = (text: string) => parseChunks([bytes(text)]).items

const events = (items: ReadonlyArray<Sse.SseItem>) =>
  items.flatMap((item) => item._tag === "Event" ? [{ event: item.event, data: item.data, id: item.id }] : [])

/** Every way of cutting `input` into two chunks, plus one byte at a time. */
const splits = (input: Uint8Array): Array<Array<Uint8Array>> => {
  const result: Array<Array<Uint8Array>> = []
  for (let cut = 0; cut <= input.length; cut++) result.push([input.slice(0, cut), input.slice(cut)])
  result.push(Array.from(input, (byte) => Uint8Array.of(byte)))
  return result
}

describe("Sse parser", () => {
  it("a data line that never ends, trickled a byte per chunk, holds about two bytes of heap per byte", () => {
    const parser = Sse.makeParser({ maxEventBytes: 64 * 1024 * 1024 })
    parser.push(new TextEncoder().encode("data: "))
    const perByte = heapPerByte(1_000_000, () => {
      for (let i = 0; i < 1_000_000; i++) parser.push(Uint8Array.of(0x61))
    })
    // a copy per piece held ~218 bytes per byte
    assert.isBelow(perByte, 8)
    const { items } = parser.push(new TextEncoder().encode("\n\n"))
    assert.deepStrictEqual(items.map((item) => item._tag === "Event" ? item.data.length : -1), [1_000_000])
  })

  it("reads data, event, id and retry fields", () => {
    const items = parse("event: update\nid: 7\nretry: 1500\ndata: {\"a\":1}\n\n")
    assert.deepStrictEqual(items, [
      { _tag: "Id", id: "7" },
      { _tag: "Retry", millis: 1500 },
      { _tag: "Event", event: "update", data: "{\"a\":1}", id: "7" }
    ])
  })

  it("joins multi-line data with LF and names unnamed events \"message\"", () => {
    assert.deepStrictEqual(events(parse("data: one\ndata: two\ndata:\ndata: four\n\n")), [
      { event: "message", data: "one\ntwo\n\nfour", id: "" }
    ])
  })

  it("ignores comments and keep-alives", () => {
    assert.deepStrictEqual(events(parse(": keep-alive\n:\ndata: x\n: between\n\n:\n\n")), [
      { event: "message", data: "x", id: "" }
    ])
  })

  it("accepts CRLF, CR and LF line endings, mixed", () => {
    const expected = [
      { event: "message", data: "a", id: "" },
      { event: "e", data: "b\nc", id: "" },
      { event: "message", data: "d", id: "" }
    ]
    assert.deepStrictEqual(events(parse("data: a\r\n\r\nevent: e\rdata: b\ndata: c\r\n\ndata: d\r\r")), expected)
    assert.deepStrictEqual(events(parse("data: a\n\nevent: e\ndata: b\ndata: c\n\ndata: d\n\n")), expected)
    assert.deepStrictEqual(events(parse("data: a\r\revent: e\rdata: b\rdata: c\r\rdata: d\r\r")), expected)
  })

  it("removes exactly one space after the colon; a field without a colon has an empty value", () => {
    assert.deepStrictEqual(events(parse("data:x\n\ndata:  two\n\ndata\n\n")), [
      { event: "message", data: "x", id: "" },
      { event: "message", data: " two", id: "" },
      { event: "message", data: "", id: "" }
    ])
  })

  it("dispatches an event with empty data but not a block without data", () => {
    const items = parse("id: 1\ndata:\n\nevent: nothing\n\nid: 2\n\ndata: z\n\n")
    assert.deepStrictEqual(items, [
      { _tag: "Id", id: "1" },
      { _tag: "Event", event: "message", data: "", id: "1" },
      { _tag: "Id", id: "2" },
      { _tag: "Event", event: "message", data: "z", id: "2" }
    ])
  })

  it("ignores an id containing NUL, an invalid retry and unknown fields", () => {
    assert.deepStrictEqual(parse("id: a\u0000b\nretry: 10s\nretry: -5\nfoo: bar\ndata: y\n\n"), [
      { _tag: "Event", event: "message", data: "y", id: "" }
    ])
  })

  it("keeps the last event id across events and allows an empty id to reset it", () => {
    assert.deepStrictEqual(events(parse("id: 5\ndata: a\n\ndata: b\n\nid\ndata: c\n\n")), [
      { event: "message", data: "a", id: "5" },
      { event: "message", data: "b", id: "5" },
      { event: "message", data: "c", id: "" }
    ])
  })

  it("strips a byte order mark at the start of the stream only", () => {
    const input = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes("data: a\n\n")])
    for (const chunks of splits(input)) {
      assert.deepStrictEqual(events(parseChunks(chunks).items), [{ event: "message", data: "a", id: "" }])
    }
    assert.deepStrictEqual(events(parse("data: a\n\n\uFEFFdata: b\n\n")), [{ event: "message", data: "a", id: "" }])
  })

  it("discards an incomplete event at the end of the input", () => {
    assert.deepStrictEqual(events(parse("data: done\n\ndata: half")), [{ event: "message", data: "done", id: "" }])
    assert.deepStrictEqual(events(parse("data: done\n\ndata: half\n")), [{ event: "message", data: "done", id: "" }])
  })

  it("gives the same result for any chunk boundary, including inside CRLF and multi-byte characters", () => {
    const text = "event: greet\r\nid: é-1\r\ndata: Zürich 世界 🎉\r\n: comment\r\n\r\n" +
      "data: {\"x\":\"ü\"}\r\rdata: last\n\n"
    const input = bytes(text)
    const expected = parseChunks([input]).items
    assert.deepStrictEqual(events(expected), [
      { event: "greet", data: "Zürich 世界 🎉", id: "é-1" },
      { event: "message", data: "{\"x\":\"ü\"}", id: "é-1" },
      { event: "message", data: "last", id: "é-1" }
    ])
    for (const chunks of splits(input)) assert.deepStrictEqual(parseChunks(chunks).items, expected)
  })

  it("does not keep a reference to a chunk the producer may reuse", () => {
    const parser = Sse.makeParser({ maxEventBytes: 1024 })
    const buffer = bytes("data: hel")
    assert.deepStrictEqual(parser.push(buffer).items, [])
    buffer.fill(120)
    assert.deepStrictEqual(events(parser.push(bytes("lo\n\n")).items), [{ event: "message", data: "hello", id: "" }])
  })

  it("parses a large event delivered in many chunks", () => {
    const payload = "x".repeat(4 * 1024 * 1024)
    const input = bytes(`data: ${payload}\n\ndata: after\n\n`)
    const chunks: Array<Uint8Array> = []
    for (let offset = 0; offset < input.length; offset += 1000) chunks.push(input.subarray(offset, offset + 1000))
    const result = parseChunks(chunks, 8 * 1024 * 1024)
    assert.isUndefined(result.tooLarge)
    const all = events(result.items)
    assert.strictEqual(all.length, 2)
    assert.strictEqual(all[0]!.data.length, payload.length)
    assert.strictEqual(all[1]!.data, "after")
  })

  it("refuses an event larger than maxEventBytes, whether the line is complete or not", () => {
    assert.isNumber(parseChunks([bytes(`data: ${"y".repeat(200)}`)], 100).tooLarge)
    assert.isNumber(parseChunks([bytes(`data: ${"y".repeat(200)}\n`)], 100).tooLarge)
    // many small lines add up to one event
    assert.isNumber(parseChunks([bytes("data: 0123456789\n".repeat(20))], 100).tooLarge)
    // the limit applies per event
    const ok = parseChunks([bytes("data: 0123456789\n\n".repeat(20))], 100)
    assert.isUndefined(ok.tooLarge)
    assert.strictEqual(events(ok.items).length, 20)
  })
})

describe("forEachSseItem", () => {
  /** A response whose body comes in the given chunks: fetch-shaped, or hiding its source (read as a stream). */
  const response = (chunks: ReadonlyArray<string>, hidden: boolean) => {
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        for (const chunk of chunks) controller.enqueue(bytes(chunk))
        controller.close()
      }
    })
    const web = HttpClientResponse.fromWeb(HttpClientRequest.get("http://127.0.0.1/"), new Response(body))
    return hidden
      ? new Proxy(web, { get: (target, key) => key === "source" ? undefined : Reflect.get(target, key, target) })
      : web
  }
  const collect = (chunks: ReadonlyArray<string>, hidden: boolean, maxEventBytes = 1024) =>
    Effect.gen(function*() {
      const items: Array<Sse.SseItem> = []
      const exit = yield* Body.forEachSseItem(response(chunks, hidden), "the stream", maxEventBytes, (item) => {
        items.push(item)
        return item._tag === "Event" ? Effect.succeed(true) : true
      }).pipe(Effect.scoped, Effect.exit)
      return { items, exit }
    })

  for (const hidden of [false, true]) {
    const where = hidden ? "through the response's stream" : "from the response's source"
    it.effect(`takes the items of a body split anywhere, ${where}`, () =>
      Effect.gen(function*() {
        const { exit, items } = yield* collect(
          ["data: a\r", "\ndata: b\r\n", "\r\n", ": ping\n", "id: 3\nevent: x\ndata: c\n\n"],
          hidden
        )
        assert.isTrue(Exit.isSuccess(exit))
        assert.deepStrictEqual(events(items), [
          { event: "message", data: "a\nb", id: "" },
          { event: "x", data: "c", id: "3" }
        ])
      }))

    it.effect(`takes the events before an oversized one, then fails with FrameTooLarge, ${where}`, () =>
      Effect.gen(function*() {
        const { exit, items } = yield* collect([`data: small\n\ndata: ${"z".repeat(500)}\n\n`], hidden, 100)
        assert.deepStrictEqual(events(items), [{ event: "message", data: "small", id: "" }])
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) {
          const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
          assert.strictEqual(error?.reason, "FrameTooLarge")
        }
      }))
  }

  it.effect("stops when the function answers false", () =>
    Effect.gen(function*() {
      const items: Array<Sse.SseItem> = []
      yield* Body.forEachSseItem(response(["data: 1\n\ndata: 2\n\n", "data: 3\n\n"], false), "s", 1024, (item) => {
        items.push(item)
        return items.length < 1
      }).pipe(Effect.scoped)
      assert.deepStrictEqual(events(items), [{ event: "message", data: "1", id: "" }])
    }))
})
