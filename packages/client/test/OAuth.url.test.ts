import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import {
  authorizationServerMetadataUrls,
  canonicalResource,
  checkUrl,
  hostClass,
  protectedResourceMetadataUrls,
  resourceCovers
} from "../src/internal/oauthUrl.js"
import { callMcp, withAuthorizer } from "./fixtures/oauth/harness.js"
import { startWorld } from "./fixtures/oauth/world.js"

const hrefs = (urls: ReadonlyArray<URL>) => urls.map((u) => u.href)

describe("OAuth URL rules", () => {
  it("canonical resource: lower-case scheme and host, no fragment, no lone trailing slash", () => {
    assert.strictEqual(canonicalResource(new URL("HTTPS://Tools.Example.NET/mcp#x")), "https://tools.example.net/mcp")
    assert.strictEqual(canonicalResource(new URL("https://tools.example.net/")), "https://tools.example.net")
    const withPort = "https://tools.example.net:8443/a/mcp"
    assert.strictEqual(canonicalResource(new URL(withPort)), withPort)
  })

  it("PRM resource must be the server or a parent path on the same origin", () => {
    const server = new URL("https://tools.example.net/a/mcp")
    assert.isTrue(resourceCovers("https://tools.example.net/a/mcp", server))
    assert.isTrue(resourceCovers("https://tools.example.net", server))
    assert.isTrue(resourceCovers("https://tools.example.net/a/", server))
    assert.isFalse(resourceCovers("https://tools.example.net/a/mc", server))
    assert.isFalse(resourceCovers("https://evil.example/a/mcp", server))
    assert.isFalse(resourceCovers("http://tools.example.net/a/mcp", server))
    assert.isFalse(resourceCovers("https://tools.example.net/a/mcp#frag", server))
  })

  it("well-known orders", () => {
    assert.deepStrictEqual(hrefs(protectedResourceMetadataUrls(new URL("https://h/a/mcp"))), [
      "https://h/.well-known/oauth-protected-resource/a/mcp",
      "https://h/.well-known/oauth-protected-resource"
    ])
    assert.deepStrictEqual(hrefs(authorizationServerMetadataUrls(new URL("https://login/tenants/acme"))), [
      "https://login/.well-known/oauth-authorization-server/tenants/acme",
      "https://login/.well-known/openid-configuration/tenants/acme",
      "https://login/tenants/acme/.well-known/openid-configuration"
    ])
    assert.deepStrictEqual(hrefs(authorizationServerMetadataUrls(new URL("https://login/"))), [
      "https://login/.well-known/oauth-authorization-server",
      "https://login/.well-known/openid-configuration"
    ])
  })

  it("host classes, including the forms the URL parser normalises", () => {
    const cls = (u: string) => hostClass(new URL(u))
    assert.strictEqual(cls("http://127.0.0.1/"), "loopback")
    assert.strictEqual(cls("http://2130706433/"), "loopback")
    assert.strictEqual(cls("http://0x7f.1/"), "loopback")
    assert.strictEqual(cls("http://localhost:3000/"), "loopback")
    assert.strictEqual(cls("http://[::1]/"), "loopback")
    assert.strictEqual(cls("http://[::ffff:127.0.0.1]/"), "loopback")
    assert.strictEqual(cls("http://169.254.169.254/"), "private")
    assert.strictEqual(cls("http://10.1.2.3/"), "private")
    assert.strictEqual(cls("http://172.31.0.1/"), "private")
    assert.strictEqual(cls("http://192.168.1.1/"), "private")
    assert.strictEqual(cls("http://[fd00::1]/"), "private")
    assert.strictEqual(cls("http://[fe80::1]/"), "private")
    assert.strictEqual(cls("http://[::ffff:10.0.0.1]/"), "private")
    // addresses that embed an IPv4 one take its class; reserved ranges are never public
    assert.strictEqual(cls("http://[64:ff9b::a9fe:a9fe]/"), "private")
    assert.strictEqual(cls("http://[64:ff9b::7f00:1]/"), "loopback")
    assert.strictEqual(cls("http://[2002:a9fe:a9fe::]/"), "private")
    assert.strictEqual(cls("http://[::ffff:0:a9fe:a9fe]/"), "private")
    assert.strictEqual(cls("http://[fec0::1]/"), "private")
    assert.strictEqual(cls("http://[2001:db8::1]/"), "private")
    assert.strictEqual(cls("http://[2001:0:4136:e378::1]/"), "private")
    assert.strictEqual(cls("http://198.18.0.1/"), "private")
    assert.strictEqual(cls("http://192.0.0.1/"), "private")
    assert.strictEqual(cls("http://localhost./"), "loopback")
    assert.strictEqual(cls("http://[64:ff9b::5db8:d822]/"), "public")
    assert.strictEqual(cls("http://[2002:5db8:d822::]/"), "public")
    assert.strictEqual(cls("http://[2606:4700::1111]/"), "public")
    assert.strictEqual(cls("https://93.184.216.34/"), "public")
    assert.strictEqual(cls("https://example.com/"), "public")
  })

  it("checkUrl: https only, http only on allowed loopback, no credentials, no dangerous schemes", () => {
    const strict = { allowLoopback: false, allowPrivate: false }
    const dev = { allowLoopback: true, allowPrivate: false }
    const ok = (u: string, p = strict) => Result.isSuccess(checkUrl(u, p, "url"))
    assert.isTrue(ok("https://as.example/authorize"))
    assert.isFalse(ok("http://as.example/authorize"))
    assert.isFalse(ok("javascript:alert(1)"))
    assert.isFalse(ok("data:text/html,hi"))
    assert.isFalse(ok("file:///etc/passwd"))
    assert.isFalse(ok("https://user:pw@as.example/"))
    assert.isFalse(ok("http://127.0.0.1:8080/"))
    assert.isTrue(ok("http://127.0.0.1:8080/", dev))
    assert.isFalse(ok("https://169.254.169.254/latest", dev))
  })
})

describe("OAuth discovery redirects", () => {
  it.effect("a same-origin redirect is followed", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ challengeResourceMetadata: false })
      world.options.prmRedirect = `${world.origin}/custom/prm.json`
      yield* withAuthorizer(world.mcpUrl, {}, (a) => callMcp(a, "tools/list"))
      assert.strictEqual(world.count("/custom/prm.json"), 1)
    }))

  it.effect("a redirect to another origin stops discovery", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ challengeResourceMetadata: false })
      world.options.prmRedirect = world.origin.replace("127.0.0.1", "localhost") + "/custom/prm.json"
      const error = yield* withAuthorizer(world.mcpUrl, {}, (a) => callMcp(a, "tools/list")).pipe(Effect.flip)
      assert.include(error.message, "another origin")
      assert.strictEqual(world.count("/custom/prm.json"), 0)
      assert.strictEqual(world.count("/authorize"), 0)
    }))
})
