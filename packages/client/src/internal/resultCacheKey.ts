/**
 * Keys of the result cache: canonical JSON of the request parameters, partitions, invalidation scopes and the
 * digests that name entries in a key-value store.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Encoding from "effect/Encoding"

/** The methods whose complete results carry `ttlMs` and `cacheScope` (2026-07-28 caching page). @internal */
export const cacheableMethods: ReadonlySet<string> = new Set([
  "server/discover",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read"
])

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

const trimSlashes = (uri: string): string => {
  let end = uri.length
  while (end > 0 && uri[end - 1] === "/") end--
  return uri.slice(0, end)
}

/** The invalidation scope of a `resources/updated` URI: the URI and everything under it share it. @internal */
export const resourceScope = (uri: string): string => trimSlashes(uri)

/**
 * Every scope whose invalidation reaches `uri`: the URI itself and each of its prefixes ending before a `/`.
 * `file:///a/b/c.txt` is reached by `file:///a/b`, `file:///a` and `file:` but not by `file:///a/bc`.
 *
 * @internal
 */
export const resourceScopes = (uri: string): ReadonlyArray<string> => {
  const scopes = new Set<string>()
  for (let i = 0; i < uri.length; i++) {
    if (uri[i] === "/") scopes.add(trimSlashes(uri.slice(0, i)))
  }
  scopes.add(trimSlashes(uri))
  return [...scopes]
}

/** @internal */
export type Marker =
  | { readonly _tag: "Server"; readonly server: string }
  | { readonly _tag: "Method"; readonly server: string; readonly method: string }
  | { readonly _tag: "Resource"; readonly server: string; readonly scope: string }

/** @internal */
export const markerName = (marker: Marker): string =>
  marker._tag === "Server"
    ? JSON.stringify(["marker", marker.server])
    : marker._tag === "Method"
    ? JSON.stringify(["marker", marker.server, marker.method])
    : JSON.stringify(["marker", marker.server, "resources/read", marker.scope])

/** The markers an entry depends on: its server, its method and, for `resources/read`, its URI's scopes. @internal */
export const markersOf = (key: KeyFields): ReadonlyArray<Marker> => {
  const markers: Array<Marker> = [
    { _tag: "Server", server: key.server },
    { _tag: "Method", server: key.server, method: key.method }
  ]
  const uri = key.params?.uri
  if (key.method === "resources/read" && typeof uri === "string") {
    for (const scope of resourceScopes(uri)) markers.push({ _tag: "Resource", server: key.server, scope })
  }
  return markers
}

const utf8 = new TextEncoder()

/** Store keys are SHA-256 digests, so parameters, URIs and credential ids never appear in them. @internal */
export const digest = (name: string): Effect.Effect<string> =>
  Effect.map(
    Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", utf8.encode(name))),
    (buffer) => Encoding.encodeHex(new Uint8Array(buffer))
  )

/** A new value for an invalidation marker: unique across the instances that share a store. @internal */
export const freshMarkerValue = (now: number): string =>
  `${now.toString(36)}.${Encoding.encodeHex(globalThis.crypto.getRandomValues(new Uint8Array(12)))}`
