/**
 * The credentials of the HTTP transport: a static bearer, OAuth, or none, swappable at runtime. Requests read the
 * current mode when they are sent, so a re-send after a swap never carries the old credential.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as McpError from "../McpError.js"
import type * as OAuth from "../OAuth.js"
import type * as HttpTransport from "../HttpTransport.js"
import { fingerprint } from "./digest.js"

/**
 * What a request is sent with.
 *
 * @internal
 */
export interface Mode {
  /** The `Authorization` header of a static bearer. */
  readonly header: string | undefined
  /** The authorizer when the mode is OAuth (resolved on first use, then a lookup). */
  readonly authorizer: Effect.Effect<OAuth.Authorizer, McpError.AuthError> | undefined
}

/**
 * Why a bearer token is refused, or `undefined` when it is acceptable.
 *
 * @internal
 */
export const checkBearer = (token: unknown): string | undefined => {
  if (!Redacted.isRedacted(token)) return "must be a Redacted string"
  const value: unknown = Redacted.value(token)
  if (typeof value !== "string" || value.length === 0 || !/^[\x21-\x7e]+$/.test(value)) {
    return "must be a non-empty string of visible ASCII characters"
  }
  return undefined
}

/** How many static bearers' fingerprints are remembered (the current one and those of requests still out). */
const rememberedFingerprints = 4

/**
 * The swappable credentials of one HTTP transport.
 *
 * @internal
 */
export interface HttpAuth {
  readonly current: () => Mode
  readonly set: (auth: HttpTransport.Auth) => Effect.Effect<void, McpError.InvalidOption>
  /** The fingerprint of the static bearer sent as this `Authorization` header, if it is one of ours. */
  readonly fingerprintOf: (authorization: string | undefined) => string | undefined
  /** Computes the fingerprint of the layer's own bearer (once; before the first request). */
  readonly ready: Effect.Effect<void>
}

/**
 * @internal
 */
export const make = (
  server: URL,
  bearerToken: Redacted.Redacted<string> | undefined,
  oauth: OAuth.OAuthShape | undefined
): HttpAuth => {
  const authorizerOf = (service: OAuth.OAuthShape): Mode["authorizer"] =>
    service.authorizer(server).pipe(
      Effect.mapError((error) =>
        new McpError.AuthError({ status: 401, challenges: [], detail: error.message, cause: error })
      )
    )
  const bearerHeader = (token: Redacted.Redacted<string>): string => `Bearer ${Redacted.value(token)}`
  let mode: Mode = bearerToken !== undefined
    ? { header: bearerHeader(bearerToken), authorizer: undefined }
    : { header: undefined, authorizer: oauth === undefined ? undefined : authorizerOf(oauth) }
  // header value → fingerprint, newest last; the header is already in memory as long as the mode holds it
  const fingerprints = new Map<string, string>()
  const remember = (header: string, print: string) => {
    fingerprints.delete(header)
    fingerprints.set(header, print)
    while (fingerprints.size > rememberedFingerprints) {
      const oldest = fingerprints.keys().next()
      if (oldest.done === true) break
      fingerprints.delete(oldest.value)
    }
  }
  const invalid = (detail: string) => Effect.fail(new McpError.InvalidOption({ option: "auth", detail }))
  return {
    current: () => mode,
    fingerprintOf: (authorization) => authorization === undefined ? undefined : fingerprints.get(authorization),
    ready: Effect.suspend(() => {
      if (bearerToken === undefined || fingerprints.has(bearerHeader(bearerToken))) return Effect.void
      return Effect.map(fingerprint(bearerToken), (print) => remember(bearerHeader(bearerToken), print))
    }),
    set: (auth) =>
      Effect.suspend(() => {
        switch (auth._tag) {
          case "Bearer": {
            const refused = checkBearer(auth.token)
            if (refused !== undefined) return invalid(`the bearer token ${refused}`)
            return Effect.map(fingerprint(auth.token), (print) => {
              const header = bearerHeader(auth.token)
              remember(header, print)
              mode = { header, authorizer: undefined }
            })
          }
          case "OAuth": {
            const service = auth.service ?? oauth
            if (service === undefined) {
              return invalid("OAuth needs an OAuth service: give one, or build the transport with the OAuth layer")
            }
            mode = { header: undefined, authorizer: authorizerOf(service) }
            return Effect.void
          }
          case "None": {
            mode = { header: undefined, authorizer: undefined }
            return Effect.void
          }
        }
      })
  }
}

/**
 * The cache partition of the credentials a transport is built with: a static bearer's fingerprint, an id of this
 * transport's own for OAuth (whose tokens and user are not known up front: its private results are shared with
 * no other transport), and a fingerprint of the custom headers (an API key may travel there) when there are any.
 *
 * @internal
 */
export const partitionOf = (
  bearerToken: Redacted.Redacted<string> | undefined,
  oauth: OAuth.OAuthShape | undefined,
  headers: Readonly<Record<string, string>>
): Effect.Effect<string | undefined> => {
  const ownOAuth = bearerToken === undefined && oauth !== undefined
    ? `oauth:${globalThis.crypto.randomUUID()}`
    : undefined
  const names = Object.keys(headers).sort()
  const headersText = names.length === 0
    ? undefined
    : Redacted.make(JSON.stringify(names.map((name) => [name.toLowerCase(), headers[name]])))
  return Effect.gen(function*() {
    const parts: Array<string> = []
    if (bearerToken !== undefined) parts.push(`bearer:${yield* fingerprint(bearerToken)}`)
    if (ownOAuth !== undefined) parts.push(ownOAuth)
    if (headersText !== undefined) parts.push(`headers:${yield* fingerprint(headersText)}`)
    return parts.length === 0 ? undefined : parts.join("+")
  })
}
