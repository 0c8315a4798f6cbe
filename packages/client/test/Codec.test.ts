import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as codec from "../src/internal/codec.js"
import * as McpSchema from "../src/McpSchema.js"

// The hand-written decoding of the usual shapes must give exactly what the schemas give (the same members in the
// same order), and leave everything else to the schemas.

const decodeRequest = Schema.decodeUnknownResult(McpSchema.JsonRpcRequest)
const decodeNotification = Schema.decodeUnknownResult(McpSchema.JsonRpcNotification)
const decodeSuccess = Schema.decodeUnknownResult(McpSchema.JsonRpcSuccess)
const decodeFailure = Schema.decodeUnknownResult(McpSchema.JsonRpcFailure)

const bySchema = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return undefined
  // a message's members are its own (Effect 4's struct decoding would also read inherited ones)
  const input = { ...value }
  if ("method" in input) {
    return "id" in input
      ? Result.getOrUndefined(decodeRequest(input))
      : Result.getOrUndefined(decodeNotification(input))
  }
  return "result" in input ? Result.getOrUndefined(decodeSuccess(input)) : Result.getOrUndefined(decodeFailure(input))
}

describe("McpSchema.decodeMessage, usual envelopes", () => {
  it("gives what the member schemas give", () => {
    const inputs: Array<unknown> = [
      { jsonrpc: "2.0", id: 1, result: { content: [] } },
      { result: { a: 1 }, id: "x", jsonrpc: "2.0" },
      { jsonrpc: "2.0", id: 7, result: null, extra: "dropped" },
      { jsonrpc: "2.0", id: 0, result: undefined },
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 2 } },
      { method: "notifications/initialized", jsonrpc: "2.0" },
      { jsonrpc: "2.0", method: "x", params: undefined },
      { jsonrpc: "2.0", id: "r1", method: "roots/list", params: {}, other: 1 },
      { params: [1], method: "m", id: 3, jsonrpc: "2.0" },
      { jsonrpc: "2.0", id: 2 ** 53, result: {} },
      { jsonrpc: "2.0", id: -4, result: {} },
      { jsonrpc: "2.0", id: Number.NaN, result: {} },
      { jsonrpc: "2.0", id: 1, method: 5 },
      { jsonrpc: 2, id: 1, result: {} },
      Object.assign(Object.create({ id: 3 }), { jsonrpc: "2.0", result: {} }),
      Object.assign(Object.create({ params: 3 }), { jsonrpc: "2.0", method: "m" })
    ]
    for (const input of inputs) {
      const fast = Result.getOrUndefined(McpSchema.decodeMessage(input))
      const slow = bySchema(input)
      assert.deepStrictEqual(fast, slow, String(JSON.stringify(input)))
      assert.strictEqual(JSON.stringify(fast), JSON.stringify(slow))
      if (slow !== undefined) assert.deepStrictEqual(Object.keys(fast ?? {}), Object.keys(slow ?? {}))
    }
  })
})

describe("codec.decodeTextToolResult", () => {
  const decode = Schema.decodeUnknownResult(McpSchema.CallToolResult, McpSchema.preserve)

  it("builds the schema's value for text-only results", () => {
    const inputs: Array<unknown> = [
      { content: [{ type: "text", text: "hello" }] },
      { resultType: "complete", content: [{ text: "b", type: "text" }, { type: "text", text: "" }] },
      { content: [] },
      {},
      { isError: true, content: [{ type: "text", text: "failed" }] },
      { structuredContent: { a: [1, 2] }, content: [{ type: "text", text: "{}" }], isError: false },
      { structuredContent: null, resultType: "complete" },
      JSON.parse("{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"resultType\":\"complete\"}")
    ]
    for (const input of inputs) {
      const fast = codec.decodeTextToolResult(input)
      assert.isDefined(fast, JSON.stringify(input))
      const slow = Result.getOrThrow(decode(input))
      assert.deepStrictEqual(fast, slow)
      assert.strictEqual(JSON.stringify(fast), JSON.stringify(slow))
    }
  })

  it("leaves every other shape to the schema", () => {
    const inputs: Array<unknown> = [
      null,
      [],
      "text",
      { content: [{ type: "text", text: "x", annotations: { priority: 1 } }] },
      { content: [{ type: "text", text: "x", _meta: {} }] },
      { content: [{ type: "image", data: "AA==", mimeType: "image/png" }] },
      { content: [{ type: "text", text: 5 }] },
      { content: [{ type: "text" }, { type: "text", text: "x" }] },
      { content: [{ type: "text", text: "x", extra: 1 }] },
      { content: {} },
      { content: undefined },
      { content: [], _meta: { a: 1 } },
      { content: [], extra: 1 },
      { content: [], isError: "yes" },
      { content: [], isError: undefined },
      { content: [], resultType: 3 },
      { content: [], [Symbol.for("x")]: 1 },
      Object.assign(Object.create(null), { content: [] }),
      { content: [Object.assign(Object.create({ extra: 1 }), { type: "text", text: "x" })] }
    ]
    for (const input of inputs) assert.isUndefined(codec.decodeTextToolResult(input), String(JSON.stringify(input)))
  })
})

describe("codec.decodeFrame on hostile frames", () => {
  const deep = (depth: number) => "[".repeat(depth) + "]".repeat(depth)

  it("a batch nested 200,000 deep is dropped as invalid, not thrown", () => {
    const decoded = codec.decodeFrame(deep(200_000))
    assert.deepStrictEqual(decoded.messages, [])
    assert.strictEqual(decoded.invalid.length, 1)
    assert.isAtMost(decoded.invalid[0].length, 300)
  })

  it("a batch of 100 000 elements that are not JSON-RPC: ten are described, the others counted", () => {
    const decoded = codec.decodeFrame(`[${Array.from({ length: 100_000 }, (_, i) => `{"n":${i}}`).join(",")}]`)
    assert.deepStrictEqual(decoded.messages, [])
    assert.deepStrictEqual(decoded.invalid.slice(0, 2), [
      "batch element is not JSON-RPC: {\"n\":0}",
      "batch element is not JSON-RPC: {\"n\":1}"
    ])
    assert.strictEqual(decoded.invalid.length, 11)
    assert.strictEqual(decoded.invalid[10], "and 99990 more batch elements that are not JSON-RPC")
  })

  it("deep members of a message, deep objects and huge elements: previews stay short", () => {
    const frames = [
      `{"jsonrpc":"2.0","id":1,"bad":${deep(100_000)}}`,
      `[${"{\"a\":".repeat(50_000)}1${"}".repeat(50_000)}]`,
      `[{"x":"${"y".repeat(1_000_000)}"}]`,
      `[${Array.from({ length: 100_000 }, (_, i) => i).join(",")}]`
    ]
    for (const frame of frames) {
      const decoded = codec.decodeFrame(frame)
      assert.deepStrictEqual(decoded.messages, [])
      for (const line of decoded.invalid) assert.isAtMost(line.length, 300)
    }
  })

  it("preview writes the start of the JSON text", () => {
    assert.strictEqual(codec.preview({ a: [1, "x", null, { b: true }] }), "{\"a\":[1,\"x\",null,{\"b\":true}]}")
    assert.strictEqual(codec.preview([]), "[]")
    assert.strictEqual(codec.preview("x".repeat(10), 5), "\"xxxx…")
  })
})

describe("codec.preview", () => {
  it("reads no more of a wide and deep value than it shows", () => {
    let reads = 0
    // 50 levels of 8 192 elements, each level's first element the next level, read through a counting proxy
    let value: unknown = 0
    for (let level = 0; level < 50; level++) {
      const items: Array<unknown> = Array.from({ length: 8192 }, () => 0)
      items[0] = value
      value = new Proxy(items, {
        get: (target, key, receiver) => {
          if (typeof key === "string" && /^\d+$/.test(key)) reads++
          return Reflect.get(target, key, receiver)
        }
      })
    }
    const shown = codec.preview(value, 8192)
    assert.strictEqual(shown.length, 8193)
    assert.isTrue(shown.startsWith("[".repeat(50) + "0,0,0"))
    assert.isTrue(shown.endsWith("…"))
    // one read per element written: pushing every child first read 8 192 per level
    assert.isAtMost(reads, 8192 + 50)
  })

  it("shows a value whole when it fits, and escapes what a terminal would act on", () => {
    const value = { a: [1, "x"], b: null, c: { d: true } }
    assert.strictEqual(codec.preview(value), JSON.stringify(value))
    assert.strictEqual(codec.preview(["\u009b2J", "\u202e"]), "[\"\\x9b2J\",\"\\u202e\"]")
    assert.strictEqual(codec.preview("a".repeat(500), 10), "\"aaaaaaaaa…")
  })
})
