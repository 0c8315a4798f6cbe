/**
 * Waiting on forked fibers without sleeping: turns of the event loop until a condition holds.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

/** One turn of the event loop, so that promises (WebCrypto digests, sockets) can settle. */
export const turn = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** Waits until `condition` holds (forked fibers need some turns to get going). */
export const eventually = (condition: Effect.Effect<boolean>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 20_000; i++) {
      if (yield* condition) return
      yield* turn
    }
    return yield* Effect.dieMessage("condition never held")
  })

/** Waits until every fiber is suspended on another fiber (for instance: each caller joined a shared run). */
export const blockedOnFibers = (fibers: ReadonlyArray<Fiber.RuntimeFiber<unknown, unknown>>) =>
  eventually(Effect.map(
    Effect.forEach(fibers, (fiber) => Fiber.status(fiber)),
    // FiberId.isNone recurses forever on a runtime id, so read the tag
    (statuses) => statuses.every((status) => status._tag === "Suspended" && status.blockingOn._tag !== "None")
  ))
