import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"

/**
 * A TestClock that notes every sleep started through it (its wake-up time, until the sleep ends) and hands
 * everything else to the test's TestClock. Effect 4 has no public list of the TestClock's sleeps; code reads the
 * clock through the `Clock.Clock` reference (`Effect.sleep`, timeouts, schedules), so a test that provides this
 * clock to the code it runs (`withSleepLog`) sees each of its sleeps. Only public members of the clock are used.
 */
class SleepLog implements TestClock.TestClock {
  /** The wake-up times (TestClock milliseconds) of the sleeps started through this clock that have not ended. */
  readonly asleep: Array<number> = []
  /** Fibers waiting in `awaitSleep` for a sleep until `wake`; `resume` is called once such a sleep is noted. */
  readonly waiting = new Set<{ readonly wake: number; readonly resume: () => void }>()

  constructor(readonly clock: TestClock.TestClock) {}

  // own arrow functions, as the TestClock's are, so the members still work when detached from the clock
  readonly currentTimeMillisUnsafe = (): number => this.clock.currentTimeMillisUnsafe()
  readonly currentTimeNanosUnsafe = (): bigint => this.clock.currentTimeNanosUnsafe()
  readonly monotonicTimeNanosUnsafe = (): bigint => this.clock.monotonicTimeNanosUnsafe()
  get currentTimeMillis() {
    return this.clock.currentTimeMillis
  }
  get currentTimeNanos() {
    return this.clock.currentTimeNanos
  }
  get monotonicTimeNanos() {
    return this.clock.monotonicTimeNanos
  }
  readonly adjust = (duration: Duration.Input): Effect.Effect<void> => this.clock.adjust(duration)
  readonly setTime = (timestamp: number): Effect.Effect<void> => this.clock.setTime(timestamp)
  readonly withLive = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => this.clock.withLive(effect)

  readonly sleep = (duration: Duration.Duration): Effect.Effect<void> =>
    Effect.suspend(() => {
      const now = this.clock.currentTimeMillisUnsafe()
      const wake = now + Duration.toMillis(duration)
      // the TestClock does not register a sleep that ends now or earlier either
      if (wake <= now) return this.clock.sleep(duration)
      this.asleep.push(wake)
      // The waiters resume with a yield: each runs again only after this fiber went on, at once and without a yield
      // of its own, into the TestClock's sleep, which registers the wake-up time before anything else runs (a later
      // `TestClock.adjust` reaches it).
      for (const waiter of this.waiting) {
        if (waiter.wake === wake) waiter.resume()
      }
      return Effect.ensuring(
        this.clock.sleep(duration),
        Effect.sync(() => {
          const index = this.asleep.indexOf(wake)
          if (index !== -1) this.asleep.splice(index, 1)
        })
      )
    })
}

const isTestClock = (clock: Clock.Clock): clock is TestClock.TestClock =>
  "adjust" in clock && typeof clock.adjust === "function" && "withLive" in clock && typeof clock.withLive === "function"

/**
 * Runs `effect` with a clock that notes its sleeps (and those of every fiber it forks and every layer it builds),
 * delegating to the test's TestClock: `awaitSleep` and `stillAsleep` read the notes, `TestClock.adjust` works as
 * before. Put it outside the test's `Effect.provide(layer)`, so the layer's fibers are covered:
 * `Effect.gen(…).pipe(Effect.provide(layer), withSleepLog)`. Sleeps started before it (or under another clock) are
 * not seen.
 */
export const withSleepLog = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.clockWith((clock) => {
    if (clock instanceof SleepLog) return effect
    if (!isTestClock(clock)) return Effect.die(new Error("withSleepLog needs the TestClock (run it in it.effect)"))
    return Effect.provideService(effect, Clock.Clock, new SleepLog(clock))
  })

const sleepLog = <A, E, R>(f: (log: SleepLog) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.clockWith((clock) =>
    clock instanceof SleepLog
      ? f(clock)
      : Effect.die(new Error("awaitSleep/stillAsleep read the notes of withSleepLog: run the test under it"))
  )

/** How long (real time) `awaitSleep` waits before it reports that no such sleep came. */
const patience = Duration.seconds(20)

/**
 * Waits until some fiber sleeps on the TestClock until `now + duration` (a sleep already in progress counts), so that
 * a following `TestClock.adjust` reaches it; answers that wake-up time. The test runs under `withSleepLog`. The wait
 * is on the notes themselves (the sleeping fiber resumes the waiter), so it also covers a fiber that goes to sleep
 * only once a socket delivered what it reads. Dies, naming the sleeps in progress, if none came within 20 s of real
 * time.
 */
export const awaitSleep = (duration: Duration.Input) =>
  sleepLog((log) =>
    Effect.gen(function*() {
      const now = log.currentTimeMillisUnsafe()
      const wake = now + Duration.toMillis(Duration.fromInputUnsafe(duration))
      const noted = Effect.callback<void>((resume) => {
        // (a yield first, for a sleep already noted too: see `SleepLog.sleep`)
        if (log.asleep.includes(wake)) return resume(Effect.yieldNow)
        const waiter = {
          wake,
          resume: () => {
            log.waiting.delete(waiter)
            resume(Effect.yieldNow)
          }
        }
        log.waiting.add(waiter)
        return Effect.sync(() => log.waiting.delete(waiter))
      })
      yield* log.withLive(Effect.timeoutOrElse(noted, {
        duration: patience,
        orElse: () =>
          Effect.die(
            new Error(
              `no fiber went to sleep for ${Duration.format(Duration.fromInputUnsafe(duration))} on the TestClock within ${
                Duration.format(patience)
              } (sleeps in: ${log.asleep.map((at) => at - now).join(", ")} ms)`
            )
          )
      }))
      return wake
    })
  )

/** Whether some fiber still sleeps on the TestClock until `wake` (it has not woken, so has done nothing since). */
export const stillAsleep = (wake: number) => sleepLog((log) => Effect.sync(() => log.asleep.includes(wake)))

/** Moves the TestClock forward in steps until `fiber` is done (at most `limit` steps), then joins it. */
export const advanceUntilDone = <A, E>(
  fiber: Fiber.Fiber<A, E>,
  step: Duration.Input = "100 millis",
  limit = 1000
) =>
  Effect.gen(function*() {
    for (let i = 0; i < limit; i++) {
      if (fiber.pollUnsafe() !== undefined) break
      yield* TestClock.adjust(step)
    }
    return yield* Fiber.join(fiber)
  })
