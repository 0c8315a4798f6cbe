/**
 * Where OAuth credentials live: access and refresh tokens keyed by (authorization server issuer, resource),
 * and client registrations keyed by issuer. Values are opaque `Redacted` strings; updates go through
 * compare-and-set so a rotated refresh token is stored atomically.
 *
 * @example
 * ```ts
 * import { TokenStore } from "@conduit-mcp/client"
 * import { NodeServices } from "@effect/platform-node"
 * import { Layer } from "effect"
 *
 * // a JSON file readable only by its owner (mode 0600)
 * const Store = TokenStore.layerFileSystem("/home/me/.config/my-app/tokens.json").pipe(
 *   Layer.provide(NodeServices.layer)
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"

/**
 * The store could not be read or written. Never carries a stored value.
 *
 * @since 0.1.0
 * @category errors
 */
export class TokenStoreError extends Schema.TaggedError<TokenStoreError>("@conduit-mcp/client/TokenStoreError")(
  "TokenStoreError",
  {
    operation: Schema.Literals(["get", "set"]),
    detail: Schema.String
  }
) {
  override get message(): string {
    return `token store ${this.operation} failed: ${this.detail}`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface TokenStoreShape {
  readonly get: (key: string) => Effect.Effect<Option.Option<Redacted.Redacted<string>>, TokenStoreError>
  /**
   * Replaces the value of `key` with `next` (or removes it for `None`) only if the current value equals
   * `expected` (`None`: absent). Returns whether the write happened.
   */
  readonly compareAndSet: (
    key: string,
    expected: Option.Option<Redacted.Redacted<string>>,
    next: Option.Option<Redacted.Redacted<string>>
  ) => Effect.Effect<boolean, TokenStoreError>
}

/**
 * The token store service.
 *
 * @since 0.1.0
 * @category tags
 */
export class TokenStore extends Context.Service<TokenStore, TokenStoreShape>()("@conduit-mcp/client/TokenStore") {}

const sameValue = (
  a: Option.Option<Redacted.Redacted<string>>,
  b: Option.Option<Redacted.Redacted<string>>
): boolean =>
  Option.isNone(a) ? Option.isNone(b) : Option.isSome(b) && Redacted.value(a.value) === Redacted.value(b.value)

/**
 * Builds a store from a map held elsewhere: `load` reads all entries, `save` writes them all. Writes are
 * serialised in this process, which makes compare-and-set atomic here; `exclusive`, when given, wraps each
 * read-compare-write in a lock shared with other processes (the file store's lock file).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFromSnapshot = (options: {
  readonly load: Effect.Effect<ReadonlyMap<string, string>, TokenStoreError>
  readonly save: (entries: ReadonlyMap<string, string>) => Effect.Effect<void, TokenStoreError>
  readonly exclusive?:
    | (<A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E | TokenStoreError>)
    | undefined
}): Effect.Effect<TokenStoreShape> =>
  Effect.map(Semaphore.make(1), (lock) => {
    const exclusive = options.exclusive ?? ((effect) => effect)
    return {
      get: (key) =>
        Effect.map(options.load, (entries) => Option.map(Option.fromUndefinedOr(entries.get(key)), Redacted.make)),
      compareAndSet: (key, expected, next) =>
        lock.withPermits(1)(exclusive(Effect.gen(function*() {
          const entries = new Map(yield* options.load)
          const current = Option.map(Option.fromUndefinedOr(entries.get(key)), Redacted.make)
          if (!sameValue(current, expected)) return false
          if (Option.isSome(next)) entries.set(key, Redacted.value(next.value))
          else entries.delete(key)
          yield* options.save(entries)
          return true
        })))
    }
  })

/**
 * An in-memory store, lost when the layer is released.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<TokenStoreShape> = Effect.flatMap(
  Ref.make<ReadonlyMap<string, string>>(new Map()),
  (ref) => makeFromSnapshot({ load: Ref.get(ref), save: (entries) => Ref.set(ref, entries) })
)

/**
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<TokenStore> = Layer.effect(TokenStore, makeMemory)

/**
 * A store over any `KeyValueStore` (one entry per key, under a prefix). Compare-and-set is atomic within
 * this process.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerKeyValueStore = (options?: {
  readonly prefix?: string | undefined
}): Layer.Layer<TokenStore, never, KeyValueStore.KeyValueStore> =>
  Layer.effect(
    TokenStore,
    Effect.gen(function*() {
      const store = KeyValueStore.prefix(yield* KeyValueStore.KeyValueStore, options?.prefix ?? "conduit-oauth:")
      const lock = yield* Semaphore.make(1)
      const read = (key: string) =>
        store.get(key).pipe(
          Effect.map((value) => Option.map(Option.fromUndefinedOr(value), Redacted.make)),
          Effect.mapError((e) => new TokenStoreError({ operation: "get", detail: e.message }))
        )
      return TokenStore.of({
        get: read,
        compareAndSet: (key, expected, next) =>
          lock.withPermits(1)(Effect.gen(function*() {
            const current = yield* read(key)
            if (!sameValue(current, expected)) return false
            yield* (Option.isSome(next) ? store.set(key, Redacted.value(next.value)) : store.remove(key)).pipe(
              Effect.mapError((e) => new TokenStoreError({ operation: "set", detail: e.message }))
            )
            return true
          }))
      })
    })
  )

const FileContents = Schema.fromJsonString(Schema.Struct({
  version: Schema.Literal(1),
  entries: Schema.Record(Schema.String, Schema.String)
}))
const decodeFile = Schema.decodeEffect(FileContents)
const encodeFile = Schema.encodeEffect(FileContents)

/** How long a lock file may live before it is taken for the leftover of a crashed process. */
const staleLockMillis = 10_000

/**
 * A store in one JSON file, created with mode 0600 (its directory with 0700) and replaced atomically on each
 * write (temporary file created exclusively, then rename). A file whose mode lets others read it is narrowed to
 * 0600 when read. A store file that is a symbolic link is refused (`TokenStoreError`), never followed: its
 * target would be read as the store, have its mode changed, and be replaced. Compare-and-set is atomic across
 * processes too: each one holds `<file>.lock` (created exclusively, holding a unique token) while it reads,
 * compares and writes; a process that finds the lock taken retries for up to 5 s, and a lock older than 10 s (its
 * holder crashed) is moved aside and removed only if it is still the lock judged stale (two processes clearing
 * the same stale lock cannot remove each other's fresh one). A process removes only a lock holding its token.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFileSystem = (file: string): Layer.Layer<TokenStore, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(
    TokenStore,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const failed = (operation: "get" | "set") => (e: { readonly message: string }) =>
        new TokenStoreError({ operation, detail: e.message })
      // readLink succeeds only on a symbolic link (the platform has no lstat)
      const isLink = (target: string) => fs.readLink(target).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
      const refuseLink = (operation: "get" | "set") =>
        Effect.flatMap(isLink(file), (link) =>
          link
            ? Effect.fail(new TokenStoreError({ operation, detail: `${file} is a symbolic link: refused` }))
            : Effect.void)
      const load = Effect.gen(function*() {
        yield* refuseLink("get")
        if (!(yield* fs.exists(file))) return new Map<string, string>()
        const info = yield* fs.stat(file)
        if ((info.mode & 0o077) !== 0) yield* fs.chmod(file, 0o600)
        const text = yield* fs.readFileString(file)
        const decoded = yield* decodeFile(text).pipe(
          Effect.mapError(() => new TokenStoreError({ operation: "get", detail: `${file} is not a token store file` }))
        )
        return new Map(Object.entries(decoded.entries))
      }).pipe(Effect.catchTag("PlatformError", failed("get")))
      const save = (entries: ReadonlyMap<string, string>): Effect.Effect<void, TokenStoreError> =>
        Effect.gen(function*() {
          yield* refuseLink("set")
          const directory = path.dirname(file)
          if (!(yield* fs.exists(directory))) yield* fs.makeDirectory(directory, { recursive: true, mode: 0o700 })
          const temporary = `${file}.${Math.random().toString(36).slice(2)}.tmp`
          const text = yield* encodeFile({ version: 1, entries: Object.fromEntries(entries) }).pipe(
            Effect.orDie
          )
          // exclusive: never written through a link planted at the temporary name
          yield* fs.writeFileString(temporary, text, { flag: "wx", mode: 0o600 })
          yield* fs.chmod(temporary, 0o600)
          yield* fs.rename(temporary, file)
        }).pipe(Effect.catchTag("PlatformError", failed("set")))
      const lockFile = `${file}.lock`
      const busy = new TokenStoreError({ operation: "set", detail: `${lockFile} is held by another process` })
      const unique = () => `${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`
      const readLock = (target: string) => Effect.option(fs.readFileString(target))
      /**
       * Takes the lock file once, returning the token written in it: fails with `busy` when another process holds
       * it (after clearing a stale one).
       */
      const takeLock = Effect.gen(function*() {
        const directory = path.dirname(file)
        if (!(yield* fs.exists(directory))) yield* fs.makeDirectory(directory, { recursive: true, mode: 0o700 })
        const token = `${yield* Clock.currentTimeMillis} ${unique()}\n`
        const taken = yield* fs.writeFileString(lockFile, token, { flag: "wx", mode: 0o600 }).pipe(
          Effect.as(true),
          Effect.catchIf((e) => e.reason._tag === "AlreadyExists", () => Effect.succeed(false))
        )
        if (taken) return token
        const seen = yield* readLock(lockFile)
        const info = yield* fs.stat(lockFile).pipe(Effect.option)
        const now = yield* Clock.currentTimeMillis
        const stale = Option.isSome(seen) && Option.isSome(info) && Option.isSome(info.value.mtime) &&
          now - info.value.mtime.value.getTime() > staleLockMillis
        if (stale) {
          // rename is atomic: whatever lock is at the path now is moved aside, and removed only if it is the stale
          // one judged above; a fresh lock another process took meanwhile is linked back (link fails, harmlessly,
          // if yet another lock was taken)
          const aside = `${lockFile}.${unique()}.stale`
          const moved = yield* fs.rename(lockFile, aside).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
          if (moved) {
            const content = yield* readLock(aside)
            if (!Option.isSome(content) || content.value !== seen.value) yield* Effect.ignore(fs.link(aside, lockFile))
            yield* Effect.ignore(fs.remove(aside))
          }
        }
        return yield* busy
      }).pipe(Effect.catchTag("PlatformError", failed("set")))
      // removes the lock only while it is still this process's (it may have been judged stale and taken over)
      const releaseLock = (token: string) =>
        Effect.flatMap(readLock(lockFile), (content) =>
          Option.isSome(content) && content.value === token ? Effect.ignore(fs.remove(lockFile)) : Effect.void)
      const exclusive = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | TokenStoreError> =>
        Effect.acquireUseRelease(
          Effect.retry(takeLock, {
            schedule: Schedule.max([Schedule.spaced("10 millis"), Schedule.recurs(500)]),
            while: (e) => e === busy
          }),
          () => effect,
          releaseLock
        )
      return TokenStore.of(yield* makeFromSnapshot({ load, save, exclusive }))
    })
  )

/**
 * The access token of one (issuer, resource), with what the client needs to use and renew it.
 *
 * @since 0.1.0
 * @category models
 */
export const StoredTokens = Schema.Struct({
  issuer: Schema.String,
  resource: Schema.String,
  accessToken: Schema.RedactedFromValue(Schema.String),
  tokenType: Schema.Literals(["Bearer", "DPoP"]),
  refreshToken: Schema.optional(Schema.RedactedFromValue(Schema.String)),
  /** Epoch milliseconds (Effect Clock) after which the access token is considered expired. */
  expiresAt: Schema.optional(Schema.Number),
  /** The scopes requested or granted, space separated. */
  scope: Schema.optional(Schema.String),
  /** The private JWK of the DPoP key the tokens are bound to. */
  dpopKey: Schema.optional(Schema.RedactedFromValue(Schema.String))
})

/**
 * @since 0.1.0
 * @category models
 */
export type StoredTokens = typeof StoredTokens.Type

/**
 * A client identity at one authorization server.
 *
 * @since 0.1.0
 * @category models
 */
export const StoredClient = Schema.Struct({
  issuer: Schema.String,
  clientId: Schema.String,
  clientSecret: Schema.optional(Schema.RedactedFromValue(Schema.String)),
  /** `client_secret_basic`, `client_secret_post`, `none` or `private_key_jwt`. */
  authMethod: Schema.String,
  redirectUris: Schema.optional(Schema.Array(Schema.String)),
  source: Schema.Literals(["preregistered", "metadata-document", "dynamic"])
})

/**
 * @since 0.1.0
 * @category models
 */
export type StoredClient = typeof StoredClient.Type

/**
 * The key of the tokens for one (issuer, resource).
 *
 * @since 0.1.0
 * @category keys
 */
export const tokensKey = (issuer: string, resource: string): string => `tokens ${issuer} ${resource}`

/**
 * The key of the client registration at one issuer.
 *
 * @since 0.1.0
 * @category keys
 */
export const clientKey = (issuer: string): string => `client ${issuer}`

/**
 * The key recording which issuer an issuer-less pre-registered client id was first used with.
 *
 * @since 0.1.0
 * @category keys
 */
export const bindingKey = (clientId: string): string => `binding ${clientId}`

/**
 * The key naming the issuer whose tokens are in use for a resource (it changes when the server moves to
 * another authorization server).
 *
 * @since 0.1.0
 * @category keys
 */
export const activeIssuerKey = (resource: string): string => `active ${resource}`
