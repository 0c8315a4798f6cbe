/**
 * The result cache around the core send, when a `ResultCache` is provided: cacheable requests are served from it
 * or fetched through it, notifications and new sessions invalidate what they make stale, and private results are
 * kept per credential (the partition `setAuth` moves).
 *
 * The private partition is, first found: the `credentialId` given; the credentials of a transport that has them
 * (HTTP: none is the anonymous partition); the identity of what a connection reaches (a stdio child: a keyed digest
 * of its command line, environment and working directory); else, where nothing says who the server answers (an
 * in-process server, a transport written outside this library), a partition of this client's own.
 *
 * A client without a cache loads none of the cache's modules, nor the hashing `setAuth` needs until it is used: the
 * public `ResultCache` module is loaded by whoever made the cache given, and is only looked up here.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as HttpTransport from "../../HttpTransport.js"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as ResultCache from "../../ResultCache.js"
import type * as Transport from "../../Transport.js"
import { cacheableMethods, flightName, isRetry } from "../resultCacheKey.js"
import * as InputRounds from "./inputRounds.js"
import * as SharedLegs from "./sharedLegs.js"
import type { Session } from "./session.js"

/**
 * One leg of a call: the raw result and the session it came through.
 *
 * @internal
 */
export type Leg = (
  method: string,
  params: Readonly<Record<string, unknown>> | undefined,
  options: LegOptions | undefined
) => Effect.Effect<readonly [unknown, Session], McpError.McpClientError>

/**
 * A leg's options: a caller's, or those of a request several callers share (`shared`: no deadline of its own, as
 * each caller waits for it under their own).
 *
 * @internal
 */
export interface LegOptions extends McpClient.RequestOptions {
  readonly shared?: true | undefined
}

/**
 * @internal
 */
export interface Cache {
  /** Whether requests of this method go through the cache. */
  readonly applies: (method: string) => boolean
  /** `leg` through the cache, for the methods it applies to. */
  readonly wrap: (
    leg: Leg,
    awaitSession: (options: McpClient.RequestOptions | undefined, method: string) => Effect.Effect<
      Session,
      McpError.McpClientError
    >,
    /** How a caller waits (its timeout resolved against the client's default). */
    timing: (options: McpClient.RequestOptions | undefined) => SharedLegs.Timing
  ) => Leg
  /** What a notification of this server makes stale is dropped. */
  readonly invalidate: (
    target: string | undefined,
    notification: McpSchema.ServerNotification
  ) => Effect.Effect<void>
  /** Everything cached of this server is dropped (a new session: whatever changed meanwhile is unknown). */
  readonly forgetServer: (target: string) => Effect.Effect<void>
  /** Swaps the transport's credentials and moves the private partition with them. */
  readonly setAuth: (
    auth: HttpTransport.Auth,
    options?: { readonly credentialId?: string | undefined }
  ) => Effect.Effect<void, McpError.InvalidOption>
}

/** The options of a request other callers may join: the caller's own, but for the deadline and progress. */
const sharedOptions = (
  options: McpClient.RequestOptions | undefined,
  fanOut: (progress: McpSchema.Progress) => Effect.Effect<void>
): LegOptions => {
  const {
    maxTotalTimeout: _maxTotalTimeout,
    onProgress: _onProgress,
    resetTimeoutOnProgress: _resetTimeoutOnProgress,
    timeout: _timeout,
    ...rest
  } = options ?? {}
  return { ...rest, shared: true, onProgress: fanOut }
}

/**
 * @internal
 */
export const make = (
  cache: Option.Option<ResultCache.ResultCache["Service"]>,
  transport: Transport.Transport["Service"],
  credentialId: string | undefined
): Effect.Effect<Cache> =>
  Effect.gen(function*() {
    const credentials = transport.credentials
    // Without an explicit id, the transport's own credentials key the partition (none: the anonymous one).
    let credential = credentialId ??
      (credentials === undefined ? undefined : yield* credentials.partition)
    const byCredential = credentialId !== undefined || credentials !== undefined
    let ownPartition: string | undefined
    const partitionOf = (session: Session): Effect.Effect<string | undefined> => {
      if (byCredential) return Effect.succeed(credential)
      const identity = session.connection.partition
      if (identity !== undefined) return identity
      ownPartition ??= `client:${globalThis.crypto.randomUUID()}`
      return Effect.succeed(ownPartition)
    }
    let authChanges = 0
    const shared = SharedLegs.make()
    // the mode callers set with ResultCache.withMode: its module is loaded by whoever made the cache given
    const currentMode = Option.isSome(cache)
      ? (yield* Effect.promise(() => import("../../ResultCache.js"))).CurrentMode
      : undefined
    const applies = (method: string) => Option.isSome(cache) && cacheableMethods.has(method)
    return {
      applies,
      wrap: (leg, awaitSession, timing) => {
        if (Option.isNone(cache)) return leg
        const results = cache.value
        return (method, params, options) => {
          if (!cacheableMethods.has(method)) return leg(method, params, options)
          return Effect.flatMap(awaitSession(options, method), (session) =>
            Effect.flatMap(partitionOf(session), (partition) => {
              let used = session
              let own = false
              const fetch = (legOptions: LegOptions | undefined) =>
                Effect.map(leg(method, params, legOptions), ([raw, fresh]) => {
                  used = fresh
                  own = true
                  return raw
                })
              const key: ResultCache.CacheKey = {
                server: session.transport.target,
                method,
                params,
                credential: partition
              }
              const cachedOptions = {
                ...(options?.cache !== undefined ? { mode: options.cache } : {}),
                ...(options?.serveStale === true ? { serveStaleOnError: true } : {})
              }
              const waited = Effect.flatMap(
                options?.cache !== undefined || currentMode === undefined
                  ? Effect.succeed(options?.cache ?? "use")
                  : currentMode,
                (mode) =>
                  mode !== "use" || isRetry(params)
                    // not shared with anyone: the request is the caller's own
                    ? results.cached(key, fetch(options), cachedOptions)
                    // C3: a request other callers may join runs under no one's deadline and hands its progress to
                    // every caller waiting on it; each caller waits under their own deadline
                    : shared.join(
                      flightName(key),
                      method,
                      timing(options),
                      options?.onProgress,
                      (fanOut) => results.cached(key, fetch(sharedOptions(options, fanOut)), cachedOptions)
                    )
              )
              return Effect.flatMap(
                waited,
                (raw) =>
                  // C3: an input_required answer belongs to the request that got it (its requestState, its rounds): a
                  // caller that joined another caller's request sends its own instead of sharing the interim result
                  own || !InputRounds.isInputRequired(raw)
                    ? Effect.succeed([raw, used] as const)
                    : leg(method, params, options)
              )
            }))
        }
      },
      invalidate: (target, notification) =>
        Option.isNone(cache) || target === undefined
          ? Effect.void
          : cache.value.invalidateForNotification(target, notification),
      forgetServer: (target) =>
        Option.isNone(cache) ? Effect.void : Effect.flatMap(
          Effect.promise(() => import("../../ResultCache.js")),
          (module) => cache.value.invalidate(module.Selector.Server({ server: target }))
        ),
      setAuth: (auth, authOptions) =>
        Effect.gen(function*() {
          const swap = credentials?.set
          if (swap === undefined) {
            return yield* new McpError.InvalidOption({
              option: "auth",
              detail: `the ${transport.kind} transport takes no credentials`
            })
          }
          const explicit: unknown = authOptions?.credentialId
          if (explicit !== undefined && (typeof explicit !== "string" || explicit.length === 0)) {
            return yield* new McpError.InvalidOption({ option: "credentialId", detail: "must be a non-empty string" })
          }
          // (a token that is no Redacted value is the transport's to refuse, below)
          const derived = auth._tag === "Bearer" && Redacted.isRedacted(auth.token)
            ? `bearer:${yield* Effect.flatMap(
              Effect.promise(() => import("../digest.js")),
              (crypto) => crypto.fingerprint(auth.token)
            )}`
            : undefined
          yield* swap(auth)
          // without an explicit id, a token keys its own partition and anything else starts a fresh one
          authChanges += 1
          credential = typeof explicit === "string"
            ? explicit
            : derived ?? `${auth._tag === "OAuth" ? "oauth" : "none"}#${authChanges}`
        })
    }
  })
