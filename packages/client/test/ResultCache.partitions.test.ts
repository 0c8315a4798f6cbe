/**
 * The private partition of the result cache over real servers: clients sharing one cache never see each other's
 * private results unless they reach the same server as the same party. A stdio child is who its command line,
 * environment and working directory make it (two children of one command with different `ACCOUNT_TOKEN`s are two
 * accounts); an HTTP server sees the bearer and the custom headers; an in-process server (or a transport written
 * outside the library) tells the cache nothing, so each client keeps its own.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ChildProcess from "effect/process/ChildProcess"
import * as Redacted from "effect/Redacted"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import * as McpServer from "@conduit-mcp/server/McpServer"
import * as StdioIdentity from "../src/internal/stdioIdentity.js"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as ResultCache from "../src/ResultCache.js"
import * as StdioTransport from "../src/StdioTransport.js"
import * as Common from "./fixtures/http/common.js"
import * as Scripted from "./fixtures/http/scripted.js"

const whoami = Url.fileURLToPath(new URL("./fixtures/stdio/whoami.mjs", import.meta.url))

interface Who {
  readonly token: string | null
  readonly cwd: string
  readonly read: number
}

const textOf = (result: McpSchema.ReadResourceResult): string => {
  const first = result.contents[0]
  return first !== undefined && typeof first.text === "string" ? first.text : ""
}

/** A client of `whoami.mjs` started with these options, over the given cache. */
const stdioClient = (
  cache: Context.Context<ResultCache.ResultCache>,
  options: Partial<StdioTransport.StdioTransportOptions>,
  clientOptions: McpClient.McpClientOptions = {}
) =>
  Effect.map(
    Layer.build(
      McpClient.layer({ healthCheckInterval: false, ...clientOptions, resultCache: ResultCache.ResultCache }).pipe(
        Layer.provide(StdioTransport.layer({ command: process.execPath, args: [whoami], ...options })),
        Layer.provide(NodeServices.layer),
        Layer.provide(Layer.succeedContext(cache))
      )
    ),
    (context) => {
      const client = Context.get(context, McpClient.McpClient)
      return Effect.map(client.readResource({ uri: "whoami:" }), (result) => JSON.parse(textOf(result)) as Who)
    }
  )

const tempDirectory = Effect.acquireRelease(
  Effect.sync(() => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-whoami-")))),
  (directory) => Effect.sync(() => Fs.rmSync(directory, { recursive: true, force: true }))
)

describe("the private partition of a stdio server", () => {
  it.live("one command with different environments: each child's private results stay its own", () =>
    Effect.gen(function*() {
      const cache = yield* Layer.build(ResultCache.layerMemory())
      const alice = yield* stdioClient(cache, { env: { ACCOUNT_TOKEN: "alice" } })
      const bob = yield* stdioClient(cache, { env: { ACCOUNT_TOKEN: "bob" } })
      const aliceAgain = yield* stdioClient(cache, { env: { ACCOUNT_TOKEN: "alice" } })
      assert.deepInclude(yield* alice, { token: "alice", read: 1 })
      assert.deepInclude(yield* bob, { token: "bob", read: 1 }, "Bob's child answers Bob, not Alice's entry")
      assert.deepInclude(yield* alice, { token: "alice", read: 1 }, "cached")
      assert.deepInclude(yield* bob, { token: "bob", read: 1 }, "cached")
      // the same child identity shares the entry: its own child was never asked
      assert.deepInclude(yield* aliceAgain, { token: "alice", read: 1 })
    }).pipe(Effect.scoped))

  it.live("one command and environment in different working directories: each keeps its own", () =>
    Effect.gen(function*() {
      const cache = yield* Layer.build(ResultCache.layerMemory())
      const first = yield* tempDirectory
      const second = yield* tempDirectory
      const here = yield* stdioClient(cache, { cwd: first })
      const there = yield* stdioClient(cache, { cwd: second })
      assert.deepInclude(yield* here, { cwd: first, read: 1 })
      assert.deepInclude(yield* there, { cwd: second, read: 1 })
      assert.deepInclude(yield* here, { cwd: first, read: 1 }, "cached")
    }).pipe(Effect.scoped))

  it.live("an inherited environment is the child's identity as it starts: a parent variable changed between two", () =>
    Effect.gen(function*() {
      const cache = yield* Layer.build(ResultCache.layerMemory())
      const previous = process.env.ACCOUNT_TOKEN
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          if (previous === undefined) delete process.env.ACCOUNT_TOKEN
          else process.env.ACCOUNT_TOKEN = previous
        })
      )
      process.env.ACCOUNT_TOKEN = "alice"
      const alice = yield* stdioClient(cache, { envPolicy: "inherit" })
      process.env.ACCOUNT_TOKEN = "bob"
      const bob = yield* stdioClient(cache, { envPolicy: "inherit" })
      assert.deepInclude(yield* alice, { token: "alice", read: 1 })
      assert.deepInclude(yield* bob, { token: "bob", read: 1 })
      // a minimal environment does not carry the parent's ACCOUNT_TOKEN: both children are one identity
      const minimal = yield* stdioClient(cache, {})
      const minimalToo = yield* stdioClient(cache, { envPolicy: "minimal" })
      assert.deepInclude(yield* minimal, { token: null, read: 1 })
      assert.deepInclude(yield* minimalToo, { token: null, read: 1 }, "served from the first one's entry")
    }).pipe(Effect.scoped))

  it.live("an explicit credentialId names the partition instead", () =>
    Effect.gen(function*() {
      const cache = yield* Layer.build(ResultCache.layerMemory())
      const alice = yield* stdioClient(cache, { env: { ACCOUNT_TOKEN: "alice" } }, { credentialId: "team" })
      const bob = yield* stdioClient(cache, { env: { ACCOUNT_TOKEN: "bob" } }, { credentialId: "team" })
      assert.deepInclude(yield* alice, { token: "alice" })
      assert.deepInclude(yield* bob, { token: "alice" }, "the application said they are one party")
    }).pipe(Effect.scoped))

  it("the identity is hashed under a key of this process: no value of the environment, no plain digest", async () => {
    const command = (env: Record<string, string>, cwd?: string) => {
      return ChildProcess.make(process.execPath, [whoami], { env, extendEnv: false, ...(cwd === undefined ? {} : { cwd }) })
    }
    const partition = (env: Record<string, string>, cwd?: string) =>
      Effect.runPromise(Effect.flatten(StdioIdentity.partitionOf(command(env, cwd))))
    const alice = await partition({ ACCOUNT_TOKEN: "alice" })
    assert.strictEqual(await partition({ ACCOUNT_TOKEN: "alice" }), alice)
    assert.notStrictEqual(await partition({ ACCOUNT_TOKEN: "bob" }), alice)
    assert.notStrictEqual(await partition({ ACCOUNT_TOKEN: "alice" }, "/tmp"), alice)
    assert.match(alice, /^stdio:[0-9a-f]{64}$/)
    assert.notInclude(alice, "alice")
    const made = command({ ACCOUNT_TOKEN: "alice" })
    assert.strictEqual(made._tag, "StandardCommand")
    const text = StdioIdentity.identityText(made as ChildProcess.StandardCommand)
    assert.include(text, "alice", "the text is what is hashed")
    assert.notInclude(alice, NodeCrypto.createHash("sha256").update(text).digest("hex"))
  })
})

describe("the private partition without a known identity", () => {
  it.effect("two clients of one in-process server keep their own private results; one credentialId shares them", () =>
    Effect.gen(function*() {
      let reads = 0
      const server = yield* McpServer.make({
        name: "in-process",
        version: "1.0.0",
        cacheHints: { ttlMs: 60_000, cacheScope: "private" },
        resources: [McpServer.resource({ uri: "whoami:", name: "whoami", read: Effect.sync(() => `read ${++reads}`) })]
      })
      const cache = yield* Layer.build(ResultCache.layerMemory())
      const client = (options: McpClient.McpClientOptions = {}) =>
        Effect.map(
          Layer.build(
            McpClient.layer({ healthCheckInterval: false, ...options, resultCache: ResultCache.ResultCache }).pipe(
              Layer.provide(InProcessTransport.layer(server)),
              Layer.provide(Layer.succeedContext(cache))
            )
          ),
          (context) => Effect.map(Context.get(context, McpClient.McpClient).readResource({ uri: "whoami:" }), textOf)
        )
      const first = yield* client()
      const second = yield* client()
      assert.strictEqual(yield* first, "read 1")
      assert.strictEqual(yield* first, "read 1", "a client's own partition still caches")
      assert.strictEqual(yield* second, "read 2", "another client does not see it")
      const named = yield* client({ credentialId: "user-a" })
      const namedToo = yield* client({ credentialId: "user-a" })
      assert.strictEqual(yield* named, "read 3")
      assert.strictEqual(yield* namedToo, "read 3")
    }))
})

describe("the private partition of an HTTP server", () => {
  /** A modern server whose private result names the credentials it was sent. */
  const server = Scripted.mcpServer("modern", {
    request: (seen, res, method) =>
      method === "resources/read"
        ? Scripted.sendJson(
          res,
          200,
          Scripted.success(Scripted.idOf(seen), {
            resultType: "complete",
            contents: [{
              uri: "whoami:",
              text: `${seen.headers.authorization ?? "-"} ${seen.headers["x-api-key"] ?? seen.headers.cookie ?? "-"}`
            }],
            ttlMs: 60_000,
            cacheScope: "private"
          })
        )
        : Scripted.sendJson(res, 200, Scripted.failure(Scripted.idOf(seen), -32601, "Method not found"))
  })

  it.live("clients sharing a cache with different bearers, API keys or cookies each see their own", () =>
    Effect.gen(function*() {
      const http = yield* server
      const reads = () => http.seen.filter((entry) => Scripted.methodOf(entry) === "resources/read").length
      const cache = yield* ResultCache.ResultCache
      const read = (options: Omit<Parameters<typeof Common.connect>[0], "url">) =>
        Effect.flatMap(
          Common.connect({ url: http.url, ...options }, { resultCache: cache }),
          ({ client }) => Effect.map(client.readResource({ uri: "whoami:" }), textOf)
        )
      assert.strictEqual(yield* read({ bearerToken: Redacted.make("alice") }), "Bearer alice -")
      assert.strictEqual(yield* read({ bearerToken: Redacted.make("bob") }), "Bearer bob -")
      assert.strictEqual(yield* read({ bearerToken: Redacted.make("alice") }), "Bearer alice -", "shared by alice")
      assert.strictEqual(reads(), 2)
      assert.strictEqual(yield* read({ headers: { "X-Api-Key": "alice" } }), "- alice")
      assert.strictEqual(yield* read({ headers: { "X-Api-Key": "bob" } }), "- bob")
      assert.strictEqual(yield* read({ headers: { Cookie: "session=alice" } }), "- session=alice")
      assert.strictEqual(yield* read({ headers: { Cookie: "session=bob" } }), "- session=bob")
      assert.strictEqual(yield* read({}), "- -")
      assert.strictEqual(reads(), 7)
    }).pipe(Effect.scoped, Effect.provide(ResultCache.layerMemory())))
})
