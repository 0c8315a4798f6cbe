/**
 * Hostile servers against the listing budget (issue 34, item 1) and change storms: real child processes
 * (fixtures/stdio/listing.mjs) that page forever with one cursor or a cycle of them, give more items or more bytes
 * than a listing may hold, or announce a change before every answer. Each listing ends within its budget with a
 * typed error naming the budget; an idle hub lists a storming server at most once per interval (TestClock).
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Url from "node:url"
import * as V8 from "node:v8"
import * as Vm from "node:vm"
import * as McpClient from "../src/McpClient.js"
import type * as McpError from "../src/McpError.js"
import * as McpHub from "../src/McpHub.js"
import * as StdioTransport from "../src/StdioTransport.js"
import { eventually } from "./utils/eventually.js"

const listing = Url.fileURLToPath(new URL("./fixtures/stdio/listing.mjs", import.meta.url))
const server = (...args: ReadonlyArray<string>): StdioTransport.StdioTransportOptions => ({
  command: process.execPath,
  args: [listing, ...args],
  closeTimeout: "500 millis"
})

const client = (args: ReadonlyArray<string>, options: McpClient.McpClientOptions = {}) =>
  McpClient.layer({ healthCheckInterval: false, requestTimeout: "60 seconds", ...options }).pipe(
    Layer.provide(StdioTransport.layer(server(...args))),
    Layer.provide(NodeServices.layer)
  )

/** How many tools/list requests the server answered (its tool `stats`). */
const listed = Effect.flatMap(McpClient.McpClient, (mcp) =>
  Effect.map(mcp.callTool({ name: "stats" }), (result) => Number((result.content[0] as { text: string }).text)))

/** The reason, budget and limit of a listing's failure (or how many items it gave). */
const outcome = (error: McpError.McpClientError) =>
  error._tag === "ProtocolError" ? [error.reason, error.budget, error.limit] : [error._tag, error.message]
const failure = <A>(listing: Effect.Effect<ReadonlyArray<A>, McpError.McpClientError>) =>
  Effect.map(Effect.result(listing), (result) =>
    Result.isFailure(result) ? outcome(result.failure) : ["listed", result.success.length])

V8.setFlagsFromString("--expose-gc")
const gc = Vm.runInNewContext("gc") as () => void
const MiB = 1024 * 1024
const heapMiB = () => {
  gc()
  gc()
  return process.memoryUsage().heapUsed / MiB
}

describe("a listing has a total budget", () => {
  it.live("100 pages of ~10 MB with the same cursor: RepeatedCursor after the second page", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      assert.deepStrictEqual(yield* failure(mcp.listTools()), ["RepeatedCursor", undefined, undefined])
      assert.strictEqual(yield* listed, 2)
    }).pipe(Effect.provide(client(["pages", "cursor=same", "bytes=10000000"]))), 60_000)

  it.live("a cursor that comes back after others (p1, p2, p0, p1): RepeatedCursor on the fourth page", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      assert.deepStrictEqual(yield* failure(mcp.listTools()), ["RepeatedCursor", undefined, undefined])
      assert.strictEqual(yield* listed, 4)
      // the stream form fails the same way, after the pages before
      const streamed: Array<string> = []
      const streamError = yield* Effect.flip(Stream.runForEach(mcp.streamTools(), (tool) =>
        Effect.sync(() => streamed.push(tool.name))))
      assert.deepStrictEqual(outcome(streamError), ["RepeatedCursor", undefined, undefined])
      assert.deepStrictEqual(streamed, ["t0_0", "t1_0", "t2_0"])
    }).pipe(Effect.provide(client(["pages", "cursor=cycle"]))), 60_000)

  it.live("100 pages of 1,000 items: fails at the page that would pass maxListItems (default 50,000)", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      assert.deepStrictEqual(yield* failure(mcp.listTools()), ["ListingBudgetExceeded", "maxListItems", 50_000])
      assert.strictEqual(yield* listed, 51)
    }).pipe(Effect.provide(client(["pages", "items=1000"]))), 60_000)

  it.live("maxListItems and maxListBytes are options; a listing within them is whole", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      assert.deepStrictEqual(yield* failure(mcp.listTools()), ["ListingBudgetExceeded", "maxListItems", 25])
      assert.strictEqual(yield* listed, 3)
    }).pipe(Effect.provide(client(["pages", "items=10"], { maxListItems: 25 }))), 60_000)

  it.live("a listing within its budget is whole", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      assert.strictEqual((yield* mcp.listTools()).length, 50)
    }).pipe(Effect.provide(
      client(["pages", "pages=5", "items=10", "bytes=1000"], { maxListItems: 50, maxListBytes: 60_000 })
    )), 60_000)

  it.live("the byte budget is an option", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      assert.deepStrictEqual(yield* failure(mcp.listTools()), ["ListingBudgetExceeded", "maxListBytes", 250_000])
      assert.strictEqual(yield* listed, 3)
    }).pipe(Effect.provide(client(["pages", "bytes=100000"], { maxListBytes: 250_000 }))), 60_000)

  // The bound: 100 pages of 1 MB are ~100 MiB when kept; the default byte budget (32 MiB) holds 33 of them and
  // stops the listing at the 34th. What the heap may grow by while the pages come, measured after collecting
  // garbage as a page is announced (the server writes a notifications/message before each page).
  const BOUND_MIB = 64
  it.live(`100 pages of 1 MB with new cursors: fails at maxListBytes (32 MiB); the heap grows under ${BOUND_MIB} MiB`, () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      const before = heapMiB()
      let peak = 0
      const announced = yield* mcp.subscribe
      yield* announced.pipe(
        // (every fourth page: collecting garbage takes its time)
        Stream.filter((n) => (n.params as { data?: unknown } | undefined)?.data as number % 4 === 0),
        Stream.runForEach(() => Effect.sync(() => (peak = Math.max(peak, heapMiB() - before)))),
        Effect.forkScoped
      )
      const result = yield* failure(mcp.listTools())
      assert.isAbove(peak, 0, "measured")
      assert.isBelow(peak, BOUND_MIB, `the heap grew by ${peak.toFixed(1)} MiB`)
      assert.deepStrictEqual(result, ["ListingBudgetExceeded", "maxListBytes", 32 * MiB])
      assert.strictEqual(yield* listed, 34)
    }).pipe(Effect.scoped, Effect.provide(client(["pages", "bytes=1000000", "notify=1"]))), 120_000)
})

describe("a change storm", () => {
  it.effect("a server announcing a change before every answer: an idle hub lists once per minRefreshInterval", () =>
    Effect.gen(function*() {
      const hub = yield* McpHub.make({
        servers: [McpHub.stdio("storm", server("storm"))],
        client: { healthCheckInterval: false }
      })
      const stats = hub.use("storm", (mcp) =>
        Effect.map(Effect.orDie(mcp.callTool({ name: "stats" })), (result) =>
          Number((result.content[0] as { text: string }).text))).pipe(Effect.orDie)
      const { errors, items } = yield* hub.listTools()
      assert.deepStrictEqual([errors, items.map((item) => item.name)], [[], ["storm__stats"]])
      // every answer (to these calls too) comes after a change notification: at most one refresh runs at once,
      // the next waits a second on the Clock, which does not move
      let count = 0
      for (let i = 0; i < 20; i++) count = yield* stats
      yield* eventually(() => count === 2, "the one refresh the first change may start")
      for (let i = 0; i < 20; i++) count = yield* stats
      assert.strictEqual(count, 2, "no refresh before the interval")
      yield* TestClock.adjust("1 second")
      for (let i = 0; i < 100 && count < 3; i++) count = yield* stats
      for (let i = 0; i < 20; i++) count = yield* stats
      assert.strictEqual(count, 3, "one refresh for every change of the interval")
    }).pipe(Effect.provide(NodeServices.layer)), 60_000)
})

describe("McpClient.coalescedRefresh", () => {
  const settle = Effect.repeat(Effect.yieldNow, { times: 50 })
  it.effect("asks while a refresh runs make one more, no sooner than the interval; a quiet one runs at once", () =>
    Effect.gen(function*() {
      let runs = 0
      const gate = yield* Deferred.make<void>()
      const ask = yield* McpClient.coalescedRefresh(
        Effect.suspend(() => ++runs === 1 ? Deferred.await(gate) : Effect.void),
        "1 second"
      )
      yield* ask
      yield* settle
      assert.strictEqual(runs, 1)
      for (let i = 0; i < 100; i++) yield* ask
      yield* Deferred.succeed(gate, undefined)
      yield* settle
      assert.strictEqual(runs, 1, "the one more waits for the interval")
      yield* TestClock.adjust("999 millis")
      yield* settle
      assert.strictEqual(runs, 1)
      yield* TestClock.adjust("1 millis")
      yield* settle
      assert.strictEqual(runs, 2, "100 asks, one more refresh")
      yield* TestClock.adjust("10 seconds")
      yield* settle
      assert.strictEqual(runs, 2, "nothing asked since")
      yield* ask
      yield* settle
      assert.strictEqual(runs, 3, "after a quiet interval, at once")
    }))
})
