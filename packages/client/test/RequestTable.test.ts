import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
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
) => Effect.map(TestClock.currentTimeMillis, (now) => table.register(method, now, timing, undefined, id))

const isTimeout = (exit: Option.Option<Exit.Exit<unknown, McpError.McpClientError>>, method: string) =>
  Option.isSome(exit) && Exit.isFailure(exit.value) &&
  Option.exists(Cause.failureOption(exit.value.cause), (e) => e._tag === "RequestTimeout" && e.method === method)

describe("RequestTable", () => {
  it.scoped("numbers requests in order and keeps an id given to it", () =>
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

  it.scoped("a response settles its request, with its result or its error", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const ok = yield* register(table, "tools/list", fixed(1000))
      const failed = yield* register(table, "tools/call", fixed(1000))
      const waiting = yield* Effect.fork(table.await(ok))
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

  it.scoped("a request fails with RequestTimeout when its deadline passes, not before", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const entry = yield* register(table, "slow", fixed(1000))
      const waiting = yield* Effect.fork(table.await(entry))
      yield* TestClock.adjust("999 millis")
      assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
      yield* TestClock.adjust("1 millis")
      const error = yield* Effect.flip(Fiber.join(waiting))
      assert.deepStrictEqual(error, new McpError.RequestTimeout({ method: "slow", timeoutMillis: 1000 }))
      // the caller's release step drops it
      assert.isTrue(table.abandon(entry))
      assert.strictEqual(table.size(), 0)
    }))

  it.scoped("a request due before the timer wakes restarts it; the timer stops when no deadline is left", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const late = yield* register(table, "late", fixed(1000))
      const lateWait = yield* Effect.fork(table.await(late))
      const early = yield* register(table, "early", fixed(100))
      const earlyWait = yield* Effect.fork(table.await(early))
      yield* TestClock.adjust("100 millis")
      assert.strictEqual((yield* Effect.flip(Fiber.join(earlyWait)))._tag, "RequestTimeout")
      assert.isTrue(Option.isNone(yield* Fiber.poll(lateWait)))
      yield* TestClock.adjust("900 millis")
      assert.strictEqual((yield* Effect.flip(Fiber.join(lateWait)))._tag, "RequestTimeout")
      table.abandon(early)
      table.abandon(late)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(Chunk.size(yield* TestClock.sleeps()), 0, "no timer left sleeping")
      // a new deadline starts the timer again
      const again = yield* register(table, "again", fixed(50))
      const againWait = yield* Effect.fork(table.await(again))
      yield* TestClock.adjust("50 millis")
      assert.strictEqual((yield* Effect.flip(Fiber.join(againWait)))._tag, "RequestTimeout")
    }))

  it.scoped("a request answered before its deadline is not timed out; abandoning it afterwards is a no-op", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const entry = yield* register(table, "quick", fixed(100))
      const waiting = yield* Effect.fork(table.await(entry))
      table.settleResponse({ jsonrpc: "2.0", id: entry.id, result: 1 }, entry)
      table.completed(entry)
      assert.strictEqual(yield* Fiber.join(waiting), 1)
      yield* TestClock.adjust("1 second")
      assert.isFalse(table.abandon(entry))
    }))

  it.scoped("an abandoned request leaves the table; a late answer to it finds nothing", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const entry = yield* register(table, "gone", fixed(1000))
      const waiting = yield* Effect.fork(table.await(entry))
      yield* Fiber.interrupt(waiting)
      assert.isTrue(table.abandon(entry))
      assert.isUndefined(table.get(entry.id))
      assert.isFalse(table.abandon(entry))
      yield* TestClock.adjust("2 seconds")
      assert.isUndefined(entry.outcome, "nothing settles an abandoned request")
    }))

  it.scoped("failAll fails every pending request, waiting or not", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const a = yield* register(table, "a", fixed(1000))
      const b = yield* register(table, "b", fixed(undefined))
      const aWait = yield* Effect.fork(table.await(a))
      const closed = new McpError.TransportError({ transport: "stdio", reason: "Closed" })
      table.failAll(closed)
      assert.strictEqual(table.size(), 0)
      assert.deepStrictEqual(yield* Effect.flip(Fiber.join(aWait)), closed)
      assert.deepStrictEqual(yield* Effect.flip(table.await(b)), closed)
    }))

  it.scoped("fail and succeed settle a request by id; unknown ids are ignored", () =>
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

  it.scoped("a watched request times out after its timeout of silence; activity restarts it up to the total", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const watched = yield* register(table, "long", { timeoutMillis: 100, resetOnProgress: true, maxTotalMillis: 250 })
      assert.isUndefined(watched.deadline)
      const waiting = yield* Effect.fork(table.await(watched))
      yield* TestClock.adjust("80 millis")
      watched.lastActivity = yield* TestClock.currentTimeMillis
      yield* TestClock.adjust("80 millis")
      assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)), "progress at 80 ms moved the timeout to 180 ms")
      watched.lastActivity = yield* TestClock.currentTimeMillis
      yield* TestClock.adjust("80 millis")
      assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
      watched.lastActivity = yield* TestClock.currentTimeMillis
      yield* TestClock.adjust("10 millis")
      assert.isTrue(isTimeout(yield* Fiber.poll(waiting), "long"), "the total budget (250 ms) holds")
    }))

  it.scoped("a watched request without progress times out after its timeout; its default total is ten timeouts", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const restarting: RequestTable.Timing = { timeoutMillis: 100, resetOnProgress: true, maxTotalMillis: undefined }
      const silent = yield* register(table, "silent", restarting)
      const silentWait = yield* Effect.fork(table.await(silent))
      yield* TestClock.adjust("100 millis")
      assert.strictEqual((yield* Effect.flip(Fiber.join(silentWait)))._tag, "RequestTimeout")
      const busy = yield* register(table, "busy", restarting)
      const busyWait = yield* Effect.fork(table.await(busy))
      for (let i = 0; i < 10; i++) {
        yield* TestClock.adjust("99 millis")
        busy.lastActivity = yield* TestClock.currentTimeMillis
      }
      assert.isTrue(Option.isNone(yield* Fiber.poll(busyWait)), "at 990 ms, heard from 0 ms ago")
      yield* TestClock.adjust("10 millis")
      assert.strictEqual((yield* Effect.flip(Fiber.join(busyWait)))._tag, "RequestTimeout")
    }))

  it.scoped("without a timeout a request waits for its answer however long it takes", () =>
    Effect.gen(function*() {
      const table = yield* RequestTable.make
      const entry = yield* register(table, "listen", fixed(undefined))
      const waiting = yield* Effect.fork(table.await(entry))
      yield* TestClock.adjust("1 day")
      assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
      table.succeed(entry.id, "done")
      assert.strictEqual(yield* Fiber.join(waiting), "done")
    }))
})
