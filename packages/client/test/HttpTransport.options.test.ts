import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as HttpTransport from "../src/HttpTransport.js"
import * as Transport from "../src/Transport.js"

const build = (options: HttpTransport.HttpTransportOptions) =>
  HttpTransport.make(options).pipe(Effect.provide(NodeHttpClient.layerUndici))

/** Options as an untyped caller (or a Config source) might pass them. */
const untyped = (options: Record<string, unknown>): HttpTransport.HttpTransportOptions =>
  // deliberately ill-typed input, to check the runtime validation
  options as unknown as HttpTransport.HttpTransportOptions

describe("HttpTransport options", () => {
  it.effect("valid options build an http transport without any I/O", () =>
    Effect.gen(function*() {
      const transport = yield* build({
        url: "https://mcp.example.com/mcp#ignored",
        headers: { "X-Api-Key": "abc" },
        bearerToken: Redacted.make("token"),
        binding: "auto",
        maxEventBytes: 1024,
        connectTimeout: "5 seconds",
        closeTimeout: 1000,
        maxRetryDelay: "10 seconds",
        resumeAttempts: 0,
        allowNumberHeaders: true
      })
      assert.strictEqual(transport.kind, "http")
      const fromUrl = yield* build({ url: new URL("http://127.0.0.1:1/mcp") })
      assert.strictEqual(fromUrl.kind, "http")
    }))

  const cases: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ["url", { url: "not a url" }],
    ["url", { url: "/relative" }],
    ["url", { url: "ftp://example.com/mcp" }],
    ["url", { url: "https://user:secret@example.com/mcp" }],
    ["url", { url: 42 }],
    ["headers", { url: "https://a.example", headers: { "Authorization": "Bearer x" } }],
    ["headers", { url: "https://a.example", headers: { "mcp-session-id": "x" } }],
    ["headers", { url: "https://a.example", headers: { "MCP-Protocol-Version": "x" } }],
    // mirrored from each call's arguments: a static one would override them
    ["headers", { url: "https://a.example", headers: { "Mcp-Param-Region": "eu" } }],
    ["headers", { url: "https://a.example", headers: { "Bad Name": "x" } }],
    ["headers", { url: "https://a.example", headers: { "X-Evil": "a\r\nInjected: 1" } }],
    ["headers", { url: "https://a.example", headers: { "X-A": "1", "x-a": "2" } }],
    ["headers", { url: "https://a.example", headers: { "X-A": 1 } }],
    ["headers", { url: "https://a.example", headers: ["X-A"] }],
    ["bearerToken", { url: "https://a.example", bearerToken: "plain string" }],
    ["bearerToken", { url: "https://a.example", bearerToken: Redacted.make("") }],
    ["bearerToken", { url: "https://a.example", bearerToken: Redacted.make("tok\r\nX: 1") }],
    ["binding", { url: "https://a.example", binding: "websocket" }],
    ["maxEventBytes", { url: "https://a.example", maxEventBytes: 0 }],
    ["maxEventBytes", { url: "https://a.example", maxEventBytes: 1.5 }],
    ["connectTimeout", { url: "https://a.example", connectTimeout: -1 }],
    ["connectTimeout", { url: "https://a.example", connectTimeout: "soon" }],
    ["closeTimeout", { url: "https://a.example", closeTimeout: 0 }],
    ["maxRetryDelay", { url: "https://a.example", maxRetryDelay: "Infinity" }],
    ["resumeAttempts", { url: "https://a.example", resumeAttempts: -1 }],
    ["allowNumberHeaders", { url: "https://a.example", allowNumberHeaders: "yes" }],
    ["maxInFlight", { url: "https://a.example", maxInFlight: 0 }],
    ["maxInFlight", { url: "https://a.example", maxInFlight: 2.5 }]
  ]
  for (const [option, options] of cases) {
    it.effect(`rejects ${option} ${JSON.stringify(options[option] ?? null)} with InvalidOption`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(build(untyped(options)))
        assert.strictEqual(error._tag, "InvalidOption")
        assert.strictEqual(error.option, option)
        assert.notInclude(error.message, "secret")
        assert.notInclude(error.message, "tok\r")
      }))
  }

  it.effect("the layer fails to build on an invalid option, before any I/O", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Layer.build(HttpTransport.layer({ url: "ftp://x" }).pipe(Layer.provide(NodeHttpClient.layerUndici)))
      )
      assert.strictEqual(error._tag, "InvalidOption")
    }).pipe(Effect.scoped))

  it.effect("layerConfig reads the options from Config", () =>
    Effect.gen(function*() {
      const layer = HttpTransport.layerConfig({
        url: Config.String("MCP_URL"),
        bearerToken: Config.Redacted("MCP_TOKEN")
      }).pipe(Layer.provide(NodeHttpClient.layerUndici))
      const context = yield* Layer.build(layer)
      assert.strictEqual(Context.get(context, Transport.Transport).kind, "http")
    }).pipe(
      Effect.scoped,
      Effect.provideService(
        ConfigProvider.ConfigProvider,
        ConfigProvider.fromEnv({ env: { MCP_URL: "https://a.example/mcp", MCP_TOKEN: "t" } })
      )
    ))
})
