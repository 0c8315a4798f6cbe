import { assert, describe, it } from "@effect/vitest"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/testing/TestClock"
import { vi } from "vitest"
import * as HttpAuth from "../src/internal/httpAuth.js"
import * as McpClient from "../src/McpClient.js"
import type * as OAuth from "../src/OAuth.js"
import * as ResultCache from "../src/ResultCache.js"
import * as Transport from "../src/Transport.js"
import * as Scripted from "./utils/scriptedTransport.js"

const server: Scripted.Script = Scripted.modernScript((message, ctx) => {
  if (!("method" in message) || !("id" in message)) return Effect.void
  if (message.method === "tools/list") {
    return ctx.reply(message.id, {
      resultType: "complete",
      tools: [{ name: `tool-${ctx.connection}`, inputSchema: { type: "object" } }],
      ttlMs: 60_000,
      cacheScope: "public"
    })
  }
  if (message.method === "resources/read") {
    const uri = (message.params as { uri: string }).uri
    return ctx.reply(message.id, {
      resultType: "complete",
      contents: [{ uri, text: `read at ${Date.now()}` }],
      ttlMs: 60_000
    })
  }
  if (message.method === "tools/call") {
    return ctx.reply(message.id, { resultType: "complete", content: [] })
  }
  return Effect.void
})

const count = (method: string) =>
  Effect.map(Scripted.ScriptLog, (log) => log).pipe(
    Effect.flatMap((log) => Ref.get(log.sent)),
    Effect.map((sent) => sent.filter((s) => "method" in s.message && s.message.method === method).length)
  )

const layer = (options: McpClient.McpClientOptions = {}) =>
  McpClient.layer({ healthCheckInterval: false, ...options, resultCache: ResultCache.ResultCache }).pipe(
    Layer.provideMerge(Scripted.layer(server)),
    Layer.provide(ResultCache.layerMemory())
  )

describe("the result cache in the request path", () => {
  it.effect("a fresh list is served from the cache; its ttl expires; list_changed drops it", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.listTools()
      yield* client.listTools()
      assert.strictEqual(yield* count("tools/list"), 1)
      yield* TestClock.adjust("61 seconds")
      yield* client.listTools()
      assert.strictEqual(yield* count("tools/list"), 2, "refetched after the ttl")
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.notify("notifications/tools/list_changed")
      yield* client.listTools()
      assert.strictEqual(yield* count("tools/list"), 3, "refetched after list_changed")
      yield* client.listTools({ cache: "bypass" })
      assert.strictEqual(yield* count("tools/list"), 4, "bypass fetches")
      yield* client.listTools()
      assert.strictEqual(yield* count("tools/list"), 4)
    }).pipe(Effect.provide(layer())))

  it.effect("concurrent identical reads are coalesced; resources/updated drops that resource; calls are never cached", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* Effect.all(Array.from({ length: 10 }, () => client.readResource({ uri: "file:///a" })), {
        concurrency: "unbounded"
      })
      assert.strictEqual(yield* count("resources/read"), 1)
      yield* client.readResource({ uri: "file:///b" })
      assert.strictEqual(yield* count("resources/read"), 2)
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.notify("notifications/resources/updated", { uri: "file:///a" })
      yield* client.readResource({ uri: "file:///a" })
      yield* client.readResource({ uri: "file:///b" })
      assert.strictEqual(yield* count("resources/read"), 3, "only the updated resource is fetched again")
      yield* client.callTool({ name: "x" })
      yield* client.callTool({ name: "x" })
      assert.strictEqual(yield* count("tools/call"), 2)
    }).pipe(Effect.provide(layer({ credentialId: "user-a" }))))
})

describe("a hostile server listing a URI built to make cache keys costly", () => {
  // 40 KB of `a/a/a/…`: 20,000 prefixes. Each used to be a scope of its own, hashed and looked up on every read.
  const hostile = "a/".repeat(20_000)
  const plain = "file:///srv/report.txt"
  const lister: Scripted.Script = Scripted.modernScript((message, ctx) => {
    if (!("method" in message) || !("id" in message)) return Effect.void
    if (message.method === "resources/list") {
      return ctx.reply(message.id, {
        resultType: "complete",
        resources: [{ uri: hostile, name: "deep" }, { uri: plain, name: "report" }]
      })
    }
    if (message.method === "resources/read") {
      const uri = (message.params as { uri: string }).uri
      return ctx.reply(message.id, { resultType: "complete", contents: [{ uri, text: "x" }], ttlMs: 60_000 })
    }
    return Effect.void
  })

  it.effect("reading it costs no store operation and no digest: it is not cached; other URIs still are", () =>
    Effect.gen(function*() {
      let operations = 0
      const entries = new Map<string, string>()
      const counting = KeyValueStore.makeStringOnly({
        get: (name) => Effect.sync(() => (operations++, entries.get(name))),
        set: (name, value) => Effect.sync(() => void (operations++, entries.set(name, value))),
        remove: (name) => Effect.sync(() => void (operations++, entries.delete(name))),
        clear: Effect.sync(() => entries.clear()),
        size: Effect.sync(() => entries.size),
        keys: Effect.sync(() => [...entries.keys()])
      })
      const subtle = globalThis.crypto.subtle
      const digest = subtle.digest.bind(subtle)
      let hashed = 0
      const spy = vi.spyOn(subtle, "digest").mockImplementation((algorithm, data) => {
        hashed += (data as ArrayBufferView).byteLength
        return digest(algorithm, data)
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => spy.mockRestore()))
      const context = yield* Layer.build(
        McpClient.layer({ healthCheckInterval: false, resultCache: ResultCache.ResultCache }).pipe(
          Layer.provideMerge(Scripted.layer(lister)),
          Layer.provide(ResultCache.layerKeyValueStore()),
          Layer.provide(Layer.succeed(KeyValueStore.KeyValueStore, counting))
        )
      )
      const client = Context.get(context, McpClient.McpClient)
      const reads = Effect.map(Ref.get(Context.get(context, Scripted.ScriptLog).sent), (sent) =>
        sent.filter((s) => "method" in s.message && s.message.method === "resources/read").length)
      const listed = (yield* client.listResources()).map((resource) => resource.uri)
      assert.deepStrictEqual(listed, [hostile, plain])

      // the baseline: a plain URI, read twice (a miss that stores, then a hit)
      operations = 0
      hashed = 0
      yield* client.readResource({ uri: plain })
      yield* client.readResource({ uri: plain })
      const baseline = { operations, hashed }
      assert.strictEqual(yield* reads, 1, "the plain URI is served from the cache")
      assert.isAbove(baseline.operations, 0)
      assert.isAbove(baseline.hashed, 0)

      operations = 0
      hashed = 0
      yield* client.readResource({ uri: hostile })
      yield* client.readResource({ uri: hostile })
      const ctx = (yield* Ref.get(Context.get(context, Scripted.ScriptLog).current))!
      yield* ctx.notify("notifications/resources/updated", { uri: hostile })
      yield* client.readResource({ uri: plain }) // handled after the notification: still cached, as the scope is not its
      assert.strictEqual(yield* reads, 3, "the hostile URI is read from the server each time")
      // the hostile reads and their invalidation cost nothing; the plain hit costs what it did (before the bound,
      // each hostile read hashed ~400 MB and looked up 20,000 scopes)
      assert.isAtMost(operations, baseline.operations, `${operations} store operations`)
      assert.isAtMost(hashed, baseline.hashed, `${hashed} bytes hashed`)
    }))
})

describe("notifications while the client is being built", () => {
  // A server may announce list changes before the client's constructor has finished (this one even before it
  // answers initialize): the cache invalidation they trigger must already be in place. It once was not, and the
  // connection fiber died on it, leaving every later request waiting.
  const eager: Scripted.Script = (message, ctx) => {
    if (!("method" in message) || !("id" in message)) return Effect.void
    switch (message.method) {
      case "server/discover":
        return ctx.fail(message.id, -32601, "Method not found")
      case "initialize":
        return Effect.all([
          ctx.notify("notifications/tools/list_changed"),
          ctx.notify("notifications/resources/updated", { uri: "file:///a" }),
          ctx.reply(message.id, Scripted.initializeResult())
        ], { discard: true })
      case "tools/list":
        return ctx.reply(message.id, { tools: [{ name: "eager", inputSchema: { type: "object" } }] })
    }
    return Effect.void
  }
  const eagerLayer = (options: McpClient.McpClientOptions) =>
    McpClient.layer({ healthCheckInterval: false, ...options }).pipe(Layer.provideMerge(Scripted.layer(eager)))

  for (const cached of [false, true]) {
    // live: a regression hangs, and the live clock turns that into a failure
    it.live(`a list_changed before the initialize answer is handled, ${cached ? "with" : "without"} a cache`, () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const tools = yield* client.listTools()
        assert.deepStrictEqual(tools.map((tool) => tool.name), ["eager"])
      }).pipe(
        Effect.provide(
          cached
            ? McpClient.layer({ healthCheckInterval: false, resultCache: ResultCache.ResultCache }).pipe(
              Layer.provideMerge(Scripted.layer(eager)),
              Layer.provide(ResultCache.layerMemory())
            )
            : eagerLayer({})
        ),
        Effect.timeout("5 seconds"),
        Effect.orDie
      ))
  }
})

describe("a cache that fails", () => {
  it.effect("a defect in the cache's invalidation drops that notification, not the connection", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.listTools()
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      const delivered = yield* Effect.exit(ctx.notify("notifications/tools/list_changed"))
      assert.isTrue(Exit.isSuccess(delivered), "the transport's delivery did not die")
      yield* client.readResource({ uri: "file:///a" })
      assert.strictEqual(yield* count("resources/read"), 1)
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, resultCache: ResultCache.ResultCache }).pipe(
        Layer.provideMerge(Scripted.layer(server)),
        Layer.provide(Layer.effect(
          ResultCache.ResultCache,
          Effect.map(ResultCache.ResultCache, (cache) => ({
            ...cache,
            invalidateForNotification: () => Effect.die(new Error("a bug in the cache"))
          }))
        ).pipe(Layer.provide(ResultCache.layerMemory())))
      )
    )))
})

describe("the partition of a transport's own credentials", () => {
  /** The scripted transport, as if it were built with credentials whose partition is `partition`. */
  const withCredentials = (partition: string | undefined) =>
    Layer.flatMap(Scripted.layer(server), (context) => {
      const transport = Context.get(context, Transport.Transport)
      return Layer.succeedContext(Context.add(
        context,
        Transport.Transport,
        { ...transport, credentials: { set: () => Effect.void, partition: Effect.succeed(partition) } }
      ))
    })
  /** A client over its own transport, sharing the given cache store. */
  const clientWith = (partition: string | undefined, cache: Context.Context<ResultCache.ResultCache>) =>
    Layer.build(McpClient.layer({ healthCheckInterval: false, resultCache: ResultCache.ResultCache }).pipe(
      Layer.provideMerge(withCredentials(partition)),
      Layer.provide(Layer.succeedContext(cache))
    ))
  const reads = (context: Context.Context<Scripted.ScriptLog>) =>
    Effect.map(Ref.get(Context.get(context, Scripted.ScriptLog).sent), (sent) =>
      sent.filter((s) => "method" in s.message && s.message.method === "resources/read").length)

  it.effect("a private result of one credential is not served to a client with another through a shared store", () =>
    Effect.gen(function*() {
      const cache = yield* Layer.build(ResultCache.layerMemory())
      const a = yield* clientWith("bearer:aaaa", cache)
      const a2 = yield* clientWith("bearer:aaaa", cache)
      const b = yield* clientWith("bearer:bbbb", cache)
      const none = yield* clientWith(undefined, cache)
      const first = yield* Context.get(a, McpClient.McpClient).readResource({ uri: "file:///private" })
      // the same credential shares the entry
      assert.deepStrictEqual(yield* Context.get(a2, McpClient.McpClient).readResource({ uri: "file:///private" }), first)
      assert.strictEqual(yield* reads(a2), 0)
      // another credential, and no credential, fetch their own
      yield* Context.get(b, McpClient.McpClient).readResource({ uri: "file:///private" })
      assert.strictEqual(yield* reads(b), 1)
      yield* Context.get(none, McpClient.McpClient).readResource({ uri: "file:///private" })
      assert.strictEqual(yield* reads(none), 1)
    }))

  it.effect("the partition of a transport's credentials: a bearer's fingerprint, custom headers', OAuth's own id", () =>
    Effect.gen(function*() {
      const token = (value: string) => Redacted.make(value)
      const oauth = {} as OAuth.OAuthShape
      const a = yield* HttpAuth.partitionOf(token("tok-a"), undefined, {})
      assert.strictEqual(yield* HttpAuth.partitionOf(token("tok-a"), undefined, {}), a)
      assert.notStrictEqual(yield* HttpAuth.partitionOf(token("tok-b"), undefined, {}), a)
      assert.notInclude(String(a), "tok-a")
      assert.isUndefined(yield* HttpAuth.partitionOf(undefined, undefined, {}))
      const key1 = yield* HttpAuth.partitionOf(undefined, undefined, { "X-Api-Key": "k1" })
      assert.strictEqual(yield* HttpAuth.partitionOf(undefined, undefined, { "x-api-key": "k1" }), key1)
      assert.notStrictEqual(yield* HttpAuth.partitionOf(undefined, undefined, { "X-Api-Key": "k2" }), key1)
      assert.notInclude(String(key1), "k1")
      // OAuth: each transport its own partition (its user is not known up front)
      const o1 = yield* HttpAuth.partitionOf(undefined, oauth, {})
      assert.isString(o1)
      assert.notStrictEqual(yield* HttpAuth.partitionOf(undefined, oauth, {}), o1)
      // a static bearer wins over OAuth, as in the transport
      assert.strictEqual(yield* HttpAuth.partitionOf(token("tok-a"), oauth, {}), a)
    }))
})
