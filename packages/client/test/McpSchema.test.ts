import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as McpSchema from "../src/McpSchema.js"

describe("McpSchema.decodeMessage", () => {
  it("classifies each kind of message", () => {
    const request = McpSchema.decodeMessage({ jsonrpc: "2.0", id: 1, method: "ping" })
    assert.isTrue(Result.isSuccess(request) && McpSchema.isRequest(request.success))
    const notification = McpSchema.decodeMessage({ jsonrpc: "2.0", method: "notifications/initialized" })
    assert.isTrue(Result.isSuccess(notification) && McpSchema.isNotification(notification.success))
    const success = McpSchema.decodeMessage({ jsonrpc: "2.0", id: "a", result: {} })
    assert.isTrue(Result.isSuccess(success) && McpSchema.isResponse(success.success))
    const failure = McpSchema.decodeMessage({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "x" } })
    assert.isTrue(Result.isSuccess(failure) && McpSchema.isResponse(failure.success))
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
      assert.isTrue(Result.isFailure(McpSchema.decodeMessage(input)), JSON.stringify(input))
    }
  })
})
