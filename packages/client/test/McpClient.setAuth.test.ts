/**
 * `McpClient.setAuth`: credentials swapped at runtime over a real HTTP server on 127.0.0.1. Every request sent
 * after the swap (re-sends of requests already out included) carries the new credential, a refused swap keeps the
 * old one, private cached results are keyed by credential, and transports without credentials refuse the swap.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Http from "node:http"
import * as NodeCrypto from "node:crypto"
import * as HttpTransport from "../src/HttpTransport.js"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as McpClient from "../src/McpClient.js"
import * as ResultCache from "../src/ResultCache.js"
import * as Common from "./fixtures/http/common.js"
import * as Scripted from "./fixtures/http/scripted.js"
import * as FixtureServer from "./utils/fixtureServer.js"
import { eventually } from "./utils/eventually.js"

const bearer = (token: string) => HttpTransport.Auth.Bearer({ token: Redacted.make(token) })

/** The fingerprint the client reports for a token: the first 8 bytes of its SHA-256, in hex. */
const fingerprintOf = (token: string) => NodeCrypto.createHash("sha256").update(token).digest("hex").slice(0, 16)

const callsOf = (seen: ReadonlyArray<Scripted.Seen>) => seen.filter((entry) => Scripted.methodOf(entry) === "tools/call")

describe("McpClient.setAuth over HTTP", () => {
  it.live("later requests carry the new bearer; a refused token keeps the old one; None sends no header", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy", {
        request: (seen, res) => Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), { content: [] }))
      })
      const { client } = yield* Common.connect({ url: server.url, bearerToken: Redacted.make("alpha") })
      yield* client.callTool({ name: "a" })
      yield* client.setAuth(bearer("beta"))
      yield* client.callTool({ name: "b" })

      const refused = yield* Effect.flip(client.setAuth(bearer("with space")))
      assert.strictEqual(refused._tag, "InvalidOption")
      assert.notInclude(refused.message, "with space")
      // an untyped caller's plain string is refused the same way, not a defect
      const naked = yield* Effect.flip(
        client.setAuth(HttpTransport.Auth.Bearer({ token: "naked" as unknown as Redacted.Redacted<string> }))
      )
      assert.strictEqual(naked._tag, "InvalidOption")
      const noService = yield* Effect.flip(client.setAuth(HttpTransport.Auth.OAuth({})))
      assert.strictEqual(noService._tag, "InvalidOption")
      yield* client.callTool({ name: "c" })

      yield* client.setAuth(HttpTransport.Auth.None())
      yield* client.callTool({ name: "d" })

      const calls = callsOf(server.seen)
      assert.deepStrictEqual(calls.map((entry) => entry.headers.authorization), [
        "Bearer alpha",
        "Bearer beta",
        "Bearer beta",
        undefined
      ])
    }).pipe(Effect.scoped))

  it.live("a request already out is re-sent with the new bearer after its session expires", () =>
    Effect.gen(function*() {
      let held: Http.ServerResponse | undefined
      let swapped = false
      const afterSwap: Array<string | undefined> = []
      const server = yield* Scripted.mcpServer("legacy", {
        initialize: (seen, res, count) => {
          if (swapped) afterSwap.push(seen.headers.authorization)
          Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), Scripted.initializeResult()), {
            "mcp-session-id": `session-${count}`
          })
        },
        request: (seen, res, method) => {
          if (swapped) afterSwap.push(seen.headers.authorization)
          if (method === "tools/call" && seen.headers["mcp-session-id"] === "session-1") {
            held = res
            return
          }
          Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), { content: [] }))
        }
      })
      const { client } = yield* Common.connect({ url: server.url, bearerToken: Redacted.make("alpha") })
      const call = yield* Effect.forkChild(client.callTool({ name: "slow" }))
      yield* eventually(() => held !== undefined, "the call to reach the server")
      yield* client.setAuth(bearer("beta"))
      swapped = true
      // the server forgets the session: the client starts a new one and sends the call again
      held!.writeHead(404).end()
      const result = yield* Fiber.join(call)
      assert.deepStrictEqual(result.content, [])
      assert.isAtLeast(afterSwap.length, 2, "a new initialize and the re-sent call")
      assert.isTrue(afterSwap.every((header) => header === "Bearer beta"), JSON.stringify(afterSwap))
      const calls = callsOf(server.seen)
      assert.strictEqual(calls.length, 2)
      assert.strictEqual(calls[1]!.headers["mcp-session-id"], "session-2")
    }).pipe(Effect.scoped))

  it.live("a 401 names the refused static bearer by fingerprint, never by value", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("legacy", {
        request: (seen, res) =>
          seen.headers.authorization === "Bearer good-token"
            ? Scripted.sendJson(res, 200, Scripted.success(Scripted.idOf(seen), { content: [] }))
            : void res.writeHead(401, { "www-authenticate": "Bearer realm=\"mcp\"" }).end()
      })
      const { client } = yield* Common.connect({ url: server.url, bearerToken: Redacted.make("good-token") })
      yield* client.callTool({ name: "x" })
      yield* client.setAuth(bearer("revoked-token"))
      const error = yield* Effect.flip(client.callTool({ name: "x" }))
      assert.strictEqual(error._tag, "AuthError")
      if (error._tag === "AuthError") {
        assert.strictEqual(error.status, 401)
        assert.strictEqual(error.credential, fingerprintOf("revoked-token"))
        assert.strictEqual(error.challenges[0]?.scheme, "Bearer")
      }
      assert.notInclude(`${String(error)} ${JSON.stringify(error)}`, "revoked-token")
    }).pipe(Effect.scoped))

  it.live("private cached results are keyed by credential: the new one never sees the old one's", () =>
    Effect.gen(function*() {
      const server = yield* Scripted.mcpServer("modern", {
        request: (seen, res, method) =>
          method === "tools/list"
            ? Scripted.sendJson(
              res,
              200,
              Scripted.success(Scripted.idOf(seen), {
                resultType: "complete",
                tools: [{ name: `for ${seen.headers.authorization ?? "nobody"}`, inputSchema: { type: "object" } }],
                ttlMs: 60_000,
                cacheScope: "private"
              })
            )
            : Scripted.sendJson(res, 200, Scripted.failure(Scripted.idOf(seen), -32601, "Method not found"))
      })
      const lists = () => server.seen.filter((entry) => Scripted.methodOf(entry) === "tools/list").length
      const { client } = yield* Common.connect({ url: server.url, bearerToken: Redacted.make("alpha") }, {
        resultCache: yield* ResultCache.ResultCache
      })
      const first = yield* client.listTools()
      yield* client.listTools()
      assert.strictEqual(lists(), 1, "served from the cache")
      assert.strictEqual(first[0]!.name, "for Bearer alpha")

      yield* client.setAuth(bearer("beta"))
      const second = yield* client.listTools()
      assert.strictEqual(lists(), 2, "a new credential fetches its own")
      assert.strictEqual(second[0]!.name, "for Bearer beta")
      yield* client.listTools()
      assert.strictEqual(lists(), 2, "and caches it")

      yield* client.setAuth(HttpTransport.Auth.None())
      const third = yield* client.listTools()
      assert.strictEqual(lists(), 3)
      assert.strictEqual(third[0]!.name, "for nobody")

      yield* client.setAuth(bearer("beta"), { credentialId: "user-b" })
      yield* client.listTools()
      assert.strictEqual(lists(), 4, "an explicit id is a partition of its own")
    }).pipe(Effect.scoped, Effect.provide(ResultCache.layerMemory())))
})

describe("McpClient.setAuth without credentials", () => {
  it.effect("a transport that takes none refuses the swap", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make({})
      const client = yield* McpClient.make({ healthCheckInterval: false }).pipe(
        Effect.provide(Layer.fresh(InProcessTransport.layer(server)))
      )
      const error = yield* Effect.flip(client.setAuth(bearer("alpha")))
      assert.strictEqual(error._tag, "InvalidOption")
      assert.strictEqual(error.option, "auth")
      assert.include(error.detail, "in-process")
    }))
})
