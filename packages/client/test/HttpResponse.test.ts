/**
 * Reading response bodies (internal/httpResponse.ts) through the public `response.stream` and `response.text`:
 * bodies whole or chunk by chunk, the size limit held while reading, broken bodies as typed errors, and a body the
 * reading stops early or is interrupted on released. The bodies are web streams fed by the test: no timers.
 */
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Body from "../src/internal/httpResponse.js"

const bytes = (text: string) => new TextEncoder().encode(text)

interface Fed {
  readonly response: HttpClientResponse.HttpClientResponse
  /** How many times the body was asked for more than what was fed. */
  readonly pulls: () => number
  readonly push: (text: string) => void
  readonly end: () => void
  readonly fail: (error: Error) => void
  /** Completes when the body is cancelled (released before its end). */
  readonly cancelled: Deferred.Deferred<void>
}

/** A response whose body the test feeds chunk by chunk. */
const fed = (headers: Record<string, string> = { "content-type": "application/json" }) =>
  Effect.gen(function*() {
    const cancelled = yield* Deferred.make<void>()
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined
    let pulls = 0
    const stream = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c
      },
      pull: () => {
        pulls++
      },
      cancel: () => {
        Deferred.doneUnsafe(cancelled, Effect.void)
      }
    }, { highWaterMark: 0 })
    const response = HttpClientResponse.fromWeb(
      HttpClientRequest.get("http://127.0.0.1/mcp"),
      new Response(stream, { headers })
    )
    return {
      response,
      pulls: () => pulls,
      push: (text: string) => controller!.enqueue(bytes(text)),
      end: () => controller!.close(),
      fail: (error: Error) => controller!.error(error),
      cancelled
    } satisfies Fed
  })

describe("response bodies through the public API", () => {
  it.effect("a chunked body in pieces is read whole", () =>
    Effect.gen(function*() {
      const body = yield* fed()
      body.push("{\"a\":")
      body.push("1}")
      body.end()
      assert.strictEqual(yield* Body.readBody(body.response, 100), "{\"a\":1}")
    }))

  it.effect("a declared length within the limit is read in one piece", () =>
    Effect.gen(function*() {
      const body = yield* fed({ "content-type": "application/json", "content-length": "7" })
      body.push("{\"a\":1}")
      body.end()
      assert.strictEqual(yield* Body.readBody(body.response, 100), "{\"a\":1}")
    }))

  it.effect("a declared length past the limit is FrameTooLarge before anything is read", () =>
    Effect.gen(function*() {
      const body = yield* fed({ "content-type": "application/json", "content-length": "1000" })
      const error = yield* Effect.flip(Body.readBody(body.response, 100))
      assert.strictEqual(error.reason, "FrameTooLarge")
      assert.strictEqual(body.pulls(), 0)
    }))

  it.effect("a chunked body past the limit is FrameTooLarge once the limit is passed, and is released", () =>
    Effect.gen(function*() {
      const body = yield* fed()
      body.push("x".repeat(60))
      body.push("x".repeat(60))
      const error = yield* Effect.flip(Effect.scoped(Body.readBody(body.response, 100)))
      assert.strictEqual(error.reason, "FrameTooLarge")
      assert.include(error.detail, "at least 120 bytes")
      yield* Deferred.await(body.cancelled)
    }))

  it.effect("a body that breaks off is a Read error", () =>
    Effect.gen(function*() {
      const body = yield* fed()
      body.push("{\"a\":")
      body.fail(new Error("reset"))
      const error = yield* Effect.flip(Body.readBody(body.response, 100))
      assert.strictEqual(error.reason, "Read")
      assert.include(error.detail, "reset")
    }))

  it.effect("a reading that stops early releases the body when its Scope closes", () =>
    Effect.gen(function*() {
      const body = yield* fed()
      body.push("first")
      body.push("second")
      const seen: Array<string> = []
      yield* Effect.scoped(Body.forEachChunk(body.response, "the body", (chunk) =>
        Effect.sync(() => {
          seen.push(new TextDecoder().decode(chunk))
          return false
        })))
      assert.deepStrictEqual(seen, ["first"])
      yield* Deferred.await(body.cancelled)
    }))

  it.effect("a reading interrupted while it waits for a chunk releases the body", () =>
    Effect.gen(function*() {
      const body = yield* fed()
      const reading = yield* Effect.forkChild(Effect.scoped(Body.readBody(body.response, 100)))
      // the reader waits for a chunk that never comes
      while (body.pulls() === 0) yield* Effect.yieldNow
      yield* Fiber.interrupt(reading)
      yield* Deferred.await(body.cancelled)
    }))

  it.effect("a refusal's snippet keeps the first 64 KiB", () =>
    Effect.gen(function*() {
      const body = yield* fed({ "content-type": "text/plain" })
      body.push("a".repeat(40 * 1024))
      body.push("b".repeat(40 * 1024))
      body.push("c".repeat(40 * 1024))
      const snippet = yield* Body.readSnippet(body.response)
      assert.strictEqual(snippet.length, Body.SNIPPET_BYTES)
      assert.isTrue(snippet.startsWith("a") && snippet.endsWith("b"))
    }))

  it.effect("an event stream split anywhere gives whole events, in order", () =>
    Effect.gen(function*() {
      const body = yield* fed({ "content-type": "text/event-stream" })
      const text = "id: 1\nevent: message\ndata: {\"x\":1}\n\nevent: message\ndata: {\"x\":2}\n\n"
      for (const piece of text.match(/.{1,7}/gs) ?? []) body.push(piece)
      body.end()
      const data: Array<string> = []
      yield* Body.forEachSseItem(body.response, "the stream", 1024, (item) => {
        if (item._tag === "Event") data.push(item.data)
        return true
      })
      assert.deepStrictEqual(data, ["{\"x\":1}", "{\"x\":2}"])
    }))
})
