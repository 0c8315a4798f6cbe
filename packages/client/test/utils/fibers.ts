/**
 * Waiting on forked fibers without sleeping: turns of the event loop until a condition holds.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Supervisor from "effect/Supervisor"

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

/**
 * Waits until `count` of the fibers `supervisor` tracks are suspended awaiting one same fiber that it tracks as well
 * (for instance: callers joined to one shared request, each waiting on the request's fiber).
 */
export const awaitingOneFiber = (
  supervisor: Supervisor.Supervisor<ReadonlyArray<Fiber.RuntimeFiber<unknown, unknown>>>,
  count: number
) =>
  eventually(Effect.gen(function*() {
    const fibers = yield* supervisor.value
    const tracked = new Set(fibers.map((fiber) => fiber.id().id))
    const awaiting = new Map<number, number>()
    for (const fiber of fibers) {
      const status = yield* Fiber.status(fiber)
      // (a fiber awaiting another is blocked on that fiber's id; read the tags, as above)
      if (status._tag !== "Suspended" || status.blockingOn._tag !== "Runtime") continue
      // (a fiber awaiting a Deferred it made itself shows as blocked on itself)
      const on = status.blockingOn.id
      if (tracked.has(on) && on !== fiber.id().id) awaiting.set(on, (awaiting.get(on) ?? 0) + 1)
    }
    return [...awaiting.values()].some((n) => n >= count)
  }))
