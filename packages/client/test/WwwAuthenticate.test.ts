import { assert, describe, it } from "@effect/vitest"
import * as WwwAuthenticate from "../src/internal/wwwAuthenticate.js"

describe("WwwAuthenticate", () => {
  it("parses the MCP Bearer challenge with quoted parameters", () => {
    assert.deepStrictEqual(
      WwwAuthenticate.parse(
        `Bearer resource_metadata="https://tools.example.net/.well-known/oauth-protected-resource/mcp", ` +
          `scope="ledger:read"`
      ),
      [{
        scheme: "Bearer",
        params: {
          resource_metadata: "https://tools.example.net/.well-known/oauth-protected-resource/mcp",
          scope: "ledger:read"
        }
      }]
    )
  })

  it("parses the RFC 6750 error parameters", () => {
    assert.deepStrictEqual(
      WwwAuthenticate.parse(
        `Bearer realm="example", error="invalid_token", error_description="The access token expired"`
      ),
      [{
        scheme: "Bearer",
        params: { realm: "example", error: "invalid_token", error_description: "The access token expired" }
      }]
    )
    assert.deepStrictEqual(WwwAuthenticate.parse(`Bearer error="insufficient_scope", scope="a b c"`), [
      { scheme: "Bearer", params: { error: "insufficient_scope", scope: "a b c" } }
    ])
  })

  it("parses several challenges in one value (the RFC 9110 example)", () => {
    assert.deepStrictEqual(
      WwwAuthenticate.parse(`Newauth realm="apps", type=1, title="Login to \\"apps\\"", Basic realm="simple"`),
      [
        { scheme: "Newauth", params: { realm: "apps", type: "1", title: `Login to "apps"` } },
        { scheme: "Basic", params: { realm: "simple" } }
      ]
    )
  })

  it("parses token68 credentials and challenges without parameters", () => {
    assert.deepStrictEqual(WwwAuthenticate.parse("Negotiate YWxhZGRpbjpvcGVuc2VzYW1l==, Bearer, Basic realm=x"), [
      { scheme: "Negotiate", params: {}, token68: "YWxhZGRpbjpvcGVuc2VzYW1l==" },
      { scheme: "Bearer", params: {} },
      { scheme: "Basic", params: { realm: "x" } }
    ])
    assert.deepStrictEqual(WwwAuthenticate.parse("Bearer"), [{ scheme: "Bearer", params: {} }])
    assert.deepStrictEqual(WwwAuthenticate.parse("Custom a+b/c~d.e_f-g"), [
      { scheme: "Custom", params: {}, token68: "a+b/c~d.e_f-g" }
    ])
  })

  it("parses repeated header fields", () => {
    assert.deepStrictEqual(WwwAuthenticate.parseAll([`Basic realm="a"`, `Bearer scope="s"`]), [
      { scheme: "Basic", params: { realm: "a" } },
      { scheme: "Bearer", params: { scope: "s" } }
    ])
  })

  it("lower-cases parameter names, keeps the first occurrence and allows whitespace around =", () => {
    assert.deepStrictEqual(WwwAuthenticate.parse(`Bearer Realm = "one" ,  REALM="two",scope = s`), [
      { scheme: "Bearer", params: { realm: "one", scope: "s" } }
    ])
  })

  it("keeps commas, equals signs and escapes inside quoted strings", () => {
    assert.deepStrictEqual(WwwAuthenticate.parse(`Bearer error_description="a, b=c \\\\ d", scope="x"`), [
      { scheme: "Bearer", params: { error_description: "a, b=c \\ d", scope: "x" } }
    ])
  })

  it("reads lenient unquoted values such as URLs", () => {
    assert.deepStrictEqual(
      WwwAuthenticate.parse("Bearer resource_metadata=https://a.example/.well-known/x?y=1, scope=read"),
      [{ scheme: "Bearer", params: { resource_metadata: "https://a.example/.well-known/x?y=1", scope: "read" } }]
    )
  })

  it("never fails on malformed input and recovers at the next comma", () => {
    assert.deepStrictEqual(WwwAuthenticate.parse(""), [])
    assert.deepStrictEqual(WwwAuthenticate.parse(" , ,, "), [])
    assert.deepStrictEqual(WwwAuthenticate.parse(`Bearer realm="unterminated`), [
      { scheme: "Bearer", params: { realm: "unterminated" } }
    ])
    assert.deepStrictEqual(WwwAuthenticate.parse(`@@@, Bearer =x, realm=y, Basic`), [
      { scheme: "Bearer", params: { realm: "y" } },
      { scheme: "Basic", params: {} }
    ])
    assert.deepStrictEqual(WwwAuthenticate.parse(`Bearer a b c, Basic realm="r"`), [
      { scheme: "Bearer", params: {} },
      { scheme: "Basic", params: { realm: "r" } }
    ])
    for (const garbage of ["\"", "=", "Bearer \"", "Bearer a=\"\\", "=,=,=", "Bearer ,=", "\u0000\r\n"]) {
      assert.isArray(WwwAuthenticate.parse(garbage))
    }
  })
})
