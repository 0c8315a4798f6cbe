/**
 * Every request goes out with an integer id, the era probe too, and a JSON-RPC error answering the probe under
 * another id (or none) means a server that is not modern: legacy at once, on every transport. Some servers accept
 * only integer ids and answer anything else with an error that does not carry the request's id.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Common from "./fixtures/http/common.js"
import * as HttpScripted from "./fixtures/http/scripted.js"
import * as Scripted from "./utils/scriptedTransport.js"

/** A legacy server that answers the probe with an error under `id` (its JSON-RPC layer could not read ours). */
const misreadingScript = (id: McpSchema.RequestId | null): Scripted.Script => (message, ctx) => {
  if (!("method" in message) || !("id" in message)) return Effect.void
  if (message.method === "server/discover") {
    return ctx.raw({
      _tag: "Response",
      message: { jsonrpc: "2.0", id, error: { code: -32600, message: "Invalid Request" } }
    })
  }
  if (message.method === "initialize") return ctx.reply(message.id, Scripted.initializeResult("2025-06-18"))
  if (message.method === "tools/list") return ctx.reply(message.id, { tools: [] })
  return ctx.fail(message.id, -32601, "Method not found")
}

const overStdio = (script: Scripted.Script) =>
  McpClient.layer({ healthCheckInterval: false }).pipe(
    Layer.provideMerge(Scripted.layer(script, { kind: "stdio" }))
  )

const sentRequests = (sent: ReadonlyArray<Scripted.Sent>) =>
  sent.flatMap((s) => ("method" in s.message && "id" in s.message ? [s.message] : []))

describe("request ids", () => {
  // (under the TestClock: a probe left to time out would never end, so these fail at once without the rule)
  for (const id of [null, "0", 999] as const) {
    it.effect(`stdio: a probe answered by an error with id ${JSON.stringify(id)} falls back to legacy at once`, () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const session = yield* client.session
        assert.strictEqual(session.era, "legacy")
        assert.strictEqual(session.protocolVersion, "2025-06-18")
        assert.deepStrictEqual(yield* client.listTools(), [])
        const log = yield* Scripted.ScriptLog
        const sent = sentRequests(yield* Ref.get(log.sent))
        assert.deepStrictEqual(sent.map((m) => m.method), ["server/discover", "initialize", "tools/list"])
        assert.deepStrictEqual(sent.map((m) => m.id), [1, 2, 3], "integer ids for every request, the probe too")
      }).pipe(Effect.provide(overStdio(misreadingScript(id)))))
  }

  it.effect("an error with a foreign id while no probe waits is dropped, not taken as an answer", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.raw({ _tag: "Response", message: { jsonrpc: "2.0", id: 77, error: { code: -1, message: "stray" } } })
      assert.deepStrictEqual(yield* client.listTools(), [])
    }).pipe(Effect.provide(overStdio(misreadingScript(null)))))

  it.live("HTTP: a probe answered by a JSON error under another id falls back to legacy at once", () =>
    Effect.gen(function*() {
      const server = yield* HttpScripted.mcpServer("legacy", {
        probe: (_seen, res) => HttpScripted.sendJson(res, 200, HttpScripted.failure("0", -32600, "Invalid Request")),
        request: (seen, res, method) =>
          method === "tools/list"
            ? HttpScripted.sendJson(res, 200, HttpScripted.success(HttpScripted.idOf(seen), { tools: [] }))
            : HttpScripted.sendJson(res, 200, HttpScripted.failure(HttpScripted.idOf(seen), -32601, "no"))
      })
      const { client } = yield* Common.connect({ url: server.url })
      assert.strictEqual((yield* client.session).era, "legacy")
      assert.deepStrictEqual(yield* client.listTools(), [])
      const ids = server.seen.filter((s) => s.method === "POST").map(HttpScripted.idOf).filter((id) => id !== undefined)
      assert.deepStrictEqual(ids, [1, 2, 3])
    }).pipe(Effect.scoped))

  it.live("HTTP: the same with a different integer id, and on an event stream", () =>
    Effect.gen(function*() {
      const server = yield* HttpScripted.mcpServer("legacy", {
        probe: (_seen, res) => {
          res.writeHead(200, { "content-type": "text/event-stream" })
          res.end(`event: message\ndata: ${JSON.stringify(HttpScripted.failure(0, -32600, "bad id"))}\n\n`)
        }
      })
      const { client } = yield* Common.connect({ url: server.url })
      assert.strictEqual((yield* client.session).era, "legacy")
    }).pipe(Effect.scoped))
})
