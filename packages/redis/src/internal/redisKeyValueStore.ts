/**
 * The Redis `KeyValueStore` over an ioredis client.
 *
 * ioredis errors are never kept as a cause: a reply error carries the command's arguments (`command.args`), which
 * hold stored values and, for AUTH, the password. Only the first line of their message is kept. A failure is a
 * `KeyValueStoreError` whose `cause` is a `PlatformError` the store makes itself (its reason: `TimedOut`,
 * `InvalidData`, `Unknown`, `BadArgument`), with the same text as its message.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as PlatformError from "effect/PlatformError"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { Cluster, Redis } from "ioredis"
import type { ClusterOptions, RedisOptions } from "ioredis"
import { Buffer } from "node:buffer"
import type * as RedisKeyValueStore from "../RedisKeyValueStore.js"
import * as replyLimitConnector from "./replyLimitConnector.js"
import type { ReplyLimits } from "./replyScanner.js"

const defaultTimeout = Duration.seconds(2)
/** Keys per DEL when clearing one server (a cluster takes one key per DEL: keys of a batch may sit in other slots). */
const deleteBatch = 100
const scanCount = 500

/** The store's error: its cause is a `PlatformError` of ours (never an ioredis error), its message the description. */
const storeError = (method: string, key: string | undefined, cause: PlatformError.PlatformError) =>
  new KeyValueStore.KeyValueStoreError({
    method,
    ...(key === undefined ? {} : { key }),
    message: cause.reason.description ?? cause.message,
    cause
  })

const systemError = (
  method: string,
  key: string | undefined,
  reason: PlatformError.SystemErrorTag,
  description: string
) => storeError(method, key, PlatformError.systemError({ _tag: reason, module: "KeyValueStore", method, description }))

// C0 and C1 controls, DEL, and what a terminal draws as nothing or in another order (format characters, the other
// default-ignorable code points, line and paragraph separators): the rule of the client's printable text, kept
// here so that the store depends on no other package
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\p{Cf}\p{DI}\p{Zl}\p{Zp}]/gu

/** Text Redis wrote, each control or invisible character as a visible escape (`\x1b`, `\u202e`). */
const printable = (text: string): string =>
  text.replace(UNPRINTABLE, (char) => {
    const code = char.codePointAt(0)!
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : code <= 0xffff
      ? `\\u${code.toString(16).padStart(4, "0")}`
      : `\\u{${code.toString(16)}}`
  })

/**
 * The first line of a client error's message, bounded and escaped (a Redis error may quote what a server or a key
 * holds): never the error object itself.
 */
const describeFailure = (error: unknown): string => {
  const message = error instanceof Error ? error.message : "unknown failure"
  // what ioredis says of a command refused while it has no connection (the store's own do not queue)
  if (/enableOfflineQueue options is false/.test(message)) return "Redis: not connected"
  const line = message.split("\n", 1)[0] ?? ""
  return `Redis: ${printable(line.length > 200 ? `${line.slice(0, 200)}…` : line)}`
}

/** @internal */
export const maxReplyDepth = 8
/** @internal */
export const maxReplyElements = 1_000_000
/** @internal */
export const maxReplyLineBytes = 8_192
/** @internal */
export const defaultMaxReplyBytes = 65 * 1024 * 1024

/**
 * The reply bounds of the connections a store opens, and what they refused: a command that fails after a refusal
 * on one of them is described by it (a refused reply closes the connection, which fails the commands in flight
 * with ioredis's closed-connection error).
 */
interface ReplyGuard {
  readonly limits: ReplyLimits
  refusals: number
  lastRefusal: string
}

/** Bytes of the reply that reads back a value of `size` bytes (`$<size>\r\n<value>\r\n`). */
const bulkReplyBytes = (size: number): number => 1 + String(size).length + 2 + size + 2

const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, "\\$&")

const timeoutOf = (options: RedisKeyValueStore.StoreOptions | undefined): Duration.Duration =>
  Duration.fromInputUnsafe(options?.commandTimeout ?? defaultTimeout)

/** @internal */
export const fromClient = (
  client: Redis | Cluster,
  options?: RedisKeyValueStore.StoreOptions | undefined
): KeyValueStore.KeyValueStore => fromGuardedClient(client, options, undefined)

const fromGuardedClient = (
  client: Redis | Cluster,
  options: RedisKeyValueStore.StoreOptions | undefined,
  guard: ReplyGuard | undefined
): KeyValueStore.KeyValueStore => {
  const keyPrefix = options?.keyPrefix ?? "conduit:"
  const timeout = timeoutOf(options)
  // the client's own ioredis prefix is added to key arguments, but neither to SCAN's pattern nor taken off its keys
  const clientPrefix = typeof client.options.keyPrefix === "string" ? client.options.keyPrefix : ""
  const pattern = `${escapeGlob(clientPrefix + keyPrefix)}*`

  const command = <A>(
    method: string,
    key: string | undefined,
    operation: string,
    call: () => Promise<A>
  ): Effect.Effect<A, KeyValueStore.KeyValueStoreError> =>
    Effect.suspend(() => {
      const refusals = guard?.refusals ?? 0
      return Effect.tryPromise({
        try: () => call(),
        catch: (error) =>
          guard !== undefined && guard.refusals !== refusals
            // our own text (a reason, a limit), not the server's
            ? systemError(method, key, "InvalidData", `Redis: refused ${guard.lastRefusal}; the connection was closed`)
            : systemError(
              method,
              key,
              error instanceof Error && error.message === "Command timed out" ? "TimedOut" : "Unknown",
              describeFailure(error)
            )
      })
    }).pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(systemError(method, key, "TimedOut", `Redis did not answer within ${Duration.format(timeout)}`))
      }),
      Effect.withSpan(`RedisKeyValueStore.${method}`, {
        kind: "client",
        attributes: { "db.system.name": "redis", "db.operation.name": operation }
      }, { captureStackTrace: false })
    )

  /** Every key under the prefix on one server, as the client names them (SCAN may repeat keys; the set does not). */
  const scanNode = (method: string, node: Redis, found: Set<string>) =>
    Effect.gen(function*() {
      let cursor = "0"
      do {
        const [next, keys] = yield* command(method, undefined, "SCAN", () => node.scan(cursor, "MATCH", pattern, "COUNT", scanCount))
        for (const key of keys) found.add(key.slice(clientPrefix.length))
        cursor = next
      } while (cursor !== "0")
    })

  /** Every key under the prefix, on every master of a cluster. */
  const scan = (method: string) =>
    Effect.gen(function*() {
      const found = new Set<string>()
      const nodes = client instanceof Cluster ? client.nodes("master") : [client]
      for (const node of nodes) yield* scanNode(method, node, found)
      return [...found]
    })

  const getBuffer = (method: string, key: string) =>
    Effect.map(
      command(method, key, "GET", () => client.getBuffer(keyPrefix + key)),
      // a copy: the reply parser may hand out views of a buffer it reuses
      (value) => (value === null ? undefined : new Uint8Array(value))
    )

  const clear = Effect.flatMap(scan("clear"), (found) =>
    client instanceof Cluster
      ? Effect.forEach(found, (key) => command("clear", undefined, "DEL", () => client.del(key)), {
        concurrency: 16,
        discard: true
      })
      : Effect.forEach(
        Array.from(
          { length: Math.ceil(found.length / deleteBatch) },
          (_, i) => found.slice(i * deleteBatch, (i + 1) * deleteBatch)
        ),
        (batch) => command("clear", undefined, "DEL", () => client.del(...batch)),
        { discard: true }
      ))

  return KeyValueStore.make({
    get: (key) =>
      Effect.map(command("get", key, "GET", () => client.get(keyPrefix + key)), (value) => value ?? undefined),
    getUint8Array: (key) => getBuffer("getUint8Array", key),
    set: (key, value) => {
      // a value whose reply would pass maxReplyBytes could be written but never read back
      const size = typeof value === "string" ? Buffer.byteLength(value) : value.byteLength
      if (guard !== undefined && bulkReplyBytes(size) > guard.limits.maxBytes) {
        return Effect.fail(storeError(
          "set",
          key,
          PlatformError.badArgument({
            module: "KeyValueStore",
            method: "set",
            description: `Redis: a value of ${size} bytes is not stored: reading it back would pass maxReplyBytes (${guard.limits.maxBytes} bytes)`
          })
        ))
      }
      return Effect.asVoid(command("set", key, "SET", () =>
        client.set(
          keyPrefix + key,
          typeof value === "string" ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)
        )))
    },
    remove: (key) => Effect.asVoid(command("remove", key, "DEL", () => client.del(keyPrefix + key))),
    has: (key) => Effect.map(command("has", key, "EXISTS", () => client.exists(keyPrefix + key)), (count) => count > 0),
    clear,
    size: Effect.map(scan("size"), (found) => found.length),
    // the keys as the store's caller names them, without the prefix
    keys: Effect.map(scan("keys"), (found) => found.map((key) => key.slice(keyPrefix.length)))
  })
}

const reveal = (secret: Redacted.Redacted | undefined) =>
  secret === undefined ? {} : { password: Redacted.value(secret) }

/** ioredis options for a connection the store opens: the store's defaults, the caller's options, secrets revealed. */
const redisOptions = (
  options: RedisKeyValueStore.ConnectionOptions,
  timeout: Duration.Duration,
  Connector: NonNullable<RedisOptions["Connector"]>
): RedisOptions => {
  const {
    commandTimeout: _timeout,
    keyPrefix: _prefix,
    maxReplyBytes: _maxReplyBytes,
    nodes: _nodes,
    password,
    sentinelPassword,
    url: _url,
    ...rest
  } = options
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    ...rest,
    ...reveal(password),
    ...(sentinelPassword === undefined ? {} : { sentinelPassword: Redacted.value(sentinelPassword) }),
    commandTimeout: Duration.toMillis(timeout),
    Connector
  }
}

const clusterOptions = (
  options: RedisKeyValueStore.ClusterConnectionOptions,
  timeout: Duration.Duration,
  Connector: NonNullable<RedisOptions["Connector"]>
): ClusterOptions => {
  const {
    commandTimeout: _timeout,
    keyPrefix: _prefix,
    maxReplyBytes: _maxReplyBytes,
    nodes: _nodes,
    redisOptions: node,
    ...rest
  } = options
  const { password, ...nodeRest } = node ?? {}
  return {
    enableOfflineQueue: false,
    ...rest,
    // every connection to a node, and those ioredis makes to ask a node for the slots, go through the connector
    redisOptions: { ...nodeRest, ...reveal(password), commandTimeout: Duration.toMillis(timeout), Connector }
  }
}

const open = (
  options: RedisKeyValueStore.ConnectionOptions | RedisKeyValueStore.ClusterConnectionOptions,
  timeout: Duration.Duration,
  guard: ReplyGuard
): Redis | Cluster => {
  const Connector = replyLimitConnector.make(guard.limits, (reason) => {
    guard.refusals++
    guard.lastRefusal = reason
  })
  if (options.nodes !== undefined) return new Cluster([...options.nodes], clusterOptions(options, timeout, Connector))
  const url = options.url === undefined ? undefined : Redacted.isRedacted(options.url)
    ? Redacted.value(options.url)
    : options.url
  const connection = redisOptions(options, timeout, Connector)
  return url === undefined ? new Redis(connection) : new Redis(url, connection)
}

/** Waits until the client is ready, at most `timeout`. */
const ready = (client: Redis | Cluster, timeout: Duration.Duration) =>
  Effect.callback<void>((resume) => {
    if (client.status === "ready") return resume(Effect.void)
    const onReady = () => resume(Effect.void)
    client.once("ready", onReady)
    return Effect.sync(() => {
      client.off("ready", onReady)
    })
  }).pipe(Effect.timeout(timeout), Effect.ignore)

/** @internal */
export const make = (
  options?: RedisKeyValueStore.ConnectionOptions | RedisKeyValueStore.ClusterConnectionOptions | undefined
): Effect.Effect<KeyValueStore.KeyValueStore, never, Scope.Scope> =>
  Effect.gen(function*() {
    const timeout = timeoutOf(options)
    const maxBytes = options?.maxReplyBytes ?? defaultMaxReplyBytes
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
      return yield* Effect.die(new Error("RedisKeyValueStore: maxReplyBytes must be a positive integer"))
    }
    const guard: ReplyGuard = {
      limits: { maxBytes, maxDepth: maxReplyDepth, maxElements: maxReplyElements, maxLineBytes: maxReplyLineBytes },
      refusals: 0,
      lastRefusal: ""
    }
    const run = yield* FiberSet.makeRuntime<never, void, never>()
    // without a listener ioredis prints its connection errors to the console
    const onError = (error: unknown) => {
      run(Effect.logDebug("Redis connection error", describeFailure(error)).pipe(
        Effect.annotateLogs({ module: "RedisKeyValueStore" })
      ))
    }
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const client = open(options ?? {}, timeout, guard)
        client.on("error", onError)
        return client
      }),
      (client) =>
        Effect.tryPromise(() => client.quit()).pipe(
          Effect.timeout(timeout),
          Effect.ignore,
          // the listener stays: a late error of the closed client is no one's to print
          Effect.ensuring(Effect.sync(() => client.disconnect()))
        )
    )
    yield* ready(client, timeout)
    return fromGuardedClient(client, options, guard)
  })
