/**
 * The OAuth client credentials extension is declared: an OAuth service with the `ClientCredentials` grant
 * implements `io.modelcontextprotocol/oauth-client-credentials`, an HTTP transport using it reports it, and the
 * client declares the transport's extensions in `capabilities.extensions` (configured ones win) in the 2026-07-28 era,
 * the only one whose capabilities have that field.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as HttpTransport from "../src/HttpTransport.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as OAuth from "../src/OAuth.js"
import * as Transport from "../src/Transport.js"
import { oauthLayer } from "./fixtures/oauth/harness.js"
import * as Scripted from "./utils/scriptedTransport.js"

const clientCredentials = oauthLayer({
  grant: OAuth.Grant.ClientCredentials(),
  clients: [{ clientId: "m2m", clientSecret: Redacted.make("secret") }]
})

/** A transport reporting `extensions`, whose server is the scripted one of `era`. */
const withExtensions = (
  era: "legacy" | "modern",
  extensions: Readonly<Record<string, Readonly<Record<string, unknown>>>>
) =>
  Layer.effectContext(Effect.map(
    Layer.build(Scripted.layer(era === "modern" ? Scripted.modernScript() : Scripted.legacyScript())),
    (context) => {
      const transport = Context.get(context, Transport.Transport)
      return Context.add(
        context,
        Transport.Transport,
        { ...transport, credentials: { set: () => Effect.void, partition: Effect.succeed(undefined), extensions } }
      )
    }
  ))

const sentCapabilities = (era: "legacy" | "modern") => Effect.gen(function*() {
  const log = yield* Scripted.ScriptLog
  const sent = (yield* Ref.get(log.sent)).map((s) => s.message)
  return sent.flatMap((message) => {
    if (!("method" in message) || !("id" in message)) return []
    const params = message.params as Record<string, unknown> | undefined
    if (message.method === "initialize") return [params?.capabilities]
    // the probe speaks 2026-07-28 whatever the server turns out to be
    if (message.method === "server/discover" && era === "legacy") return []
    const meta = params?._meta as Record<string, unknown> | undefined
    return meta === undefined ? [] : [meta["io.modelcontextprotocol/clientCapabilities"]]
  }) as ReadonlyArray<McpSchema.ClientCapabilities | undefined>
})

describe("the oauth-client-credentials extension", () => {
  it.effect("the OAuth service with the ClientCredentials grant implements it; the default one does not", () =>
    Effect.gen(function*() {
      const withGrant = yield* Effect.provide(OAuth.OAuth, clientCredentials)
      assert.deepStrictEqual(withGrant.extensions, { [OAuth.CLIENT_CREDENTIALS_EXTENSION]: {} })
      const plain = yield* Effect.provide(OAuth.OAuth, oauthLayer())
      assert.isUndefined(plain.extensions)
    }))

  it.effect("an HTTP transport with that service reports it", () =>
    Effect.gen(function*() {
      const transport = yield* Effect.provide(
        Transport.Transport,
        HttpTransport.layer({ url: "http://127.0.0.1:1/mcp", oauth: OAuth.OAuth }).pipe(Layer.provide(clientCredentials))
      )
      assert.deepStrictEqual(transport.credentials?.extensions, {
        [OAuth.CLIENT_CREDENTIALS_EXTENSION]: {}
      })
    }))

  for (const era of ["legacy", "modern"] as const) {
    it.effect(`${era}: the client declares the transport's extensions next to the configured ones ${
      era === "modern" ? "" : "only where the version has capabilities.extensions (2026-07-28)"
    }`, () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        yield* client.session
        const declared = yield* sentCapabilities(era)
        assert.isAbove(declared.length, 0)
        for (const capabilities of declared) {
          // a 2025 initialize has no extensions field in its schema: the credentials' extension is not sent there
          // (what the application configured itself is its own choice and is kept)
          assert.deepStrictEqual(
            capabilities?.extensions,
            era === "modern"
              ? { [OAuth.CLIENT_CREDENTIALS_EXTENSION]: {}, "example/mine": { on: true } }
              : { "example/mine": { on: true } }
          )
        }
      }).pipe(Effect.provide(
        McpClient.layer({ healthCheckInterval: false, capabilities: { extensions: { "example/mine": { on: true } } } })
          .pipe(Layer.provideMerge(withExtensions(era, { [OAuth.CLIENT_CREDENTIALS_EXTENSION]: {} })))
      )))
  }
})
