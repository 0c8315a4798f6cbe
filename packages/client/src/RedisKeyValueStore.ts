/**
 * A `KeyValueStore` kept in Redis, so that a fleet of clients can share the result cache's public entries.
 * It speaks RESP2 over an @effect/platform `Socket`; the application provides the socket layer (on Node,
 * `NodeSocket.layerNet`). The connection is reopened with backoff when it drops, and every command is bounded
 * by `commandTimeout`, so a Redis outage turns into store errors (cache misses), never into hung requests.
 *
 * @example
 * ```ts
 * import { RedisKeyValueStore, ResultCache } from "@conduit-mcp/client"
 * import { NodeSocket } from "@effect/platform-node"
 * import { Layer } from "effect"
 *
 * const SharedCache = ResultCache.layerKeyValueStore().pipe(
 *   Layer.provide(RedisKeyValueStore.layer({ keyPrefix: "mcp:" })),
 *   Layer.provide(NodeSocket.layerNet({ host: "127.0.0.1", port: 6379 }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as KeyValueStore from "@effect/platform/KeyValueStore"
import type * as Socket from "@effect/platform/Socket"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/resultCacheRedis.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface RedisOptions {
  /** Prefix of every key in Redis (default `conduit:`); `clear` and `size` only see keys under it. */
  readonly keyPrefix?: string | undefined
  /** Database number, selected on every connection. */
  readonly database?: number | undefined
  /** ACL user name, sent with the password. */
  readonly username?: string | undefined
  readonly password?: Redacted.Redacted | undefined
  /** How long one command may wait for its reply, including a reconnection (default 2 seconds). */
  readonly commandTimeout?: Duration.DurationInput | undefined
}

/**
 * Builds the store over the `Socket` in context. The connection is owned by the Scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options?: RedisOptions | undefined
) => Effect.Effect<KeyValueStore.KeyValueStore, never, Socket.Socket | Scope.Scope> = internal.make

/**
 * Provides `KeyValueStore` from Redis.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options?: RedisOptions | undefined
): Layer.Layer<KeyValueStore.KeyValueStore, never, Socket.Socket> =>
  Layer.scoped(KeyValueStore.KeyValueStore, make(options))
