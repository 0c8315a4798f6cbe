import { assert, describe, it, layer } from "@effect/vitest"
import { Clock, Console, Context, Effect, Fiber, Layer, Scope } from "effect"
import * as TestClock from "effect/testing/TestClock"
class Svc extends Context.Service<Svc, { n: number }>()("Svc") {}
let built = 0
const SvcLive = Layer.effect(Svc, Effect.sync(() => ({ n: ++built })))
describe("e4 vitest", () => {
  it.effect("testclock + scope", () => Effect.gen(function*() {
    const scope = yield* Effect.scope
    assert.ok(scope)
    const f = yield* Effect.forkChild(Effect.sleep("1 minute").pipe(Effect.as(1)))
    yield* TestClock.adjust("1 minute")
    assert.strictEqual(yield* Fiber.join(f), 1)
    assert.strictEqual(yield* Clock.currentTimeMillis, 60_000)
    yield* Console.log("hidden?")
  }))
  it.live("live clock", () => Effect.gen(function*() {
    assert.isAbove(yield* Clock.currentTimeMillis, 1_000_000)
  }))
  it.effect("nested provide reuses", () => Effect.gen(function*() {
    const a = yield* Svc
    const b = yield* Effect.provide(Svc, SvcLive)
    const c = yield* Effect.provide(Svc, SvcLive, { local: true })
    assert.deepStrictEqual([a.n === b.n, a.n === c.n], [true, false])
  }).pipe(Effect.provide(SvcLive)))
})
layer(SvcLive)("layer block", (it) => {
  it.effect("uses svc", () => Effect.gen(function*() { assert.ok((yield* Svc).n > 0) }))
})
