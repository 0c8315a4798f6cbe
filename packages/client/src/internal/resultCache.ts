/**
 * The result cache over a `KeyValueStore`.
 *
 * Layout in the store (under the cache's prefix):
 * - `e:<sha256>`: one entry, JSON `{ version, storedAt, ttlMs, cacheScope, markers, result }`;
 * - `m:<sha256>`: one invalidation marker (a server, a method of a server, or a resource scope: a link of the hash
 *   chain over its URI, see `resultCacheKey.scopeDigests`).
 *
 * The store cannot list keys, so invalidation does not delete entries: it gives the markers it covers a new
 * value. Each entry records the values of its markers when its request started, and a lookup that finds them
 * changed removes the entry. Expired entries are removed the same lazy way, once `keepStale` has passed.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as ResultCache from "../ResultCache.js"
import * as keys from "./resultCacheKey.js"
import { printable } from "./printable.js"
import * as protoKeys from "./protoKeys.js"

const Lookup = Data.taggedEnum<ResultCache.Lookup>()

const StoredEntry = Schema.fromJsonString(Schema.Struct({
  version: Schema.Literal(1),
  storedAt: Schema.Number,
  ttlMs: Schema.Number,
  cacheScope: Schema.Literals(["public", "private"]),
  markers: Schema.Array(Schema.NullOr(Schema.String)),
  result: Schema.Unknown
}))
type StoredEntry = typeof StoredEntry.Type
const decodeEntry = Schema.decodeEffect(StoredEntry)
const encodeEntry = Schema.encodeEffect(StoredEntry)

/** @internal */
export const normalizeHints = (
  hints: { readonly ttlMs?: unknown; readonly cacheScope?: unknown }
): ResultCache.Hints => ({
  ttlMs: typeof hints.ttlMs === "number" && Number.isFinite(hints.ttlMs) && hints.ttlMs > 0 ? hints.ttlMs : 0,
  cacheScope: hints.cacheScope === "public" ? "public" : "private"
})

const isComplete = (result: unknown): result is object => {
  if (typeof result !== "object" || result === null || Array.isArray(result)) return false
  const resultType: unknown = Reflect.get(result, "resultType")
  return resultType === undefined || resultType === "complete"
}

/** @internal */
export const hintsOf = (result: unknown): Option.Option<ResultCache.Hints> => {
  if (!isComplete(result)) return Option.none()
  const ttlMs: unknown = Reflect.get(result, "ttlMs")
  const cacheScope: unknown = Reflect.get(result, "cacheScope")
  if (ttlMs === undefined && cacheScope === undefined) return Option.none() // a legacy result: no hints
  return Option.some(normalizeHints({ ttlMs, cacheScope }))
}

/** @internal */
export const isCacheableKey = (key: ResultCache.CacheKey): boolean =>
  keys.cacheableMethods.has(key.method) && !keys.isRetry(key.params) &&
  (key.method !== "resources/read" || keys.isCacheableUri(key.params?.uri))

const sameMarkers = (a: ReadonlyArray<string | null>, b: ReadonlyArray<string | null>): boolean =>
  a.length === b.length && a.every((value, i) => value === b[i])


const covers = (selector: ResultCache.Selector, key: ResultCache.CacheKey): boolean => {
  if (selector.server !== key.server) return false
  switch (selector._tag) {
    case "Server":
      return true
    case "Method":
      return selector.method === key.method
    case "Resource": {
      const uri = key.params?.uri
      return key.method === "resources/read" && typeof uri === "string" &&
        keys.isWithin(uri, keys.resourceScope(selector.uri))
    }
  }
}

const isInvalidCursor = (key: ResultCache.CacheKey, error: unknown): boolean =>
  key.params?.cursor !== undefined && Predicate.isTagged(error, "McpError") && Predicate.hasProperty(error, "code") &&
  error.code === -32602

interface Flight {
  readonly fiber: Fiber.Fiber<unknown, unknown>
  readonly key: ResultCache.CacheKey
  waiters: number
}

/** @internal */
export const make = (
  options: ResultCache.ResultCacheOptions | undefined,
  currentMode: Effect.Effect<ResultCache.Mode>
): Effect.Effect<ResultCache.ResultCacheShape, never, KeyValueStore.KeyValueStore | Scope.Scope> =>
  Effect.gen(function*() {
    const store = KeyValueStore.prefix(yield* KeyValueStore.KeyValueStore, options?.prefix ?? "conduit-cache:")
    const keepStale = Duration.toMillis(Duration.fromInputUnsafe(options?.keepStale ?? Duration.hours(1)))
    const scope = yield* Effect.scope
    const flights = new Map<string, Flight>()

    const failed = (operation: string) => (error: KeyValueStore.KeyValueStoreError | Schema.SchemaError) =>
      Effect.logWarning(printable(`result cache: ${operation} failed`), printable(error.message)).pipe(
        Effect.annotateLogs({ module: "ResultCache", method: printable(operation) })
      )

    const entryKey = (key: ResultCache.CacheKey, partition: keys.Partition) =>
      Effect.map(keys.digest(keys.entryName(key, partition)), (hash) => `e:${hash}`)
    const markerKey = (marker: keys.Marker) => Effect.map(keys.digest(keys.markerName(marker)), (hash) => `m:${hash}`)
    /** The store names of the markers a key's entries depend on: server, method and, for a read, its URI's scopes. */
    const markerKeys = (key: ResultCache.CacheKey): Effect.Effect<ReadonlyArray<string>> => {
      const named = Effect.forEach(keys.markersOf(key), markerKey)
      const uri = key.params?.uri
      const ends = key.method === "resources/read" && typeof uri === "string" ? keys.scopeEnds(uri) : undefined
      if (ends === undefined) return named
      return Effect.zipWith(
        named,
        keys.scopeDigests(key.server, uri as string, ends),
        (own, scopes) => [...own, ...scopes.map((hash) => `m:${hash}`)]
      )
    }
    /** The store name of the marker an invalidation renews; none for a scope no cached URI can have. */
    const selectorKey = (selector: ResultCache.Selector): Effect.Effect<Option.Option<string>> => {
      switch (selector._tag) {
        case "Server":
          return Effect.asSome(markerKey({ _tag: "Server", server: selector.server }))
        case "Method":
          return Effect.asSome(markerKey({ _tag: "Method", server: selector.server, method: selector.method }))
        case "Resource": {
          const scope = keys.resourceScope(selector.uri)
          const ends = keys.scopeEnds(scope)
          if (ends === undefined) return Effect.succeedNone
          return Effect.map(
            keys.scopeDigests(selector.server, scope, ends),
            (hashes) => Option.some(`m:${hashes[hashes.length - 1]}`)
          )
        }
      }
    }
    const privatePartition = (key: ResultCache.CacheKey): keys.Partition => ({
      _tag: "Private",
      credential: key.credential
    })
    const publicPartition: keys.Partition = { _tag: "Public" }

    /** The current values of the key's markers; `None` when the store could not be read. */
    const readMarkers = (key: ResultCache.CacheKey): Effect.Effect<Option.Option<ReadonlyArray<string | null>>> =>
      Effect.flatMap(markerKeys(key), (names) => Effect.forEach(names, store.get, { concurrency: "unbounded" })).pipe(
        Effect.map((values) => Option.some(values.map((value) => value ?? null))),
        Effect.catch((error) => Effect.as(failed("read markers")(error), Option.none()))
      )

    const remove = (name: string) => Effect.catch(store.remove(name), failed("remove"))

    const readEntry = (name: string): Effect.Effect<Option.Option<StoredEntry>> =>
      store.get(name).pipe(
        Effect.flatMap((text) =>
          text === undefined ? Effect.succeedNone : decodeEntry(text).pipe(
            // a shared store may have been written by something else: its result is made as prototype-safe as
            // a server's frame (see protoKeys)
            Effect.map((stored) => {
              if (protoKeys.mayHold(text)) protoKeys.remove(stored.result)
              return Option.some(stored)
            }),
            // written by something else, or by an older layout: drop it
            Effect.catch(() => Effect.as(remove(name), Option.none<StoredEntry>()))
          )
        ),
        Effect.catch((error) => Effect.as(failed("get")(error), Option.none<StoredEntry>()))
      )

    const toEntry = (stored: StoredEntry): ResultCache.Entry => ({
      result: stored.result,
      storedAt: stored.storedAt,
      ttlMs: stored.ttlMs,
      cacheScope: stored.cacheScope
    })

    const lookup = (key: ResultCache.CacheKey): Effect.Effect<ResultCache.Lookup> =>
      Effect.gen(function*() {
        if (!isCacheableKey(key)) return Lookup.Miss({ ticket: { markers: Option.none() } })
        const privateName = yield* entryKey(key, privatePartition(key))
        const publicName = yield* entryKey(key, publicPartition)
        const [markers, mine, shared] = yield* Effect.all(
          [readMarkers(key), readEntry(privateName), readEntry(publicName)],
          { concurrency: "unbounded" }
        )
        const ticket: ResultCache.Ticket = { markers }
        // without the markers nothing can be checked against invalidations
        if (Option.isNone(markers)) return Lookup.Miss({ ticket })
        const now = yield* Clock.currentTimeMillis
        let best: StoredEntry | undefined
        for (const [name, found] of [[privateName, mine], [publicName, shared]] as const) {
          if (Option.isNone(found)) continue
          const stored = found.value
          if (!sameMarkers(stored.markers, markers.value) || now >= stored.storedAt + stored.ttlMs + keepStale) {
            yield* remove(name)
            continue
          }
          if (best === undefined || stored.storedAt > best.storedAt) best = stored
        }
        if (best === undefined) return Lookup.Miss({ ticket })
        const entry = toEntry(best)
        return now < best.storedAt + best.ttlMs ? Lookup.Fresh({ entry, ticket }) : Lookup.Stale({ entry, ticket })
      })

    const store_ = (
      key: ResultCache.CacheKey,
      result: unknown,
      hints: { readonly ttlMs?: number | undefined; readonly cacheScope?: string | undefined },
      ticket?: ResultCache.Ticket | undefined
    ): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        if (!isCacheableKey(key) || !isComplete(result)) return false
        const current = yield* readMarkers(key)
        if (Option.isNone(current)) return false
        if (ticket !== undefined) {
          // an invalidation ran while the request was in flight: its result may predate the change
          if (Option.isNone(ticket.markers) || !sameMarkers(ticket.markers.value, current.value)) return false
        }
        const normalized = normalizeHints(hints)
        const partition = normalized.cacheScope === "public" ? publicPartition : privatePartition(key)
        const name = yield* entryKey(key, partition)
        const storedAt = yield* Clock.currentTimeMillis
        return yield* encodeEntry({
          version: 1,
          storedAt,
          ttlMs: normalized.ttlMs,
          cacheScope: normalized.cacheScope,
          markers: current.value,
          result
        }).pipe(
          Effect.flatMap((text) => store.set(name, text)),
          Effect.as(true),
          Effect.catch((error) => Effect.as(failed("set")(error), false))
        )
      })

    const invalidate = (selector: ResultCache.Selector): Effect.Effect<void> =>
      Effect.gen(function*() {
        for (const [name, flight] of flights) {
          if (covers(selector, flight.key)) flights.delete(name)
        }
        const name = yield* selectorKey(selector)
        if (Option.isNone(name)) return
        const now = yield* Clock.currentTimeMillis
        yield* Effect.catch(store.set(name.value, keys.freshMarkerValue(now)), failed("invalidate"))
      })

    const invalidateForNotification = (
      server: string,
      notification: { readonly method: string; readonly params?: unknown }
    ): Effect.Effect<void> => Effect.forEach(selectorsFor(server, notification), invalidate, { discard: true })

    const leave = (name: string, flight: Flight): Effect.Effect<void> =>
      Effect.suspend(() => {
        flight.waiters--
        if (flight.waiters > 0) return Effect.void
        if (flights.get(name) === flight) flights.delete(name)
        return Fiber.interrupt(flight.fiber)
      })

    const coalesce = <A, E, R>(key: ResultCache.CacheKey, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
      // only idempotent reads are shared: a tools/call runs once per caller
      if (!isCacheableKey(key)) return effect
      const name = keys.flightName(key)
      return Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          let flight = flights.get(name)
          if (flight === undefined) {
            const fiber = yield* Effect.forkIn(Effect.interruptible(effect), scope)
            flight = { fiber, key, waiters: 0 }
            flights.set(name, flight)
          }
          const joined = flight
          joined.waiters++
          const exit = yield* restore(Fiber.await(joined.fiber)).pipe(Effect.onInterrupt(() => leave(name, joined)))
          joined.waiters--
          if (flights.get(name) === joined) flights.delete(name)
          // callers of one key run the same request, so the shared exit has the caller's types
          return yield* (exit as Exit.Exit<A, E>)
        })
      )
    }

    const cached = <E, R>(
      key: ResultCache.CacheKey,
      fetch: Effect.Effect<unknown, E, R>,
      cachedOptions?: ResultCache.CachedOptions<E> | undefined
    ): Effect.Effect<unknown, E, R> =>
      Effect.gen(function*() {
        const mode = cachedOptions?.mode ?? (yield* currentMode)
        if (mode === "bypass" || !isCacheableKey(key)) {
          yield* Effect.annotateCurrentSpan("mcp.cache", "bypass")
          return yield* fetch
        }
        const keepIfAllowed = (ticket: ResultCache.Ticket) => (result: unknown) =>
          Option.match(hintsOf(result), {
            onNone: () => Effect.void,
            onSome: (hints) => Effect.asVoid(store_(key, result, hints, ticket))
          })
        const onError = (error: E) => isInvalidCursor(key, error)
          ? invalidate({ _tag: "Method", server: key.server, method: key.method })
          : Effect.void
        if (mode === "refresh") {
          yield* Effect.annotateCurrentSpan("mcp.cache", "refresh")
          const ticket: ResultCache.Ticket = { markers: yield* readMarkers(key) }
          return yield* fetch.pipe(Effect.tap(keepIfAllowed(ticket)), Effect.tapError(onError))
        }
        const found = yield* lookup(key)
        yield* Effect.annotateCurrentSpan("mcp.cache", found._tag === "Fresh" ? "hit" : "miss")
        if (found._tag === "Fresh") return found.entry.result
        const serveStale = cachedOptions?.serveStaleOnError ?? false
        return yield* coalesce(key, Effect.tap(fetch, keepIfAllowed(found.ticket))).pipe(
          Effect.tapError(onError),
          Effect.catch((error) =>
            found._tag === "Stale" && (serveStale === true || (typeof serveStale === "function" && serveStale(error)))
              ? Effect.as(Effect.annotateCurrentSpan("mcp.cache", "stale"), found.entry.result)
              : Effect.fail(error)
          )
        )
      })

    return {
      lookup,
      store: store_,
      invalidate,
      invalidateForNotification,
      coalesce,
      cached
    }
  })

/** @internal */
export const selectorsFor = (
  server: string,
  notification: { readonly method: string; readonly params?: unknown }
): ReadonlyArray<ResultCache.Selector> => {
  switch (notification.method) {
    case "notifications/tools/list_changed":
      return [{ _tag: "Method", server, method: "tools/list" }]
    case "notifications/prompts/list_changed":
      return [{ _tag: "Method", server, method: "prompts/list" }]
    case "notifications/resources/list_changed":
      return [
        { _tag: "Method", server, method: "resources/list" },
        { _tag: "Method", server, method: "resources/templates/list" }
      ]
    case "notifications/resources/updated": {
      const params = notification.params
      const uri: unknown = typeof params === "object" && params !== null ? Reflect.get(params, "uri") : undefined
      return typeof uri === "string" ? [{ _tag: "Resource", server, uri }] : []
    }
    default:
      return []
  }
}
