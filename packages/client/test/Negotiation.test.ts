import { assert, describe, it } from "@effect/vitest"
import * as McpError from "../src/McpError.js"
import * as McpSchema from "../src/McpSchema.js"
import * as Negotiation from "../src/internal/negotiation.js"

const all = [...McpSchema.LEGACY_VERSIONS, ...McpSchema.MODERN_VERSIONS]
const http = (status: number, body?: unknown) =>
  new McpError.TransportError({
    transport: "http",
    reason: "HttpStatus",
    status,
    contentType: "application/json",
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
const rpcError = (code: number, data?: unknown) => ({
  jsonrpc: "2.0",
  id: "p",
  error: { code, message: "x", ...(data === undefined ? {} : { data }) }
})

describe("HTTP probe refusals", () => {
  it("400 with -32020 or -32021 is a negotiation error, not a fallback (decision 1)", () => {
    for (const code of [-32020, -32021]) {
      const verdict = Negotiation.classifyProbeFailure("status", http(400, rpcError(code)), all, false)
      assert.strictEqual(verdict._tag, "Fail")
      if (verdict._tag === "Fail") {
        assert.strictEqual(verdict.error._tag === "ProtocolError" ? verdict.error.reason : "", "Negotiation")
      }
    }
  })

  it("400 with -32022 naming a modern version: one corrective retry; twice: fatal", () => {
    const body = rpcError(-32022, { supported: ["2026-07-28"], requested: "2026-07-28" })
    assert.strictEqual(Negotiation.classifyProbeFailure("status", http(400, body), all, false)._tag, "RetryModern")
    assert.strictEqual(Negotiation.classifyProbeFailure("status", http(400, body), all, true)._tag, "Fail")
  })

  it("400/404/405 with an empty or non-modern body mean legacy; 404 with -32601 too (decision 4)", () => {
    for (const status of [400, 404, 405]) {
      assert.strictEqual(Negotiation.classifyProbeFailure("status", http(status), all, false)._tag, "Legacy")
      assert.strictEqual(Negotiation.classifyProbeFailure("status", http(status, "<html>"), all, false)._tag, "Legacy")
      assert.strictEqual(
        Negotiation.classifyProbeFailure("status", http(status, rpcError(-32601)), all, false)._tag,
        "Legacy"
      )
    }
  })

  it("5xx, other 4xx and auth refusals are never verdicts", () => {
    for (const status of [500, 502, 503, 409, 429]) {
      assert.strictEqual(Negotiation.classifyProbeFailure("status", http(status), all, false)._tag, "Fail")
    }
    const auth = new McpError.AuthError({ status: 401, challenges: [] })
    assert.strictEqual(Negotiation.classifyProbeFailure("status", auth, all, false)._tag, "Fail")
  })
})

describe("stdio probe answers", () => {
  it("a DiscoverResult sharing no version with us is a version error", () => {
    const verdict = Negotiation.classifyProbeResult(
      { supportedVersions: ["2030-01-01"], capabilities: {} },
      all
    )
    assert.strictEqual(verdict._tag, "Fail")
  })

  it("a DiscoverResult listing only legacy versions leads to initialize at the newest shared one", () => {
    const verdict = Negotiation.classifyProbeResult({ supportedVersions: ["2025-06-18"], capabilities: {} }, all)
    assert.deepStrictEqual(verdict, { _tag: "Legacy", version: "2025-06-18" })
  })

  it("any JSON-RPC error but -32020/-32021/-32022 means legacy; -32022 without data too", () => {
    for (const code of [-32601, -32602, -32600, -32000, -32001, -32603]) {
      const verdict = Negotiation.classifyProbeError(new McpError.McpError({ code, message: "x" }), all, false)
      assert.strictEqual(verdict._tag, "Legacy", String(code))
    }
    const bare = Negotiation.classifyProbeError(new McpError.McpError({ code: -32022, message: "x" }), all, false)
    assert.strictEqual(bare._tag, "Legacy")
  })

  it("a legacy initialize refused naming only modern versions disproves the legacy verdict", () => {
    assert.isTrue(Negotiation.initializeNamesOnlyModern(
      new McpError.McpError({ code: -32602, message: "x", data: { supported: ["2026-07-28"] } })
    ))
    assert.isFalse(Negotiation.initializeNamesOnlyModern(
      new McpError.McpError({ code: -32602, message: "x", data: { supported: ["2026-07-28", "2025-11-25"] } })
    ))
  })
})
