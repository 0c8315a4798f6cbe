/**
 * C3: identical cacheable reads made at once share one request through the result cache, but an input_required
 * answer belongs to the request that got it: a caller that joined it sends its own request, and no requestState is
 * echoed by two retries.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as ElicitationHandler from "../src/ElicitationHandler.js"
import * as McpClient from "../src/McpClient.js"
import * as ResultCache from "../src/ResultCache.js"
import { blockedOnFibers, eventually } from "./utils/fibers.js"
import * as Scripted from "./utils/scriptedTransport.js"

const confirm = {
  method: "elicitation/create",
  params: { mode: "form", message: "ok?", requestedSchema: { type: "object", properties: {} } }
}

/** resources/read asks for input (its requestState names the request); the first answers wait for `release`. */
const asking = (release: Deferred.Deferred<void>): Scripted.Script =>
  Scripted.modernScript((message, ctx) =>
    Effect.gen(function*() {
      if (!("method" in message) || !("id" in message) || message.method !== "resources/read") return
      const params = message.params as { uri: string; requestState?: string }
      if (params.requestState !== undefined) {
        return yield* ctx.reply(message.id, { resultType: "complete", contents: [{ uri: params.uri, text: "done" }] })
      }
      yield* Deferred.await(release)
      yield* ctx.reply(message.id, {
        resultType: "input_required",
        inputRequests: { confirm },
        requestState: `state-${String(message.id)}`
      })
    })
  )

const accepting = ElicitationHandler.layer({
  modes: ["form"],
  elicit: () => Effect.succeed({ action: "accept", content: {} })
})

describe("coalesced reads and input_required (C3)", () => {
  it.live("each caller answers its own input_required; no requestState is echoed twice", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const context = yield* Layer.build(
        McpClient.layer({
          healthCheckInterval: false,
          resultCache: ResultCache.ResultCache,
          elicitation: ElicitationHandler.ElicitationHandler
        }).pipe(
          Layer.provideMerge(Scripted.layer(asking(release))),
          Layer.provide(ResultCache.layerMemory()),
          Layer.provide(accepting)
        )
      )
      const client = yield* Effect.provide(McpClient.McpClient, context)
      const log = yield* Effect.provide(Scripted.ScriptLog, context)
      const readsSent = Effect.map(
        Ref.get(log.sent),
        (sent) => sent.filter((s) => "method" in s.message && s.message.method === "resources/read").length
      )
      const first = yield* Effect.forkChild(client.readResource({ uri: "file:///a" }))
      const second = yield* Effect.forkChild(client.readResource({ uri: "file:///a" }))
      // both wait on the one request under way (each cache lookup hashes its key first, which takes real time):
      // with no Supervisor or fiber status in Effect 4, the callers are given time to settle (neither may end) and
      // the server must have seen exactly one read
      yield* eventually(Effect.map(readsSent, (n) => n > 0))
      for (let i = 0; i < 20; i++) yield* blockedOnFibers([first, second])
      assert.strictEqual(yield* readsSent, 1, "the callers share one request")
      yield* Deferred.succeed(release, undefined)
      const results = [yield* Fiber.join(first), yield* Fiber.join(second)]
      assert.deepStrictEqual(results.map((r) => r.contents[0]), [
        { uri: "file:///a", text: "done" },
        { uri: "file:///a", text: "done" }
      ])
      const reads = (yield* Ref.get(log.sent)).flatMap((s) =>
        "method" in s.message && s.message.method === "resources/read"
          ? [(s.message.params as { requestState?: string }).requestState]
          : []
      )
      const states = reads.filter((state) => state !== undefined)
      assert.strictEqual(reads.length - states.length, 2, "the joined caller sent its own first request")
      assert.strictEqual(states.length, 2, "two retries")
      assert.strictEqual(new Set(states).size, 2, `each retry echoes its own requestState: ${states.join(", ")}`)
    }).pipe(Effect.scoped))
})
