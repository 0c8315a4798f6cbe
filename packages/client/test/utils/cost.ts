/**
 * Comparing costs without asserting on the wall clock. A loaded machine stretches every measurement (by several
 * times at a load of 7 on two cores), so a test never compares a duration with a fixed number of milliseconds: it
 * compares the cost of the work under test with the cost of a baseline measured in the same test, on the same
 * machine at the same moment, with a margin far below what the failure it guards against would cost. Each side is
 * the least of a few runs: preemption and garbage collection only ever add time, so the least run is the closest to
 * the work itself.
 */
import * as Effect from "effect/Effect"

/** The least time `f` took in `runs` runs, in milliseconds. */
export const leastMillis = (f: () => unknown, runs = 5): number => {
  let least = Number.POSITIVE_INFINITY
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    f()
    least = Math.min(least, performance.now() - start)
  }
  return least
}

/** The least time `effect` took in `runs` runs, in milliseconds. */
export const leastMillisOf = <A, E, R>(effect: Effect.Effect<A, E, R>, runs = 5): Effect.Effect<number, E, R> =>
  Effect.gen(function*() {
    let least = Number.POSITIVE_INFINITY
    for (let i = 0; i < runs; i++) {
      const start = performance.now()
      yield* effect
      least = Math.min(least, performance.now() - start)
    }
    return least
  })

/**
 * How many times the cost of `subject` is the cost of `baseline` (each the least of `runs` runs). The baseline is
 * taken as at least 0.05 ms, so that timer resolution never makes a tiny baseline look free.
 */
export const costRatio = (subject: () => unknown, baseline: () => unknown, runs = 5): number =>
  leastMillis(subject, runs) / Math.max(leastMillis(baseline, runs), 0.05)
