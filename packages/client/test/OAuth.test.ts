import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as AuthorizationHandler from "../src/AuthorizationHandler.js"
import * as OAuth from "../src/OAuth.js"
import * as TokenStore from "../src/TokenStore.js"
import { callMcp, withAuthorizer } from "./fixtures/oauth/harness.js"
import { startWorld, type World } from "./fixtures/oauth/world.js"

const paths = (world: World) => world.requests.map((r) => `${r.method} ${r.url.pathname}`)
const authorizeRequests = (world: World) => world.requests.filter((r) => r.url.pathname.endsWith("/authorize"))
const tokenRequests = (world: World) => world.requests.filter((r) => r.url.pathname.endsWith("/token"))

describe("OAuth discovery", () => {
  it.effect("PRM named in the challenge, AS metadata at the root OAuth location; the root PRM is never asked", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      const result = yield* withAuthorizer(world.mcpUrl, {}, (a) => callMcp(a, "tools/list"))
      assert.deepStrictEqual(result, { ok: true, method: "tools/list" })
      assert.strictEqual(world.count("/.well-known/oauth-protected-resource"), 0)
      assert.strictEqual(world.count("/.well-known/oauth-protected-resource/mcp"), 1)
      assert.strictEqual(world.count("/.well-known/oauth-authorization-server"), 1)
      const auth = authorizeRequests(world)[0].url.searchParams
      assert.strictEqual(auth.get("code_challenge_method"), "S256")
      assert.strictEqual(auth.get("resource"), world.mcpUrl)
      assert.strictEqual(auth.get("response_type"), "code")
      assert.isFalse(auth.has("scope"))
      const token = tokenRequests(world)[0].form
      assert.strictEqual(token.get("grant_type"), "authorization_code")
      assert.strictEqual(token.get("resource"), world.mcpUrl)
      assert.strictEqual(token.get("code_verifier")?.length, 43)
    }))

  it.effect("without resource_metadata the path-aware location is probed first; OpenID metadata at the root", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ challengeResourceMetadata: false, asMetadataLocation: "oidc" })
      yield* withAuthorizer(world.mcpUrl, {}, (a) => callMcp(a, "tools/list"))
      const discovery = paths(world).filter((p) => p.includes("/.well-known/"))
      assert.deepStrictEqual(discovery, [
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-authorization-server",
        "GET /.well-known/openid-configuration"
      ])
    }))

  it.effect("root PRM naming the origin covers /mcp; issuer path uses path insertion, never the root AS location", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({
        prmLocation: "root",
        challengeResourceMetadata: false,
        issuers: ["/tenant1"],
        prmResource: undefined
      })
      world.options.prmResource = world.origin
      yield* withAuthorizer(world.mcpUrl, {}, (a) => callMcp(a, "tools/list"))
      const discovery = paths(world).filter((p) => p.includes("/.well-known/"))
      assert.deepStrictEqual(discovery, [
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-protected-resource",
        "GET /.well-known/oauth-authorization-server/tenant1"
      ])
      assert.strictEqual(authorizeRequests(world)[0].url.pathname, "/tenant1/authorize")
    }))

  it.effect("custom PRM URL from the challenge; issuer path with the appended OpenID form, in order", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({
        prmLocation: "custom",
        issuers: ["/tenant1"],
        asMetadataLocation: "oidc-append"
      })
      yield* withAuthorizer(world.mcpUrl, {}, (a) => callMcp(a, "tools/list"))
      const discovery = paths(world).filter((p) => p.includes("/.well-known/") || p.includes("prm.json"))
      assert.deepStrictEqual(discovery, [
        "GET /custom/prm.json",
        "GET /.well-known/oauth-authorization-server/tenant1",
        "GET /.well-known/openid-configuration/tenant1",
        "GET /tenant1/.well-known/openid-configuration"
      ])
    }))

  it.effect("a PRM naming another resource stops before any authorization request", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ prmResource: "https://elsewhere.example/mcp" })
      const error = yield* withAuthorizer(world.mcpUrl, {}, (a) => callMcp(a, "tools/list")).pipe(Effect.flip)
      assert.strictEqual(error._tag, "AuthError")
      assert.include(error.message, "ResourceMismatch")
      assert.strictEqual(authorizeRequests(world).length, 0)
      assert.strictEqual(tokenRequests(world).length, 0)
      assert.strictEqual(world.count("/.well-known/oauth-authorization-server"), 0)
    }))

  it.effect("metadata whose issuer differs is discarded and none of its endpoints is used", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ declaredIssuer: (issuer) => `${issuer}/other` })
      const error = yield* withAuthorizer(world.mcpUrl, {}, (a) => callMcp(a, "tools/list")).pipe(Effect.flip)
      assert.include(error.message, "IssuerMismatch")
      assert.strictEqual(world.count("/register") + world.count("/authorize") + world.count("/token"), 0)
    }))

  it.effect("a metadata document larger than maxResponseBytes fails discovery; nothing is authorized", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      const error = yield* withAuthorizer(world.mcpUrl, { maxResponseBytes: 64 }, (a) => callMcp(a, "tools/list"))
        .pipe(Effect.flip)
      assert.strictEqual(error._tag, "AuthError")
      assert.include(error.message, "larger than 64 bytes")
      assert.strictEqual(authorizeRequests(world).length, 0)
    }))

  it.effect("2025-03-26 fallback: no PRM, metadata at the server's origin", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ prmLocation: "none", issuers: [""] })
      yield* withAuthorizer(world.mcpUrl, { protocolVersion: "2025-03-26" }, (a) => callMcp(a, "tools/list"))
      assert.strictEqual(world.count("/.well-known/oauth-authorization-server"), 1)
      const probe = world.requests.find((r) => r.url.pathname === "/.well-known/oauth-protected-resource/mcp")
      assert.strictEqual(probe?.headers["mcp-protocol-version"], "2025-03-26")
      assert.strictEqual(tokenRequests(world).length, 1)
    }))

  it.effect("2025-03-26 fallback: no metadata at all, the default /register /authorize /token", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ prmLocation: "none", asMetadataLocation: "none" })
      const result = yield* withAuthorizer(world.mcpUrl, {}, (a) => callMcp(a, "tools/list"))
      assert.deepStrictEqual(result, { ok: true, method: "tools/list" })
      assert.strictEqual(world.count("/register"), 1)
      assert.strictEqual(world.count("/authorize"), 1)
      assert.strictEqual(world.count("/token"), 1)
    }))

  it.effect("a public server may not send discovery to loopback", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      const error = yield* withAuthorizer("https://mcp.example.com/mcp", {}, (a) =>
        a.authorize({ challenges: [{ scheme: "Bearer", params: { resource_metadata: `${world.origin}/x` } }] })).pipe(
          Effect.flip
        )
      assert.strictEqual(error.reason, "InsecureUrl")
      assert.strictEqual(world.requests.length, 0)
    }))
})

describe("OAuth authorization code", () => {
  it.effect("refuses an authorization server that does not advertise S256, unless opted out", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ pkceMethods: undefined })
      const error = yield* withAuthorizer(world.mcpUrl, {}, (a) => callMcp(a, "tools/list")).pipe(Effect.flip)
      assert.include(error.message, "PkceUnsupported")
      assert.strictEqual(authorizeRequests(world).length, 0)
      const result = yield* withAuthorizer(world.mcpUrl, { allowMissingPkce: true }, (a) => callMcp(a, "tools/list"))
      assert.deepStrictEqual(result, { ok: true, method: "tools/list" })
      assert.strictEqual(authorizeRequests(world)[0].url.searchParams.get("code_challenge_method"), "S256")
    }))

  for (
    const [name, callbackIss, issSupported, ok] of [
      ["advertised and correct", "correct", true, true],
      ["not advertised and absent", "missing", undefined, true],
      ["advertised but missing", "missing", true, false],
      ["advertised and wrong", "wrong", true, false],
      ["not advertised but wrong", "wrong", false, false],
      ["equal only after normalisation", "normalized", true, false]
    ] as const
  ) {
    it.effect(`iss ${name}: ${ok ? "redeems the code" : "never reaches the token endpoint"}`, () =>
      Effect.gen(function*() {
        const world = yield* startWorld({ callbackIss, issSupported })
        const outcome = yield* withAuthorizer(world.mcpUrl, {}, (a) => callMcp(a, "tools/list")).pipe(Effect.result)
        assert.strictEqual(outcome._tag === "Success", ok)
        assert.strictEqual(tokenRequests(world).length, ok ? 1 : 0)
        if (outcome._tag === "Failure") assert.include(outcome.failure.message, "IssuerResponseMismatch")
      }))
  }

  it.effect("scope from the challenge; PRM scopes_supported otherwise; none when neither names any", () =>
    Effect.gen(function*() {
      const fromChallenge = yield* startWorld({ challengeScope: "mcp:basic", prmScopes: ["a", "b"] })
      yield* withAuthorizer(fromChallenge.mcpUrl, {}, (a) => callMcp(a, "tools/list"))
      assert.strictEqual(authorizeRequests(fromChallenge)[0].url.searchParams.get("scope"), "mcp:basic")
      const fromPrm = yield* startWorld({ prmScopes: ["a", "b", "c"] })
      yield* withAuthorizer(fromPrm.mcpUrl, {}, (a) => callMcp(a, "tools/list"))
      assert.strictEqual(authorizeRequests(fromPrm)[0].url.searchParams.get("scope"), "a b c")
    }))

  it.effect("offline_access only when the authorization server lists it; registration asks for refresh_token", () =>
    Effect.gen(function*() {
      const listed = yield* startWorld({ challengeScope: "mcp:basic", asScopes: ["mcp:basic", "offline_access"] })
      yield* withAuthorizer(listed.mcpUrl, {}, (a) => callMcp(a, "tools/list"))
      assert.strictEqual(authorizeRequests(listed)[0].url.searchParams.get("scope"), "mcp:basic offline_access")
      const registration = JSON.parse(listed.requests.find((r) => r.url.pathname === "/register")!.body)
      assert.deepStrictEqual(registration.grant_types, ["authorization_code", "refresh_token"])
      assert.strictEqual(registration.application_type, "native")
      const unlisted = yield* startWorld({ challengeScope: "mcp:basic", asScopes: ["mcp:basic"] })
      yield* withAuthorizer(unlisted.mcpUrl, {}, (a) => callMcp(a, "tools/list"))
      assert.strictEqual(authorizeRequests(unlisted)[0].url.searchParams.get("scope"), "mcp:basic")
    }))

  for (const method of ["client_secret_basic", "client_secret_post", "none"] as const) {
    it.effect(`token endpoint authentication ${method}, with the same resource in both requests`, () =>
      Effect.gen(function*() {
        const world = yield* startWorld({ tokenAuthMethods: [method] })
        yield* withAuthorizer(world.mcpUrl, {}, (a) => callMcp(a, "tools/list"))
        const token = tokenRequests(world)[0]
        assert.strictEqual(token.headers.authorization?.startsWith("Basic ") ?? false, method === "client_secret_basic")
        assert.strictEqual(token.form.has("client_secret"), method === "client_secret_post")
        assert.strictEqual(token.form.has("client_id"), method !== "client_secret_basic")
        assert.strictEqual(token.form.get("resource"), authorizeRequests(world)[0].url.searchParams.get("resource"))
      }))
  }

  it.effect("pre-registered credentials: no registration, HTTP Basic", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({
        registration: false,
        preRegistered: { clientId: "pre", clientSecret: "s3cret" }
      })
      yield* withAuthorizer(world.mcpUrl, {
        clients: [{ clientId: "pre", clientSecret: Redacted.make("s3cret") }]
      }, (a) => callMcp(a, "tools/list"))
      assert.strictEqual(world.count("/register"), 0)
      assert.strictEqual(authorizeRequests(world)[0].url.searchParams.get("client_id"), "pre")
      const basic = `Basic ${Buffer.from("pre:s3cret").toString("base64")}`
      assert.strictEqual(tokenRequests(world)[0].headers.authorization, basic)
    }))

  it.effect("client ID metadata document: the URL is the client_id, no registration", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ cimdSupported: true, tokenAuthMethods: ["none"] })
      const cimd = "https://conformance-test.local/client-metadata.json"
      world.clients.set(cimd, { secret: undefined, issuer: "", redirectUris: [] })
      yield* withAuthorizer(world.mcpUrl, { clientMetadataUrl: cimd }, (a) => callMcp(a, "tools/list"))
      assert.strictEqual(world.count("/register"), 0)
      assert.strictEqual(authorizeRequests(world)[0].url.searchParams.get("client_id"), cimd)
      assert.strictEqual(tokenRequests(world)[0].form.get("client_id"), cimd)
    }))

  it.effect("step-up on 403 insufficient_scope asks for the union of scopes", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ challengeScope: "mcp:basic", scopeRequirements: { "tools/call": "mcp:write" } })
      yield* withAuthorizer(world.mcpUrl, {}, (a) =>
        Effect.andThen(callMcp(a, "tools/list"), callMcp(a, "tools/call")))
      const scopes = authorizeRequests(world).map((r) => r.url.searchParams.get("scope"))
      assert.deepStrictEqual(scopes, ["mcp:basic", "mcp:basic mcp:write"])
    }))

  it.effect("step-up gives up after three authorizations for one request", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({
        challengeScope: "mcp:basic",
        scopeRequirements: { "tools/call": "mcp:admin" },
        ungrantable: ["mcp:admin"]
      })
      const error = yield* withAuthorizer(world.mcpUrl, {}, (a) =>
        Effect.andThen(callMcp(a, "tools/list"), callMcp(a, "tools/call"))).pipe(Effect.flip)
      assert.strictEqual(error._tag, "AuthError")
      assert.strictEqual(error.status, 403)
      assert.strictEqual(authorizeRequests(world).length, 1 + 3)
    }))

  it.effect("authorization server migration: rediscovers, registers afresh and never shows the old client id", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ issuers: ["/as1", "/as2"], refreshTokens: false })
      yield* withAuthorizer(world.mcpUrl, {}, (a) =>
        Effect.gen(function*() {
          yield* callMcp(a, "tools/list")
          const firstClient = authorizeRequests(world)[0].url.searchParams.get("client_id")
          world.options.activeIssuer = 1
          yield* callMcp(a, "tools/call")
          const second = authorizeRequests(world)[1]
          assert.strictEqual(second.url.pathname, "/as2/authorize")
          assert.notStrictEqual(second.url.searchParams.get("client_id"), firstClient)
          assert.strictEqual(world.count("/as2/register"), 1)
          const info = yield* a.current
          assert.strictEqual(Option.getOrThrow(info).issuer, world.issuerUrl(1))
        }))
    }))
})

describe("OAuth redirect URIs", () => {
  for (const redirectUri of ["http://evil.example/callback", "ftp://127.0.0.1/callback"]) {
    it.effect(`the code never goes to ${redirectUri}: no https or loopback, no authorization`, () =>
      Effect.gen(function*() {
        const world = yield* startWorld()
        const oauth = OAuth.layer({ authorization: AuthorizationHandler.AuthorizationHandler }).pipe(
          Layer.provide(AuthorizationHandler.layerHeadless({ redirectUri })),
          Layer.provide(Layer.effect(TokenStore.TokenStore, TokenStore.makeMemory)),
          Layer.provideMerge(FetchHttpClient.layer)
        )
        const error = yield* Effect.flip(Effect.flatMap(OAuth.OAuth, (service) =>
          Effect.flatMap(service.authorizer(world.mcpUrl), (a) => callMcp(a, "tools/list"))).pipe(
            Effect.provide(oauth)
          ))
        assert.include(JSON.stringify(error), "redirect URI")
        assert.strictEqual(world.count("/register") + world.count("/authorize") + world.count("/token"), 0)
      }))
  }
})

describe("OAuth logout", () => {
  it.effect("a fresh OAuth service (a new process) logs out of the tokens an earlier one stored", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      const store = yield* TokenStore.makeMemory
      // every `Effect.provide` of this layer builds a new OAuth service over the same store
      const oauth = OAuth.layer({ authorization: AuthorizationHandler.AuthorizationHandler }).pipe(
        Layer.provide(AuthorizationHandler.layerHeadless()),
        Layer.provide(Layer.succeed(TokenStore.TokenStore, store)),
        Layer.provideMerge(FetchHttpClient.layer)
      )
      const withAuthorizerOf = <A, E>(f: (authorizer: OAuth.Authorizer) => Effect.Effect<A, E, never>) =>
        Effect.flatMap(OAuth.OAuth, (service) => Effect.flatMap(service.authorizer(world.mcpUrl), f)).pipe(
          Effect.provide(oauth)
        )
      yield* Effect.flatMap(OAuth.OAuth, (service) =>
        Effect.flatMap(service.authorizer(world.mcpUrl), (a) => callMcp(a, "tools/list"))).pipe(
          Effect.provide(oauth)
        )
      assert.isTrue(Option.isSome(yield* withAuthorizerOf((a) => a.current)), "stored by the first process")
      yield* withAuthorizerOf((a) => a.logout)
      assert.isTrue(Option.isNone(yield* withAuthorizerOf((a) => a.current)), "gone for the next one")
    }))
})
