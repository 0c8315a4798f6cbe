/**
 * The one timer behind many deadlines (the request table's timeouts, the HTTP exchanges' wire deadlines): it sleeps
 * until the earliest deadline, expires what is due, and goes on while entries are left — including entries that
 * came while a batch was expiring, whose deadlines the timer was taken to cover.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import * as DeadlineTimer from "../src/internal/deadlineTimer.js"
import { awaitSleep, withSleepLog } from "./utils/clock.js"

interface Entry {
  readonly name: string
  readonly at: number
}

/** Yields until `done` holds (the timer fiber runs on the scheduler after the clock moves). */
const until = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1_000 && !done(); i++) yield* Effect.yieldNow
  })

describe("DeadlineTimer", () => {
  it.effect("expires each entry at its deadline, the earliest first", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const expired: Array<string> = []
      const timer = DeadlineTimer.make<Entry>(scope, (e) => e.at, (e) => Effect.sync(() => expired.push(e.name)))
      for (const entry of [{ name: "b", at: 2_000 }, { name: "a", at: 1_000 }]) {
        timer.watch(entry)
        yield* timer.arm(entry.at)
      }
      yield* awaitSleep("1 second")
      yield* TestClock.adjust("1 second")
      yield* until(() => expired.length === 1)
      assert.deepStrictEqual(expired, ["a"])
      yield* awaitSleep("1 second")
      yield* TestClock.adjust("1 second")
      yield* until(() => expired.length === 2)
      assert.deepStrictEqual(expired, ["a", "b"])
    }).pipe(withSleepLog))

  it.effect("an entry added while a batch expires is expired at its own deadline", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const expired: Array<string> = []
      const late: Entry = { name: "late", at: 3_000 }
      const timer: DeadlineTimer.DeadlineTimer<Entry> = DeadlineTimer.make<Entry>(
        scope,
        (e) => e.at,
        (e) =>
          Effect.suspend(() => {
            expired.push(e.name)
            if (e.name !== "first") return Effect.void
            // a caller's next request, made while the timer expires the first (the timer still counts as awake)
            timer.watch(late)
            return timer.arm(late.at)
          })
      )
      const first: Entry = { name: "first", at: 1_000 }
      timer.watch(first)
      yield* timer.arm(first.at)
      yield* awaitSleep("1 second")
      yield* TestClock.adjust("1 second")
      yield* until(() => expired.length === 1)
      assert.deepStrictEqual(expired, ["first"])
      yield* awaitSleep("2 seconds")
      yield* TestClock.adjust("2 seconds")
      yield* until(() => expired.length === 2)
      assert.deepStrictEqual(expired, ["first", "late"])
    }).pipe(withSleepLog))
})
