import { assert, describe, it } from "@effect/vitest"
import * as McpHeaders from "../src/internal/mcpHeaders.js"

/** What a header value may be once sent: visible ASCII and inner spaces only. */
const SAFE_VALUE = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/

const decodeSentinel = (value: string): string | undefined => {
  if (!value.startsWith("=?base64?") || !value.endsWith("?=")) return undefined
  return Buffer.from(value.slice(9, -2), "base64").toString("utf8")
}

describe("McpHeaders value encoding", () => {
  it("matches every example of the spec's value-encoding table", () => {
    assert.strictEqual(McpHeaders.encodeValue("us-west1"), "us-west1")
    assert.strictEqual(McpHeaders.encodeValue("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=")
    assert.strictEqual(McpHeaders.encodeValue(" padded "), "=?base64?IHBhZGRlZCA=?=")
    assert.strictEqual(McpHeaders.encodeValue("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=")
    assert.strictEqual(McpHeaders.encodeValue("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=")
  })

  it("matches the protocol digest's examples", () => {
    assert.strictEqual(McpHeaders.encodeValue("eu-west-3"), "eu-west-3")
    assert.strictEqual(McpHeaders.encodeValue("Zürich"), "=?base64?WsO8cmljaA==?=")
    assert.strictEqual(McpHeaders.encodeValue("  tenant-7"), "=?base64?ICB0ZW5hbnQtNw==?=")
    assert.strictEqual(McpHeaders.encodeValue("=?base64?abc?="), "=?base64?PT9iYXNlNjQ/YWJjPz0=?=")
    const headers = McpHeaders.paramHeaders(
      [
        { name: "Count", path: ["count"], type: "integer" },
        { name: "Flag", path: ["flag"], type: "boolean" },
        { name: "Gone", path: ["gone"], type: "string" }
      ],
      { count: 42, flag: true, gone: null }
    )
    assert.deepStrictEqual(headers, { "Mcp-Param-Count": "42", "Mcp-Param-Flag": "true" })
  })

  it("never produces a raw unsafe header value from an injection attempt", () => {
    const attempts = [
      "a\r\nX-Injected: 1",
      "a\rb",
      "a\nb",
      "\r\n",
      "tab\there",
      "nul\u0000byte",
      "del\u007f",
      "bell\u0007",
      " leading",
      "trailing ",
      "\tleading-tab",
      "café",
      "\u00a0nbsp",
      "emoji 🎉",
      "lone \ud800 surrogate",
      "=?base64?",
      "=?base64?=",
      "=?base64??=",
      "line\u2028separator"
    ]
    for (const attempt of attempts) {
      const encoded = McpHeaders.encodeValue(attempt)
      assert.match(encoded, SAFE_VALUE, JSON.stringify(attempt))
      assert.isTrue(encoded.startsWith("=?base64?"), `${JSON.stringify(attempt)} must be encoded`)
      assert.isFalse(encoded.includes("\r") || encoded.includes("\n"))
    }
  })

  it("round-trips any string through the sentinel, and leaves safe values alone", () => {
    const alphabet = ["a", "Z", "0", " ", "\t", "\r", "\n", "é", "世", "🎉", "=", "?", "\u0000", "~", "\""]
    let seed = 7
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      return seed
    }
    for (let round = 0; round < 2000; round++) {
      const length = random() % 12
      let value = ""
      for (let i = 0; i < length; i++) value += alphabet[random() % alphabet.length]
      const encoded = McpHeaders.encodeValue(value)
      assert.match(encoded, SAFE_VALUE)
      if (McpHeaders.isPlainSafe(value)) assert.strictEqual(encoded, value)
      else assert.strictEqual(decodeSentinel(encoded), value)
    }
  })

  it("encodes base64 like the platform does", () => {
    for (const text of ["", "f", "fo", "foo", "foob", "fooba", "foobar", "Zürich", "世界🎉", "\u0000\u00ff"]) {
      assert.strictEqual(McpHeaders.base64Utf8(text), Buffer.from(text, "utf8").toString("base64"))
    }
  })

  it("recognises well-formed sentinels only", () => {
    assert.isTrue(McpHeaders.isEncoded("=?base64?WsO8cmljaA==?="))
    assert.isTrue(McpHeaders.isEncoded("=?base64??="))
    assert.isFalse(McpHeaders.isEncoded("=?base64?not base64?="))
    assert.isFalse(McpHeaders.isEncoded("=?BASE64?WsO8cmljaA==?="))
    assert.isFalse(McpHeaders.isEncoded("=?base64?WsO8cmljaA=?="))
  })
})

describe("McpHeaders x-mcp-header declarations", () => {
  const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    type: "object",
    properties,
    ...extra
  })

  const reason = (inputSchema: unknown, options?: McpHeaders.ToolHeaderOptions) => {
    const result = McpHeaders.toolHeaders(inputSchema, options)
    return result._tag === "Invalid" ? result.reason : undefined
  }

  it("collects declarations on statically reachable primitive properties, nested ones included", () => {
    const result = McpHeaders.toolHeaders(
      schema({
        region: { type: "string", "x-mcp-header": "Region" },
        limit: { type: "integer", "x-mcp-header": "Limit" },
        dry: { type: "boolean", "x-mcp-header": "Dry-Run" },
        target: {
          type: "object",
          properties: { tenant: { type: "string", "x-mcp-header": "Tenant" }, other: { type: "string" } }
        },
        plain: { type: "string" }
      })
    )
    assert.deepStrictEqual(result, {
      _tag: "Valid",
      headers: [
        { name: "Region", path: ["region"], type: "string" },
        { name: "Limit", path: ["limit"], type: "integer" },
        { name: "Dry-Run", path: ["dry"], type: "boolean" },
        { name: "Tenant", path: ["target", "tenant"], type: "string" }
      ]
    })
  })

  it("accepts a tool without declarations, and schemas that are not objects", () => {
    assert.deepStrictEqual(McpHeaders.toolHeaders(schema({ a: { type: "string" } })), { _tag: "Valid", headers: [] })
    assert.deepStrictEqual(McpHeaders.toolHeaders(undefined), { _tag: "Valid", headers: [] })
  })

  it("rejects an empty, non-string or non-token header name", () => {
    assert.isString(reason(schema({ a: { type: "string", "x-mcp-header": "" } })))
    assert.isString(reason(schema({ a: { type: "string", "x-mcp-header": 7 } })))
    for (const name of ["Has Space", "Colon:", "CR\r", "LF\nX-Evil: 1", "Tab\t", "Ünicode", "(paren)", "a/b"]) {
      assert.isString(reason(schema({ a: { type: "string", "x-mcp-header": name } })), JSON.stringify(name))
    }
  })

  it("rejects names that repeat ignoring case", () => {
    const result = reason(schema({
      a: { type: "string", "x-mcp-header": "Region" },
      b: { type: "object", properties: { c: { type: "string", "x-mcp-header": "REGION" } } }
    }))
    assert.include(result, "repeats")
  })

  it("rejects non-primitive and number types; numbers only with the compatibility switch", () => {
    for (const type of ["object", "array", "null", undefined, ["string", "null"]]) {
      assert.isString(reason(schema({ a: { type, "x-mcp-header": "A" } })), JSON.stringify(type))
    }
    const numeric = schema({ a: { type: "number", "x-mcp-header": "A" } })
    assert.include(reason(numeric), "number")
    assert.deepStrictEqual(McpHeaders.toolHeaders(numeric, { allowNumber: true }), {
      _tag: "Valid",
      headers: [{ name: "A", path: ["a"], type: "number" }]
    })
  })

  it("rejects declarations that are not reachable through properties alone", () => {
    const annotated = { type: "string", "x-mcp-header": "A" }
    const cases: Record<string, unknown> = {
      root: { type: "string", "x-mcp-header": "A" },
      items: schema({ list: { type: "array", items: annotated } }),
      itemsArray: schema({ list: { type: "array", items: [annotated] } }),
      prefixItems: schema({ list: { type: "array", prefixItems: [annotated] } }),
      anyOf: schema({}, { anyOf: [schema({ a: annotated })] }),
      oneOf: schema({ a: { oneOf: [annotated] } }),
      allOf: schema({}, { allOf: [schema({ a: annotated })] }),
      not: schema({ a: { not: annotated } }),
      ifThenElse: schema({}, { if: schema({ a: annotated }) }),
      then: schema({}, { then: schema({ a: annotated }) }),
      else: schema({}, { else: schema({ a: annotated }) }),
      defs: schema({ a: { $ref: "#/$defs/A" } }, { $defs: { A: annotated } }),
      definitions: schema({}, { definitions: { A: annotated } }),
      additionalProperties: schema({}, { additionalProperties: annotated }),
      patternProperties: schema({}, { patternProperties: { "^x": annotated } }),
      unknownKeyword: schema({}, { "x-vendor": { nested: annotated } })
    }
    for (const [name, inputSchema] of Object.entries(cases)) assert.isString(reason(inputSchema), name)
  })

  it("does not mistake a property named x-mcp-header, or data keywords, for an annotation", () => {
    const result = McpHeaders.toolHeaders(
      schema(
        {
          "x-mcp-header": { type: "string" },
          b: { type: "string", default: "x", examples: [{ "x-mcp-header": "Z" }] }
        },
        { const: { "x-mcp-header": "Y" }, default: { "x-mcp-header": "Q" } }
      )
    )
    assert.deepStrictEqual(result, { _tag: "Valid", headers: [] })
  })
})

describe("McpHeaders per request", () => {
  const declarations: ReadonlyArray<McpHeaders.ParamHeader> = [
    { name: "Region", path: ["region"], type: "string" },
    { name: "Tenant", path: ["target", "tenant"], type: "string" },
    { name: "Limit", path: ["limit"], type: "integer" },
    { name: "Dry", path: ["dry"], type: "boolean" }
  ]

  it("reads values at their exact paths and encodes them", () => {
    assert.deepStrictEqual(
      McpHeaders.paramHeaders(declarations, { region: "Zürich", target: { tenant: " t7" }, limit: -7, dry: false }),
      {
        "Mcp-Param-Region": "=?base64?WsO8cmljaA==?=",
        "Mcp-Param-Tenant": "=?base64?IHQ3?=",
        "Mcp-Param-Limit": "-7",
        "Mcp-Param-Dry": "false"
      }
    )
  })

  it("omits absent, null, structured and out-of-range values", () => {
    assert.deepStrictEqual(McpHeaders.paramHeaders(declarations, {}), {})
    assert.deepStrictEqual(McpHeaders.paramHeaders(declarations, undefined), {})
    assert.deepStrictEqual(
      McpHeaders.paramHeaders(declarations, { region: null, target: "flat", limit: 2 ** 60, dry: { a: 1 } }),
      {}
    )
    assert.deepStrictEqual(McpHeaders.paramHeaders(declarations, { target: { tenant: ["x"] }, limit: Infinity }), {})
  })

  it("mirrors Mcp-Method, and Mcp-Name for the methods that carry one", () => {
    const request = (method: string, params?: unknown) => ({ jsonrpc: "2.0" as const, id: 1, method, params })
    assert.deepStrictEqual(McpHeaders.standardHeaders(request("tools/call", { name: "query_ledger" })), {
      _tag: "Headers",
      headers: { "Mcp-Method": "tools/call", "Mcp-Name": "query_ledger" }
    })
    assert.deepStrictEqual(McpHeaders.standardHeaders(request("prompts/get", { name: "grüße" })), {
      _tag: "Headers",
      headers: { "Mcp-Method": "prompts/get", "Mcp-Name": "=?base64?Z3LDvMOfZQ==?=" }
    })
    assert.deepStrictEqual(McpHeaders.standardHeaders(request("resources/read", { uri: "file:///a b" })), {
      _tag: "Headers",
      headers: { "Mcp-Method": "resources/read", "Mcp-Name": "file:///a b" }
    })
    assert.deepStrictEqual(McpHeaders.standardHeaders(request("tools/list", { name: "ignored" })), {
      _tag: "Headers",
      headers: { "Mcp-Method": "tools/list" }
    })
    assert.deepStrictEqual(
      McpHeaders.standardHeaders({ jsonrpc: "2.0", method: "notifications/cancelled", params: { name: "x" } }),
      { _tag: "Headers", headers: { "Mcp-Method": "notifications/cancelled" } }
    )
    assert.strictEqual(McpHeaders.standardHeaders(request("tools/call\r\nX-Evil: 1"))._tag, "Refused")
    assert.strictEqual(McpHeaders.standardHeaders(request(""))._tag, "Refused")
  })

  it("indexes a tools/list result and reports invalid tools", () => {
    const index = McpHeaders.indexTools({
      tools: [
        { name: "good", inputSchema: { type: "object", properties: { r: { type: "string", "x-mcp-header": "R" } } } },
        { name: "bad", inputSchema: { type: "object", properties: { r: { type: "number", "x-mcp-header": "R" } } } },
        { name: "plain", inputSchema: { type: "object" } },
        { notATool: true }
      ]
    })
    assert.deepStrictEqual([...index.valid.keys()], ["good", "plain"])
    assert.deepStrictEqual(index.invalid.map((entry) => entry.tool), ["bad"])
  })

  it("keeps only safe caller-supplied Mcp-Param headers", () => {
    const result = McpHeaders.sanitizeParamHeaders({
      "Mcp-Param-Region": "eu-west-3",
      "mcp-param-city": "=?base64?WsO8cmljaA==?=",
      "Mcp-Param-Bad": "a\r\nX: 1",
      "Authorization": "Bearer stolen",
      "Mcp-Param-Bad Name": "x"
    })
    assert.deepStrictEqual(result.headers, {
      "Mcp-Param-Region": "eu-west-3",
      "mcp-param-city": "=?base64?WsO8cmljaA==?="
    })
    assert.strictEqual(result.dropped.length, 3)
  })
})
