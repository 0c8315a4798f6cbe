/**
 * A `KeyValueStore` kept in Redis, so that a fleet of Conduit clients can share the result cache's public entries.
 * It runs on [ioredis](https://github.com/redis/ioredis): give it ioredis's connection options (host and port or a
 * URL, TLS, an ACL user, a database, sentinels, or the nodes of a cluster) and the store owns the connection, or
 * give it a `Redis` or `Cluster` client the application already has.
 *
 * Keys live under a prefix (`conduit:` by default); `clear` and `size` only see keys under it. Every command is
 * bounded by `commandTimeout`, so a Redis outage turns into store errors (which the result cache counts as misses),
 * never into hung requests. Errors, logs and spans carry neither passwords nor stored values.
 *
 * @example
 * ```ts
 * import { ResultCache } from "@conduit-mcp/client"
 * import { RedisKeyValueStore } from "@conduit-mcp/redis"
 * import { Layer, Redacted } from "effect"
 *
 * const SharedCache = ResultCache.layerKeyValueStore().pipe(
 *   Layer.provide(RedisKeyValueStore.layer({
 *     host: "redis.internal",
 *     port: 6380,
 *     tls: {},
 *     username: "conduit",
 *     password: Redacted.make("..."),
 *     keyPrefix: "mcp:"
 *   }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as KeyValueStore from "@effect/platform/KeyValueStore"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from "ioredis"
import * as internal from "./internal/redisKeyValueStore.js"

/**
 * What the store itself adds, whoever owns the connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoreOptions {
  /** Prefix of every key in Redis (default `conduit:`); `clear` and `size` only see keys under it. */
  readonly keyPrefix?: string | undefined
  /**
   * How long one command may take, waiting for a connection included (default 2 seconds). For a connection the
   * store opens, it is also ioredis's `commandTimeout`, and building the layer waits at most this long for Redis.
   */
  readonly commandTimeout?: Duration.DurationInput | undefined
}

/**
 * ioredis options the store sets itself (`keyPrefix`, `commandTimeout`, `lazyConnect`) or takes as `Redacted`
 * (`password`, `sentinelPassword`) are not taken as ioredis spells them.
 *
 * @since 0.1.0
 * @category models
 */
export type NodeOptions = Omit<
  RedisOptions,
  "keyPrefix" | "commandTimeout" | "lazyConnect" | "password" | "sentinelPassword"
>

/**
 * A connection the store opens: one Redis server (`host`/`port`, `path` or `url`), or a master found through
 * `sentinels` and `name`. Every other ioredis option (`tls`, `username`, `db`, `connectTimeout`,
 * `retryStrategy`, …) is passed on as is.
 *
 * Unless the options say otherwise, the store's connection does not queue commands while it is disconnected
 * (`enableOfflineQueue: false`) and does not resend commands that were in flight when it dropped
 * (`maxRetriesPerRequest: 0`): during an outage a lookup fails at once and the cache fetches from the server,
 * and no write that its caller gave up on reaches Redis later. ioredis reconnects with its `retryStrategy`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectionOptions extends StoreOptions, NodeOptions {
  /** `redis://` or `rediss://` (TLS) URL; pass it `Redacted` when it carries a password. */
  readonly url?: string | Redacted.Redacted<string> | undefined
  /** Password of `username` (or of the `default` user). */
  readonly password?: Redacted.Redacted | undefined
  /** Password for the sentinels, when they require one. */
  readonly sentinelPassword?: Redacted.Redacted | undefined
  readonly nodes?: undefined
}

/**
 * A Redis Cluster the store connects to: some of its nodes (the rest are discovered) and ioredis's cluster
 * options; `redisOptions` applies to the connection to every node (`tls`, `username`, `password`, …).
 *
 * Unless the options say otherwise, commands are not queued while the cluster is not ready
 * (`enableOfflineQueue: false`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ClusterConnectionOptions extends StoreOptions, Omit<ClusterOptions, "keyPrefix" | "redisOptions"> {
  readonly nodes: ReadonlyArray<ClusterNode>
  readonly redisOptions?: ClusterNodeOptions | undefined
}

/**
 * The options of the connection to each node of a cluster (ioredis's `redisOptions`, with the password `Redacted`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ClusterNodeOptions extends
  Omit<
    NonNullable<ClusterOptions["redisOptions"]>,
    "keyPrefix" | "commandTimeout" | "lazyConnect" | "password" | "sentinelPassword"
  >
{
  readonly password?: Redacted.Redacted | undefined
}

/**
 * Opens a connection (to one server, through sentinels, or to a cluster) and builds the store over it. The
 * connection belongs to the Scope. Building never fails: it waits at most `commandTimeout` for Redis, and while
 * Redis cannot be reached every command fails.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options?: ConnectionOptions | ClusterConnectionOptions | undefined
) => Effect.Effect<KeyValueStore.KeyValueStore, never, Scope.Scope> = internal.make

/**
 * Builds the store over a client the application already has. The application keeps owning it: the store does not
 * close it, does not listen to its events, and works with its settings (its offline queue, retries, reconnection).
 * Should the client have its own ioredis `keyPrefix`, the store's keys go under both.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromClient: (
  client: Redis | Cluster,
  options?: StoreOptions | undefined
) => KeyValueStore.KeyValueStore = internal.fromClient

/**
 * Provides `KeyValueStore` from a Redis connection the layer opens and closes.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options?: ConnectionOptions | ClusterConnectionOptions | undefined
): Layer.Layer<KeyValueStore.KeyValueStore> => Layer.scoped(KeyValueStore.KeyValueStore, make(options))

/**
 * Provides `KeyValueStore` over a client the application already has (and closes itself).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (
  client: Redis | Cluster,
  options?: StoreOptions | undefined
): Layer.Layer<KeyValueStore.KeyValueStore> =>
  Layer.sync(KeyValueStore.KeyValueStore, () => fromClient(client, options))
