/**
 * What one frame from a server may cost (issue 34, item 2): its nesting and its count of values are checked in one
 * pass over its text before JSON.parse runs (`maxFrameDepth`, `maxFrameValues`), on stdio lines, HTTP JSON bodies
 * and SSE events alike; a refused frame is dropped and logged, and a connection whose server sends more refused
 * frames than its budget (`maxRefusedFrames`, a rate) is closed with `TooManyRefusedFrames`.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"
import type * as Http from "node:http"
import * as Url from "node:url"
import * as HttpTransport from "../src/HttpTransport.js"
import * as codec from "../src/internal/codec.js"
import * as lineDecoder from "../src/internal/lineDecoder.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as StdioTransport from "../src/StdioTransport.js"
import * as Common from "./fixtures/http/common.js"
import * as Scripted from "./fixtures/http/scripted.js"
import { makeCapture } from "./utils/capture.js"
import { realSleep } from "./utils/eventually.js"

const frames = Url.fileURLToPath(new URL("./fixtures/stdio/frames.mjs", import.meta.url))

const stdioClient = (options: Partial<StdioTransport.StdioTransportOptions> = {}) =>
  McpClient.layer({ healthCheckInterval: false, reconnect: false, probeTimeout: "5 seconds" }).pipe(
    Layer.provide(
      StdioTransport.layer({ command: process.execPath, args: [frames], closeTimeout: "500 millis", ...options })
    ),
    Layer.provide(NodeServices.layer)
  )

const textOf = (result: McpSchema.CallToolResult) =>
  result.content.flatMap((block) => (block.type === "text" && "text" in block ? [block.text] : [])).join("")

/** Polls `condition` every 10 ms for up to 20 s (a loaded machine may take its time to pipe megabytes). */
const eventually = (condition: () => boolean, what: string) =>
  Effect.gen(function*() {
    const start = performance.now()
    while (!condition()) {
      if (performance.now() - start > 20_000) assert.fail(`timed out waiting for ${what}`)
      yield* realSleep(10)
    }
  })

const DEPTH_REFUSAL = "nested deeper than maxFrameDepth (512)"

describe("codec.scanFrame", () => {
  const limits = { maxDepth: 3, maxValues: 10 }
  it("counts the nesting and the values outside strings only", () => {
    assert.isUndefined(codec.scanFrame("[[[]]]", limits))
    assert.deepStrictEqual(codec.scanFrame("[[[[]]]]", limits), { limit: "maxFrameDepth", max: 3, at: 3 })
    assert.deepStrictEqual(codec.scanFrame("{\"a\":{\"b\":{\"c\":{}}}}", limits), {
      limit: "maxFrameDepth",
      max: 3,
      at: 15
    })
    // brackets and commas in strings, escaped quotes and backslashes before a closing quote
    assert.isUndefined(codec.scanFrame(JSON.stringify(["[[[[[[,,,,,,,,,,,,{{{{", "\"[[[[\\", "\\\\\"{{{{{"]), limits))
    assert.isUndefined(codec.scanFrame("[\"\\\\\",\"[[[[[\"]", limits))
    // after an escaped quote the string goes on: the brackets after it are in the string
    assert.isUndefined(codec.scanFrame("[\"\\\"[[[[[\"]", limits))
    // the array and the commas between its 11 elements: the 10th comma is the 11th count
    assert.isUndefined(codec.scanFrame("[1,2,3,4,5,6,7,8,9,10]", limits))
    assert.deepStrictEqual(codec.scanFrame("[1,2,3,4,5,6,7,8,9,10,11]", limits), {
      limit: "maxFrameValues",
      max: 10,
      at: 21
    })
    // a string never closed: what follows its quote is string
    assert.isUndefined(codec.scanFrame("[\"[[[[[[[[", limits))
  })

  it("a frame past the limits is refused before it is parsed, with the limit in the reason", () => {
    const deep = codec.decodeFrame("[".repeat(100_000))
    assert.deepStrictEqual(deep.messages, [])
    assert.include(deep.invalid[0], `${DEPTH_REFUSAL} at character 512`)
    const wide = codec.decodeFrame(`[${"{},".repeat(1_000_000)}{}]`)
    assert.include(wide.invalid[0], "more than maxFrameValues (1000000) values")
    // within the limits: what it was before
    const message = { jsonrpc: "2.0", method: "m", params: { a: JSON.parse("[".repeat(500) + "]".repeat(500)) } }
    assert.strictEqual(codec.decodeFrame(JSON.stringify(message)).messages.length, 1)
  })
})

describe("the cost of a hostile frame", () => {
  /** The fastest of a few runs of `f`, in milliseconds (the least disturbed by the rest of the machine). */
  const fastest = (f: () => unknown): number => {
    let best = Number.POSITIVE_INFINITY
    for (let run = 0; run < 5; run++) {
      const start = performance.now()
      f()
      best = Math.min(best, performance.now() - start)
    }
    return best
  }

  /** What a stdio line costs the client: framing, decoding from UTF-8, the checks, JSON.parse and the decoding. */
  const handle = (bytes: Uint8Array) => () => {
    const decoder = lineDecoder.make({ maxLineBytes: 64 * 1024 * 1024, overflow: "fail" })
    for (let start = 0; start < bytes.length; start += 65_536) {
      const result = decoder.push(bytes.subarray(start, start + 65_536))
      for (const line of result.lines) codec.decodeFrame(line)
    }
  }

  it("a deep or wide frame of N bytes costs no more than 3 times parsing a flat frame of N bytes", () => {
    const N = 4 * 1024 * 1024
    const encode = (text: string) => new TextEncoder().encode(`${text}\n`)
    // the baseline: a notification whose one string fills the frame (the cheapest bytes JSON.parse reads)
    const envelope = JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { data: "" } })
    const flat = encode(envelope.replace("\"\"", JSON.stringify("x".repeat(N - envelope.length))))
    const hostile = {
      "unclosed arrays": "[".repeat(N),
      "closed arrays": "[".repeat(N / 2) + "]".repeat(N / 2),
      "objects in objects": "{\"a\":".repeat(N / 5),
      "arrays deep inside a message": envelope.replace("\"\"", "[".repeat(N - envelope.length)),
      "empty objects side by side": `[${"{},".repeat(N / 3 - 1)}{}]`,
      "empty arrays side by side": `[${"[],".repeat(N / 3 - 1)}[]]`
    }
    const baseline = fastest(handle(flat))
    for (const [name, text] of Object.entries(hostile)) {
      const cost = fastest(handle(encode(text)))
      assert.isAtMost(cost / Math.max(baseline, 1), 3, `${name}: ${cost.toFixed(1)} ms, flat ${baseline.toFixed(1)} ms`)
    }
  })
})

describe("stdio: a hostile server's deep lines", () => {
  it.live("a line of 100 000 '[' is refused by its depth and dropped; the connection stays", () => {
    const capture = makeCapture()
    return Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      const { pid } = (yield* mcp.session).transport
      const result = yield* mcp.callTool({ name: "frames", arguments: { deep: 100_000 } }, { timeout: "20 seconds" })
      assert.strictEqual(textOf(result), "done")
      assert.strictEqual((yield* mcp.session).transport.pid, pid, "the same connection")
      assert.isTrue(capture.logs.some((line) => line.includes(DEPTH_REFUSAL)), capture.logs.join("\n").slice(0, 2000))
    }).pipe(Effect.provide(stdioClient()), capture.observe)
  })

  it.effect("a call's timeout fires right after a 16 MiB line of '[' is refused (TestClock)", () => {
    const capture = makeCapture()
    return Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      const order: Array<string> = []
      const call = yield* mcp.callTool({ name: "frames", arguments: { deep: 16 * 1024 * 1024, answer: false } }, {
        timeout: "2 seconds"
      }).pipe(
        Effect.flip,
        Effect.tap((error) => Effect.sync(() => order.push(error._tag))),
        (effect) => Effect.forkChild(effect)
      )
      yield* eventually(() => capture.logs.some((line) => line.includes(DEPTH_REFUSAL)), "the refusal of the line")
      order.push("refused")
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(call)
      assert.strictEqual(error._tag, "RequestTimeout")
      assert.deepStrictEqual(order, ["refused", "RequestTimeout"])
    }).pipe(Effect.provide(stdioClient()), capture.observe)
  })

  it.effect("past maxRefusedFrames refused lines a minute, the connection is closed with TooManyRefusedFrames", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      const call = (args: Record<string, unknown>) =>
        mcp.callTool({ name: "frames", arguments: args }, { timeout: "1 minute" })
      // the budget: 3 at once
      assert.strictEqual(textOf(yield* call({ garbage: 2, deep: 1000 })), "done")
      // earned back at 3 a minute: 20 seconds give one more
      yield* TestClock.adjust("20 seconds")
      assert.strictEqual(textOf(yield* call({ garbage: 1 })), "done")
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(textOf(yield* call({ garbage: 3 })), "done")
      const error = yield* Effect.flip(call({ garbage: 1 }))
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") {
        assert.strictEqual(error.reason, "TooManyRefusedFrames")
        assert.include(error.message, "maxRefusedFrames")
        assert.include(error.message, "malformed JSON: not json 0")
      }
    }).pipe(Effect.provide(stdioClient({ maxRefusedFrames: 3 }))))

  it.effect("the limits are options", () =>
    Effect.gen(function*() {
      for (const option of ["maxFrameDepth", "maxFrameValues", "maxRefusedFrames"] as const) {
        const error = yield* Effect.flip(
          Layer.build(stdioClient({ [option]: 0 })).pipe(Effect.scoped)
        )
        assert.strictEqual(error._tag, "InvalidOption")
        if (error._tag === "InvalidOption") assert.strictEqual(error.option, option)
        for (const value of [1.5, -1, "many"]) {
          const http = yield* Effect.flip(
            HttpTransport.make({ url: "http://127.0.0.1:1/mcp", [option]: value as number }).pipe(
              Effect.provide(NodeHttpClient.layerUndici)
            )
          )
          assert.strictEqual(http.option, option)
        }
      }
    }))
})

describe("HTTP: a hostile server's deep bodies and events", () => {
  const deep = "[".repeat(100_000)

  /** A modern server answering each tools/call as `answer` says, by the tool's name. */
  const server = (answer: (name: string, id: unknown, res: Http.ServerResponse) => void) =>
    Scripted.mcpServer("modern", {
      request: (seen, res) => {
        const params = Scripted.isObject(seen.body) && Scripted.isObject(seen.body.params) ? seen.body.params : {}
        answer(String(params.name), Scripted.idOf(seen), res)
      }
    })

  const answers = (name: string, id: unknown, res: Http.ServerResponse) => {
    switch (name) {
      case "deep-json":
        res.writeHead(200, { "content-type": "application/json" })
        return void res.end(deep)
      case "deep-events":
        Scripted.startSse(res)
        res.write(`event: message\ndata: ${deep}\n\n`)
        res.write(`event: message\ndata: ${deep}\n\n`)
        return Scripted.sseMessage(res, Scripted.success(id, Scripted.textResult("after")))
      case "large-json":
        return Scripted.sendJson(res, 200, Scripted.success(id, Scripted.textResult("x".repeat(10_000))))
      default:
        return Scripted.sendJson(res, 200, Scripted.success(id, Scripted.textResult("ok")))
    }
  }

  it.live("a deep JSON body and deep SSE events are refused by their depth; the connection stays", () => {
    const capture = makeCapture()
    return Effect.gen(function*() {
      const { url } = yield* server(answers)
      const { client } = yield* Common.connect({ url })
      const error = yield* Effect.flip(client.callTool({ name: "deep-json" }, { timeout: "20 seconds" }))
      assert.strictEqual(error._tag, "TransportError")
      assert.include(error.message, "not a JSON-RPC message")
      assert.strictEqual(textOf(yield* client.callTool({ name: "deep-events" }, { timeout: "20 seconds" })), "after")
      assert.strictEqual(capture.logs.filter((line) => line.includes(DEPTH_REFUSAL)).length, 3)
      assert.strictEqual(textOf(yield* client.callTool({ name: "ok" })), "ok")
    }).pipe(Effect.scoped, capture.observe)
  })

  it.live("past maxRefusedFrames refused events, the connection is closed with TooManyRefusedFrames", () =>
    Effect.gen(function*() {
      const { url } = yield* server(answers)
      const { client } = yield* Common.connect({ url, maxRefusedFrames: 2 })
      // the deep body spends one of the two, the first deep event the other, the second is past the budget
      const error = yield* Effect.flip(client.callTool({ name: "deep-json" }, { timeout: "20 seconds" }))
      assert.strictEqual(error._tag, "TransportError")
      const closing = yield* Effect.flip(client.callTool({ name: "deep-events" }, { timeout: "20 seconds" }))
      assert.strictEqual(closing._tag, "TransportError")
      if (closing._tag === "TransportError") {
        assert.strictEqual(closing.reason, "TooManyRefusedFrames")
        assert.include(closing.message, DEPTH_REFUSAL)
      }
      // closed: nothing more goes out on it
      const after = yield* Effect.flip(client.callTool({ name: "ok" }, { timeout: "20 seconds" }))
      assert.strictEqual(after._tag, "TransportError")
    }).pipe(Effect.scoped))

  it.live("deep events on a legacy session's GET stream count too: past the budget, the session is closed", () => {
    const capture = makeCapture()
    return Effect.gen(function*() {
      let gets = 0
      const legacy = yield* Scripted.mcpServer("legacy", {
        get: (_seen, res) => {
          gets++
          Scripted.startSse(res)
          res.write(`event: message\ndata: ${deep}\n\n`)
          res.write(`event: message\ndata: ${deep}\n\n`)
        },
        request: (seen, res) => answers("ok", Scripted.idOf(seen), res)
      })
      const { client } = yield* Common.connect({ url: legacy.url, maxRefusedFrames: 1 })
      yield* eventually(() => capture.logs.some((line) => line.includes("TooManyRefusedFrames")), "the close")
      const error = yield* Effect.flip(client.callTool({ name: "ok" }, { timeout: "20 seconds" }))
      assert.strictEqual(error._tag === "TransportError" ? error.reason : error._tag, "TooManyRefusedFrames")
      assert.strictEqual(gets, 1)
    }).pipe(Effect.scoped, capture.observe)
  })

  it.live("a body larger than maxEventBytes counts against maxRefusedFrames", () =>
    Effect.gen(function*() {
      const { url } = yield* server(answers)
      const { client } = yield* Common.connect({ url, maxEventBytes: 4096, maxRefusedFrames: 1 })
      const first = yield* Effect.flip(client.callTool({ name: "large-json" }, { timeout: "20 seconds" }))
      assert.strictEqual(first._tag === "TransportError" ? first.reason : first._tag, "FrameTooLarge")
      const second = yield* Effect.flip(client.callTool({ name: "large-json" }, { timeout: "20 seconds" }))
      assert.strictEqual(second._tag === "TransportError" ? second.reason : second._tag, "TooManyRefusedFrames")
    }).pipe(Effect.scoped))
})
