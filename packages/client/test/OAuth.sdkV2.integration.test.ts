/**
 * The whole client (`McpClient` over `HttpTransport` with the `OAuth` layer) against a real, independent
 * authorization server (oidc-provider) in front of the official SDK v2 MCP server: discovery from the SDK's
 * 401 challenge and PRM, dynamic registration, authorization code + PKCE through the headless handler, tool
 * calls, a refresh before expiry (TestClock), one refresh for 50 calls refused at once after the server stops
 * accepting a token, a step-up on the SDK's 403 `insufficient_scope` — and, with a logger and a tracer capturing
 * everything, no token anywhere.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import * as AuthorizationHandler from "../src/AuthorizationHandler.js"
import * as HttpTransport from "../src/HttpTransport.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as OAuth from "../src/OAuth.js"
import * as TokenStore from "../src/TokenStore.js"
import { type OidcWorld, startOidcSdkWorld } from "./fixtures/oauth/oidcWorld.js"
import { makeCapture } from "./utils/capture.js"

const textOf = (result: McpSchema.CallToolResult): string =>
  result.content.flatMap((block) => (block.type === "text" && "text" in block ? [block.text] : [])).join("")

/** The client over HTTP with OAuth: the headless handler plays the user at the provider's login and consent. */
const clientLayer = (world: OidcWorld) =>
  McpClient.layer({ healthCheckInterval: false, reconnect: false }).pipe(
    Layer.provide(HttpTransport.layer({ url: world.mcpUrl, oauth: OAuth.OAuth })),
    Layer.provideMerge(
      OAuth.layer({ clientName: "conduit sdk integration", authorization: AuthorizationHandler.AuthorizationHandler }).pipe(
        Layer.provide(AuthorizationHandler.layerHeadless({ redirectUri: "http://127.0.0.1/callback" })),
        Layer.provide(TokenStore.layerMemory)
      )
    ),
    Layer.provide(NodeHttpClient.layerUndici)
  )

describe("OAuth end to end: oidc-provider in front of the SDK v2 MCP server", () => {
  it.effect("discovery, registration, code + PKCE, calls, refresh (expiry and revocation), step-up; no token leaks", () =>
    Effect.gen(function*() {
      const world = yield* startOidcSdkWorld
      const capture = makeCapture()
      yield* Effect.gen(function*() {
        // the era probe is the first request: refused with the SDK's 401, authorized, sent again
        const client = yield* McpClient.McpClient
        const session = yield* client.session
        assert.strictEqual(session.era, "modern")
        const authorizer = yield* Effect.flatMap(OAuth.OAuth, (oauth) => oauth.authorizer(world.mcpUrl))
        const first = Option.getOrThrow(yield* authorizer.current)
        assert.strictEqual(first.issuer, world.issuer)
        assert.strictEqual(first.resource, world.mcpUrl)
        assert.include(first.scope, "mcp:basic")
        assert.notInclude(first.scope, "mcp:write")
        assert.isTrue(first.refreshable)
        assert.strictEqual(world.asRequests.filter((r) => r.path === "/reg").length, 1, "registered once")
        assert.match(textOf(yield* client.callTool({ name: "whoami" })), /^client \S+ with .*mcp:basic/)

        // the access token lives 60 s: 45 s later (within the refresh skew) the client refreshes first
        yield* TestClock.adjust("45 seconds")
        yield* client.callTool({ name: "whoami" })
        const refreshed = Option.getOrThrow(yield* authorizer.current)
        assert.notStrictEqual(refreshed.fingerprint, first.fingerprint)
        assert.strictEqual(world.asRequests.filter((r) => r.grantType === "refresh_token").length, 1)

        // the server stops accepting the current token: 50 calls refused at once cause exactly one refresh,
        // and every one of them is sent again with the new token
        const current = world.tokens[world.tokens.length - 1]!
        yield* Effect.promise(async () => (await world.provider.AccessToken.find(current))?.destroy())
        const answers = yield* Effect.all(
          Array.from({ length: 50 }, () => client.callTool({ name: "whoami" })),
          { concurrency: "unbounded" }
        )
        for (const answer of answers) assert.match(textOf(answer), /mcp:basic/)
        assert.strictEqual(world.asRequests.filter((r) => r.grantType === "refresh_token").length, 2)

        // deploy needs mcp:write: the SDK's 403 insufficient_scope steps up to the union of the scopes
        const deployed = yield* client.callTool({ name: "deploy", arguments: { service: "api" } })
        assert.strictEqual(textOf(deployed), "deployed api")
        const stepped = Option.getOrThrow(yield* authorizer.current)
        assert.includeMembers([...stepped.scope], ["mcp:basic", "mcp:write"])
        assert.strictEqual(world.asRequests.filter((r) => r.grantType === "authorization_code").length, 2)
        assert.strictEqual(world.asRequests.filter((r) => r.path === "/reg").length, 1, "no second registration")
      }).pipe(Effect.provide(clientLayer(world)), capture.observe)
      assert.isAtLeast(world.tokens.length, 4)
      assert.isAbove(capture.logs.length, 0)
      assert.isAbove(capture.spans.length, 0)
      const everything = capture.seen.join("\n")
      for (const token of new Set(world.tokens)) assert.notInclude(everything, token)
    }).pipe(Effect.scoped))
})
