import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/TestClock"
import * as McpClient from "../src/McpClient.js"
import * as ResultCache from "../src/ResultCache.js"
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
  McpClient.layer({ healthCheckInterval: false, ...options }).pipe(
    Layer.provideMerge(Scripted.layer(server)),
    Layer.provide(ResultCache.layerMemory())
  )

describe("the result cache in the request path", () => {
  it.scoped("a fresh list is served from the cache; its ttl expires; list_changed drops it", () =>
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

  it.scoped("concurrent identical reads are coalesced; resources/updated drops that resource; calls are never cached", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* Effect.all(Array.from({ length: 10 }, () => client.readResource("file:///a")), {
        concurrency: "unbounded"
      })
      assert.strictEqual(yield* count("resources/read"), 1)
      yield* client.readResource("file:///b")
      assert.strictEqual(yield* count("resources/read"), 2)
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.notify("notifications/resources/updated", { uri: "file:///a" })
      yield* client.readResource("file:///a")
      yield* client.readResource("file:///b")
      assert.strictEqual(yield* count("resources/read"), 3, "only the updated resource is fetched again")
      yield* client.callTool({ name: "x" })
      yield* client.callTool({ name: "x" })
      assert.strictEqual(yield* count("tools/call"), 2)
    }).pipe(Effect.provide(layer({ credentialId: "user-a" }))))
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
          cached ? eagerLayer({}).pipe(Layer.provide(ResultCache.layerMemory())) : eagerLayer({})
        ),
        Effect.timeout("5 seconds"),
        Effect.orDie
      ))
  }
})

describe("a cache that fails", () => {
  it.scoped("a defect in the cache's invalidation drops that notification, not the connection", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.listTools()
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      const delivered = yield* Effect.exit(ctx.notify("notifications/tools/list_changed"))
      assert.isTrue(Exit.isSuccess(delivered), "the transport's delivery did not die")
      yield* client.readResource("file:///a")
      assert.strictEqual(yield* count("resources/read"), 1)
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false }).pipe(
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
