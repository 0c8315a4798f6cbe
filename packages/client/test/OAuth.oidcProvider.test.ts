import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import * as OAuth from "../src/OAuth.js"
import { callMcp, oauthLayer } from "./fixtures/oauth/harness.js"
import { startOidcWorld } from "./fixtures/oauth/oidcWorld.js"

describe("OAuth against oidc-provider", () => {
  it.effect("discovery, dynamic registration, code + PKCE, a call, refresh before expiry, step-up on 403", () =>
    Effect.gen(function*() {
      const world = yield* startOidcWorld
      world.scopeRequirements["tools/call"] = "mcp:write"
      yield* Effect.gen(function*() {
        const oauth = yield* OAuth.OAuth
        const authorizer = yield* oauth.authorizer(world.mcpUrl)
        const listed = yield* callMcp(authorizer, "tools/list")
        assert.deepStrictEqual((listed as { method: string }).method, "tools/list")
        const first = Option.getOrThrow(yield* authorizer.current)
        assert.strictEqual(first.issuer, world.issuer)
        assert.isTrue(first.refreshable)
        assert.include(first.scope, "mcp:basic")

        yield* TestClock.adjust("45 seconds")
        yield* callMcp(authorizer, "tools/list")
        const refreshed = Option.getOrThrow(yield* authorizer.current)
        assert.notStrictEqual(refreshed.fingerprint, first.fingerprint)
        assert.strictEqual(world.asRequests.filter((r) => r.grantType === "refresh_token").length, 1)

        const called = yield* callMcp(authorizer, "tools/call")
        assert.deepStrictEqual((called as { method: string }).method, "tools/call")
        const stepped = Option.getOrThrow(yield* authorizer.current)
        assert.includeMembers([...stepped.scope], ["mcp:basic", "mcp:write"])
      }).pipe(
        Effect.provide(oauthLayer({ clientName: "conduit integration" }, { redirectUri: "http://127.0.0.1/callback" }))
      )
      const paths = world.asRequests.map((r) => r.path)
      assert.strictEqual(paths.filter((p) => p === "/reg").length, 1)
      assert.strictEqual(world.asRequests.filter((r) => r.grantType === "authorization_code").length, 2)
    }))
})
