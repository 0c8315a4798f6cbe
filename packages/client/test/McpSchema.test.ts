import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as McpSchema from "../src/McpSchema.js"

describe("McpSchema.decodeMessage", () => {
  it("classifies each kind of message", () => {
    const request = McpSchema.decodeMessage({ jsonrpc: "2.0", id: 1, method: "ping" })
    assert.isTrue(Either.isRight(request) && McpSchema.isRequest(request.right))
    const notification = McpSchema.decodeMessage({ jsonrpc: "2.0", method: "notifications/initialized" })
    assert.isTrue(Either.isRight(notification) && McpSchema.isNotification(notification.right))
    const success = McpSchema.decodeMessage({ jsonrpc: "2.0", id: "a", result: {} })
    assert.isTrue(Either.isRight(success) && McpSchema.isResponse(success.right))
    const failure = McpSchema.decodeMessage({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "x" } })
    assert.isTrue(Either.isRight(failure) && McpSchema.isResponse(failure.right))
  })

  it("rejects what is not JSON-RPC 2.0", () => {
    for (
      const input of [
        null,
        42,
        "text",
        [],
        {},
        { jsonrpc: "1.0", id: 1, method: "x" },
        { jsonrpc: "2.0", id: 1.5, result: {} },
        { jsonrpc: "2.0", id: null, method: "x" },
        { jsonrpc: "2.0", id: 1 },
        { jsonrpc: "2.0", id: 1, error: { code: "bad" } }
      ]
    ) {
      assert.isTrue(Either.isLeft(McpSchema.decodeMessage(input)), JSON.stringify(input))
    }
  })
})
