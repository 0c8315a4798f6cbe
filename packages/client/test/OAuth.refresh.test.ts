import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/testing/TestClock"
import * as AuthorizationHandler from "../src/AuthorizationHandler.js"
import * as OAuth from "../src/OAuth.js"
import * as TokenStore from "../src/TokenStore.js"
import { callMcp, oauthLayer } from "./fixtures/oauth/harness.js"
import { startWorld, type World } from "./fixtures/oauth/world.js"

const refreshes = (world: World) =>
  world.count("/token", (r) => r.form.get("grant_type") === "refresh_token")

/** Makes the resource server refuse every access token issued so far. */
const revokeAccessTokens = (world: World) => {
  for (const token of world.tokens.values()) if (token.kind === "access") token.revoked = true
}

const setup = (world: World) =>
  Effect.gen(function*() {
    const oauth = yield* OAuth.OAuth
    const authorizer = yield* oauth.authorizer(world.mcpUrl)
    yield* callMcp(authorizer, "tools/list")
    return authorizer
  })

describe("OAuth refresh discipline", () => {
  it.effect("50 concurrent calls refused with 401 cause exactly one refresh; all succeed with the new token", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ refreshDelayMs: 50 })
      yield* Effect.gen(function*() {
        const authorizer = yield* setup(world)
        const before = Option.getOrThrow(yield* authorizer.current).fingerprint
        revokeAccessTokens(world)
        const results = yield* Effect.all(
          Array.from({ length: 50 }, () => callMcp(authorizer, "tools/list")),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.length, 50)
        assert.strictEqual(refreshes(world), 1)
        assert.strictEqual(world.count("/authorize"), 1)
        const after = Option.getOrThrow(yield* authorizer.current).fingerprint
        assert.notStrictEqual(after, before)
        // every re-send after the refresh carried the new token: exactly 50 successes with it
        const current = [...world.tokens.entries()].filter(([, t]) => t.kind === "access" && !t.revoked)
        assert.strictEqual(current.length, 1)
        const withNew = world.requests.filter((r) =>
          r.url.pathname === "/mcp" && r.headers.authorization === `Bearer ${current[0][0]}`
        )
        assert.strictEqual(withNew.length, 50)
      }).pipe(Effect.provide(oauthLayer()))
    }))

  it.effect("a transient refresh failure keeps the stored credentials; the next call refreshes", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      yield* Effect.gen(function*() {
        const authorizer = yield* setup(world)
        const store = yield* TokenStore.TokenStore
        world.options.refreshUnavailable = true
        revokeAccessTokens(world)
        const failed = yield* callMcp(authorizer, "tools/list").pipe(Effect.result)
        assert.isTrue(Result.isFailure(failed))
        if (Result.isFailure(failed)) assert.include(failed.failure.message, "Transient")
        const stored = yield* store.get(TokenStore.tokensKey(world.issuerUrl(), world.mcpUrl))
        assert.isTrue(Option.isSome(stored))
        assert.isTrue(Option.getOrThrow(yield* authorizer.current).refreshable)
        assert.strictEqual(world.count("/authorize"), 1)
        world.options.refreshUnavailable = false
        yield* callMcp(authorizer, "tools/list")
        assert.strictEqual(refreshes(world), 2)
        assert.strictEqual(world.count("/authorize"), 1)
      }).pipe(Effect.provide(oauthLayer()))
    }))

  it.effect("a rotated refresh token replaces the old one in the store", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      yield* Effect.gen(function*() {
        const authorizer = yield* setup(world)
        const store = yield* TokenStore.TokenStore
        const key = TokenStore.tokensKey(world.issuerUrl(), world.mcpUrl)
        const refreshTokenOf = Effect.map(store.get(key), (raw) => {
          const parsed = JSON.parse(Redacted.value(Option.getOrThrow(raw)))
          return String(parsed.refreshToken)
        })
        const first = yield* refreshTokenOf
        revokeAccessTokens(world)
        yield* callMcp(authorizer, "tools/list")
        const second = yield* refreshTokenOf
        assert.notStrictEqual(second, first)
        assert.isTrue(world.tokens.get(first)?.revoked)
        revokeAccessTokens(world)
        yield* callMcp(authorizer, "tools/list")
        assert.strictEqual(refreshes(world), 2)
        assert.strictEqual(world.count("/authorize"), 1)
      }).pipe(Effect.provide(oauthLayer()))
    }))

  it.effect("invalid_grant on refresh drops the tokens and runs the full flow", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      yield* Effect.gen(function*() {
        const authorizer = yield* setup(world)
        for (const token of world.tokens.values()) token.revoked = true
        yield* callMcp(authorizer, "tools/list")
        assert.strictEqual(refreshes(world), 1)
        assert.strictEqual(world.count("/authorize"), 2)
      }).pipe(Effect.provide(oauthLayer()))
    }))

  it.effect("an access token about to expire is refreshed before it is sent", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ expiresIn: 60 })
      yield* Effect.gen(function*() {
        const authorizer = yield* setup(world)
        const before = Option.getOrThrow(yield* authorizer.current)
        assert.isTrue(Option.isSome(before.expiresAt))
        yield* TestClock.adjust("45 seconds")
        yield* callMcp(authorizer, "tools/list")
        assert.strictEqual(refreshes(world), 1)
        const authorized = world.requests.filter((r) =>
          r.url.pathname === "/mcp" && r.headers.authorization !== undefined
        )
        assert.strictEqual(authorized.length, 2)
        assert.notStrictEqual(Option.getOrThrow(yield* authorizer.current).fingerprint, before.fingerprint)
      }).pipe(Effect.provide(oauthLayer()))
    }))

  it.effect("two clients sharing one store: the second adopts the tokens the first rotated, without refreshing", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      const shared = Layer.succeed(TokenStore.TokenStore, yield* TokenStore.makeMemory)
      const client = OAuth.layer({ authorization: AuthorizationHandler.AuthorizationHandler }).pipe(
        Layer.provide(AuthorizationHandler.layerHeadless()),
        Layer.provide(shared),
        Layer.provideMerge(FetchHttpClient.layer)
      )
      const first = yield* Layer.build(client)
      const second = yield* Layer.build(client)
      const authorizerOf = (context: typeof first) =>
        Effect.flatMap(OAuth.OAuth, (oauth) => oauth.authorizer(world.mcpUrl)).pipe(Effect.provide(context))
      const a = yield* authorizerOf(first)
      const b = yield* authorizerOf(second)
      yield* callMcp(a, "tools/list").pipe(Effect.provide(first))
      const fingerprintOf = (authorizer: OAuth.Authorizer) =>
        Effect.map(authorizer.current, (info) => Option.getOrThrow(info).fingerprint)
      assert.strictEqual(yield* fingerprintOf(b), yield* fingerprintOf(a))
      revokeAccessTokens(world)
      yield* callMcp(a, "tools/list").pipe(Effect.provide(first))
      yield* callMcp(b, "tools/list").pipe(Effect.provide(second))
      assert.strictEqual(refreshes(world), 1)
      assert.strictEqual(world.count("/authorize"), 1)
      assert.strictEqual(yield* fingerprintOf(b), yield* fingerprintOf(a))
    }))

  it.effect("credentials are never attached to a request for another origin", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      yield* Effect.gen(function*() {
        const authorizer = yield* setup(world)
        const foreign = yield* authorizer.headersFor({ method: "GET", url: new URL("https://other.example/mcp") })
        assert.deepStrictEqual(foreign.headers, {})
        const own = yield* authorizer.headersFor({ method: "GET", url: new URL(world.mcpUrl) })
        assert.isTrue(own.headers.authorization?.startsWith("Bearer "))
      }).pipe(Effect.provide(oauthLayer()))
    }))
})
