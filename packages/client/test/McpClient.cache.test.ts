import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
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
