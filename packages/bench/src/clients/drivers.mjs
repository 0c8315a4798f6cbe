// The drivers of the clients whose calls are Effects (Conduit on either Effect line, Effect's McpClient, the
// floors): the same shape as the promise drivers of common.mjs, as fibers of one Effect program. `Effect` is the
// module of the client's own Effect line (3 or 4): only what both lines have (`suspend`, `map`, `andThen`, `as`,
// `all`, `repeat` with `times`) is used.
import { now, textOf } from "./common.mjs"

/**
 * `many`: `concurrency` worker fibers, each making calls one after the other while calls are left; `sequence`:
 * `n` calls one after the other, each one's latency in milliseconds. `call(name, args)` is the client's call as
 * an Effect, `run` runs an Effect to a promise (a runtime's `runPromise`).
 */
export const fiberDrivers = (Effect, run, call) => ({
  many: (n, concurrency, name, args, check) =>
    run(
      Effect.suspend(() => {
        let started = 0
        const one = Effect.map(call(name, args), (result) => check(textOf(result)))
        const worker = Effect.suspend(() => {
          if (started >= n) return Effect.void
          started++
          return Effect.andThen(one, worker)
        })
        return Effect.all(Array.from({ length: Math.min(concurrency, n) }, () => worker), {
          concurrency: "unbounded",
          discard: true
        })
      })
    ),
  sequence: (n, name, args, check) =>
    run(
      Effect.suspend(() => {
        const latencies = new Float64Array(n)
        let i = 0
        let start = 0
        const one = Effect.suspend(() => {
          start = now()
          return call(name, args)
        }).pipe(Effect.map((result) => {
          check(textOf(result))
          latencies[i++] = now() - start
        }))
        return Effect.as(Effect.repeat(one, { times: n - 1 }), latencies)
      })
    )
})
