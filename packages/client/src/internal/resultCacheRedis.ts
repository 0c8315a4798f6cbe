/**
 * A `KeyValueStore` over Redis, speaking RESP2 over an @effect/platform `Socket`.
 *
 * One connection at a time: a writer fiber takes commands from a queue and writes them in order, the reply
 * parser answers the oldest pending command, so requests from many fibers are pipelined. When the socket
 * closes, every command waiting for a reply fails and the connection is opened again with backoff; commands
 * issued meanwhile wait in the queue until their timeout.
 *
 * @internal
 */
import * as PlatformError from "@effect/platform/Error"
import * as KeyValueStore from "@effect/platform/KeyValueStore"
import * as Socket from "@effect/platform/Socket"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as RedisKeyValueStore from "../RedisKeyValueStore.js"
import { concatBytes } from "./bytes.js"

/** @internal */
export type Reply =
  | { readonly _tag: "Simple"; readonly value: string }
  | { readonly _tag: "Error"; readonly message: string }
  | { readonly _tag: "Integer"; readonly value: number }
  | { readonly _tag: "Bulk"; readonly value: Uint8Array | null }
  | { readonly _tag: "Array"; readonly value: ReadonlyArray<Reply> | null }

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const CRLF = encoder.encode("\r\n")

/** A command as a RESP array of bulk strings. @internal */
export const encodeCommand = (args: ReadonlyArray<string | Uint8Array>): Uint8Array => {
  const chunks: Array<Uint8Array> = [encoder.encode(`*${args.length}\r\n`)]
  for (const arg of args) {
    const bytes = typeof arg === "string" ? encoder.encode(arg) : arg
    chunks.push(encoder.encode(`$${bytes.length}\r\n`), bytes, CRLF)
  }
  return concatBytes(chunks)
}

const Invalid = Symbol("Invalid")
/** A complete reply, `Invalid`, or how many bytes the buffer must hold before parsing can go on. */
type Parsed = { readonly reply: Reply; readonly end: number } | typeof Invalid | { readonly need: number }

const lineEnd = (buffer: Uint8Array, from: number): number => {
  for (let i = from; i + 1 < buffer.length; i++) {
    if (buffer[i] === 13 && buffer[i + 1] === 10) return i
  }
  return -1
}

const integer = (text: string): number | undefined => {
  if (!/^-?\d+$/.test(text)) return undefined
  const value = Number(text)
  return Number.isSafeInteger(value) ? value : undefined
}

/** One reply starting at `at`, or what is missing. */
const parseAt = (buffer: Uint8Array, at: number): Parsed => {
  if (at >= buffer.length) return { need: at + 1 }
  const eol = lineEnd(buffer, at + 1)
  if (eol < 0) return { need: buffer.length + 1 }
  const line = decoder.decode(buffer.subarray(at + 1, eol))
  const next = eol + 2
  switch (buffer[at]) {
    case 0x2b: // +
      return { reply: { _tag: "Simple", value: line }, end: next }
    case 0x2d: // -
      return { reply: { _tag: "Error", message: line }, end: next }
    case 0x3a: { // :
      const value = integer(line)
      return value === undefined ? Invalid : { reply: { _tag: "Integer", value }, end: next }
    }
    case 0x24: { // $
      const length = integer(line)
      if (length === -1) return { reply: { _tag: "Bulk", value: null }, end: next }
      if (length === undefined || length < 0) return Invalid
      if (buffer.length < next + length + 2) return { need: next + length + 2 }
      if (buffer[next + length] !== 13 || buffer[next + length + 1] !== 10) return Invalid
      return { reply: { _tag: "Bulk", value: buffer.slice(next, next + length) }, end: next + length + 2 }
    }
    case 0x2a: { // *
      const count = integer(line)
      if (count === -1) return { reply: { _tag: "Array", value: null }, end: next }
      if (count === undefined || count < 0) return Invalid
      const items: Array<Reply> = []
      let position = next
      for (let i = 0; i < count; i++) {
        const item = parseAt(buffer, position)
        if (item === Invalid || "need" in item) return item
        items.push(item.reply)
        position = item.end
      }
      return { reply: { _tag: "Array", value: items }, end: position }
    }
    default:
      return Invalid
  }
}

/**
 * An incremental reply parser: feed it chunks, take complete replies. Chunks are only joined once enough bytes
 * arrived for the reply being waited for, so a large value costs one copy.
 *
 * @internal
 */
export const makeParser = () => {
  let buffer: Uint8Array = new Uint8Array(0)
  let chunks: Array<Uint8Array> = []
  let buffered = 0
  let need = 1
  return {
    push: (chunk: Uint8Array): void => {
      chunks.push(chunk)
      buffered += chunk.length
    },
    /** The next complete reply, `undefined` when more bytes are needed, `"invalid"` for a protocol violation. */
    next: (): Reply | undefined | "invalid" => {
      if (buffer.length + buffered < need) return undefined
      if (chunks.length > 0) {
        buffer = concatBytes(buffer.length === 0 ? chunks : [buffer, ...chunks])
        chunks = []
        buffered = 0
      }
      const parsed = parseAt(buffer, 0)
      if (parsed === Invalid) return "invalid"
      if ("need" in parsed) {
        need = parsed.need
        return undefined
      }
      buffer = buffer.subarray(parsed.end)
      need = 1
      return parsed.reply
    }
  }
}

const systemError = (
  method: string,
  reason: PlatformError.SystemErrorReason,
  description: string,
  cause?: unknown
) =>
  new PlatformError.SystemError({
    module: "KeyValueStore",
    method,
    reason,
    description,
    ...(cause !== undefined ? { cause } : {})
  })

const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, "\\$&")

interface Outgoing {
  readonly bytes: Uint8Array
  readonly reply: Deferred.Deferred<Reply, PlatformError.PlatformError>
}

/** @internal */
export const make = (
  options: RedisKeyValueStore.RedisOptions | undefined
): Effect.Effect<KeyValueStore.KeyValueStore, never, Socket.Socket | Scope.Scope> =>
  Effect.gen(function*() {
    const socket = yield* Socket.Socket
    const keyPrefix = options?.keyPrefix ?? "conduit:"
    const timeout = Duration.decode(options?.commandTimeout ?? Duration.seconds(2))
    const outbound = yield* Queue.unbounded<Outgoing>()
    const pending: Array<Deferred.Deferred<Reply, PlatformError.PlatformError>> = []

    const setup: Array<ReadonlyArray<string>> = []
    if (options?.password !== undefined) {
      const password = Redacted.value(options.password)
      setup.push(options.username !== undefined ? ["AUTH", options.username, password] : ["AUTH", password])
    }
    if (options?.database !== undefined) setup.push(["SELECT", String(options.database)])

    const failPending = Effect.sync(() => {
      const lost = systemError("connection", "UnexpectedEof", "the connection to Redis closed")
      for (const waiter of pending.splice(0)) Deferred.unsafeDone(waiter, Exit.fail(lost))
    })

    /** One connection, from open to close. `connected` runs once the setup commands succeeded. */
    const connection = (connected: Effect.Effect<void>) =>
      Effect.gen(function*() {
        const parser = makeParser()
        const opened = yield* Deferred.make<void>()
        const onData = (chunk: Uint8Array) => {
          parser.push(chunk)
          for (;;) {
            const reply = parser.next()
            if (reply === undefined) return
            const waiter = pending.shift()
            if (reply === "invalid" || waiter === undefined) {
              const detail = reply === "invalid" ? "invalid RESP reply" : "reply without a command"
              return Effect.fail(new Socket.SocketGenericError({ reason: "Read", cause: detail }))
            }
            Deferred.unsafeDone(waiter, Exit.succeed(reply))
          }
        }
        const onOpen = Effect.asVoid(Deferred.complete(opened, Effect.void))
        const reader = yield* socket.run(onData, { onOpen }).pipe(Effect.asVoid, Effect.forkScoped)
        const write = yield* socket.writer
        const setupCommand = (args: ReadonlyArray<string>) =>
          Effect.gen(function*() {
            const reply = yield* Deferred.make<Reply, PlatformError.PlatformError>()
            pending.push(reply)
            yield* write(encodeCommand(args))
            const answer = yield* Deferred.await(reply).pipe(
              Effect.timeoutFail({
                duration: timeout,
                onTimeout: () => systemError(args[0] ?? "setup", "TimedOut", "Redis did not answer the setup")
              })
            )
            if (answer._tag === "Error") {
              return yield* systemError(args[0] ?? "setup", "PermissionDenied", answer.message)
            }
          })
        const writer = Effect.gen(function*() {
          yield* Deferred.await(opened)
          for (const args of setup) yield* setupCommand(args)
          yield* connected
          for (;;) {
            // commands taken from the queue are pending before their bytes leave, so no reply can overtake them;
            // whatever queued up meanwhile goes out in one write
            const batch = yield* Effect.uninterruptibleMask((restore) =>
              restore(Queue.takeBetween(outbound, 1, 1024)).pipe(
                // a command whose caller gave up is not sent
                Effect.flatMap(Effect.filter((item) => Effect.map(Deferred.isDone(item.reply), (done) => !done))),
                Effect.map((live) =>
                  live.map((item) => {
                    pending.push(item.reply)
                    return item.bytes
                  })
                )
              )
            )
            if (batch.length > 0) yield* write(concatBytes(batch))
          }
        })
        return yield* Effect.raceFirst(Fiber.join(reader), writer)
      }).pipe(Effect.scoped, Effect.ensuring(failPending))

    const loop = Effect.gen(function*() {
      let failures = 0
      for (;;) {
        const exit = yield* Effect.exit(connection(Effect.sync(() => (failures = 0))))
        failures++
        yield* Effect.logDebug(
          "Redis connection ended",
          Exit.isFailure(exit) ? Cause.squash(exit.cause) : "closed by the server"
        )
        yield* Effect.sleep(Duration.millis(Math.min(2_000, 25 * 2 ** Math.min(failures, 7))))
      }
    }).pipe(Effect.annotateLogs({ module: "RedisKeyValueStore" }))
    yield* Effect.forkScoped(Effect.interruptible(loop))

    const command = (method: string, args: ReadonlyArray<string | Uint8Array>) =>
      Effect.gen(function*() {
        const reply = yield* Deferred.make<Reply, PlatformError.PlatformError>()
        yield* Queue.offer(outbound, { bytes: encodeCommand(args), reply })
        const answer = yield* Deferred.await(reply).pipe(
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () =>
              systemError(method, "TimedOut", `Redis did not answer within ${Duration.format(timeout)}`)
          }),
          // a command that was not written yet is skipped by the writer
          Effect.ensuring(Deferred.interrupt(reply))
        )
        if (answer._tag === "Error") return yield* systemError(method, "Unknown", answer.message)
        return answer
      })

    const unexpected = (method: string, reply: Reply) =>
      systemError(method, "InvalidData", `unexpected ${reply._tag} reply`)

    const getBytes = (method: string, key: string) =>
      Effect.flatMap(command(method, ["GET", keyPrefix + key]), (reply) =>
        reply._tag === "Bulk"
          ? Effect.succeed(Option.fromNullable(reply.value))
          : Effect.fail(unexpected(method, reply)))

    const integerReply = (method: string, args: ReadonlyArray<string>) =>
      Effect.flatMap(command(method, args), (reply) =>
        reply._tag === "Integer" ? Effect.succeed(reply.value) : Effect.fail(unexpected(method, reply)))

    const bulkText = (reply: Reply): string | undefined =>
      reply._tag === "Bulk" && reply.value !== null ? decoder.decode(reply.value) : undefined

    /** Every key under the prefix (SCAN may repeat keys; the set does not). */
    const scan = (method: string) =>
      Effect.gen(function*() {
        const found = new Set<string>()
        let cursor = "0"
        do {
          const reply = yield* command(method, ["SCAN", cursor, "MATCH", `${escapeGlob(keyPrefix)}*`, "COUNT", "500"])
          const parts = reply._tag === "Array" ? reply.value : null
          const next = parts?.[0] === undefined ? undefined : bulkText(parts[0])
          const batch = parts?.[1]
          if (next === undefined || batch === undefined || batch._tag !== "Array" || batch.value === null) {
            return yield* unexpected(method, reply)
          }
          for (const item of batch.value) {
            const key = bulkText(item)
            if (key !== undefined) found.add(key)
          }
          cursor = next
        } while (cursor !== "0")
        return [...found]
      })

    return KeyValueStore.make({
      get: (key) => Effect.map(getBytes("get", key), Option.map((bytes) => decoder.decode(bytes))),
      getUint8Array: (key) => getBytes("getUint8Array", key),
      set: (key, value) =>
        Effect.flatMap(command("set", ["SET", keyPrefix + key, value]), (reply) =>
          reply._tag === "Simple" ? Effect.void : Effect.fail(unexpected("set", reply))),
      remove: (key) => Effect.asVoid(integerReply("remove", ["DEL", keyPrefix + key])),
      has: (key) => Effect.map(integerReply("has", ["EXISTS", keyPrefix + key]), (count) => count > 0),
      clear: Effect.flatMap(scan("clear"), (found) =>
        Effect.forEach(
          Array.from({ length: Math.ceil(found.length / 100) }, (_, i) => found.slice(i * 100, i * 100 + 100)),
          (batch) => integerReply("clear", ["DEL", ...batch]),
          { discard: true }
        )),
      size: Effect.map(scan("size"), (found) => found.length)
    })
  })
