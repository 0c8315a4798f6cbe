/**
 * Keys of the result cache: canonical JSON of the request parameters, partitions, invalidation scopes and the
 * digests that name entries in a key-value store.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Hex from "effect/encoding/Hex"
import { methodsWhere } from "./mcpMethods.js"

/** The methods whose complete results carry `ttlMs` and `cacheScope` (2026-07-28 caching page). @internal */
export const cacheableMethods: ReadonlySet<string> = methodsWhere((method) => method.cacheable)

/** The fields of a cache key, as the public module defines them. @internal */
export interface KeyFields {
  readonly server: string
  readonly method: string
  readonly params?: Readonly<Record<string, unknown>> | undefined
  readonly credential?: string | undefined
}

/** JSON with object keys sorted at every level; `undefined` members are left out as in `JSON.stringify`. @internal */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value === "string" || typeof value === "boolean") return JSON.stringify(value)
  if (typeof value === "number") return Number.isFinite(value) ? JSON.stringify(value) : "null"
  if (Array.isArray(value)) {
    return `[${value.map((item: unknown) => item === undefined ? "null" : canonicalJson(item)).join(",")}]`
  }
  if (typeof value === "object") {
    const members: Array<string> = []
    for (const name of Object.keys(value).sort()) {
      const member: unknown = Reflect.get(value, name)
      if (member !== undefined) members.push(`${JSON.stringify(name)}:${canonicalJson(member)}`)
    }
    return `{${members.join(",")}}`
  }
  return "null"
}

/** Requests that are MRTR retries are never cached (E2). @internal */
export const isRetry = (params: Readonly<Record<string, unknown>> | undefined): boolean =>
  params !== undefined && (params.inputResponses !== undefined || params.requestState !== undefined)

/** The parameters that can change a result: everything except `_meta`. @internal */
export const resultParams = (params: Readonly<Record<string, unknown>> | undefined): string => {
  if (params === undefined) return "{}"
  const { _meta, ...rest } = params
  return canonicalJson(rest)
}

/** @internal */
export type Partition =
  | { readonly _tag: "Public" }
  | { readonly _tag: "Private"; readonly credential: string | undefined }

const partitionName = (partition: Partition): ReadonlyArray<string> =>
  partition._tag === "Public"
    ? ["public"]
    : partition.credential === undefined
    ? ["private"]
    : ["private", partition.credential]

/** The full identity of one entry. The credential only appears in its digest. @internal */
export const entryName = (key: KeyFields, partition: Partition): string =>
  JSON.stringify(["entry", key.server, key.method, resultParams(key.params), partitionName(partition)])

/** The identity of an in-flight request: callers of different partitions never share a run. @internal */
export const flightName = (key: KeyFields): string =>
  entryName(key, { _tag: "Private", credential: key.credential })

const SLASH = 47

/** The length of `uri` without its trailing `/`s. */
const trimmedLength = (uri: string): number => {
  let end = uri.length
  while (end > 0 && uri.charCodeAt(end - 1) === SLASH) end--
  return end
}

/** The invalidation scope of a `resources/updated` URI: the URI and everything under it share it. @internal */
export const resourceScope = (uri: string): string => uri.slice(0, trimmedLength(uri))

/**
 * The longest `resources/read` URI whose result is cached, in UTF-16 code units: a longer one is read from the
 * server every time.
 *
 * @internal
 */
export const maxUriLength = 8192

/**
 * The most invalidation scopes a cached `resources/read` URI may have (itself and each prefix ending before a
 * run of `/`, so `file:///a/b/c.txt` has 4): a deeper one is read from the server every time.
 *
 * @internal
 */
export const maxUriScopes = 32

/**
 * Where the invalidation scopes of `uri` end, shortest first: before each run of `/` (`file:///a/b/c.txt` is
 * reached by `file:`, `file:///a` and `file:///a/b`) and at the end of the URI without its trailing `/`s (the
 * URI's own scope). `undefined` when the URI is longer than {@link maxUriLength} or has more scopes than
 * {@link maxUriScopes}: its result is not cached. One pass over the URI, nothing copied.
 *
 * @internal
 */
export const scopeEnds = (uri: string): ReadonlyArray<number> | undefined => {
  if (uri.length > maxUriLength) return undefined
  const end = trimmedLength(uri)
  const ends: Array<number> = []
  for (let i = 0; i < end; i++) {
    if (uri.charCodeAt(i) === SLASH && (i === 0 || uri.charCodeAt(i - 1) !== SLASH)) {
      if (ends.length === maxUriScopes - 1) return undefined
      ends.push(i)
    }
  }
  ends.push(end)
  return ends
}

/**
 * Whether an invalidation of `scope` (a {@link resourceScope}) reaches a read of `uri`: `scope` is one of the
 * URI's scopes. `file:///a/b/c.txt` is reached by `file:///a/b`, `file:///a` and `file:` but not by `file:///a/bc`.
 *
 * @internal
 */
export const isWithin = (uri: string, scope: string): boolean =>
  uri.startsWith(scope) && (uri.charCodeAt(scope.length) === SLASH || trimmedLength(uri) === scope.length)

/** Whether a `resources/read` of this URI is within the bounds of what is cached. @internal */
export const isCacheableUri = (uri: unknown): boolean => typeof uri !== "string" || scopeEnds(uri) !== undefined

/** @internal */
export type Marker =
  | { readonly _tag: "Server"; readonly server: string }
  | { readonly _tag: "Method"; readonly server: string; readonly method: string }

/** @internal */
export const markerName = (marker: Marker): string =>
  marker._tag === "Server"
    ? JSON.stringify(["marker", marker.server])
    : JSON.stringify(["marker", marker.server, marker.method])

/** The markers an entry depends on besides its URI's scopes: its server and its method. @internal */
export const markersOf = (key: KeyFields): ReadonlyArray<Marker> => [
  { _tag: "Server", server: key.server },
  { _tag: "Method", server: key.server, method: key.method }
]

const utf8 = new TextEncoder()

const sha256 = (bytes: Uint8Array): Effect.Effect<Uint8Array> =>
  Effect.map(
    Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", bytes)),
    (buffer) => new Uint8Array(buffer)
  )

/** Store keys are SHA-256 digests, so parameters, URIs and credential ids never appear in them. @internal */
export const digest = (name: string): Effect.Effect<string> =>
  Effect.map(sha256(utf8.encode(name)), Hex.encode)

/**
 * The digests naming the invalidation scopes of `uri` on `server`, one per end of `ends` (see {@link scopeEnds}),
 * by a chain: the first hashes a digest of the server followed by the URI up to the first end, each next one the
 * digest before it followed by the piece of the URI up to its own end. Each character of the URI is hashed once
 * (not once per prefix), and a scope has the same digest whether it is reached from a longer URI or named by an
 * invalidation. Pieces are JSON strings, so distinct text never hashes alike.
 *
 * @internal
 */
export const scopeDigests = (
  server: string,
  uri: string,
  ends: ReadonlyArray<number>
): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    let previous = yield* sha256(utf8.encode(JSON.stringify(["scopes", server])))
    let start = 0
    const digests: Array<string> = []
    for (const end of ends) {
      const piece = utf8.encode(JSON.stringify(uri.slice(start, end)))
      const input = new Uint8Array(previous.length + piece.length)
      input.set(previous)
      input.set(piece, previous.length)
      previous = yield* sha256(input)
      digests.push(Hex.encode(previous))
      start = end
    }
    return digests
  })

/** A new value for an invalidation marker: unique across the instances that share a store. @internal */
export const freshMarkerValue = (now: number): string =>
  `${now.toString(36)}.${Hex.encode(globalThis.crypto.getRandomValues(new Uint8Array(12)))}`
