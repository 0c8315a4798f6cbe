import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as OAuth from "../src/OAuth.js"
import { callMcp, oauthLayer } from "./fixtures/oauth/harness.js"
import { startWorld, type World } from "./fixtures/oauth/world.js"
import { makeCapture } from "./utils/capture.js"

/** Everything observable: every log line with its annotations and cause, every span attribute, event and exit. */
const assertNoSecret = (world: World, seen: ReadonlyArray<string>, extra: ReadonlyArray<string> = []) => {
  const secrets = [...world.secrets(), ...extra]
  assert.isAbove(secrets.length, 1)
  const all = seen.join("\n")
  for (const secret of secrets) assert.notInclude(all, secret)
}

describe("OAuth never leaks a credential", () => {
  it.effect("logs, spans and errors of full flows carry no token, code, verifier or secret", () =>
    Effect.gen(function*() {
      const capture = makeCapture()
      const world = yield* startWorld({
        dpop: true,
        challengeScope: "mcp:basic",
        scopeRequirements: { "tools/call": "mcp:write" }
      })
      yield* Effect.gen(function*() {
        const oauth = yield* OAuth.OAuth
        const authorizer = yield* oauth.authorizer(world.mcpUrl)
        yield* callMcp(authorizer, "tools/list")
        yield* callMcp(authorizer, "tools/call")
        for (const token of world.tokens.values()) if (token.kind === "access") token.revoked = true
        yield* callMcp(authorizer, "tools/list")
        world.options.refreshUnavailable = true
        for (const token of world.tokens.values()) if (token.kind === "access") token.revoked = true
        const failed = yield* callMcp(authorizer, "tools/list").pipe(Effect.flip)
        capture.seen.push(failed.message, JSON.stringify(failed), String(failed))
        const info = Option.getOrThrow(yield* authorizer.current)
        capture.seen.push(JSON.stringify(info))
      }).pipe(Effect.provide(oauthLayer()), capture.observe)
      assert.isTrue(capture.seen.some((line) => line.includes("OAuth.authorize")))
      assert.isTrue(capture.seen.some((line) => line.includes("OAuth.refresh")))
      assertNoSecret(world, capture.seen)
    }))

  it.effect("failed flows (iss mismatch, refused assertion, bad client secret) leak nothing either", () =>
    Effect.gen(function*() {
      const capture = makeCapture()
      const issWorld = yield* startWorld({ callbackIss: "wrong" })
      const e1 = yield* Effect.gen(function*() {
        const oauth = yield* OAuth.OAuth
        return yield* callMcp(yield* oauth.authorizer(issWorld.mcpUrl), "tools/list")
      }).pipe(Effect.provide(oauthLayer()), capture.observe, Effect.flip)
      const m2m = yield* startWorld({ preRegistered: { clientId: "m2m", clientSecret: "the-right-secret" } })
      const e2 = yield* Effect.gen(function*() {
        const oauth = yield* OAuth.OAuth
        return yield* callMcp(yield* oauth.authorizer(m2m.mcpUrl), "tools/list")
      }).pipe(
        Effect.provide(oauthLayer({
          grant: OAuth.Grant.ClientCredentials(),
          clients: [{ clientId: "m2m", clientSecret: Redacted.make("a-wrong-secret-value") }]
        })),
        capture.observe,
        Effect.flip
      )
      const e3 = yield* Effect.gen(function*() {
        const oauth = yield* OAuth.OAuth
        return yield* callMcp(yield* oauth.authorizer(m2m.mcpUrl), "tools/list")
      }).pipe(
        Effect.provide(oauthLayer({
          grant: OAuth.Grant.JwtBearer({ assertion: Effect.succeed(Redacted.make("a-private-assertion")) })
        })),
        capture.observe,
        Effect.flip
      )
      for (const e of [e1, e2, e3]) capture.seen.push(e.message, JSON.stringify(e), String(e))
      assertNoSecret(issWorld, capture.seen)
      assertNoSecret(m2m, capture.seen, ["a-wrong-secret-value", "a-private-assertion", "the-right-secret"])
    }))

  it.effect("a token goes only to the resource server and the token endpoint", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      yield* Effect.gen(function*() {
        const oauth = yield* OAuth.OAuth
        const authorizer = yield* oauth.authorizer(world.mcpUrl)
        yield* callMcp(authorizer, "tools/list")
        for (const token of world.tokens.values()) if (token.kind === "access") token.revoked = true
        world.options.issuers = ["", "/as2"]
        world.options.activeIssuer = 1
        yield* callMcp(authorizer, "tools/list")
      }).pipe(Effect.provide(oauthLayer()))
      const tokens = [...world.tokens.keys()]
      for (const request of world.requests) {
        const carried = tokens.filter((t) => JSON.stringify(request.headers).includes(t) || request.body.includes(t))
        if (carried.length === 0) continue
        const path = request.url.pathname
        assert.isTrue(path === "/mcp" || path.endsWith("/token"), `a token was sent to ${path}`)
        if (path.endsWith("/token")) {
          for (const t of carried) assert.strictEqual(world.tokens.get(t)?.kind, "refresh")
          const endpoint = `${request.url.origin}${request.url.pathname}`
          assert.strictEqual(`${world.tokens.get(carried[0])?.issuer}/token`, endpoint)
        }
      }
    }))
})
