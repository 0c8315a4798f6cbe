import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import * as McpError from "../src/McpError.js"
import * as RequestTable from "../src/internal/client/requestTable.js"

const fixed = (timeoutMillis: number | undefined): RequestTable.Timing => ({
  timeoutMillis,
  resetOnProgress: false,
  maxTotalMillis: undefined
})

const register = (
  table: RequestTable.RequestTable,
  method: string,
  timing: RequestTable.Timing,
  id?: string
) => Effect.map(Clock.currentTimeMillis, (now) => table.register(method, now, timing, undefined, id))

/**
 * Counts the fibers started under it that have not ended (Effect 4 has no `TestClock.sleeps` or Supervisor: the
 * fiber runtime metrics service hears of every fiber forked under it, the request table's timer included).
 */
const liveFibers = () => {
  let live = 0
  const service: Metric.FiberRuntimeMetricsService = {
    recordFiberStart: () => {
      live++
    },
    recordFiberEnd: () => {
      live--
    }
  }
  return {
    live: () => live,
    counted: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.provideService(self, Metric.FiberRuntimeMetrics, service)
  }
}

const isTimeout = (exit: Exit.Exit<unknown, McpError.McpClientError> | undefined, method: string) =>
  exit !== undefined && Exit.isFailure(exit) &&
  Option.exists(Cause.findErrorOption(exit.cause), (e) => e._tag === "RequestTimeout" && e.method === method)

describe("RequestTable", () => {
  it.effect("numbers requests in order and keeps an id given to it", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const a = yield* register(table, "a", fixed(undefined))
      const b = yield* register(table, "b", fixed(undefined), "probe-1")
      const c = yield* register(table, "c", fixed(undefined))
      assert.deepStrictEqual([a.id, b.id, c.id], [1, "probe-1", 2])
      assert.strictEqual(table.size(), 3)
      assert.strictEqual(table.get("probe-1"), b)
      assert.isUndefined(table.get(null))
    }))

  it.effect("a response settles its request, with its result or its error", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const ok = yield* register(table, "tools/list", fixed(1000))
      const failed = yield* register(table, "tools/call", fixed(1000))
      const waiting = yield* Effect.forkChild(table.await(ok))
      table.settleResponse({ jsonrpc: "2.0", id: ok.id, result: { tools: [] } }, ok)
      assert.deepStrictEqual(yield* Fiber.join(waiting), { tools: [] })
      table.settleResponse({ jsonrpc: "2.0", id: failed.id, error: { code: -32602, message: "no", data: 7 } }, failed)
      // settled before anyone waits: the wait gets the outcome at once
      const error = yield* Effect.flip(table.await(failed))
      assert.strictEqual(error._tag, "McpError")
      if (error._tag === "McpError") {
        assert.deepStrictEqual([error.code, error.method, error.data], [-32602, "tools/call", 7])
      }
      assert.strictEqual(table.size(), 0)
    }))

  it.effect("a request fails with RequestTimeout when its deadline passes, not before", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const entry = yield* register(table, "slow", fixed(1000))
      const waiting = yield* Effect.forkChild(table.await(entry))
      yield* TestClock.adjust("999 millis")
      assert.isTrue(waiting.pollUnsafe() === undefined)
      yield* TestClock.adjust("1 millis")
      const error = yield* Effect.flip(Fiber.join(waiting))
      assert.deepStrictEqual(error, new McpError.RequestTimeout({ method: "slow", timeoutMillis: 1000 }))
      // the caller's release step drops it
      assert.isTrue(table.abandon(entry))
      assert.strictEqual(table.size(), 0)
    }))

  it.effect("a request due before the timer wakes restarts it; the timer stops when no deadline is left", () => {
    const fibers = liveFibers()
    return Effect.gen(function*() {
      const table = yield* RequestTable.make
      const late = yield* register(table, "late", fixed(1000))
      const lateWait = yield* Effect.forkChild(table.await(late))
      const early = yield* register(table, "early", fixed(100))
      const earlyWait = yield* Effect.forkChild(table.await(early))
      yield* TestClock.adjust("100 millis")
      assert.strictEqual((yield* Effect.flip(Fiber.join(earlyWait)))._tag, "RequestTimeout")
      assert.isTrue(lateWait.pollUnsafe() === undefined)
      yield* TestClock.adjust("900 millis")
      assert.strictEqual((yield* Effect.flip(Fiber.join(lateWait)))._tag, "RequestTimeout")
      table.abandon(early)
      table.abandon(late)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(fibers.live(), 0, "no timer left sleeping")
      // a new deadline starts the timer again
      const again = yield* register(table, "again", fixed(50))
      const againWait = yield* Effect.forkChild(table.await(again))
      yield* TestClock.adjust("50 millis")
      assert.strictEqual((yield* Effect.flip(Fiber.join(againWait)))._tag, "RequestTimeout")
    }).pipe(fibers.counted)
  })

  it.effect("a request answered before its deadline is not timed out; abandoning it afterwards is a no-op", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const entry = yield* register(table, "quick", fixed(100))
      const waiting = yield* Effect.forkChild(table.await(entry))
      table.settleResponse({ jsonrpc: "2.0", id: entry.id, result: 1 }, entry)
      table.completed(entry)
      assert.strictEqual(yield* Fiber.join(waiting), 1)
      yield* TestClock.adjust("1 second")
      assert.isFalse(table.abandon(entry))
    }))

  it.effect("an abandoned request leaves the table; a late answer to it finds nothing", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const entry = yield* register(table, "gone", fixed(1000))
      const waiting = yield* Effect.forkChild(table.await(entry))
      yield* Fiber.interrupt(waiting)
      assert.isTrue(table.abandon(entry))
      assert.isUndefined(table.get(entry.id))
      assert.isFalse(table.abandon(entry))
      yield* TestClock.adjust("2 seconds")
      assert.isUndefined(entry.outcome, "nothing settles an abandoned request")
    }))

  it.effect("failAll fails every pending request, waiting or not", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const a = yield* register(table, "a", fixed(1000))
      const b = yield* register(table, "b", fixed(undefined))
      const aWait = yield* Effect.forkChild(table.await(a))
      const closed = new McpError.TransportError({ transport: "stdio", reason: "Closed" })
      table.failAll(closed)
      assert.strictEqual(table.size(), 0)
      assert.deepStrictEqual(yield* Effect.flip(Fiber.join(aWait)), closed)
      assert.deepStrictEqual(yield* Effect.flip(table.await(b)), closed)
    }))

  it.effect("fail and succeed settle a request by id; unknown ids are ignored", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const a = yield* register(table, "a", fixed(undefined))
      const b = yield* register(table, "b", fixed(undefined))
      const refused = new McpError.TransportError({ transport: "http", reason: "HttpStatus", status: 500 })
      table.fail(a.id, refused)
      table.succeed(b.id, { resultType: "complete" })
      table.fail(99, refused)
      table.succeed(98, {})
      assert.deepStrictEqual(yield* Effect.flip(table.await(a)), refused)
      assert.deepStrictEqual(yield* table.await(b), { resultType: "complete" })
    }))

  it.effect("a watched request times out after its timeout of silence; activity restarts it up to the total", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const watched = yield* register(table, "long", { timeoutMillis: 100, resetOnProgress: true, maxTotalMillis: 250 })
      assert.isUndefined(watched.deadline)
      const waiting = yield* Effect.forkChild(table.await(watched))
      yield* TestClock.adjust("80 millis")
      watched.lastActivity = yield* Clock.currentTimeMillis
      yield* TestClock.adjust("80 millis")
      assert.isTrue(waiting.pollUnsafe() === undefined, "progress at 80 ms moved the timeout to 180 ms")
      watched.lastActivity = yield* Clock.currentTimeMillis
      yield* TestClock.adjust("80 millis")
      assert.isTrue(waiting.pollUnsafe() === undefined)
      watched.lastActivity = yield* Clock.currentTimeMillis
      yield* TestClock.adjust("10 millis")
      assert.isTrue(isTimeout(waiting.pollUnsafe(), "long"), "the total budget (250 ms) holds")
    }))

  it.effect("a watched request without progress times out after its timeout; its default total is ten timeouts", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const restarting: RequestTable.Timing = { timeoutMillis: 100, resetOnProgress: true, maxTotalMillis: undefined }
      const silent = yield* register(table, "silent", restarting)
      const silentWait = yield* Effect.forkChild(table.await(silent))
      yield* TestClock.adjust("100 millis")
      assert.strictEqual((yield* Effect.flip(Fiber.join(silentWait)))._tag, "RequestTimeout")
      const busy = yield* register(table, "busy", restarting)
      const busyWait = yield* Effect.forkChild(table.await(busy))
      for (let i = 0; i < 10; i++) {
        yield* TestClock.adjust("99 millis")
        busy.lastActivity = yield* Clock.currentTimeMillis
      }
      assert.isTrue(busyWait.pollUnsafe() === undefined, "at 990 ms, heard from 0 ms ago")
      yield* TestClock.adjust("10 millis")
      assert.strictEqual((yield* Effect.flip(Fiber.join(busyWait)))._tag, "RequestTimeout")
    }))

  it.effect("without a timeout a request waits for its answer however long it takes", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const entry = yield* register(table, "listen", fixed(undefined))
      const waiting = yield* Effect.forkChild(table.await(entry))
      yield* TestClock.adjust("1 day")
      assert.isTrue(waiting.pollUnsafe() === undefined)
      table.succeed(entry.id, "done")
      assert.strictEqual(yield* Fiber.join(waiting), "done")
    }))
})
