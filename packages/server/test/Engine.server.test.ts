/**
 * The engine through `server.connect`: a modern input round (`input_required`, then the retry with the answer),
 * a cancelled request (its handler interrupted, recorded, no response) and a duplicate request id.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as McpServer from "../src/McpServer.js"

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } }
}

const make = McpServer.make({
  name: "engine",
  version: "1",
  record: true,
  tools: [
    McpServer.tool({
      name: "confirm",
      parameters: Schema.Struct({}),
      handler: () =>
        Effect.map(
          McpServer.elicit({ message: "sure?", requestedSchema: { type: "object", properties: {} } }),
          (answer) => `answer: ${answer.action}`
        )
    }),
    McpServer.tool({ name: "hang", parameters: Schema.Struct({}), handler: () => Effect.never })
  ]
})

const open = Effect.gen(function*() {
  const server = yield* make
  const sent = yield* Queue.unbounded<any>()
  const connection = yield* server.connect((message) => Effect.asVoid(Queue.offer(sent, message)))
  return { server, sent, connection }
})

describe("the server engine", () => {
  it.effect("a modern handler asking for input answers input_required, and runs again with the answer", () =>
    Effect.gen(function*() {
      const { connection, sent } = yield* open
      const params = { name: "confirm", arguments: {}, _meta: META }
      yield* connection.handle({ jsonrpc: "2.0", id: 1, method: "tools/call", params })
      const first = yield* Queue.take(sent)
      assert.strictEqual(first.id, 1)
      assert.strictEqual(first.result.resultType, "input_required")
      assert.deepStrictEqual(Object.keys(first.result.inputRequests), ["elicit_1"])
      assert.strictEqual(first.result.inputRequests.elicit_1.method, "elicitation/create")
      yield* connection.handle({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          ...params,
          requestState: first.result.requestState,
          inputResponses: { elicit_1: { action: "accept", content: {} } }
        }
      })
      const second = yield* Queue.take(sent)
      assert.strictEqual(second.id, 2)
      assert.deepStrictEqual(second.result.content, [{ type: "text", text: "answer: accept" }])
      yield* connection.handle({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { ...params, requestState: "not-a-state" }
      })
      const third = yield* Queue.take(sent)
      assert.strictEqual(third.error.code, -32602)
    }))

  it.effect("notifications/cancelled interrupts the handler; no response is sent", () =>
    Effect.gen(function*() {
      const { connection, sent, server } = yield* open
      const request = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "hang", _meta: META } } as const
      yield* connection.handle(request)
      yield* connection.handle(request)
      const duplicate = yield* Queue.take(sent)
      assert.deepStrictEqual([duplicate.id, duplicate.error.code], [7, -32600])
      yield* connection.handle({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } })
      const interrupted = yield* server.awaitInterrupted(7)
      assert.deepStrictEqual(interrupted, { connection: 1, id: 7, method: "tools/call" })
      yield* connection.awaitIdle
      assert.deepStrictEqual(yield* Queue.clear(sent), [])
    }))
})
