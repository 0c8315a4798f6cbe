import * as KeyValueStore from "@effect/platform/KeyValueStore"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as RedisResp from "../src/internal/resultCacheRedis.js"
import * as RedisKeyValueStore from "../src/RedisKeyValueStore.js"
import * as ResultCache from "../src/ResultCache.js"
import { startRedis } from "./utils/redisServer.js"

const SERVER = "https://mcp.example.com/mcp"

const redisLayer = (port: number, options?: RedisKeyValueStore.RedisOptions) =>
  RedisKeyValueStore.layer(options).pipe(Layer.provide(NodeSocket.layerNet({ host: "127.0.0.1", port })))

/** A store with its own connection, owned by the current Scope. */
const connect = (port: number, options?: RedisKeyValueStore.RedisOptions) =>
  Effect.map(Layer.build(redisLayer(port, options)), (context) => Context.get(context, KeyValueStore.KeyValueStore))

/** A result cache with its own Redis connection: one client of a fleet. */
const cacheClient = (port: number) =>
  Effect.map(
    Layer.build(ResultCache.layerKeyValueStore().pipe(Layer.provide(redisLayer(port)))),
    (context) => Context.get(context, ResultCache.ResultCache)
  )

const encoder = new TextEncoder()

describe("RESP", () => {
  it.effect("replies split anywhere are parsed once complete", () =>
    Effect.sync(() => {
      const wire = encoder.encode(
        "+OK\r\n-ERR wrong\r\n:42\r\n$-1\r\n$5\r\nhe\r\no\r\n*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n*-1\r\n"
      )
      const parser = RedisResp.makeParser()
      const replies: Array<RedisResp.Reply | "invalid"> = []
      for (const byte of wire) {
        parser.push(Uint8Array.of(byte))
        for (let reply = parser.next(); reply !== undefined; reply = parser.next()) replies.push(reply)
      }
      assert.deepStrictEqual(replies, [
        { _tag: "Simple", value: "OK" },
        { _tag: "Error", message: "ERR wrong" },
        { _tag: "Integer", value: 42 },
        { _tag: "Bulk", value: null },
        { _tag: "Bulk", value: encoder.encode("he\r\no") },
        {
          _tag: "Array",
          value: [
            { _tag: "Bulk", value: encoder.encode("0") },
            { _tag: "Array", value: [{ _tag: "Bulk", value: encoder.encode("k") }] }
          ]
        },
        { _tag: "Array", value: null }
      ])
    }))

  it.effect("bytes that are not RESP2 are reported as invalid", () =>
    Effect.sync(() => {
      for (const wire of ["?what\r\n", ":4x\r\n", "$3\r\nabcd\r\n", "*-2\r\n"]) {
        const parser = RedisResp.makeParser()
        parser.push(encoder.encode(wire))
        assert.strictEqual(parser.next(), "invalid", wire)
      }
    }))

  it.effect("commands are arrays of bulk strings with byte lengths", () =>
    Effect.sync(() => {
      assert.strictEqual(
        new TextDecoder().decode(RedisResp.encodeCommand(["SET", "k", "é"])),
        "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\né\r\n"
      )
    }))
})

describe("RedisKeyValueStore against redis-server", () => {
  it.scopedLive("implements the KeyValueStore operations; clear and size only see their prefix", () =>
    Effect.gen(function*() {
      const { port } = yield* startRedis()
      const store = yield* connect(port, { keyPrefix: "one:" })
      const neighbour = yield* connect(port, { keyPrefix: "two:" })
      assert.deepStrictEqual(yield* store.get("missing"), Option.none())
      yield* store.set("a", "alpha")
      yield* store.set("b", Uint8Array.of(0, 13, 10, 255))
      yield* store.set("ü ?*[", "unicode key")
      yield* neighbour.set("a", "other")
      assert.deepStrictEqual(yield* store.get("a"), Option.some("alpha"))
      assert.deepStrictEqual(yield* store.getUint8Array("b"), Option.some(Uint8Array.of(0, 13, 10, 255)))
      assert.deepStrictEqual(yield* store.get("ü ?*["), Option.some("unicode key"))
      assert.isTrue(yield* store.has("a"))
      assert.strictEqual(yield* store.size, 3)
      assert.deepStrictEqual(yield* store.modify("a", (v) => `${v}!`), Option.some("alpha!"))
      yield* store.remove("a")
      assert.isFalse(yield* store.has("a"))
      yield* store.clear
      assert.strictEqual(yield* store.size, 0)
      assert.isTrue(yield* store.isEmpty)
      assert.deepStrictEqual(yield* neighbour.get("a"), Option.some("other"))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("many concurrent commands share the connection and each gets its own reply", () =>
    Effect.gen(function*() {
      const { port } = yield* startRedis()
      const store = yield* connect(port)
      const values = yield* Effect.forEach(
        Array.from({ length: 300 }, (_, i) => i),
        (i) => Effect.zipRight(store.set(`k${i}`, `v${i}`.repeat(i)), store.get(`k${i}`)),
        { concurrency: "unbounded" }
      )
      values.forEach((value, i) => assert.deepStrictEqual(value, Option.some(`v${i}`.repeat(i))))
      // a value far larger than one socket read
      const large = "x".repeat(3_000_000)
      yield* store.set("large", large)
      assert.deepStrictEqual(yield* store.get("large"), Option.some(large))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("two cache clients share a public entry through Redis; a private one stays with its credential", () =>
    Effect.gen(function*() {
      const { port } = yield* startRedis()
      const first = yield* cacheClient(port)
      const second = yield* cacheClient(port)
      const runs = yield* Ref.make(0)
      const fetch = (result: unknown) => Effect.as(Ref.update(runs, (n) => n + 1), result)
      const toolsList = {
        tools: [{ name: "lookup_invoice", inputSchema: { type: "object" } }],
        ttlMs: 60_000,
        cacheScope: "public"
      }

      const listKey = (credential: string): ResultCache.CacheKey => ({
        server: SERVER,
        method: "tools/list",
        credential
      })
      assert.deepStrictEqual(yield* first.cached(listKey("alice"), fetch(toolsList)), toolsList)
      assert.deepStrictEqual(yield* second.cached(listKey("bob"), fetch({ tools: [] })), toolsList)
      assert.strictEqual(yield* Ref.get(runs), 1)

      const readKey = (credential: string): ResultCache.CacheKey => ({
        server: SERVER,
        method: "resources/read",
        params: { uri: "mcp://invoices/INV-2291" },
        credential
      })
      const invoice = {
        contents: [{ uri: "mcp://invoices/INV-2291", text: "alice's" }],
        ttlMs: 60_000,
        cacheScope: "private"
      }
      yield* first.cached(readKey("alice"), fetch(invoice))
      assert.deepStrictEqual(yield* second.cached(readKey("alice"), fetch({ contents: [] })), invoice)
      assert.strictEqual(yield* Ref.get(runs), 2)
      const forBob = { contents: [], ttlMs: 60_000, cacheScope: "private" }
      assert.deepStrictEqual(yield* second.cached(readKey("bob"), fetch(forBob)), forBob)
      assert.strictEqual(yield* Ref.get(runs), 3)

      // one client's invalidation reaches the other's view of the shared entry
      yield* second.invalidateForNotification(SERVER, { method: "notifications/tools/list_changed" })
      assert.strictEqual((yield* first.lookup(listKey("alice")))._tag, "Miss")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("AUTH and SELECT run on every connection", () =>
    Effect.gen(function*() {
      const { port } = yield* startRedis({ args: ["--requirepass", "s3cret"] })
      const password = Redacted.make("s3cret")
      const db3 = yield* connect(port, { password, database: 3 })
      const db0 = yield* connect(port, { password })
      yield* db3.set("k", "in db 3")
      assert.deepStrictEqual(yield* db3.get("k"), Option.some("in db 3"))
      assert.deepStrictEqual(yield* db0.get("k"), Option.none())
      const refused = yield* connect(port, { password: Redacted.make("wrong"), commandTimeout: "300 millis" })
      const exit = yield* Effect.exit(refused.get("k"))
      assert.isTrue(Exit.isFailure(exit))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("while Redis is down commands fail within the timeout and the cache fetches; then it reconnects", () =>
    Effect.gen(function*() {
      const serverScope = yield* Scope.make()
      const { port } = yield* startRedis().pipe(Scope.extend(serverScope))
      const store = yield* connect(port, { commandTimeout: "500 millis" })
      const cache = yield* ResultCache.make().pipe(Effect.provideService(KeyValueStore.KeyValueStore, store))
      yield* store.set("k", "before")
      yield* Scope.close(serverScope, Exit.void)

      const failed = yield* Effect.exit(store.get("k"))
      assert.isTrue(Exit.isFailure(failed))
      const key: ResultCache.CacheKey = { server: SERVER, method: "prompts/list" }
      const result = { prompts: [], ttlMs: 60_000, cacheScope: "public" }
      assert.deepStrictEqual(yield* cache.cached(key, Effect.succeed(result)), result)

      yield* startRedis({ port })
      yield* store.set("k", "after").pipe(
        Effect.retry(Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurs(50)))
      )
      assert.deepStrictEqual(yield* store.get("k"), Option.some("after"))
      assert.deepStrictEqual(yield* cache.cached(key, Effect.succeed(result)), result)
      assert.strictEqual((yield* cache.lookup(key))._tag, "Fresh")
    }).pipe(Effect.provide(NodeContext.layer)))
})
