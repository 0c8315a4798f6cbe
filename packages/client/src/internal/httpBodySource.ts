/**
 * Reading a response body straight from what the HTTP client's response wraps, when it is one of the shapes
 * `@effect/platform`'s own clients produce: a Node.js `Readable` (the undici client's `source.body`, the
 * `node:http` client's `source`) or a web `ReadableStream` (the fetch client's `source.body`).
 *
 * `response.stream` reads any client's body, but through a Stream whose channel executor costs more per request
 * than everything else the transport does (it was about 40% of an HTTP call's CPU time). Reading the body pulled
 * here keeps the same guarantees (chunk by chunk, so a size limit holds while reading; a body left unread is
 * destroyed) at a fraction of that. Any other response, from a client of another shape, is read through
 * `response.stream` as before.
 *
 * @internal
 */
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import { concatBytes } from "./bytes.js"

/**
 * A body being read: `pull` answers the next chunk, or undefined at the end; `release` stops listening and, when
 * the body was not read to its end, destroys it (which lets the HTTP client drop the connection). A pull
 * interrupted while it waits releases the body.
 *
 * @internal
 */
export interface BodyReader {
  readonly pull: Effect.Effect<Uint8Array | undefined, BodyBroken>
  /** Reads the rest of the body whole, failing once more than `limit` bytes came; the body is released. */
  readonly readAll: (limit: number) => Effect.Effect<Uint8Array, BodyBroken | BodyTooLarge>
  readonly release: () => void
}

/**
 * More than the limit came (at least `size` bytes).
 *
 * @internal
 */
export interface BodyTooLarge {
  readonly tooLarge: number
}

/**
 * The body ended with an error, or closed before its end.
 *
 * @internal
 */
export interface BodyBroken {
  readonly cause: unknown
}

/** What the reader needs of a Node.js `Readable`. */
interface NodeReadable {
  read(): unknown
  on(event: string, listener: (...args: ReadonlyArray<unknown>) => void): unknown
  off(event: string, listener: (...args: ReadonlyArray<unknown>) => void): unknown
  destroy(): unknown
  readonly readableEnded: boolean
  readonly readableLength: number
  readonly destroyed: boolean
  readonly errored?: unknown
}

const isObject = (value: unknown): value is Record<PropertyKey, unknown> =>
  typeof value === "object" && value !== null

const isNodeReadable = (value: unknown): value is NodeReadable =>
  isObject(value) &&
  typeof value.read === "function" &&
  typeof value.on === "function" &&
  typeof value.off === "function" &&
  typeof value.destroy === "function" &&
  typeof value.readableEnded === "boolean" &&
  typeof value.readableLength === "number" &&
  typeof value.destroyed === "boolean"

/** A stream someone else already reads in flowing mode is not ours to read. */
const isFlowing = (readable: NodeReadable): boolean =>
  (readable as unknown as { readonly readableFlowing?: unknown }).readableFlowing === true

const isWebStream = (value: unknown): value is ReadableStream<Uint8Array> =>
  typeof ReadableStream === "function" && value instanceof ReadableStream

/**
 * A reader of the response's body taken from the response's underlying source, or undefined when the response
 * is not of a known shape or its body was already touched (then `response.stream` is the way to read it).
 *
 * @internal
 */
export const reader = (response: HttpClientResponse.HttpClientResponse): BodyReader | undefined => {
  const source: unknown = (response as unknown as { readonly source?: unknown }).source
  if (!isObject(source)) return undefined
  // node:http: the response's source is the IncomingMessage itself
  if (isNodeReadable(source)) return isFlowing(source) ? undefined : fromNode(source)
  const body = source.body
  // undici: `{ statusCode, headers, body }` with the body a Readable
  if (isNodeReadable(body)) return isFlowing(body) ? undefined : fromNode(body)
  // fetch: a web Response, whose body is null when there is none
  if (isWebStream(body)) return body.locked ? undefined : fromWeb(body)
  if (body === null && typeof Response === "function" && source instanceof Response) return empty
  return undefined
}

const empty: BodyReader = {
  pull: Effect.succeed(undefined),
  readAll: () => Effect.succeed(new Uint8Array(0)),
  release: () => undefined
}

const notBytes = (): BodyBroken => ({ cause: new TypeError("the body yields chunks that are not bytes") })

/** Reads the rest whole by pulling (for a body with no faster way). */
const readAllByPulls = (
  pull: BodyReader["pull"],
  release: () => void
) =>
(limit: number): Effect.Effect<Uint8Array, BodyBroken | BodyTooLarge> =>
  Effect.suspend(() => {
    const chunks: Array<Uint8Array> = []
    let size = 0
    const next: Effect.Effect<Uint8Array, BodyBroken | BodyTooLarge> = Effect.flatMap(pull, (chunk) => {
      if (chunk === undefined) return Effect.succeed(concatBytes(chunks, size))
      size += chunk.length
      if (size > limit) {
        release()
        return Effect.fail({ tooLarge: size })
      }
      chunks.push(chunk)
      return next
    })
    return next
  })

const prematureClose = () => new Error("the body closed before its end")

const fromNode = (readable: NodeReadable): BodyReader => {
  let ended = readable.readableEnded
  // a body destroyed before its end (the connection broke before it was read) reads as broken
  let broken: BodyBroken | undefined = readable.destroyed && !ended
    ? { cause: readable.errored ?? prematureClose() }
    : undefined
  let wake: (() => void) | undefined
  const signal = () => {
    const resume = wake
    if (resume !== undefined) {
      wake = undefined
      resume()
    }
  }
  const onEnd = () => {
    ended = true
    signal()
  }
  const onError = (cause: unknown) => {
    broken ??= { cause }
    signal()
  }
  const onClose = () => {
    if (!ended) broken ??= { cause: readable.errored ?? prematureClose() }
    signal()
  }
  readable.on("readable", signal)
  readable.on("end", onEnd)
  readable.on("error", onError)
  readable.on("close", onClose)
  const waitThenPull: Effect.Effect<Uint8Array | undefined, BodyBroken> = Effect.async((resume) => {
    // The fiber may have yielded since `read()` answered null: a signal that came meanwhile found no one waiting
    // (and the stream signals "readable" again only after a read that comes up empty), so look once more first.
    if (readable.readableLength > 0 || broken !== undefined || ended || readable.readableEnded) {
      resume(pull)
      return
    }
    wake = () => resume(pull)
    return Effect.sync(release)
  })
  const pull: Effect.Effect<Uint8Array | undefined, BodyBroken> = Effect.suspend(() => {
    const chunk = broken === undefined ? readable.read() : null
    if (chunk instanceof Uint8Array) return Effect.succeed(chunk)
    if (chunk !== null) return Effect.fail(notBytes())
    if (broken !== undefined) return Effect.fail(broken)
    if (ended || readable.readableEnded) return Effect.succeed(undefined)
    return waitThenPull
  })
  // all of it in one wait: what is buffered is taken at each signal, until the end
  const readAll = (limit: number): Effect.Effect<Uint8Array, BodyBroken | BodyTooLarge> =>
    Effect.async((resume) => {
      const chunks: Array<Uint8Array> = []
      let size = 0
      const finish = (outcome: Effect.Effect<Uint8Array, BodyBroken | BodyTooLarge>) => {
        release()
        resume(outcome)
      }
      const step = () => {
        for (;;) {
          const chunk = broken === undefined ? readable.read() : null
          if (chunk === null) break
          if (!(chunk instanceof Uint8Array)) return finish(Effect.fail(notBytes()))
          size += chunk.length
          if (size > limit) return finish(Effect.fail({ tooLarge: size }))
          chunks.push(chunk)
        }
        if (broken !== undefined) return finish(Effect.fail(broken))
        if (ended || readable.readableEnded) return finish(Effect.succeed(concatBytes(chunks, size)))
        wake = step
      }
      step()
      return Effect.sync(release)
    })
  const release = () => {
    wake = undefined
    readable.off("readable", signal)
    readable.off("end", onEnd)
    readable.off("error", onError)
    readable.off("close", onClose)
    if (!readable.readableEnded && !readable.destroyed) readable.destroy()
  }
  return { pull, readAll, release }
}

const fromWeb = (body: ReadableStream<Uint8Array>): BodyReader => {
  const reader = body.getReader()
  let done = false
  const release = () => {
    if (!done) {
      done = true
      reader.cancel().catch(() => undefined)
    }
  }
  const pull: Effect.Effect<Uint8Array | undefined, BodyBroken> = Effect.async((resume) => {
    reader.read().then(
      (step) => {
        if (step.done) {
          done = true
          resume(Effect.succeed(undefined))
        } else {
          resume(
            step.value instanceof Uint8Array
              ? Effect.succeed(step.value)
              : Effect.fail(notBytes())
          )
        }
      },
      (cause: unknown) => resume(Effect.fail({ cause }))
    )
    return Effect.sync(release)
  })
  return { pull, readAll: readAllByPulls(pull, release), release }
}
