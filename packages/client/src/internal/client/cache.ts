/**
 * The result cache around the core send, when a `ResultCache` is provided: cacheable requests are served from it
 * or fetched through it, notifications and new sessions invalidate what they make stale, and private results are
 * kept per credential (the partition `setAuth` moves).
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
import { cacheableMethods } from "../resultCacheKey.js"
import * as Hooks from "../transportHooks.js"
import * as InputRounds from "./inputRounds.js"
import type { Session } from "./session.js"

/**
 * One leg of a call: the raw result and the session it came through.
 *
 * @internal
 */
export type Leg = (
  method: string,
  params: Readonly<Record<string, unknown>> | undefined,
  options: McpClient.RequestOptions | undefined
) => Effect.Effect<readonly [unknown, Session], McpError.McpClientError>

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
    >
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

/**
 * @internal
 */
export const make = (
  cache: Option.Option<ResultCache.ResultCache["Type"]>,
  transport: Transport.Transport["Type"],
  credentialId: string | undefined
): Effect.Effect<Cache> =>
  Effect.gen(function*() {
    const credentials = Hooks.credentialsOf(transport)
    // Without an explicit id, the transport's own credentials key the partition (none: the anonymous one).
    let credential = credentialId ??
      (credentials === undefined ? undefined : yield* credentials.partition)
    let authChanges = 0
    const applies = (method: string) => Option.isSome(cache) && cacheableMethods.has(method)
    return {
      applies,
      wrap: (leg, awaitSession) => {
        if (Option.isNone(cache)) return leg
        const results = cache.value
        return (method, params, options) => {
          if (!cacheableMethods.has(method)) return leg(method, params, options)
          return Effect.flatMap(awaitSession(options, method), (session) => {
            let used = session
            let own = false
            const fetch = Effect.map(leg(method, params, options), ([raw, fresh]) => {
              used = fresh
              own = true
              return raw
            })
            const key: ResultCache.CacheKey = { server: session.transport.target, method, params, credential }
            return Effect.flatMap(
              results.cached(key, fetch, {
                ...(options?.cache !== undefined ? { mode: options.cache } : {}),
                ...(options?.serveStale === true ? { serveStaleOnError: true } : {})
              }),
              (raw) =>
                // C3: an input_required answer belongs to the request that got it (its requestState, its rounds): a
                // caller that joined another caller's request sends its own instead of sharing the interim result
                own || !InputRounds.isInputRequired(raw)
                  ? Effect.succeed([raw, used] as const)
                  : leg(method, params, options)
            )
          })
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
              Effect.promise(() => import("../oauthCrypto.js")),
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
