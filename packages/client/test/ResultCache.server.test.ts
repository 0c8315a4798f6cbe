import * as KeyValueStore from "effect/persistence/KeyValueStore"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as McpClient from "../src/McpClient.js"
import * as McpServer from "@conduit-mcp/server/McpServer"
import * as ResultCache from "../src/ResultCache.js"
import { blockedOnFibers } from "./utils/fibers.js"

const REPORT = "mcp://reports/q1"

/** A modern server whose report is read only once `gate` opens, and a client connected to it in process. */
const setup = (cacheHints: McpServer.CacheHints) =>
  Effect.gen(function*() {
    const gate = yield* Deferred.make<void>()
    const server = yield* McpServer.make({
      name: "cache-test",
      version: "1.0.0",
      record: true,
      cacheHints,
      resources: [McpServer.resource({ uri: REPORT, name: "report", read: Effect.as(Deferred.await(gate), "Q1: 42") })]
    })
    const context = yield* Layer.build(
      McpClient.layer({ healthCheckInterval: false }).pipe(Layer.provide(InProcessTransport.layer(server)))
    )
    const client = yield* McpClient.McpClient.pipe(Effect.provide(context))
    const cache = yield* ResultCache.make().pipe(Effect.provide(KeyValueStore.layerMemory))
    const session = yield* client.session
    const read = (credential: string | undefined) =>
      cache.cached(
        { server: session.transport.target, method: "resources/read", params: { uri: REPORT }, credential },
        client.request("resources/read", { uri: REPORT }, Schema.Unknown)
      )
    return { gate, server, read }
  })

describe("ResultCache in front of a server", () => {
  it.effect("N concurrent identical reads reach the server as one request; the next one is served from the cache", () =>
    Effect.gen(function*() {
      const { gate, read, server } = yield* setup({ ttlMs: 60_000, cacheScope: "public" })
      const callers = yield* Effect.forEach(Array.from({ length: 12 }, () => read("alice")), (caller) => Effect.forkChild(caller))
      yield* server.awaitReceived("resources/read")
      yield* blockedOnFibers(callers)
      yield* Deferred.succeed(gate, undefined)
      const results = yield* Fiber.joinAll(callers)
      assert.strictEqual((yield* server.received("resources/read")).length, 1)
      assert.include(JSON.stringify(results[0]), "Q1: 42")
      for (const result of results) assert.deepStrictEqual(result, results[0])
      // the entry is public: another credential is served from it too
      assert.deepStrictEqual(yield* read("bob"), results[0])
      assert.strictEqual((yield* server.received("resources/read")).length, 1)
    }))

  it.effect("private results are fetched once per credential and never cross to another", () =>
    Effect.gen(function*() {
      const { gate, read, server } = yield* setup({ ttlMs: 60_000, cacheScope: "private" })
      yield* Deferred.succeed(gate, undefined)
      yield* read("alice")
      yield* read("alice")
      assert.strictEqual((yield* server.received("resources/read")).length, 1)
      yield* read("bob")
      yield* read(undefined)
      assert.strictEqual((yield* server.received("resources/read")).length, 3)
    }))
})
