/**
 * With a `HostResolver`, the OAuth flow resolves a host name before each exchange and refuses one that resolves
 * to a loopback or private address the policy does not allow — before any request leaves.
 */
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HostResolver from "../src/HostResolver.js"
import * as OAuth from "../src/OAuth.js"
import * as TokenStore from "../src/TokenStore.js"

const server = "https://mcp.example.com/mcp"
const metadataUrl = "https://metadata.example.com/.well-known/oauth-protected-resource/mcp"

/** An HTTP client that records every request and answers 404 to all of them. */
const recording = () => {
  const requests: Array<string> = []
  const layer = Layer.succeed(
    HttpClient.HttpClient,
    HttpClient.make((request) => {
      requests.push(request.url)
      return Effect.succeed(HttpClientResponse.fromWeb(request, new Response("{}", { status: 404 })))
    })
  )
  return { requests, layer }
}

const authorize = (
  table: Readonly<Record<string, ReadonlyArray<string>>>,
  options: OAuth.OAuthOptions = {}
) => {
  const http = recording()
  const run = Effect.gen(function*() {
    const oauth = yield* OAuth.OAuth
    const authorizer = yield* oauth.authorizer(server)
    return yield* Effect.flip(
      authorizer.authorize({ challenges: [{ scheme: "Bearer", params: { resource_metadata: metadataUrl } }] })
    )
  }).pipe(
    Effect.provide(
      OAuth.layer({ ...options, hostResolver: HostResolver.HostResolver }).pipe(
        Layer.provide(TokenStore.layerMemory),
        Layer.provide(HostResolver.layerStatic(table)),
        Layer.provide(http.layer)
      )
    )
  )
  return Effect.map(run, (error) => ({ error, requests: http.requests }))
}

describe("OAuth with a HostResolver", () => {
  it.effect("a metadata host that resolves to a private address gets no request", () =>
    Effect.gen(function*() {
      const { error, requests } = yield* authorize({ "metadata.example.com": ["93.184.216.34", "10.1.2.3"] })
      assert.strictEqual(error.reason, "InsecureUrl")
      assert.include(error.message, "metadata.example.com resolves to a private network address")
      assert.deepStrictEqual(requests, [])
    }))

  it.effect("so does one that resolves to loopback (IPv6 too)", () =>
    Effect.gen(function*() {
      const { error, requests } = yield* authorize({ "metadata.example.com": ["::1"] })
      assert.strictEqual(error.reason, "InsecureUrl")
      assert.include(error.message, "resolves to a loopback address")
      assert.deepStrictEqual(requests, [])
    }))

  it.effect("a public address passes; a name that does not resolve fails before its request", () =>
    Effect.gen(function*() {
      const { error, requests } = yield* authorize({ "metadata.example.com": ["93.184.216.34"] })
      // the metadata document was fetched (404); the next location, on mcp.example.com, does not resolve
      assert.deepStrictEqual(requests, [metadataUrl])
      assert.include(error.message, "mcp.example.com could not be resolved")
    }))

  it.effect("a name that resolves to no address fails before its request (there is nothing to connect to)", () =>
    Effect.gen(function*() {
      const { error, requests } = yield* authorize({ "metadata.example.com": [] })
      assert.include(error.message, "metadata.example.com could not be resolved")
      assert.deepStrictEqual(requests, [])
    }))

  it.effect("allowPrivateNetwork lets a private resolution through", () =>
    Effect.gen(function*() {
      const { requests } = yield* authorize(
        { "metadata.example.com": ["10.1.2.3"], "mcp.example.com": ["10.1.2.4"] },
        { allowPrivateNetwork: true }
      )
      assert.include(requests, metadataUrl)
    }))
})
