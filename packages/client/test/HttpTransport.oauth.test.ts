/**
 * The HTTP transport with the OAuth service in its context: requests carry the authorizer's credentials, and a
 * 401/403 runs the authorization (or a step-up, or a DPoP nonce retry) and sends the request again — against the
 * scripted OAuth world.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as HttpTransport from "../src/HttpTransport.js"
import * as OAuth from "../src/OAuth.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Transport from "../src/Transport.js"
import { oauthLayer } from "./fixtures/oauth/harness.js"
import { startWorld, type World, type WorldOptions } from "./fixtures/oauth/world.js"

const modern = "2026-07-28"

let nextId = 0

const request = (method: string, params: Record<string, unknown> = {}): McpSchema.JsonRpcRequest => ({
  jsonrpc: "2.0",
  id: ++nextId,
  method,
  params: { ...params, _meta: { "io.modelcontextprotocol/protocolVersion": modern } }
})

/** Sends one request on a fresh connection of the transport (OAuth in its context) and returns its event. */
const exchange = (world: World, messages: ReadonlyArray<McpSchema.JsonRpcRequest>) =>
  Effect.gen(function*() {
    const transport = yield* Transport.Transport
    const events = yield* Queue.unbounded<Transport.TransportEvent>()
    const connection = yield* transport.connect((event) => Effect.asVoid(Queue.offer(events, event)))
    yield* connection.setSession({ era: "modern", protocolVersion: modern })
    const answers: Array<Transport.TransportEvent> = []
    for (const message of messages) {
      yield* connection.request(message, {})
      answers.push(yield* Queue.take(events))
    }
    return answers
  }).pipe(
    Effect.scoped,
    Effect.provide(HttpTransport.layer({ url: world.mcpUrl, oauth: OAuth.OAuth }).pipe(Layer.provide(oauthLayer())))
  )

const mcpRequests = (world: World) => world.requests.filter((r) => r.url.pathname === "/mcp")
const authorizeRequests = (world: World) => world.requests.filter((r) => r.url.pathname.endsWith("/authorize"))

const start = (options: Partial<WorldOptions>) => startWorld({ jsonRpcAnswers: true, ...options })

describe("HttpTransport with OAuth", () => {
  it.effect("a 401 runs the authorization and the request is sent again with the token; the next reuses it", () =>
    Effect.gen(function*() {
      const world = yield* start({})
      const [listed, called] = yield* exchange(world, [request("tools/list"), request("tools/call", { name: "x" })])
      assert.strictEqual(listed._tag, "Response")
      assert.strictEqual(called._tag, "Response")
      if (listed._tag === "Response") assert.deepStrictEqual(listed.message, {
        jsonrpc: "2.0",
        id: nextId - 1,
        result: { ok: true, method: "tools/list" }
      })
      const sent = mcpRequests(world).map((r) => r.headers.authorization?.split(" ")[0] ?? "none")
      assert.deepStrictEqual(sent, ["none", "Bearer", "Bearer"])
      assert.strictEqual(authorizeRequests(world).length, 1)
    }))

  it.effect("a 403 insufficient_scope steps up with the union of the scopes and re-sends", () =>
    Effect.gen(function*() {
      const world = yield* start({ challengeScope: "mcp:read", scopeRequirements: { "tools/call": "mcp:write" } })
      const [, called] = yield* exchange(world, [request("tools/list"), request("tools/call", { name: "x" })])
      assert.strictEqual(called._tag, "Response")
      const scopes = authorizeRequests(world).map((r) => r.url.searchParams.get("scope"))
      assert.strictEqual(scopes.length, 2)
      assert.strictEqual(scopes[0], "mcp:read")
      assert.deepStrictEqual(scopes[1]?.split(" ").sort(), ["mcp:read", "mcp:write"])
    }))

  it.effect("an authorization that gives up fails the request with AuthError", () =>
    Effect.gen(function*() {
      const world = yield* start({ scopeRequirements: { "tools/call": "mcp:admin" }, ungrantable: ["mcp:admin"] })
      const [failed] = yield* exchange(world, [request("tools/call", { name: "x" })])
      assert.strictEqual(failed._tag, "RequestFailed")
      if (failed._tag === "RequestFailed") {
        assert.strictEqual(failed.error._tag, "AuthError")
        if (failed.error._tag === "AuthError") assert.strictEqual(failed.error.status, 403)
      }
    }))

  it.effect("DPoP: the resource server's nonce is taken and every request carries a DPoP-bound token and proof", () =>
    Effect.gen(function*() {
      const world = yield* start({ dpop: true, challengeScheme: "DPoP", rsNonce: true })
      const [listed] = yield* exchange(world, [request("tools/list")])
      assert.strictEqual(listed._tag, "Response")
      const authorized = mcpRequests(world).filter((r) => r.headers.authorization !== undefined)
      assert.isAbove(authorized.length, 0)
      for (const r of authorized) {
        assert.strictEqual(r.headers.authorization?.split(" ")[0], "DPoP")
        assert.isString(r.headers.dpop)
      }
    }))
})
