/**
 * Replies a hostile Redis (a compromised server, or a man in the middle of a connection without TLS) may send:
 * nested deeper than ioredis's parser can recurse, larger than memory should hold, announcing more than they hold.
 * Each is refused before the parser sees it: the store's command fails with a `KeyValueStoreError` whose cause is a
 * `PlatformError` of reason `InvalidData`,
 * the process lives on, the store reconnects, and the next commands get well-behaved answers.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as PlatformError from "effect/PlatformError"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import { Buffer } from "node:buffer"
import * as V8 from "node:v8"
import * as Vm from "node:vm"
import * as RedisKeyValueStore from "../src/RedisKeyValueStore.js"
import { adminClient, call, startRedis } from "./utils/redisServer.js"
import { type ScriptedRedis, scriptedRedis, trickle } from "./utils/scriptedRedis.js"

const MiB = 1024 * 1024

/**
 * How much more the heap and the buffers may hold after a hostile reply was refused than before it (an unchecked
 * read keeps what it buffered: its connection stays open). At its peak the client held no more than what the
 * scripted server could send before the connection was closed, which is checked against the same bound.
 */
const GROWTH_BOUND = 32 * MiB

/** How much a hostile server offers: far past the bound, yet within what a test machine survives unchecked. */
const OFFERED = 256 * MiB

const retrying = Schedule.max([Schedule.spaced("100 millis"), Schedule.recurs(50)])

/**
 * A store whose first connection is up. The layer waits for it at most its timeout and then serves anyway (commands
 * fail fast with "not connected" until it is): on a loaded machine the first connection can take longer, and the
 * hostile command would then be refused for that instead of reaching the server.
 */
const connect = (options: RedisKeyValueStore.ConnectionOptions) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(RedisKeyValueStore.layer({ host: "127.0.0.1", ...options }))
    const store = Context.get(context, KeyValueStore.KeyValueStore)
    yield* store.set("connected", "yes").pipe(Effect.retry(retrying))
    return store
  })

V8.setFlagsFromString("--expose-gc")
const gc = Vm.runInNewContext("gc") as () => void

/** Memory the process still holds after collecting garbage: the heap and the buffers outside it (socket data). */
const held = () => {
  gc()
  gc()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.arrayBuffers
}

/** The reason of the store's error: its cause is the store's own `PlatformError`. */
const reasonOf = (error: KeyValueStore.KeyValueStoreError) =>
  PlatformError.isPlatformError(error.cause) ? error.cause.reason._tag : error._tag

/** The store's command fails with the typed error of a refused reply, and the process held no more than the bound. */
const refusedWithin = <A>(command: Effect.Effect<A, KeyValueStore.KeyValueStoreError>, reason: string) =>
  Effect.gen(function*() {
    const before = held()
    const error = yield* Effect.flip(command)
    const growth = held() - before
    assert.strictEqual(reasonOf(error), "InvalidData", error.message)
    assert.include(error.message, `Redis: refused ${reason}; the connection was closed`)
    assert.isBelow(growth, GROWTH_BOUND)
    return error
  })

/** After a refusal the store reconnects (the scripted Redis has seen `connections` by then), and reads again. */
const worksAgain = (store: KeyValueStore.KeyValueStore, redis: ScriptedRedis, connections: number) =>
  Effect.gen(function*() {
    yield* store.set("k", "v").pipe(Effect.retry(retrying))
    assert.deepStrictEqual(yield* store.get("k"), "v")
    assert.isAtLeast(redis.connections(), connections)
  })

describe("RedisKeyValueStore against a hostile server's replies", () => {
  it.live("a reply nested 100,000 deep fails get and set with InvalidData; the process lives on", () =>
    Effect.gen(function*() {
      // ~400 KB of `*1\r\n`: ioredis's parser recursed once per level and threw RangeError in the socket's data
      // handler, which nothing caught (the process exited)
      const deep = `${"*1\r\n".repeat(100_000)}:1\r\n`
      const redis = yield* scriptedRedis((socket) => socket.write(deep))
      const store = yield* connect({ port: redis.port })
      yield* refusedWithin(store.get("hostile"), "a reply nested deeper than 8 levels")
      yield* worksAgain(store, redis, 2)
      yield* refusedWithin(store.set("hostile", "x"), "a reply nested deeper than 8 levels")
      yield* worksAgain(store, redis, 3)
      assert.strictEqual(redis.hostileAnswers(), 2)
    }))

  it.live("a bulk string announced past maxReplyBytes is refused at its header while it trickles in", () =>
    Effect.gen(function*() {
      let sent = 0
      const piece = Buffer.alloc(64 * 1024, 0x61)
      // announces 256 MiB, then sends it 64 KiB at a time, as fast as the client reads
      const redis = yield* scriptedRedis((socket) =>
        trickle(socket, `$${OFFERED}\r\n`, piece, OFFERED, (bytes) => {
          sent = bytes
        })
      )
      const store = yield* connect({ port: redis.port, maxReplyBytes: MiB })
      yield* refusedWithin(store.get("hostile"), `a reply larger than maxReplyBytes (${MiB} bytes)`)
      yield* worksAgain(store, redis, 2)
      // the client stopped reading: the server could hand no more than what sockets buffer
      assert.isBelow(sent, GROWTH_BOUND)
    }))

  it.live("a reply whose elements each fit but together pass maxReplyBytes is refused as its bytes arrive", () =>
    Effect.gen(function*() {
      let sent = 0
      const element = Buffer.from(`$65000\r\n${"b".repeat(65_000)}\r\n`, "latin1")
      // an array of 100,000 bulk strings of 65,000 bytes, trickled: no header announces the total
      const redis = yield* scriptedRedis((socket) =>
        trickle(socket, "*100000\r\n", element, OFFERED, (bytes) => {
          sent = bytes
        })
      )
      const store = yield* connect({ port: redis.port, maxReplyBytes: MiB })
      yield* refusedWithin(store.getUint8Array("hostile"), `a reply larger than maxReplyBytes (${MiB} bytes)`)
      yield* worksAgain(store, redis, 2)
      assert.isBelow(sent, GROWTH_BOUND)
    }))

  it.live("an array announcing 2,000,000,000 elements is refused at its header", () =>
    Effect.gen(function*() {
      let sent = 0
      // ioredis's parser allocated the array at once, then filled it from whatever came
      const elements = Buffer.from(":1\r\n".repeat(16 * 1024), "latin1")
      const redis = yield* scriptedRedis((socket) =>
        trickle(socket, "*2000000000\r\n", elements, 16 * MiB, (bytes) => {
          sent = bytes
        })
      )
      const store = yield* connect({ port: redis.port })
      yield* refusedWithin(store.get("hostile"), "a reply of more than 1000000 array elements")
      yield* worksAgain(store, redis, 2)
      assert.isBelow(sent, GROWTH_BOUND)
    }))

  it.live("against redis-server: a value past maxReplyBytes is not stored, and one written by another is refused", () =>
    Effect.gen(function*() {
      const { port } = yield* startRedis()
      const admin = yield* adminClient(port)
      const store = yield* connect({ port, maxReplyBytes: MiB })
      // the largest value that can be read back: `$1048564\r\n`, its bytes and CR LF make 1 MiB
      const fits = "x".repeat(MiB - 12)
      yield* store.set("fits", fits)
      assert.deepStrictEqual(yield* store.get("fits"), fits)
      const binary = new Uint8Array(MiB - 11)
      // one byte more, as text, as text of two-byte characters (half as many), as bytes
      for (const value of [`${fits}x`, "é".repeat(524_283), binary]) {
        const written = yield* Effect.result(store.set("large", value))
        assert.isTrue(Result.isFailure(written), "a value that cannot be read back was stored")
        const error = Result.isFailure(written) ? written.failure : undefined
        assert.strictEqual(error === undefined ? undefined : reasonOf(error), "BadArgument")
        assert.include(error?.message, `reading it back would pass maxReplyBytes (${MiB} bytes)`)
      }
      assert.isFalse(yield* store.has("large"))
      // written by something else: the store refuses to read it, and reads what fits after reconnecting
      yield* call(() => admin.set("conduit:elsewhere", `${fits}x`))
      yield* refusedWithin(store.get("elsewhere"), `a reply larger than maxReplyBytes (${MiB} bytes)`)
      assert.deepStrictEqual(yield* store.get("fits").pipe(Effect.retry(retrying)), fits)
    }).pipe(Effect.provide(NodeServices.layer)))
})
