/**
 * M18: OAuth discovery requests carry `MCP-Protocol-Version` with the version of the MCP request that was refused
 * (the negotiated one), without any configuration.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as HttpTransport from "../src/HttpTransport.js"
import * as OAuth from "../src/OAuth.js"
import * as Transport from "../src/Transport.js"
import { oauthLayer } from "./fixtures/oauth/harness.js"
import { startWorld } from "./fixtures/oauth/world.js"

describe("OAuth discovery and the negotiated protocol version", () => {
  for (const version of ["2026-07-28", "2025-06-18"] as const) {
    it.effect(`a request of a ${version} session refused with 401: discovery sends MCP-Protocol-Version ${version}`, () =>
      Effect.gen(function*() {
        const world = yield* startWorld({ jsonRpcAnswers: true })
        yield* Effect.gen(function*() {
          const transport = yield* Transport.Transport
          const events = yield* Queue.unbounded<Transport.TransportEvent>()
          const connection = yield* transport.connect((event) => Effect.asVoid(Queue.offer(events, event)))
          yield* connection.setSession({ era: version === "2026-07-28" ? "modern" : "legacy", protocolVersion: version })
          const meta = version === "2026-07-28" ? { _meta: { "io.modelcontextprotocol/protocolVersion": version } } : {}
          yield* connection.request({ jsonrpc: "2.0", id: 1, method: "tools/list", params: meta }, {})
          const answer = yield* Queue.take(events)
          assert.strictEqual(answer._tag, "Response")
        }).pipe(
          Effect.scoped,
          Effect.provide(HttpTransport.layer({ url: world.mcpUrl, oauth: OAuth.OAuth }).pipe(Layer.provide(oauthLayer())))
        )
        const discovery = world.requests.filter((r) => r.url.pathname.startsWith("/.well-known/"))
        assert.isAbove(discovery.length, 0)
        for (const request of discovery) assert.strictEqual(request.headers["mcp-protocol-version"], version)
      }))
  }
})
