import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as TestClock from "effect/testing/TestClock"
import * as ChildProcess from "node:child_process"
import { createRequire } from "node:module"
import * as Url from "node:url"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as TokenStore from "../src/TokenStore.js"

const value = (text: string) => Option.some(Redacted.make(text))
const read = (key: string) =>
  Effect.map(TokenStore.TokenStore, (store) => store.get(key)).pipe(
    Effect.flatten,
    Effect.map(Option.map(Redacted.value))
  )

const contract = (name: string, layer: Layer.Layer<TokenStore.TokenStore>) =>
  describe(name, () => {
    it.effect("compare-and-set writes only over the expected value", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore.TokenStore
        assert.isTrue(yield* store.compareAndSet("k", Option.none(), value("a")))
        assert.isFalse(yield* store.compareAndSet("k", Option.none(), value("b")))
        assert.isFalse(yield* store.compareAndSet("k", value("x"), value("b")))
        assert.deepStrictEqual(yield* read("k"), Option.some("a"))
        assert.isTrue(yield* store.compareAndSet("k", value("a"), value("b")))
        assert.deepStrictEqual(yield* read("k"), Option.some("b"))
        assert.isTrue(yield* store.compareAndSet("k", value("b"), Option.none()))
        assert.deepStrictEqual(yield* read("k"), Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("concurrent rotations from the same value: exactly one wins", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore.TokenStore
        yield* store.compareAndSet("r", Option.none(), value("v0"))
        const wins = yield* Effect.all(
          Array.from({ length: 20 }, (_, i) => store.compareAndSet("r", value("v0"), value(`v${i + 1}`))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(wins.filter((w) => w).length, 1)
      }).pipe(Effect.provide(layer)))
  })

contract("TokenStore.layerMemory", TokenStore.layerMemory)
contract(
  "TokenStore.layerKeyValueStore",
  TokenStore.layerKeyValueStore().pipe(Layer.provide(KeyValueStore.layerMemory))
)

const tempFile = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "conduit-tokens-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => path.join(dir, "nested", "tokens.json")))

describe("TokenStore.layerFileSystem", () => {
  it.effect("writes a 0600 file in a 0700 directory that a new store instance reads back", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      const layer = TokenStore.layerFileSystem(file).pipe(Layer.provide(NodeServices.layer))
      const write = Effect.flatMap(TokenStore.TokenStore, (s) =>
        s.compareAndSet("tokens x", Option.none(), value("secret")))
      yield* write.pipe(Effect.provide(layer))
      assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)
      assert.strictEqual(fs.statSync(path.dirname(file)).mode & 0o777, 0o700)
      assert.deepStrictEqual(fs.readdirSync(path.dirname(file)), ["tokens.json"])
      assert.deepStrictEqual(yield* read("tokens x").pipe(Effect.provide(layer)), Option.some("secret"))
    }))

  it.effect("a file readable by others is narrowed to 0600 when read", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, JSON.stringify({ version: 1, entries: { a: "b" } }), { mode: 0o644 })
      fs.chmodSync(file, 0o644)
      const layer = TokenStore.layerFileSystem(file).pipe(Layer.provide(NodeServices.layer))
      assert.deepStrictEqual(yield* read("a").pipe(Effect.provide(layer)), Option.some("b"))
      assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)
    }))

  it.effect("a store file that is a symbolic link is refused: its target is neither read, chmod-ed nor replaced", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      fs.mkdirSync(path.dirname(file), { recursive: true })
      const target = path.join(path.dirname(file), "elsewhere.json")
      fs.writeFileSync(target, JSON.stringify({ version: 1, entries: { a: "planted" } }), { mode: 0o644 })
      fs.chmodSync(target, 0o644)
      fs.symlinkSync(target, file)
      const layer = TokenStore.layerFileSystem(file).pipe(Layer.provide(NodeServices.layer))
      const error = yield* read("a").pipe(Effect.provide(layer), Effect.flip)
      assert.strictEqual(error._tag, "TokenStoreError")
      assert.include(error.message, "symbolic link")
      const writeError = yield* Effect.flatMap(TokenStore.TokenStore, (s) =>
        s.compareAndSet("k", Option.none(), value("v"))).pipe(Effect.provide(layer), Effect.flip)
      assert.strictEqual(writeError._tag, "TokenStoreError")
      assert.strictEqual(fs.statSync(target).mode & 0o777, 0o644, "the target's mode is untouched")
      assert.isTrue(fs.lstatSync(file).isSymbolicLink(), "the link is not replaced")
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(target, "utf8")).entries, { a: "planted" })
    }))

  it.effect("a file that is not a token store fails with TokenStoreError, without its content", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, "secret-looking garbage", { mode: 0o600 })
      const layer = TokenStore.layerFileSystem(file).pipe(Layer.provide(NodeServices.layer))
      const error = yield* read("a").pipe(Effect.provide(layer), Effect.flip)
      assert.strictEqual(error._tag, "TokenStoreError")
      assert.notInclude(error.message, "garbage")
    }))
})

const tsxLoader = Url.pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href
const worker = Url.fileURLToPath(new URL("./fixtures/tokenStore/worker.ts", import.meta.url))

/** Runs one worker process to its end; fails the test if it exits with an error. */
const runWorker = (file: string, count: number) =>
  Effect.callback<void, Error>((resume) => {
    const child = ChildProcess.spawn(process.execPath, ["--import", tsxLoader, worker, file, "counter", String(count)], {
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.on("exit", (code) =>
      resume(code === 0 ? Effect.void : Effect.fail(new Error(`worker exited with ${code}: ${stderr}`)))
    )
    return Effect.sync(() => child.kill())
  })

// (these tests assert no lost increment and no lock left, never a duration: their limits are safety nets for four
// tsx workers starting and contending on a loaded machine, where 60 s ran out in a whole-suite run)
describe("TokenStore.layerFileSystem across processes", () => {
  it.live("four processes incrementing one entry by compare-and-set lose no increment", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      yield* Effect.all(Array.from({ length: 4 }, () => runWorker(file, 25)), { concurrency: "unbounded" })
      const layer = TokenStore.layerFileSystem(file).pipe(Layer.provide(NodeServices.layer))
      assert.deepStrictEqual(yield* read("counter").pipe(Effect.provide(layer)), Option.some("100"))
      assert.isFalse(fs.existsSync(`${file}.lock`), "the lock file is gone")
    }).pipe(Effect.scoped), 180_000)

  it.live("a lock file left by a crashed process is cleared once stale", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(`${file}.lock`, "0\n")
      const minuteAgo = new Date(Date.now() - 60_000)
      fs.utimesSync(`${file}.lock`, minuteAgo, minuteAgo)
      const layer = TokenStore.layerFileSystem(file).pipe(Layer.provide(NodeServices.layer))
      const written = yield* Effect.flatMap(TokenStore.TokenStore, (s) =>
        s.compareAndSet("k", Option.none(), value("v"))).pipe(Effect.provide(layer))
      assert.isTrue(written)
      assert.isFalse(fs.existsSync(`${file}.lock`))
    }).pipe(Effect.scoped))

  it.live("processes racing to clear one stale lock never run their compare-and-sets at once", () =>
    Effect.gen(function*() {
      // each round: a stale lock, then four processes incrementing; were one to remove a lock another had just
      // taken (check, then act), two would read the same value and an increment would be lost
      const file = yield* tempFile
      fs.mkdirSync(path.dirname(file), { recursive: true })
      for (let round = 1; round <= 1; round++) {
        fs.writeFileSync(`${file}.lock`, "0 crashed\n")
        const minuteAgo = new Date(Date.now() - 60_000)
        fs.utimesSync(`${file}.lock`, minuteAgo, minuteAgo)
        yield* Effect.all(Array.from({ length: 4 }, () => runWorker(file, 5)), { concurrency: "unbounded" })
        const layer = TokenStore.layerFileSystem(file).pipe(Layer.provide(NodeServices.layer))
        assert.deepStrictEqual(yield* read("counter").pipe(Effect.provide(layer)), Option.some(String(round * 20)))
      }
      assert.deepStrictEqual(fs.readdirSync(path.dirname(file)), ["tokens.json"], "no lock or stale copy is left")
    }).pipe(Effect.scoped), 180_000)

  it.effect("a lock held by a live process makes compare-and-set give up after 5 s with a typed error", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(`${file}.lock`, `${Date.now()}\n`)
      const layer = TokenStore.layerFileSystem(file).pipe(Layer.provide(NodeServices.layer))
      const attempt = yield* Effect.forkChild(
        Effect.flatMap(TokenStore.TokenStore, (s) => s.compareAndSet("k", Option.none(), value("v"))).pipe(
          Effect.provide(layer),
          Effect.flip
        )
      )
      // the retries sleep on the TestClock between real file-system calls: move time while letting I/O run
      for (let i = 0; i < 20_000 && attempt.pollUnsafe() === undefined; i++) {
        yield* TestClock.adjust("10 millis")
        yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      }
      const error = yield* Fiber.join(attempt)
      assert.strictEqual(error._tag, "TokenStoreError")
      assert.include(error.message, "held by another process")
      assert.isAtLeast(yield* Clock.currentTimeMillis, 5_000)
      assert.isTrue(fs.existsSync(`${file}.lock`), "another process's lock is left alone")
      assert.isFalse(fs.existsSync(file), "nothing was written")
    }))
})

describe("stored credentials", () => {
  it("StoredTokens and StoredClient keep their secrets through JSON (never written as a placeholder)", () => {
    const Tokens = Schema.fromJsonString(TokenStore.StoredTokens)
    const text = Schema.encodeSync(Tokens)({
      issuer: "https://as.example",
      resource: "https://mcp.example",
      accessToken: Redacted.make("access-1"),
      tokenType: "DPoP",
      refreshToken: Redacted.make("refresh-1"),
      dpopKey: Redacted.make("{\"kty\":\"EC\"}")
    })
    const json = JSON.parse(text)
    assert.strictEqual(json.accessToken, "access-1")
    assert.strictEqual(json.refreshToken, "refresh-1")
    const tokens = Schema.decodeUnknownSync(Tokens)(text)
    assert.isTrue(Redacted.isRedacted(tokens.accessToken))
    assert.strictEqual(Redacted.value(tokens.accessToken), "access-1")
    assert.strictEqual(tokens.refreshToken === undefined ? undefined : Redacted.value(tokens.refreshToken), "refresh-1")
    assert.notInclude(String(tokens.accessToken), "access-1")
    const Client = Schema.fromJsonString(TokenStore.StoredClient)
    const client = Schema.decodeUnknownSync(Client)(Schema.encodeSync(Client)({
      issuer: "https://as.example",
      clientId: "c",
      clientSecret: Redacted.make("s3cret"),
      authMethod: "client_secret_basic",
      source: "dynamic"
    }))
    assert.strictEqual(client.clientSecret === undefined ? undefined : Redacted.value(client.clientSecret), "s3cret")
  })
})
