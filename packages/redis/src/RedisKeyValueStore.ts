/**
 * A `KeyValueStore` kept in Redis, so that a fleet of Conduit clients can share the result cache's public entries.
 * It runs on [ioredis](https://github.com/redis/ioredis): give it ioredis's connection options (host and port or a
 * URL, TLS, an ACL user, a database, sentinels, or the nodes of a cluster) and the store owns the connection, or
 * give it a `Redis` or `Cluster` client the application already has.
 *
 * Keys live under a prefix (`conduit:` by default); `clear`, `size` and `keys` only see keys under it. Every command
 * is bounded by `commandTimeout`, so a Redis outage turns into store errors (which the result cache counts as misses),
 * never into hung requests. On a connection the store opens, every reply is checked before ioredis parses it
 * (see {@link ReplyLimitOptions}): a server that answers with a reply nested too deep or too large fails the
 * command, it does not crash the process. Errors, logs and spans carry neither passwords nor stored values.
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
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
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
  /** Prefix of every key in Redis (default `conduit:`); `clear`, `size` and `keys` only see keys under it. */
  readonly keyPrefix?: string | undefined
  /**
   * How long one command may take, waiting for a connection included (default 2 seconds). For a connection the
   * store opens, it is also ioredis's `commandTimeout`, and building the layer waits at most this long for Redis.
   */
  readonly commandTimeout?: Duration.Input | undefined
}

/**
 * The most levels of arrays in one reply on a connection the store opens (a top-level array is level 1). The
 * store's values are flat bulk strings; GET, SET, DEL, EXISTS and SCAN answer at most 2 levels deep, and the
 * deepest reply ioredis asks for (CLUSTER SLOTS) 4.
 *
 * @since 0.2.1
 * @category constants
 */
export const maxReplyDepth: number = internal.maxReplyDepth

/**
 * The most array elements in one reply, at every level together, on a connection the store opens. A SCAN page
 * holds some hundred keys (the store asks for 500), and CLUSTER SLOTS of a cluster whose 16,384 slots are all
 * split apart some hundred thousand.
 *
 * @since 0.2.1
 * @category constants
 */
export const maxReplyElements: number = internal.maxReplyElements

/**
 * The longest status or error line (`+OK`, `-ERR …`) in a reply, in bytes, on a connection the store opens.
 *
 * @since 0.2.1
 * @category constants
 */
export const maxReplyLineBytes: number = internal.maxReplyLineBytes

/**
 * The default of `maxReplyBytes`: 65 MiB (68,157,440 bytes).
 *
 * @since 0.2.1
 * @category constants
 */
export const defaultMaxReplyBytes: number = internal.defaultMaxReplyBytes

/**
 * Bounds on the replies of a connection the store opens. Each chunk a connection receives is checked, in one pass
 * and before ioredis's parser sees it, against `maxReplyBytes` and the fixed {@link maxReplyDepth},
 * {@link maxReplyElements} and {@link maxReplyLineBytes}; a bulk string is refused at its header when the length it
 * announces does not fit, an array at its header when its count does not. Only RESP2 is accepted (ioredis never
 * asks for RESP3). A refused reply never reaches the parser: the connection is closed, the commands in flight on
 * it fail with a `KeyValueStoreError` whose cause is a `PlatformError` of reason `InvalidData` (`Redis: refused a
 * reply nested deeper than 8 levels; the connection was closed`), and ioredis reconnects. The replies before it in the same chunk still answer their
 * commands.
 *
 * @since 0.2.1
 * @category models
 */
export interface ReplyLimitOptions {
  /**
   * The largest reply, framing included, in bytes (default 65 MiB, {@link defaultMaxReplyBytes}). A result-cache
   * entry is one result the client accepted (a frame of at most 64 MiB by default, `maxFrameBytes` and
   * `maxEventBytes`) as compact JSON with an envelope of a few hundred bytes; the extra MiB leaves room for numbers
   * JSON writes longer than the server did. Raise it with the client's frame limit. `set` refuses, with
   * a `KeyValueStoreError` whose cause is a `PlatformError` of reason `BadArgument`, a value whose reply would pass it, since it could not be read back. While a reply is read,
   * ioredis holds it and a copy of up to three times its size; the bound is what keeps that finite.
   */
  readonly maxReplyBytes?: number | undefined
}

/**
 * ioredis options the store sets itself (`keyPrefix`, `commandTimeout`, `lazyConnect`, `Connector`) or takes as
 * `Redacted` (`password`, `sentinelPassword`) are not taken as ioredis spells them.
 *
 * @since 0.1.0
 * @category models
 */
export type NodeOptions = Omit<
  RedisOptions,
  "keyPrefix" | "commandTimeout" | "lazyConnect" | "password" | "sentinelPassword" | "Connector"
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
export interface ConnectionOptions extends StoreOptions, ReplyLimitOptions, NodeOptions {
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
export interface ClusterConnectionOptions
  extends StoreOptions, ReplyLimitOptions, Omit<ClusterOptions, "keyPrefix" | "redisOptions">
{
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
    "keyPrefix" | "commandTimeout" | "lazyConnect" | "password" | "sentinelPassword" | "Connector"
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
 * Should the client have its own ioredis `keyPrefix`, the store's keys go under both. Its replies are read as the
 * client reads them: the bounds of {@link ReplyLimitOptions} hold only on connections the store opens.
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
): Layer.Layer<KeyValueStore.KeyValueStore> => Layer.effect(KeyValueStore.KeyValueStore, make(options))

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
