import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Terminal from "@effect/platform/Terminal"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createServer } from "node:http"
import * as AuthorizationHandler from "../src/AuthorizationHandler.js"
import * as OAuth from "../src/OAuth.js"
import * as TokenStore from "../src/TokenStore.js"
import * as Scripted from "./fixtures/http/scripted.js"
import { callMcp } from "./fixtures/oauth/harness.js"
import { startWorld } from "./fixtures/oauth/world.js"

const withHandler = <E>(handler: Layer.Layer<AuthorizationHandler.AuthorizationHandler, E>) =>
  OAuth.layer({ authorization: AuthorizationHandler.AuthorizationHandler }).pipe(
    Layer.provide(handler),
    Layer.provideMerge(TokenStore.layerMemory),
    Layer.provideMerge(FetchHttpClient.layer)
  )

describe("AuthorizationHandler.layerLoopback", () => {
  it.scoped("receives the redirect on 127.0.0.1 and matches it to the authorization by state", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      const statuses: Array<number> = []
      // the "browser": follows every redirect, down to the loopback callback
      const open = (url: URL) =>
        Effect.asVoid(Effect.fork(Effect.promise(async () => {
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
  it.scoped("shows the URL and reads back the address the browser landed on", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      const shown: Array<string> = []
      const terminal = Terminal.Terminal.of({
        columns: Effect.succeed(80),
        rows: Effect.succeed(24),
        isTTY: Effect.succeed(true),
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

describe("AuthorizationHandler.layerHeadless", () => {
  it.scoped("a page past 1 MiB from the authorization server fails the authorization, read no further", () =>
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

  it.scoped("a redirect whose Location is not a URL fails the authorization", () =>
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
