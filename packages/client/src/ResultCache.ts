/**
 * The result cache of the 2026-07-28 caching rules: complete results of `server/discover`, `tools/list`,
 * `prompts/list`, `resources/list`, `resources/templates/list` and `resources/read` are kept for `ttlMs` in a
 * partition chosen by `cacheScope` (`public` shared by every credential, `private` by one credential only; a
 * missing scope is private), dropped by the matching notifications, and identical concurrent requests share one
 * run. Entries live in a `KeyValueStore`: in memory by default, in a directory, or in Redis for a fleet of
 * clients that share public entries (`RedisKeyValueStore` in the `@conduit-mcp/redis` package).
 *
 * The cache never fails: a store that cannot be read or written is logged and counts as a miss.
 *
 * @example
 * ```ts
 * import { ResultCache } from "@conduit-mcp/client"
 * import { Effect } from "effect"
 *
 * const key = { server: "https://mcp.example.com/mcp", method: "tools/list", credential: "a1b2c3d4" }
 * const program = Effect.gen(function*() {
 *   const cache = yield* ResultCache.ResultCache
 *   // `fetch` is the request to the server; its raw result carries `ttlMs` and `cacheScope`
 *   const fetch = Effect.succeed({ tools: [], ttlMs: 60_000, cacheScope: "public" })
 *   return yield* cache.cached(key, fetch)
 * }).pipe(Effect.provide(ResultCache.layerMemory()))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Path from "effect/Path"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import type * as PlatformError from "effect/PlatformError"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/resultCache.js"
import * as keys from "./internal/resultCacheKey.js"

/**
 * The methods whose results may be cached.
 *
 * @since 0.1.0
 * @category models
 */
export type CacheableMethod =
  | "server/discover"
  | "tools/list"
  | "prompts/list"
  | "resources/list"
  | "resources/templates/list"
  | "resources/read"

/**
 * @since 0.1.0
 * @category guards
 */
export const isCacheableMethod = (method: string): method is CacheableMethod => keys.cacheableMethods.has(method)

/**
 * The longest `resources/read` URI whose result is cached (8,192 UTF-16 code units). A longer URI is read from the
 * server every time (its span's `mcp.cache` is `bypass`), so what a server lists cannot make keys costly.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxUriLength: number = keys.maxUriLength

/**
 * The most invalidation scopes a cached `resources/read` URI may have (32): the URI itself and each of its
 * prefixes ending before a run of `/` (`file:///a/b/c.txt` has 4: `file:`, `file:///a`, `file:///a/b` and the
 * URI). A deeper URI is read from the server every time. Keys cost one pass over the URI: each character is hashed
 * once, and a read looks up at most this many scopes.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxUriScopes: number = keys.maxUriScopes

/**
 * Identifies one cached request.
 *
 * Two requests share an entry only when every field matches: the server identity (the transport's `target`:
 * the stdio command line or the HTTP URL), the method, and the parameters that can change the result
 * (everything but `_meta`, compared as canonical JSON, so key order does not matter). `credential` names the
 * authorization context (a credential id or a token fingerprint, never the token): it selects the private
 * partition, and `undefined` is the anonymous partition. Public entries are visible under every credential.
 * (`McpClient` fills it in: its `credentialId`, the HTTP transport's credentials, a stdio child's identity, or a
 * partition of the client's own.)
 *
 * @since 0.1.0
 * @category models
 */
export interface CacheKey {
  readonly server: string
  readonly method: string
  readonly params?: Readonly<Record<string, unknown>> | undefined
  readonly credential?: string | undefined
}

/**
 * Whether a key names a request the cache handles: a cacheable method that is not an MRTR retry (a request
 * carrying `inputResponses` or `requestState`), and for `resources/read` a URI within {@link maxUriLength} and
 * {@link maxUriScopes}.
 *
 * @since 0.1.0
 * @category guards
 */
export const isCacheableKey: (key: CacheKey) => boolean = internal.isCacheableKey

/**
 * @since 0.1.0
 * @category models
 */
export type CacheScope = "public" | "private"

/**
 * The caching hints of a result, normalized: a missing, negative or non-numeric `ttlMs` is 0 (stale at once),
 * and any `cacheScope` but `"public"` is private.
 *
 * @since 0.1.0
 * @category models
 */
export interface Hints {
  readonly ttlMs: number
  readonly cacheScope: CacheScope
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const normalizeHints: (hints: { readonly ttlMs?: unknown; readonly cacheScope?: unknown }) => Hints =
  internal.normalizeHints

/**
 * The hints of a raw result, or `None` when the result must not be cached: not an object, an
 * `input_required` (or any non-`complete`) result, or a result carrying neither `ttlMs` nor `cacheScope`
 * (a legacy server's result).
 *
 * @since 0.1.0
 * @category constructors
 */
export const hintsOf: (result: unknown) => Option.Option<Hints> = internal.hintsOf

/**
 * One cached result. `storedAt` is the Effect `Clock` time it was received; it is fresh while
 * `now < storedAt + ttlMs`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly result: unknown
  readonly storedAt: number
  readonly ttlMs: number
  readonly cacheScope: CacheScope
}

/**
 * What the invalidation markers said when a lookup ran. Passing it back to `store` keeps a result fetched
 * before an invalidation from being stored as current. Opaque.
 *
 * @since 0.1.0
 * @category models
 */
export interface Ticket {
  readonly markers: Option.Option<ReadonlyArray<string | null>>
}

/**
 * The answer of a lookup. A `Stale` entry is expired (or had `ttlMs` 0) but may still be served when the
 * refetch fails.
 *
 * @since 0.1.0
 * @category models
 */
export type Lookup = Data.TaggedEnum<{
  Miss: { readonly ticket: Ticket }
  Fresh: { readonly entry: Entry; readonly ticket: Ticket }
  Stale: { readonly entry: Entry; readonly ticket: Ticket }
}>

/**
 * @since 0.1.0
 * @category constructors
 */
export const Lookup = Data.taggedEnum<Lookup>()

/**
 * What an invalidation drops, in every partition: everything of a server (after a gap in its notifications),
 * every entry of one method (all pages of a list), or `resources/read` of a URI and of every URI under it.
 *
 * @since 0.1.0
 * @category models
 */
export type Selector = Data.TaggedEnum<{
  Server: { readonly server: string }
  Method: { readonly server: string; readonly method: string }
  Resource: { readonly server: string; readonly uri: string }
}>

/**
 * @since 0.1.0
 * @category constructors
 */
export const Selector = Data.taggedEnum<Selector>()

/**
 * The invalidations a server notification calls for: `notifications/tools/list_changed` drops `tools/list`,
 * `notifications/prompts/list_changed` drops `prompts/list`, `notifications/resources/list_changed` drops
 * `resources/list` and `resources/templates/list`, and `notifications/resources/updated` drops
 * `resources/read` of its URI and everything under it. Other notifications call for none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const selectorsForNotification: (
  server: string,
  notification: { readonly method: string; readonly params?: unknown }
) => ReadonlyArray<Selector> = internal.selectorsFor

/**
 * How one call uses the cache: `use` serves a fresh entry or fetches and stores, `refresh` always fetches and
 * stores, `bypass` neither reads nor writes.
 *
 * @since 0.1.0
 * @category models
 */
export type Mode = "use" | "refresh" | "bypass"

/**
 * The mode of the calls in its scope (default `use`).
 *
 * @since 0.1.0
 * @category references
 */
export const CurrentMode: Context.Reference<Mode> = Context.Reference<Mode>(
  "@conduit-mcp/client/ResultCache/CurrentMode",
  { defaultValue: () => "use" }
)

/**
 * Runs an effect with a cache mode for every call inside it.
 *
 * @since 0.1.0
 * @category combinators
 */
export const withMode: {
  (mode: Mode): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, mode: Mode): Effect.Effect<A, E, R>
} = dual(2, <A, E, R>(self: Effect.Effect<A, E, R>, mode: Mode) => Effect.provideService(self, CurrentMode, mode))

/**
 * @since 0.1.0
 * @category models
 */
export interface CachedOptions<E> {
  /** Overrides the ambient {@link CurrentMode}. */
  readonly mode?: Mode | undefined
  /**
   * When the fetch fails with an error this accepts (`true`: any error), a stale entry is returned instead.
   * Default: never.
   */
  readonly serveStaleOnError?: boolean | ((error: E) => boolean) | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ResultCacheShape {
  /**
   * The entry for a key: the fresher of its private entry (this credential) and its public entry. Entries
   * dropped by an invalidation, and entries expired for longer than `keepStale`, are removed here and reported
   * as a miss.
   */
  readonly lookup: (key: CacheKey) => Effect.Effect<Lookup>
  /**
   * Stores a result under the partition its hints choose. Does nothing (and returns `false`) for a key that is
   * not cacheable, an `input_required` result, or a ticket taken before an invalidation of this key. Without a
   * ticket, the markers are read now.
   */
  readonly store: (
    key: CacheKey,
    result: unknown,
    hints: { readonly ttlMs?: number | undefined; readonly cacheScope?: string | undefined },
    ticket?: Ticket | undefined
  ) => Effect.Effect<boolean>
  /** Drops what a selector names, in every partition and in every instance sharing the store. */
  readonly invalidate: (selector: Selector) => Effect.Effect<void>
  /** Applies {@link selectorsForNotification}. */
  readonly invalidateForNotification: (
    server: string,
    notification: { readonly method: string; readonly params?: unknown }
  ) => Effect.Effect<void>
  /**
   * Identical concurrent calls (same key, same partition) share one run of `effect`: it runs once, and every
   * caller gets its exit. A caller that is interrupted leaves the run going for the others; the run is
   * interrupted when the last caller leaves. An invalidation detaches the runs it covers, so later callers
   * start a new one.
   */
  readonly coalesce: <A, E, R>(key: CacheKey, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * The whole read path of one call. In `use` mode: a fresh entry is returned without running `fetch`;
   * otherwise concurrent callers share one `fetch`, whose result is stored when its hints allow it (see
   * {@link hintsOf}). In `refresh` mode `fetch` always runs and its result is stored; in `bypass` mode it runs
   * alone. Keys that are not cacheable always run `fetch` directly. Errors are never stored; an `McpError`
   * with code -32602 in answer to a request with a `cursor` drops every page of that list.
   */
  readonly cached: <E, R>(
    key: CacheKey,
    fetch: Effect.Effect<unknown, E, R>,
    options?: CachedOptions<E> | undefined
  ) => Effect.Effect<unknown, E, R>
}

/**
 * The result cache service.
 *
 * @since 0.1.0
 * @category tags
 */
export class ResultCache extends Context.Service<ResultCache, ResultCacheShape>()("@conduit-mcp/client/ResultCache") {}

/**
 * @since 0.1.0
 * @category models
 */
export interface ResultCacheOptions {
  /** Prefix of every key this cache writes in the store (default `conduit-cache:`). */
  readonly prefix?: string | undefined
  /** How long an expired entry is kept to be served when a refetch fails (default 1 hour). */
  readonly keepStale?: Duration.Input | undefined
}

/**
 * Builds a cache over the `KeyValueStore` in context. In-flight runs belong to the Scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options?: ResultCacheOptions | undefined
): Effect.Effect<ResultCacheShape, never, KeyValueStore.KeyValueStore | Scope.Scope> =>
  internal.make(options, CurrentMode)

/**
 * A cache over the `KeyValueStore` the application provides (for example `RedisKeyValueStore.layer` from
 * `@conduit-mcp/redis`, which lets a fleet of clients share public entries).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerKeyValueStore = (
  options?: ResultCacheOptions | undefined
): Layer.Layer<ResultCache, never, KeyValueStore.KeyValueStore> => Layer.effect(ResultCache, make(options))

/**
 * A cache in memory, private to this layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = (options?: ResultCacheOptions | undefined): Layer.Layer<ResultCache> =>
  layerKeyValueStore(options).pipe(Layer.provide(KeyValueStore.layerMemory))

/**
 * A cache in a directory, one file per entry; instances on the same directory share entries.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFileSystem = (
  directory: string,
  options?: ResultCacheOptions | undefined
): Layer.Layer<ResultCache, PlatformError.PlatformError, FileSystem.FileSystem | Path.Path> =>
  layerKeyValueStore(options).pipe(Layer.provide(KeyValueStore.layerFileSystem(directory)))
