/**
 * K2: the output schemas learnt from `tools/list` are forgotten on `notifications/tools/list_changed`, so a result
 * is never judged by the schema of a tool the server has since changed.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as McpClient from "../src/McpClient.js"
import * as Scripted from "./utils/scriptedTransport.js"

const schemaOf = (type: "number" | "string") => ({
  type: "object",
  properties: { n: { type } },
  required: ["n"]
})

/** A tool whose output schema is `number` until the first list_changed, then `string`; it returns a string. */
const changing = (changed: Ref.Ref<boolean>): Scripted.Script =>
  Scripted.legacyScript((message, ctx) =>
    Effect.gen(function*() {
      if (!("method" in message) || !("id" in message)) return
      const now = yield* Ref.get(changed)
      if (message.method === "tools/list") {
        return yield* ctx.reply(message.id, {
          tools: [{ name: "t", inputSchema: { type: "object" }, outputSchema: schemaOf(now ? "string" : "number") }]
        })
      }
      if (message.method === "tools/call") {
        return yield* ctx.reply(message.id, { content: [], structuredContent: { n: "x" } })
      }
    })
  )

describe("output schemas and tools/list_changed (K2)", () => {
  it.effect("a changed tool list forgets the old schemas; the next list teaches the new ones", () =>
    Effect.gen(function*() {
      const changed = yield* Ref.make(false)
      const context = yield* Layer.build(
        McpClient.layer({ healthCheckInterval: false }).pipe(Layer.provideMerge(Scripted.layer(changing(changed))))
      )
      const client = Context.get(context, McpClient.McpClient)
      const log = Context.get(context, Scripted.ScriptLog)
      yield* client.listTools()
      const stale = yield* Effect.flip(client.callTool({ name: "t" }))
      assert.strictEqual(stale._tag === "ProtocolError" ? stale.reason : stale._tag, "InvalidResult")
      // the server changes the tool and says so
      yield* Ref.set(changed, true)
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.notify("notifications/tools/list_changed")
      yield* Effect.yieldNow
      const result = yield* client.callTool({ name: "t" })
      assert.deepStrictEqual(result.structuredContent, { n: "x" })
      yield* client.listTools()
      assert.deepStrictEqual((yield* client.callTool({ name: "t" })).structuredContent, { n: "x" })
    }))
})
