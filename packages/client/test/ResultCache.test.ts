import * as FileSystem from "effect/FileSystem"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as FastCheck from "fast-check"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import { vi } from "vitest"
import * as Keys from "../src/internal/resultCacheKey.js"
import * as McpError from "../src/McpError.js"
import * as ResultCache from "../src/ResultCache.js"
import { blockedOnFibers, eventually } from "./utils/fibers.js"

const SERVER = "node packages/client/test/fixtures/server.ts"
const OTHER_SERVER = "https://other.example.com/mcp"

const key = (
  method: string,
  params?: Readonly<Record<string, unknown>>,
  credential?: string,
  server = SERVER
): ResultCache.CacheKey => ({ server, method, params, credential })

const tools = (label: string, hints: Record<string, unknown> = { ttlMs: 60_000, cacheScope: "public" }) => ({
  tools: [{ name: label, inputSchema: { type: "object" } }],
  ...hints
})

/** A fetch that counts its runs and answers `result`. */
const counted = (result: unknown) =>
  Effect.map(Ref.make(0), (runs) => ({
    runs,
    fetch: Effect.as(Ref.update(runs, (n) => n + 1), result),
    count: Ref.get(runs)
  }))

const Cache = ResultCache.layerMemory()

describe("ResultCache", () => {
  describe("freshness", () => {
    it.effect("a result is fresh for ttlMs by the Clock, then stale and fetched again", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const { count, fetch } = yield* counted(tools("a", { ttlMs: 60_000, cacheScope: "public" }))
        const k = key("tools/list")
        yield* cache.cached(k, fetch)
        yield* cache.cached(k, fetch)
        assert.strictEqual(yield* count, 1)
        yield* TestClock.adjust("59999 millis")
        assert.strictEqual((yield* cache.lookup(k))._tag, "Fresh")
        yield* cache.cached(k, fetch)
        assert.strictEqual(yield* count, 1)
        yield* TestClock.adjust("1 millis")
        const stale = yield* cache.lookup(k)
        assert.strictEqual(stale._tag, "Stale")
        yield* cache.cached(k, fetch)
        assert.strictEqual(yield* count, 2)
        assert.strictEqual((yield* cache.lookup(k))._tag, "Fresh")
      }).pipe(Effect.provide(Cache)))

    it.effect("a missing, zero or negative ttlMs is stale at once", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const cases = [{ cacheScope: "public" }, { ttlMs: 0 }, { ttlMs: -5, cacheScope: "public" }]
        for (const [i, hints] of cases.entries()) {
          const k = key("prompts/list", { cursor: `c${i}` })
          const { count, fetch } = yield* counted({ prompts: [], ...hints })
          yield* cache.cached(k, fetch)
          assert.strictEqual((yield* cache.lookup(k))._tag, "Stale")
          yield* cache.cached(k, fetch)
          assert.strictEqual(yield* count, 2)
        }
      }).pipe(Effect.provide(Cache)))

    it.effect("an entry is JSON with its stored time and ttl, under a digest of its key", () =>
      Effect.gen(function*() {
        const entries = new Map<string, string>()
        const recording = KeyValueStore.makeStringOnly({
          get: (name) => Effect.sync(() => entries.get(name)),
          set: (name, value) => Effect.sync(() => void entries.set(name, value)),
          remove: (name) => Effect.sync(() => void entries.delete(name)),
          clear: Effect.sync(() => entries.clear()),
          size: Effect.sync(() => entries.size),
          keys: Effect.sync(() => [...entries.keys()])
        })
        const cache = yield* ResultCache.make().pipe(Effect.provideService(KeyValueStore.KeyValueStore, recording))
        yield* TestClock.adjust("1234 millis")
        const k = key("resources/read", { uri: "file:///secret/plan.txt" }, "credential-a")
        assert.isTrue(yield* cache.store(k, { contents: [], ttlMs: 5000 }, { ttlMs: 5000 }))
        const [[name, value]] = [...entries]
        assert.match(name, /^conduit-cache:e:[0-9a-f]{64}$/)
        assert.notInclude(value, "credential-a")
        assert.deepStrictEqual(JSON.parse(value), {
          version: 1,
          storedAt: 1234,
          ttlMs: 5000,
          cacheScope: "private",
          markers: [null, null, null, null, null], // server, method, file:, file:///secret, the URI
          result: { contents: [], ttlMs: 5000 }
        })
        const fresh = yield* cache.lookup(k)
        assert.strictEqual(fresh._tag, "Fresh")
        if (fresh._tag !== "Fresh") return
        assert.deepStrictEqual(fresh.entry, {
          result: { contents: [], ttlMs: 5000 },
          storedAt: 1234,
          ttlMs: 5000,
          cacheScope: "private"
        })
      }).pipe(Effect.scoped))

    it.effect("a stored entry read back holds no __proto__ member, whoever wrote the store", () =>
      Effect.gen(function*() {
        // a shared store (a directory, Redis) written by something else: the entry's result has members named
        // __proto__, which a decode by assignment (a Record, a result whose extra members are kept) would make
        // a prototype; a result from a server never holds one (the codec removes them)
        const entries = new Map<string, string>()
        const tampering = KeyValueStore.makeStringOnly({
          get: (name) =>
            Effect.sync(() =>
              entries.get(name)?.replace(
                "\"_meta\":{",
                "\"_meta\":{\"__proto__\":{\"isAdmin\":true},\"\\u005f_proto__\":{\"x\":1},"
              )
            ),
          set: (name, value) => Effect.sync(() => void entries.set(name, value)),
          remove: (name) => Effect.sync(() => void entries.delete(name)),
          clear: Effect.sync(() => entries.clear()),
          size: Effect.sync(() => entries.size),
          keys: Effect.sync(() => [...entries.keys()])
        })
        const cache = yield* ResultCache.make().pipe(Effect.provideService(KeyValueStore.KeyValueStore, tampering))
        const k = key("tools/list")
        yield* cache.store(k, { tools: [], _meta: { team: "a" }, ttlMs: 5000 }, { ttlMs: 5000, cacheScope: "public" })
        const found = yield* cache.lookup(k)
        assert.strictEqual(found._tag, "Fresh")
        if (found._tag !== "Fresh") return
        const meta = (found.entry.result as { _meta: object })._meta
        assert.isFalse(Object.hasOwn(meta, "__proto__"))
        const copied = Schema.decodeUnknownSync(Schema.Record(Schema.String, Schema.Unknown))(meta)
        assert.deepStrictEqual([Reflect.get(copied, "isAdmin"), Reflect.get(copied, "x")], [undefined, undefined])
        assert.deepStrictEqual(copied, { team: "a" })
      }).pipe(Effect.scoped))

    it.effect("expired entries are kept for keepStale, then removed by the next lookup", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.make({ keepStale: "10 minutes" })
        const store = yield* KeyValueStore.KeyValueStore
        const k = key("tools/list")
        yield* cache.store(k, tools("a"), { ttlMs: 60_000, cacheScope: "public" })
        const before = yield* store.size
        yield* TestClock.adjust("10 minutes")
        assert.strictEqual((yield* cache.lookup(k))._tag, "Stale")
        assert.strictEqual(yield* store.size, before)
        yield* TestClock.adjust("1 minute")
        assert.strictEqual((yield* cache.lookup(k))._tag, "Miss")
        assert.strictEqual(yield* store.size, before - 1)
      }).pipe(Effect.scoped, Effect.provide(KeyValueStore.layerMemory)))
  })

  describe("partitions", () => {
    it.effect("a private entry cached under credential A is never served to B or to the anonymous partition", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const asA = yield* counted(tools("for-a", { ttlMs: 60_000, cacheScope: "private" }))
        const asB = yield* counted(tools("for-b", { ttlMs: 60_000, cacheScope: "private" }))
        assert.deepStrictEqual(yield* cache.cached(key("tools/list", {}, "A"), asA.fetch), tools("for-a", {
          ttlMs: 60_000,
          cacheScope: "private"
        }))
        assert.strictEqual((yield* cache.lookup(key("tools/list", {}, "B")))._tag, "Miss")
        assert.strictEqual((yield* cache.lookup(key("tools/list")))._tag, "Miss")
        const forB = yield* cache.cached(key("tools/list", {}, "B"), asB.fetch)
        assert.deepStrictEqual(forB, tools("for-b", { ttlMs: 60_000, cacheScope: "private" }))
        assert.strictEqual(yield* asB.count, 1)
        // A still gets its own entry
        assert.deepStrictEqual(yield* cache.cached(key("tools/list", {}, "A"), asB.fetch), tools("for-a", {
          ttlMs: 60_000,
          cacheScope: "private"
        }))
        assert.strictEqual(yield* asA.count, 1)
        assert.strictEqual(yield* asB.count, 1)
      }).pipe(Effect.provide(Cache)))

    it.effect("a missing or unknown cacheScope is private", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        yield* cache.cached(key("resources/list", {}, "A"), Effect.succeed({ resources: [], ttlMs: 60_000 }))
        yield* cache.cached(
          key("resources/templates/list", {}, "A"),
          Effect.succeed({ resourceTemplates: [], ttlMs: 60_000, cacheScope: "everyone" })
        )
        assert.strictEqual((yield* cache.lookup(key("resources/list", {}, "A")))._tag, "Fresh")
        assert.strictEqual((yield* cache.lookup(key("resources/list", {}, "B")))._tag, "Miss")
        assert.strictEqual((yield* cache.lookup(key("resources/templates/list", {}, "B")))._tag, "Miss")
      }).pipe(Effect.provide(Cache)))

    it.effect("the anonymous partition is its own: private entries without a credential stay there", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        yield* cache.store(key("tools/list"), tools("anon"), { ttlMs: 60_000 })
        assert.strictEqual((yield* cache.lookup(key("tools/list")))._tag, "Fresh")
        assert.strictEqual((yield* cache.lookup(key("tools/list", {}, "A")))._tag, "Miss")
      }).pipe(Effect.provide(Cache)))

    it.effect("a public entry is shared by every credential and the anonymous partition", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const { count, fetch } = yield* counted(tools("shared"))
        yield* cache.cached(key("tools/list", {}, "A"), fetch)
        for (const credential of ["A", "B", undefined]) {
          assert.deepStrictEqual(yield* cache.cached(key("tools/list", {}, credential), fetch), tools("shared"))
        }
        assert.strictEqual(yield* count, 1)
      }).pipe(Effect.provide(Cache)))

    it.effect("a lookup serves the more recent of the private and the public entry", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const k = key("tools/list", {}, "A")
        yield* cache.store(k, tools("private"), { ttlMs: 60_000, cacheScope: "private" })
        yield* TestClock.adjust("1 second")
        yield* cache.store(k, tools("public"), { ttlMs: 60_000, cacheScope: "public" })
        const found = yield* cache.lookup(k)
        assert.strictEqual(found._tag, "Fresh")
        if (found._tag === "Fresh") assert.strictEqual(found.entry.cacheScope, "public")
      }).pipe(Effect.provide(Cache)))
  })

  describe("keys", () => {
    it.effect("_meta and the order of keys do not matter; params, method and server do", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const params = { uri: "file:///a.txt", extra: { b: 1, a: [1, { d: 2, c: 3 }] } }
        yield* cache.store(key("resources/read", params), { contents: [] }, { ttlMs: 60_000, cacheScope: "public" })
        const reordered = {
          _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", progressToken: 7 },
          extra: { a: [1, { c: 3, d: 2 }], b: 1 },
          uri: "file:///a.txt"
        }
        assert.strictEqual((yield* cache.lookup(key("resources/read", reordered)))._tag, "Fresh")
        const otherUri = key("resources/read", { ...params, uri: "file:///b.txt" })
        assert.strictEqual((yield* cache.lookup(otherUri))._tag, "Miss")
        assert.strictEqual((yield* cache.lookup(key("resources/read", { uri: "file:///a.txt" })))._tag, "Miss")
        assert.strictEqual(
          (yield* cache.lookup(key("resources/read", params, undefined, OTHER_SERVER)))._tag,
          "Miss"
        )
        yield* cache.store(key("tools/list", { cursor: "p2" }), tools("p2"), { ttlMs: 60_000, cacheScope: "public" })
        assert.strictEqual((yield* cache.lookup(key("prompts/list", { cursor: "p2" })))._tag, "Miss")
        assert.strictEqual((yield* cache.lookup(key("tools/list")))._tag, "Miss")
      }).pipe(Effect.provide(Cache)))
  })

  describe("bounds of resources/read keys", () => {
    /** The scopes of a URI as the cache first defined them: the URI cut before each `/`, trailing `/`s trimmed. */
    const referenceScopes = (uri: string): ReadonlySet<string> => {
      const trim = (text: string) => text.replace(/\/+$/, "")
      const scopes = new Set<string>()
      for (let i = 0; i < uri.length; i++) if (uri[i] === "/") scopes.add(trim(uri.slice(0, i)))
      scopes.add(trim(uri))
      return scopes
    }
    const uriText = FastCheck.array(FastCheck.constantFrom("a", "b", "/", "//", ":", "\u00e9", "\ud800"), {
      maxLength: 40
    }).map((parts) => parts.join(""))

    it("the scopes are found in one pass and match the prefix definition; isWithin is membership", () => {
      FastCheck.assert(
        FastCheck.property(uriText, uriText, (uri, other) => {
          const ends = Keys.scopeEnds(uri)
          const reference = referenceScopes(uri)
          if (reference.size > Keys.maxUriScopes) return ends === undefined
          assert.isDefined(ends)
          assert.deepStrictEqual(new Set(ends!.map((end) => uri.slice(0, end))), reference)
          assert.strictEqual(ends!.length, reference.size)
          for (const scope of [...reference, Keys.resourceScope(other), Keys.resourceScope(uri + other)]) {
            assert.strictEqual(Keys.isWithin(uri, scope), reference.has(scope), `${uri} within ${scope}`)
          }
          return true
        }),
        { numRuns: 500 }
      )
    })

    it.effect("a scope's digest is the same reached from a longer URI or named alone; servers differ", () =>
      Effect.gen(function*() {
        const uri = "file:///srv//billing/2026/q1.csv"
        const all = yield* Keys.scopeDigests(SERVER, uri, Keys.scopeEnds(uri)!)
        for (const [i, end] of Keys.scopeEnds(uri)!.entries()) {
          const scope = uri.slice(0, end)
          assert.strictEqual((yield* Keys.scopeDigests(SERVER, scope, Keys.scopeEnds(scope)!)).at(-1), all[i])
        }
        const other = yield* Keys.scopeDigests(OTHER_SERVER, uri, Keys.scopeEnds(uri)!)
        assert.isTrue(other.every((hash) => !all.includes(hash)))
      }))

    it.effect("a URI past the length or scope bound is read from the server each time; at the bound it is cached", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const hostile = "a/".repeat(20_000) // 40 KB: 20,000 scopes
        const long = `file:///${"x".repeat(ResultCache.maxUriLength)}` // one scope too long
        const deep = `file://${"/d".repeat(ResultCache.maxUriScopes)}` // 33 scopes
        for (const uri of [hostile, long, deep]) {
          const { count, fetch } = yield* counted({ contents: [], ttlMs: 60_000, cacheScope: "public" })
          assert.isFalse(ResultCache.isCacheableKey(key("resources/read", { uri })))
          yield* cache.cached(key("resources/read", { uri }), fetch)
          yield* cache.cached(key("resources/read", { uri }), fetch)
          assert.strictEqual(yield* count, 2)
          assert.isFalse(yield* cache.store(key("resources/read", { uri }), { contents: [] }, { ttlMs: 60_000 }))
        }
        // at the bound: 32 scopes, dropped by the shallowest and by the deepest of them
        const atBound = `file://${"/d".repeat(ResultCache.maxUriScopes - 1)}`
        const k = key("resources/read", { uri: atBound })
        const store = () => cache.store(k, { contents: [] }, { ttlMs: 60_000, cacheScope: "public" })
        assert.isTrue(yield* store())
        yield* cache.invalidate(ResultCache.Selector.Resource({ server: SERVER, uri: "file:" }))
        assert.strictEqual((yield* cache.lookup(k))._tag, "Miss")
        assert.isTrue(yield* store())
        yield* cache.invalidate(ResultCache.Selector.Resource({ server: SERVER, uri: `${atBound}/` }))
        assert.strictEqual((yield* cache.lookup(k))._tag, "Miss")
        assert.isTrue(yield* store())
        // a scope past the bounds is no scope of a cached URI: its invalidation writes nothing and drops nothing
        const store_ = yield* KeyValueStore.KeyValueStore
        const size = yield* store_.size
        for (const uri of [deep, hostile]) {
          yield* cache.invalidateForNotification(SERVER, { method: "notifications/resources/updated", params: { uri } })
        }
        assert.strictEqual(yield* store_.size, size)
        assert.strictEqual((yield* cache.lookup(k))._tag, "Fresh")
      }).pipe(
        Effect.provide(ResultCache.layerKeyValueStore().pipe(Layer.provideMerge(KeyValueStore.layerMemory)))
      ))

    it.effect("a cached read hashes each character of its URI a bounded number of times, not once per scope", () =>
      Effect.gen(function*() {
        const subtle = globalThis.crypto.subtle
        const digest = subtle.digest.bind(subtle)
        let hashed = 0
        const spy = vi.spyOn(subtle, "digest").mockImplementation((algorithm, data) => {
          hashed += (data as ArrayBufferView).byteLength
          return digest(algorithm, data)
        })
        yield* Effect.addFinalizer(() => Effect.sync(() => spy.mockRestore()))
        const cache = yield* ResultCache.ResultCache
        // 32 scopes of 250 characters: 8,000 characters, within both bounds
        const uri = `file://${`/${"s".repeat(249)}`.repeat(31)}`
        assert.isTrue(ResultCache.isCacheableKey(key("resources/read", { uri })))
        const { count, fetch } = yield* counted({ contents: [], ttlMs: 60_000, cacheScope: "public" })
        hashed = 0
        yield* cache.cached(key("resources/read", { uri }), fetch) // a lookup, a fetch, a store
        const miss = hashed
        hashed = 0
        yield* cache.cached(key("resources/read", { uri }), fetch) // a lookup
        const hit = hashed
        assert.strictEqual(yield* count, 1)
        // the entry names (three on a miss, two on a hit) and the markers (twice on a miss, once on a hit) each
        // hash the URI about once; a digest per scope prefix would hash it ~16 times per marker read
        assert.isAbove(miss, 3 * uri.length, "the digests are counted")
        assert.isAtMost(miss, 7 * uri.length, `a miss hashed ${miss} bytes for a URI of ${uri.length}`)
        assert.isAtMost(hit, 4 * uri.length, `a hit hashed ${hit} bytes for a URI of ${uri.length}`)
      }).pipe(Effect.scoped, Effect.provide(Cache)))
  })

  describe("never cached", () => {
    it.effect("errors are not stored: the next call fetches again", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const runs = yield* Ref.make(0)
        const failing = Effect.andThen(
          Ref.update(runs, (n) => n + 1),
          Effect.fail(new McpError.McpError({ code: -32603, message: "boom" }))
        )
        for (let i = 0; i < 2; i++) {
          const exit = yield* Effect.exit(cache.cached(key("tools/list"), failing))
          assert.isTrue(Exit.isFailure(exit))
        }
        assert.strictEqual(yield* Ref.get(runs), 2)
        assert.strictEqual((yield* cache.lookup(key("tools/list")))._tag, "Miss")
      }).pipe(Effect.provide(Cache)))

    it.effect("input_required results, MRTR retries, legacy results without hints and other methods", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const interim = yield* counted({
          resultType: "input_required",
          inputRequests: { r: { method: "roots/list", params: {} } },
          ttlMs: 60_000,
          cacheScope: "public"
        })
        yield* cache.cached(key("resources/read", { uri: "file:///x" }), interim.fetch)
        yield* cache.cached(key("resources/read", { uri: "file:///x" }), interim.fetch)
        assert.strictEqual(yield* interim.count, 2)

        const retry = key("resources/read", { uri: "file:///x", requestState: "opaque", inputResponses: {} })
        const retried = yield* counted({ contents: [], ttlMs: 60_000, cacheScope: "public" })
        yield* cache.cached(retry, retried.fetch)
        yield* cache.cached(retry, retried.fetch)
        assert.strictEqual(yield* retried.count, 2)
        assert.isFalse(yield* cache.store(retry, { contents: [] }, { ttlMs: 60_000, cacheScope: "public" }))
        assert.isFalse(ResultCache.isCacheableKey(retry))
        assert.strictEqual((yield* cache.lookup(key("resources/read", { uri: "file:///x" })))._tag, "Miss")

        const legacy = yield* counted({ tools: [] })
        yield* cache.cached(key("tools/list"), legacy.fetch)
        yield* cache.cached(key("tools/list"), legacy.fetch)
        assert.strictEqual(yield* legacy.count, 2)

        const call = yield* counted({ content: [], ttlMs: 60_000, cacheScope: "public" })
        yield* cache.cached(key("tools/call", { name: "echo" }), call.fetch)
        yield* cache.cached(key("tools/call", { name: "echo" }), call.fetch)
        assert.strictEqual(yield* call.count, 2)
        assert.isFalse(yield* cache.store(key("tools/call", { name: "echo" }), {}, { ttlMs: 60_000 }))
      }).pipe(Effect.provide(Cache)))

    it.effect("hintsOf: only complete results with a hint; scope and ttl normalized", () =>
      Effect.sync(() => {
        assert.deepStrictEqual(ResultCache.hintsOf({ tools: [] }), Option.none())
        assert.deepStrictEqual(ResultCache.hintsOf({ resultType: "input_required", ttlMs: 5 }), Option.none())
        assert.deepStrictEqual(ResultCache.hintsOf({ resultType: "task", ttlMs: 5 }), Option.none())
        assert.deepStrictEqual(ResultCache.hintsOf("text"), Option.none())
        assert.deepStrictEqual(
          ResultCache.hintsOf({ resultType: "complete", ttlMs: 5, cacheScope: "public" }),
          Option.some({ ttlMs: 5, cacheScope: "public" })
        )
        assert.deepStrictEqual(ResultCache.hintsOf({ ttlMs: -1 }), Option.some({ ttlMs: 0, cacheScope: "private" }))
        assert.deepStrictEqual(ResultCache.hintsOf({ ttlMs: "9" }), Option.some({ ttlMs: 0, cacheScope: "private" }))
        assert.deepStrictEqual(
          ResultCache.hintsOf({ cacheScope: "public" }),
          Option.some({ ttlMs: 0, cacheScope: "public" })
        )
      }))
  })

  describe("coalescing", () => {
    it.effect("N identical concurrent calls run the fetch once and all get its result", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const runs = yield* Ref.make(0)
        const gate = yield* Deferred.make<void>()
        const fetch = Effect.gen(function*() {
          yield* Ref.update(runs, (n) => n + 1)
          yield* Deferred.await(gate)
          return tools("once")
        })
        const callers = yield* Effect.forEach(
          Array.from({ length: 25 }, () => cache.cached(key("tools/list", {}, "A"), fetch)),
          (call) => Effect.forkChild(call)
        )
        yield* blockedOnFibers(callers)
        yield* Deferred.succeed(gate, undefined)
        const results = yield* Fiber.joinAll(callers)
        assert.strictEqual(results.length, 25)
        for (const result of results) assert.deepStrictEqual(result, tools("once"))
        assert.strictEqual(yield* Ref.get(runs), 1)
        // and the stored entry serves the next caller
        yield* cache.cached(key("tools/list", {}, "A"), fetch)
        assert.strictEqual(yield* Ref.get(runs), 1)
      }).pipe(Effect.provide(Cache)))

    it.effect("an interrupted caller leaves the run to the others; the last one to leave interrupts it", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const runs = yield* Ref.make(0)
        const interrupted = yield* Ref.make(0)
        const gate = yield* Deferred.make<void>()
        const shared = Effect.gen(function*() {
          yield* Ref.update(runs, (n) => n + 1)
          yield* Deferred.await(gate)
          return "shared result"
        }).pipe(Effect.onInterrupt(() => Ref.update(interrupted, (n) => n + 1)))
        const k = key("resources/read", { uri: "file:///big" })

        const first = yield* Effect.forkChild(cache.coalesce(k, shared))
        const second = yield* Effect.forkChild(cache.coalesce(k, shared))
        yield* blockedOnFibers([first, second])
        yield* Fiber.interrupt(first)
        assert.strictEqual(yield* Ref.get(interrupted), 0)
        yield* Deferred.succeed(gate, undefined)
        assert.strictEqual(yield* Fiber.join(second), "shared result")
        assert.strictEqual(yield* Ref.get(runs), 1)

        const never = Effect.andThen(Ref.update(runs, (n) => n + 1), Effect.never).pipe(
          Effect.onInterrupt(() => Ref.update(interrupted, (n) => n + 1))
        )
        const a = yield* Effect.forkChild(cache.coalesce(k, never))
        const b = yield* Effect.forkChild(cache.coalesce(k, never))
        yield* blockedOnFibers([a, b])
        yield* eventually(Effect.map(Ref.get(runs), (n) => n === 2))
        yield* Fiber.interrupt(a)
        assert.strictEqual(yield* Ref.get(interrupted), 0)
        yield* Fiber.interrupt(b)
        assert.strictEqual(yield* Ref.get(interrupted), 1)
        // a later caller starts a new run
        assert.strictEqual(yield* cache.coalesce(k, Effect.succeed("again")), "again")
      }).pipe(Effect.provide(Cache)))

    it.effect("calls of different partitions, params or methods, and non-cacheable methods, are not shared", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const runs = yield* Ref.make(0)
        const gate = yield* Deferred.make<void>()
        const fetch = Effect.andThen(Ref.update(runs, (n) => n + 1), Effect.as(Deferred.await(gate), "r"))
        const keys = [
          key("tools/list", {}, "A"),
          key("tools/list", {}, "B"),
          key("tools/list"),
          key("tools/list", { cursor: "2" }, "A"),
          key("prompts/list", {}, "A"),
          key("tools/call", { name: "echo" }),
          key("tools/call", { name: "echo" })
        ]
        const all = yield* Effect.forkChild(
          Effect.all(keys.map((k) => cache.coalesce(k, fetch)), { concurrency: "unbounded" })
        )
        yield* eventually(Effect.map(Ref.get(runs), (n) => n === keys.length))
        yield* Deferred.succeed(gate, undefined)
        assert.strictEqual((yield* Fiber.join(all)).length, keys.length)
      }).pipe(Effect.provide(Cache)))
  })

  describe("invalidation", () => {
    const fill = (cache: ResultCache.ResultCacheShape, keys: ReadonlyArray<ResultCache.CacheKey>) =>
      Effect.forEach(keys, (k) => cache.store(k, { items: [] }, { ttlMs: 60_000, cacheScope: "public" }), {
        discard: true
      })
    const states = (cache: ResultCache.ResultCacheShape, keys: ReadonlyArray<ResultCache.CacheKey>) =>
      Effect.forEach(keys, (k) => Effect.map(cache.lookup(k), (found) => found._tag))

    it.effect("tools/list_changed drops every page of tools/list, in every partition, and nothing else", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const keys = [
          key("tools/list"),
          key("tools/list", { cursor: "p2" }),
          key("tools/list", {}, "A"),
          key("prompts/list"),
          key("tools/list", {}, undefined, OTHER_SERVER)
        ]
        yield* fill(cache, keys)
        yield* cache.store(key("tools/list", {}, "A"), { tools: [] }, { ttlMs: 60_000, cacheScope: "private" })
        yield* cache.invalidateForNotification(SERVER, { method: "notifications/tools/list_changed" })
        assert.deepStrictEqual(yield* states(cache, keys), ["Miss", "Miss", "Miss", "Fresh", "Fresh"])
        // new results are cached again after the invalidation
        yield* fill(cache, keys)
        assert.deepStrictEqual(yield* states(cache, keys), ["Fresh", "Fresh", "Fresh", "Fresh", "Fresh"])
      }).pipe(Effect.provide(Cache)))

    it.effect("prompts/list_changed drops prompts/list; resources/list_changed drops both resource lists", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const keys = [
          key("prompts/list"),
          key("resources/list"),
          key("resources/templates/list", { cursor: "t2" }),
          key("resources/read", { uri: "file:///a" }),
          key("tools/list")
        ]
        yield* fill(cache, keys)
        yield* cache.invalidateForNotification(SERVER, { method: "notifications/prompts/list_changed" })
        assert.deepStrictEqual(yield* states(cache, keys), ["Miss", "Fresh", "Fresh", "Fresh", "Fresh"])
        yield* cache.invalidateForNotification(SERVER, { method: "notifications/resources/list_changed" })
        assert.deepStrictEqual(yield* states(cache, keys), ["Miss", "Miss", "Miss", "Fresh", "Fresh"])
        yield* cache.invalidateForNotification(SERVER, { method: "notifications/message", params: { level: "info" } })
        assert.deepStrictEqual(yield* states(cache, keys), ["Miss", "Miss", "Miss", "Fresh", "Fresh"])
      }).pipe(Effect.provide(Cache)))

    it.effect("resources/updated drops resources/read of its URI and of every URI under it", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const uris = [
          "file:///srv/billing",
          "file:///srv/billing/rates.csv",
          "file:///srv/billing/2026/q1.csv",
          "file:///srv/billing-old/rates.csv",
          "file:///srv/other.txt",
          "file:///srv"
        ]
        const keys = uris.map((uri) => key("resources/read", { uri }, "A"))
        yield* fill(cache, keys)
        yield* cache.invalidateForNotification(SERVER, {
          method: "notifications/resources/updated",
          params: { uri: "file:///srv/billing" }
        })
        assert.deepStrictEqual(yield* states(cache, keys), ["Miss", "Miss", "Miss", "Fresh", "Fresh", "Fresh"])
        yield* cache.invalidate(ResultCache.Selector.Resource({ server: SERVER, uri: "file:///srv/other.txt" }))
        assert.deepStrictEqual(yield* states(cache, keys), ["Miss", "Miss", "Miss", "Fresh", "Miss", "Fresh"])
      }).pipe(Effect.provide(Cache)))

    it.effect("an invalid-cursor error drops every page of that list", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const pages = [
          key("resources/list"),
          key("resources/list", { cursor: "p2" }),
          key("resources/list", { cursor: "p3" })
        ]
        yield* fill(cache, pages)
        yield* cache.store(key("tools/list"), { tools: [] }, { ttlMs: 60_000, cacheScope: "public" })
        const invalidCursor = new McpError.McpError({ code: -32602, message: "invalid cursor" })
        const exit = yield* Effect.exit(
          cache.cached(key("resources/list", { cursor: "stale" }), Effect.fail(invalidCursor))
        )
        assert.deepStrictEqual(exit, Exit.fail(invalidCursor))
        assert.deepStrictEqual(yield* states(cache, pages), ["Miss", "Miss", "Miss"])
        assert.strictEqual((yield* cache.lookup(key("tools/list")))._tag, "Fresh")

        // the same code without a cursor, or another code, drops nothing
        yield* fill(cache, pages)
        yield* Effect.exit(cache.cached(key("resources/list"), Effect.fail(invalidCursor)))
        yield* Effect.exit(cache.cached(
          key("resources/list", { cursor: "p9" }),
          Effect.fail(new McpError.McpError({ code: -32603, message: "internal" }))
        ))
        assert.deepStrictEqual(yield* states(cache, pages), ["Fresh", "Fresh", "Fresh"])
      }).pipe(Effect.provide(Cache)))

    it.effect("a server selector (after a gap) drops everything of that server and nothing of another", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const keys = [
          key("tools/list", {}, "A"),
          key("resources/read", { uri: "file:///a" }),
          key("server/discover"),
          key("tools/list", {}, undefined, OTHER_SERVER)
        ]
        yield* fill(cache, keys)
        yield* cache.invalidate(ResultCache.Selector.Server({ server: SERVER }))
        assert.deepStrictEqual(yield* states(cache, keys), ["Miss", "Miss", "Miss", "Fresh"])
      }).pipe(Effect.provide(Cache)))

    it.effect("a result fetched while an invalidation ran is not stored, and later callers do not join that run", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const runs = yield* Ref.make(0)
        const gate = yield* Deferred.make<void>()
        const slow = Effect.andThen(
          Effect.andThen(Ref.update(runs, (n) => n + 1), Deferred.await(gate)),
          Effect.succeed(tools("before the change"))
        )
        const early = yield* Effect.forkChild(cache.cached(key("tools/list"), slow))
        yield* eventually(Effect.map(Ref.get(runs), (n) => n === 1))
        yield* cache.invalidateForNotification(SERVER, { method: "notifications/tools/list_changed" })
        const after = yield* cache.cached(key("tools/list"), Effect.succeed(tools("after the change")))
        assert.deepStrictEqual(after, tools("after the change"))
        yield* Deferred.succeed(gate, undefined)
        assert.deepStrictEqual(yield* Fiber.join(early), tools("before the change"))
        const found = yield* cache.lookup(key("tools/list"))
        assert.strictEqual(found._tag, "Fresh")
        if (found._tag === "Fresh") assert.deepStrictEqual(found.entry.result, tools("after the change"))
        // a stored result from a ticket taken before an invalidation is refused
        const ticket = (yield* cache.lookup(key("prompts/list"))).ticket
        yield* cache.invalidate(ResultCache.Selector.Method({ server: SERVER, method: "prompts/list" }))
        assert.isFalse(yield* cache.store(key("prompts/list"), { prompts: [] }, { ttlMs: 1000 }, ticket))
      }).pipe(Effect.provide(Cache)))

    it.effect("two instances over one store see each other's entries and invalidations", () =>
      Effect.gen(function*() {
        const first = yield* ResultCache.make()
        const second = yield* ResultCache.make()
        yield* first.store(key("tools/list", {}, "A"), tools("shared"), { ttlMs: 60_000, cacheScope: "public" })
        const found = yield* second.lookup(key("tools/list", {}, "B"))
        assert.strictEqual(found._tag, "Fresh")
        yield* second.invalidateForNotification(SERVER, { method: "notifications/tools/list_changed" })
        assert.strictEqual((yield* first.lookup(key("tools/list", {}, "A")))._tag, "Miss")
      }).pipe(Effect.scoped, Effect.provide(KeyValueStore.layerMemory)))
  })

  describe("modes", () => {
    it.effect("use serves the entry, refresh fetches and stores, bypass neither reads nor writes", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const k = key("tools/list")
        const version = yield* Ref.make(1)
        const runs = yield* Ref.make(0)
        const fetch = Effect.andThen(
          Ref.update(runs, (n) => n + 1),
          Effect.map(Ref.get(version), (v) => tools(`v${v}`))
        )
        assert.deepStrictEqual(yield* cache.cached(k, fetch), tools("v1"))
        yield* Ref.set(version, 2)
        assert.deepStrictEqual(yield* cache.cached(k, fetch, { mode: "use" }), tools("v1"))
        assert.strictEqual(yield* Ref.get(runs), 1)

        assert.deepStrictEqual(yield* cache.cached(k, fetch, { mode: "bypass" }), tools("v2"))
        assert.strictEqual(yield* Ref.get(runs), 2)
        assert.deepStrictEqual(yield* cache.cached(k, fetch), tools("v1"))

        assert.deepStrictEqual(yield* cache.cached(k, fetch, { mode: "refresh" }), tools("v2"))
        assert.strictEqual(yield* Ref.get(runs), 3)
        yield* Ref.set(version, 3)
        assert.deepStrictEqual(yield* cache.cached(k, fetch), tools("v2"))
        assert.strictEqual(yield* Ref.get(runs), 3)

        // the ambient mode, and an explicit option over it
        assert.deepStrictEqual(yield* ResultCache.withMode(cache.cached(k, fetch), "refresh"), tools("v3"))
        yield* Ref.set(version, 4)
        assert.deepStrictEqual(
          yield* cache.cached(k, fetch).pipe(ResultCache.withMode("bypass")),
          tools("v4")
        )
        assert.deepStrictEqual(
          yield* cache.cached(k, fetch, { mode: "use" }).pipe(ResultCache.withMode("bypass")),
          tools("v3")
        )
        assert.strictEqual(yield* Ref.get(runs), 5)
      }).pipe(Effect.provide(Cache)))

    it.effect("a stale entry is served when the refetch fails, if the caller asks for it", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const k = key("resources/read", { uri: "file:///rates.csv" }, "A")
        yield* cache.cached(k, Effect.succeed({ contents: [{ uri: "file:///rates.csv", text: "1" }], ttlMs: 1000 }))
        yield* TestClock.adjust("5 seconds")
        const down = new McpError.TransportError({ transport: "http", reason: "Connect" })
        const refused = new McpError.McpError({ code: -32002, message: "gone" })
        assert.deepStrictEqual(
          yield* Effect.exit(cache.cached(k, Effect.fail(down))),
          Exit.fail(down)
        )
        const served = yield* cache.cached(k, Effect.fail(down), { serveStaleOnError: true })
        assert.deepStrictEqual(served, { contents: [{ uri: "file:///rates.csv", text: "1" }], ttlMs: 1000 })
        const onlyTransport = (e: McpError.TransportError | McpError.McpError) => e._tag === "TransportError"
        assert.deepStrictEqual(
          yield* cache.cached<McpError.TransportError | McpError.McpError, never>(k, Effect.fail(down), {
            serveStaleOnError: onlyTransport
          }),
          served
        )
        assert.deepStrictEqual(
          yield* Effect.exit(cache.cached<McpError.TransportError | McpError.McpError, never>(k, Effect.fail(refused), {
            serveStaleOnError: onlyTransport
          })),
          Exit.fail(refused)
        )
        // nothing stale to serve: the error stands
        assert.deepStrictEqual(
          yield* Effect.exit(cache.cached(key("tools/list"), Effect.fail(down), { serveStaleOnError: true })),
          Exit.fail(down)
        )
      }).pipe(Effect.provide(Cache)))
  })

  describe("store failures", () => {
    const unavailable = (method: string) =>
      Effect.fail(new KeyValueStore.KeyValueStoreError({ message: "unavailable", method }))
    const broken = Layer.succeed(
      KeyValueStore.KeyValueStore,
      KeyValueStore.makeStringOnly({
        get: () => unavailable("get"),
        set: () => unavailable("set"),
        remove: () => Effect.void,
        clear: Effect.void,
        size: Effect.succeed(0),
        keys: Effect.succeed([])
      })
    )

    it.effect("a store that cannot be read or written is a miss, never an error", () =>
      Effect.gen(function*() {
        const cache = yield* ResultCache.ResultCache
        const { count, fetch } = yield* counted(tools("live"))
        assert.deepStrictEqual(yield* cache.cached(key("tools/list"), fetch), tools("live"))
        assert.deepStrictEqual(yield* cache.cached(key("tools/list"), fetch), tools("live"))
        assert.strictEqual(yield* count, 2)
        assert.isFalse(yield* cache.store(key("tools/list"), tools("x"), { ttlMs: 1000 }))
        yield* cache.invalidate(ResultCache.Selector.Server({ server: SERVER }))
        assert.strictEqual((yield* cache.lookup(key("tools/list")))._tag, "Miss")
      }).pipe(Effect.provide(ResultCache.layerKeyValueStore().pipe(Layer.provide(broken)))))
  })

  describe("file system store", () => {
    it.effect("two caches on one directory share a public entry, never a private one; file names are digests", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const directory = yield* fs.makeTempDirectoryScoped({ prefix: "conduit-cache-" })
        const instance = Effect.flatMap(
          Layer.build(ResultCache.layerFileSystem(directory)),
          (context) => Effect.succeed(Context.get(context, ResultCache.ResultCache))
        )
        const first = yield* instance
        const second = yield* instance
        const { count, fetch } = yield* counted(tools("from disk"))
        yield* first.cached(key("tools/list", {}, "A"), fetch)
        assert.deepStrictEqual(yield* second.cached(key("tools/list", {}, "B"), fetch), tools("from disk"))
        assert.strictEqual(yield* count, 1)

        const secret = key("resources/read", { uri: "file:///home/a/notes.txt" }, "A")
        yield* first.store(secret, { contents: [] }, { ttlMs: 60_000, cacheScope: "private" })
        assert.strictEqual((yield* second.lookup(secret))._tag, "Fresh")
        assert.strictEqual((yield* second.lookup({ ...secret, credential: "B" }))._tag, "Miss")

        for (const name of yield* fs.readDirectory(directory)) {
          assert.match(name, /^conduit-cache%3Ae%3A[0-9a-f]{64}$/)
        }
        yield* TestClock.adjust("61 seconds")
        assert.strictEqual((yield* second.lookup(key("tools/list", {}, "B")))._tag, "Stale")
      }).pipe(Effect.provide(NodeServices.layer)))
  })
})
