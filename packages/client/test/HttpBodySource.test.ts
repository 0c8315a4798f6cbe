/**
 * Reading a body from the source of a platform HTTP client's response: a Node.js Readable or a web
 * ReadableStream, chunk by chunk, with the end, errors, early closes and release made explicit.
 */
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { EventEmitter } from "node:events"
import { Readable } from "node:stream"
import * as BodySource from "../src/internal/httpBodySource.js"

const response = (source: unknown) => ({ source }) as unknown as HttpClientResponse.HttpClientResponse

const readerOf = (source: unknown): BodySource.BodyReader => {
  const reader = BodySource.reader(response(source))
  if (reader === undefined) return assert.fail("expected a reader")
  return reader
}

/** Pulls until the end; the chunks as text. */
const drain = (reader: BodySource.BodyReader) =>
  Effect.gen(function*() {
    const parts: Array<string> = []
    for (;;) {
      const chunk = yield* reader.pull
      if (chunk === undefined) return parts
      parts.push(Buffer.from(chunk).toString("utf8"))
    }
  })

const bytes = (text: string) => new TextEncoder().encode(text)

describe("a Node.js Readable body", () => {
  it.effect("chunks pushed before and after the first pull, then the end", () =>
    Effect.gen(function*() {
      const readable = new Readable({ read: () => undefined })
      readable.push(Buffer.from("a"))
      const reader = readerOf({ body: readable })
      const drained = yield* Effect.fork(drain(reader))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      readable.push(Buffer.from("b"))
      readable.push(null)
      const parts = yield* drained.await
      assert.isTrue(Exit.isSuccess(parts))
      if (Exit.isSuccess(parts)) assert.strictEqual(parts.value.join(""), "ab")
      reader.release()
      assert.isFalse(readable.destroyed && !readable.readableEnded)
    }))

  it.effect("the IncomingMessage shape: the source is the Readable", () =>
    Effect.gen(function*() {
      const readable = Readable.from([Buffer.from("x"), Buffer.from("y")], { objectMode: false })
      const parts = yield* drain(readerOf(readable))
      assert.strictEqual(parts.join(""), "xy")
    }))

  it.effect("an error while reading fails the pull with its cause", () =>
    Effect.gen(function*() {
      const readable = new Readable({ read: () => undefined })
      const reader = readerOf({ body: readable })
      const pulled = yield* Effect.fork(Effect.flip(drain(reader)))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      readable.destroy(new Error("reset"))
      const broken = yield* pulled.await
      assert.isTrue(Exit.isSuccess(broken))
      if (Exit.isSuccess(broken)) assert.strictEqual((broken.value.cause as Error).message, "reset")
    }))

  it.effect("a body closed before its end is broken, not ended", () =>
    Effect.gen(function*() {
      const readable = new Readable({ read: () => undefined, emitClose: true })
      readable.push(Buffer.from("part"))
      const reader = readerOf({ body: readable })
      assert.strictEqual(Buffer.from((yield* reader.pull)!).toString(), "part")
      const pulled = yield* Effect.fork(Effect.flip(reader.pull))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      readable.destroy()
      const broken = yield* pulled.await
      assert.isTrue(Exit.isSuccess(broken))
      // a body already destroyed reads as broken from the start
      const again = yield* Effect.flip(readerOf({ body: readable }).pull)
      assert.instanceOf(again.cause, Error)
    }))

  it.effect("release before the end destroys the body and stops listening", () =>
    Effect.gen(function*() {
      const readable = new Readable({ read: () => undefined })
      readable.push(Buffer.from("a"))
      const reader = readerOf({ body: readable })
      assert.strictEqual(Buffer.from((yield* reader.pull)!).toString(), "a")
      reader.release()
      assert.isTrue(readable.destroyed)
      assert.strictEqual(readable.listenerCount("readable"), 0)
      assert.strictEqual(readable.listenerCount("end"), 0)
    }))

  it.effect("a pull interrupted while it waits releases the body", () =>
    Effect.gen(function*() {
      const readable = new Readable({ read: () => undefined })
      const reader = readerOf({ body: readable })
      const waiting = yield* Effect.fork(reader.pull)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      assert.isFalse(readable.destroyed)
      const exit = yield* Fiber.interrupt(waiting)
      assert.isTrue(Exit.isInterrupted(exit))
      assert.isTrue(readable.destroyed)
      assert.strictEqual(readable.listenerCount("readable"), 0)
    }))

  it.live("a signal that comes between an empty read and the wait is not lost", () =>
    Effect.gen(function*() {
      // the data and its "readable" signal arrive just as a read comes up empty (as when the fiber yields between
      // the read and the wait): no other signal follows
      class Racy extends EventEmitter {
        readonly parts: Array<Uint8Array> = [bytes("late")]
        readableEnded = false
        destroyed = false
        private first = true
        get readableLength() {
          return this.first ? 0 : this.parts.reduce((total, part) => total + part.length, 0)
        }
        read(): Uint8Array | null {
          if (this.first) {
            this.first = false
            this.emit("readable")
            return null
          }
          const part = this.parts.shift()
          if (part !== undefined) return part
          setTimeout(() => {
            this.readableEnded = true
            this.emit("end")
          }, 5)
          return null
        }
        destroy() {
          this.destroyed = true
        }
      }
      const parts = yield* drain(readerOf({ body: new Racy() })).pipe(
        Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => "the reader missed the signal" })
      )
      assert.deepStrictEqual(parts, ["late"])
    }))

  it.effect("readAll: everything until the end, across waits, in one piece", () =>
    Effect.gen(function*() {
      const readable = new Readable({ read: () => undefined })
      readable.push(Buffer.from("ab"))
      const all = yield* Effect.fork(readerOf({ body: readable }).readAll(100))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      readable.push(Buffer.from("cd"))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      readable.push(Buffer.from("e"))
      readable.push(null)
      const bytes = yield* Fiber.join(all)
      assert.strictEqual(Buffer.from(bytes).toString(), "abcde")
      assert.strictEqual(readable.listenerCount("readable"), 0)
    }))

  it.effect("readAll: past the limit it fails with the size seen and destroys the body", () =>
    Effect.gen(function*() {
      const readable = new Readable({ read: () => undefined })
      readable.push(Buffer.from("1234"))
      const all = yield* Effect.fork(Effect.flip(readerOf({ body: readable }).readAll(6)))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      readable.push(Buffer.from("5678"))
      const error = yield* Fiber.join(all)
      assert.deepStrictEqual(error, { tooLarge: 8 })
      assert.isTrue(readable.destroyed)
    }))

  it.effect("readAll: a body that breaks off fails with its cause; an interrupted read releases the body", () =>
    Effect.gen(function*() {
      const broken = new Readable({ read: () => undefined })
      const all = yield* Effect.fork(Effect.flip(readerOf({ body: broken }).readAll(100)))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      broken.destroy(new Error("reset"))
      const error = yield* Fiber.join(all)
      assert.isFalse("tooLarge" in error)
      if (!("tooLarge" in error)) assert.strictEqual((error.cause as Error).message, "reset")
      const waiting = new Readable({ read: () => undefined })
      const interrupted = yield* Effect.fork(readerOf({ body: waiting }).readAll(100))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      yield* Fiber.interrupt(interrupted)
      assert.isTrue(waiting.destroyed)
    }))

  it.effect("a body already read in flowing mode, or a source of another shape, has no reader", () =>
    Effect.sync(() => {
      const flowing = new Readable({ read: () => undefined })
      flowing.on("data", () => undefined)
      assert.isUndefined(BodySource.reader(response({ body: flowing })))
      assert.isUndefined(BodySource.reader(response(undefined)))
      assert.isUndefined(BodySource.reader(response({ body: "text" })))
      assert.isUndefined(BodySource.reader(response({ body: { read: () => null } })))
    }))

  it.effect("chunks that are not bytes fail the pull", () =>
    Effect.gen(function*() {
      const readable = new Readable({ read: () => undefined, encoding: "utf8" })
      readable.push("text")
      const broken = yield* Effect.flip(readerOf({ body: readable }).pull)
      assert.instanceOf(broken.cause, TypeError)
    }))
})

describe("a web ReadableStream body", () => {
  it.effect("chunks, then the end", () =>
    Effect.gen(function*() {
      const parts = yield* drain(readerOf(new Response(new Blob([bytes("he"), bytes("llo")]).stream())))
      assert.strictEqual(parts.join(""), "hello")
    }))

  it.effect("an error of the stream fails the pull", () =>
    Effect.gen(function*() {
      const stream = new ReadableStream<Uint8Array>({
        start: (controller) => {
          controller.enqueue(bytes("a"))
          controller.error(new Error("broken"))
        }
      })
      const broken = yield* Effect.flip(drain(readerOf(new Response(stream))))
      assert.strictEqual((broken.cause as Error).message, "broken")
    }))

  it.effect("release before the end cancels the stream", () =>
    Effect.gen(function*() {
      let cancelled = false
      const stream = new ReadableStream<Uint8Array>({
        pull: (controller) => controller.enqueue(bytes("more")),
        cancel: () => {
          cancelled = true
        }
      })
      const reader = readerOf(new Response(stream))
      assert.strictEqual(Buffer.from((yield* reader.pull)!).toString(), "more")
      reader.release()
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      assert.isTrue(cancelled)
    }))

  it.effect("a pull interrupted while it waits cancels the stream", () =>
    Effect.gen(function*() {
      let cancelled = false
      const stream = new ReadableStream<Uint8Array>({
        cancel: () => {
          cancelled = true
        }
      })
      const waiting = yield* Effect.fork(readerOf(new Response(stream)).pull)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      assert.isFalse(cancelled)
      yield* Fiber.interrupt(waiting)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      assert.isTrue(cancelled)
    }))

  it.effect("readAll: the chunks in one piece, or the size past the limit", () =>
    Effect.gen(function*() {
      const body = () => new Response(new Blob([bytes("he"), bytes("llo")]).stream())
      const all = yield* readerOf(body()).readAll(10)
      assert.strictEqual(Buffer.from(all).toString(), "hello")
      const error = yield* Effect.flip(readerOf(body()).readAll(3))
      assert.isTrue("tooLarge" in error && error.tooLarge >= 4)
      assert.strictEqual((yield* readerOf(new Response(null, { status: 204 })).readAll(10)).length, 0)
    }))

  it.effect("a response without a body reads as empty; a locked body has no reader", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* drain(readerOf(new Response(null, { status: 204 }))), [])
      const locked = new Response("x")
      locked.body!.getReader()
      assert.isUndefined(BodySource.reader(response(locked)))
    }))
})
