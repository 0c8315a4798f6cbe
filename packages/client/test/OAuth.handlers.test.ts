import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Terminal from "effect/Terminal"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createServer } from "node:http"
import * as AuthorizationHandler from "../src/AuthorizationHandler.js"
import * as OAuth from "../src/OAuth.js"
import * as TokenStore from "../src/TokenStore.js"
import * as Scripted from "./fixtures/http/scripted.js"
import { callMcp } from "./fixtures/oauth/harness.js"
import { startWorld } from "./fixtures/oauth/world.js"
import { eventually } from "./utils/eventually.js"

const withHandler = <E>(handler: Layer.Layer<AuthorizationHandler.AuthorizationHandler, E>) =>
  OAuth.layer({ authorization: AuthorizationHandler.AuthorizationHandler }).pipe(
    Layer.provide(handler),
    Layer.provideMerge(TokenStore.layerMemory),
    Layer.provideMerge(FetchHttpClient.layer)
  )

describe("AuthorizationHandler.layerLoopback", () => {
  it.effect("receives the redirect on 127.0.0.1 and matches it to the authorization by state", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      const statuses: Array<number> = []
      // the "browser": follows every redirect, down to the loopback callback
      const open = (url: URL) =>
        Effect.asVoid(Effect.forkChild(Effect.promise(async () => {
          const response = await fetch(url)
          statuses.push(response.status)
          await response.text()
        })))
      const handler = AuthorizationHandler.layerLoopback({ open }).pipe(
        Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      )
      yield* Effect.gen(function*() {
        const oauth = yield* OAuth.OAuth
        yield* callMcp(yield* oauth.authorizer(world.mcpUrl), "tools/list")
        const authorize = world.requests.find((r) => r.url.pathname === "/authorize")!
        const redirect = new URL(authorize.url.searchParams.get("redirect_uri")!)
        assert.strictEqual(redirect.hostname, "127.0.0.1")
        assert.strictEqual(redirect.pathname, "/callback")
        assert.isAbove(Number(redirect.port), 0)
        const stray = yield* Effect.promise(() => fetch(new URL("/callback?state=nobody&code=x", redirect)))
        assert.strictEqual(stray.status, 400)
      }).pipe(Effect.provide(withHandler(handler)))
      assert.deepStrictEqual(statuses, [200])
    }))
})

describe("AuthorizationHandler.layerPaste", () => {
  it.effect("shows the URL and reads back the address the browser landed on", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      const shown: Array<string> = []
      const terminal = Terminal.make({
        columns: Effect.succeed(80),
        rows: Effect.succeed(24),
        size: Effect.die("not used"),
        readInput: Effect.die("not used"),
        display: (text) => Effect.sync(() => void shown.push(text)),
        // the user: opens the URL (the callback page itself need not load) and pastes the address bar
        readLine: Effect.promise(async () => {
          const url = /https?:\/\/\S+/.exec(shown.join(""))![0]
          const response = await fetch(url, { redirect: "manual" })
          return `  ${response.headers.get("location")}  `
        })
      })
      const handler = AuthorizationHandler.layerPaste({ redirectUri: "http://127.0.0.1:9/callback" }).pipe(
        Layer.provide(Layer.succeed(Terminal.Terminal, terminal))
      )
      const info = yield* Effect.gen(function*() {
        const oauth = yield* OAuth.OAuth
        const authorizer = yield* oauth.authorizer(world.mcpUrl)
        yield* callMcp(authorizer, "tools/list")
        return yield* authorizer.current
      }).pipe(Effect.provide(withHandler(handler)))
      assert.isTrue(Option.isSome(info))
      assert.include(shown.join(""), "/authorize?")
    }))
})

describe("AuthorizationHandler.layerPaste shows a device code", () => {
  // what a terminal acts on or draws as nothing: C0 but the closing newline, DEL, C1, bidirectional controls
  const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

  const pasteTerminal = (shown: Array<string>) =>
    Layer.succeed(
      Terminal.Terminal,
      Terminal.make({
        columns: Effect.succeed(80),
        rows: Effect.succeed(24),
        size: Effect.die("not used"),
        readInput: Effect.die("not used"),
        display: (text) => Effect.sync(() => void shown.push(text)),
        readLine: Effect.never
      })
    )

  it.effect("a hostile authorization server's user code and URIs reach the terminal escaped and normalised", () =>
    Effect.gen(function*() {
      // a screen clear and a window title in the user code, an OSC 8 hyperlink and a C1 CSI in the URIs
      const userCode = "\u001b[2J\u001b]0;owned\u0007WDJB\u009b31m\u202eMJHT"
      const world = yield* startWorld({
        deviceGrant: true,
        deviceAnswer: (issuer) => ({
          user_code: userCode,
          verification_uri: `${issuer}/activate\u001b[2J`,
          verification_uri_complete:
            `${issuer}/activate?code=\u001b]8;;https://evil.example/\u0007X\u001b]8;;\u0007\u009b`
        })
      })
      const shown: Array<string> = []
      const handler = AuthorizationHandler.layerPaste({ redirectUri: "http://127.0.0.1:9/callback" }).pipe(
        Layer.provide(pasteTerminal(shown))
      )
      const fiber = yield* Effect.gen(function*() {
        const oauth = yield* OAuth.OAuth
        return yield* callMcp(yield* oauth.authorizer(world.mcpUrl), "tools/list")
      }).pipe(
        Effect.provide(
          OAuth.layer({ grant: OAuth.Grant.DeviceCode(), authorization: AuthorizationHandler.AuthorizationHandler })
            .pipe(
              Layer.provide(handler),
              Layer.provideMerge(TokenStore.layerMemory),
              Layer.provideMerge(FetchHttpClient.layer)
            )
        ),
        Effect.forkChild
      )
      // the flow shows the code, then waits on the TestClock to poll: it is interrupted once the code is shown
      yield* eventually(() => shown.length > 0, "the device code on the terminal")
      yield* Fiber.interrupt(fiber)
      const text = shown.join("")
      assert.notMatch(text, RAW)
      assert.include(text, "\\x1b[2J\\x1b]0;owned\\x07WDJB\\x9b31m\\u202eMJHT")
      // the complete URI, as a browser reads it: its controls percent-encoded
      const issuer = world.requests.find((r) => r.url.pathname.endsWith("/device"))!.url
      assert.include(text, `${issuer.origin}`)
      assert.include(text, "/activate?code=%1B]8;;https://evil.example/%07X%1B]8;;%07%C2%9B")
    }))

  it.effect("an address that is no http(s) URL, or carries credentials, is not shown as one to visit", () =>
    Effect.gen(function*() {
      const shown: Array<string> = []
      const handler = yield* AuthorizationHandler.AuthorizationHandler.pipe(
        Effect.provide(
          AuthorizationHandler.layerPaste({ redirectUri: "http://127.0.0.1:9/callback" }).pipe(
            Layer.provide(pasteTerminal(shown))
          )
        )
      )
      yield* handler.showDeviceCode({
        userCode: "ABCD-EFGH",
        verificationUri: "https://accounts.example.com@evil.example/activate",
        verificationUriComplete: "javascript:alert(document.cookie)",
        expiresInSeconds: 600
      })
      yield* handler.showDeviceCode({
        userCode: "ABCD-EFGH",
        verificationUri: "https://as.example.com/activate",
        verificationUriComplete: "file:///etc/passwd",
        expiresInSeconds: 600
      })
      assert.deepStrictEqual(shown, [
        "To authorize, enter the code ABCD-EFGH: the authorization server gave no address to visit that is an " +
        "http(s) URL without credentials\n",
        "To authorize, visit https://as.example.com/activate and enter the code ABCD-EFGH\n"
      ])
    }))
})

describe("AuthorizationHandler.layerHeadless", () => {
  it.effect("a page past 1 MiB from the authorization server fails the authorization, read no further", () =>
    Effect.gen(function*() {
      let written = 0
      const url = yield* Scripted.listen((_req, res) => {
        // a page of 8 MiB, sent as fast as it is read
        res.writeHead(200, { "content-type": "text/html" })
        const chunk = Buffer.alloc(64 * 1024, 0x61)
        const pump = () => {
          while (written < 8 * 1024 * 1024 && res.write(chunk)) written += chunk.length
          if (written < 8 * 1024 * 1024) res.once("drain", pump)
          else res.end()
        }
        pump()
      })
      const handler = yield* AuthorizationHandler.AuthorizationHandler.pipe(
        Effect.provide(AuthorizationHandler.layerHeadless({ interact: () => Effect.succeedNone })),
        Effect.provide(FetchHttpClient.layer)
      )
      const pending = yield* handler.begin
      const error = yield* Effect.flip(pending.complete(new URL(`${url}/authorize`)))
      assert.strictEqual(error._tag, "OAuthError")
      assert.include(error.message, "FrameTooLarge")
      assert.isBelow(written, 8 * 1024 * 1024)
    }))

  it.effect("a redirect whose Location is not a URL fails the authorization", () =>
    Effect.gen(function*() {
      const url = yield* Scripted.listen((_req, res) => void res.writeHead(302, { location: "http://[" }).end())
      const handler = yield* AuthorizationHandler.AuthorizationHandler.pipe(
        Effect.provide(AuthorizationHandler.layerHeadless()),
        Effect.provide(FetchHttpClient.layer)
      )
      const pending = yield* handler.begin
      const error = yield* Effect.flip(pending.complete(new URL(`${url}/authorize`)))
      assert.strictEqual(error._tag, "OAuthError")
      assert.include(error.message, "is not a URL")
    }))
})
