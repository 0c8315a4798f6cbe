/**
 * What the HTTP transport keeps out of the HTTP client's spans and errors and out of other origins: the header names
 * the client must redact, the query parameters that carry session ids or credentials (the HTTP+SSE endpoint's
 * `?sessionId=`), and the redirect policy every request is sent with.
 *
 * All three are references of the fiber that sends a request (`Headers.CurrentRedactedNames`,
 * `UrlParams.CurrentRedactedNames`, `FetchHttpClient.RequestInit`): the HTTP client reads them when it records a
 * request in its span (`url.full`, `url.query`, the request headers) and when it builds an error.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Headers from "effect/http/Headers"
import * as UrlParams from "effect/http/UrlParams"
import type * as Option from "effect/Option"

/**
 * The header names the HTTP client may never record (in spans): the session id, the resumption cursor, a DPoP
 * proof and every header the caller configured (static credentials such as an API key). `Authorization` is in
 * the platform's own list.
 *
 * @internal
 */
export const secretHeaderNames = (configured: Readonly<Record<string, string>>): ReadonlyArray<string> => [
  "mcp-session-id",
  "last-event-id",
  "dpop",
  ...Object.keys(configured).map((name) => name.toLowerCase())
]

/**
 * The caller's redacted header names plus ours, rebuilt only when the caller's list changes (the answer keeps its
 * identity otherwise, which is how a fiber that already redacts them is recognised).
 *
 * @internal
 */
export const redactedNames = (secret: ReadonlyArray<string | RegExp>) => {
  let from: ReadonlyArray<string | RegExp> | undefined
  let merged: ReadonlyArray<string | RegExp> = secret
  return (names: ReadonlyArray<string | RegExp>): ReadonlyArray<string | RegExp> => {
    // a list that already has ours (an exchange's fiber) is kept as it is
    if (names === merged) return merged
    if (names !== from) {
      from = names
      merged = [...names, ...secret]
    }
    return merged
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Redirects

/**
 * Redirects are never followed by the HTTP client: a 3xx reaches the transport as an answer it does not act on.
 * A client that follows them would send the request's credentials and session id to wherever the server points,
 * another origin included. The platform's fetch client follows by default unless told so per request (this
 * value); its `node:http` client and its undici client (with undici's default dispatcher) never follow.
 *
 * @internal
 */
export const noRedirects = (context: Context.Context<never>): Context.Context<never> => {
  const init = Context.getOption(context, FetchHttpClient.RequestInit)
  return init._tag === "Some" && init.value.redirect === "manual"
    ? context
    : Context.add(context, FetchHttpClient.RequestInit, withManual(init))
}

const withManual = (init: Option.Option<globalThis.RequestInit>): globalThis.RequestInit =>
  init._tag === "Some" ? { ...init.value, redirect: "manual" } : manual

const manual: globalThis.RequestInit = { redirect: "manual" }

// ---------------------------------------------------------------------------------------------------------------
// Query parameters

/**
 * Query parameter names whose values are secrets: session ids, tokens, keys, signatures. The HTTP client writes
 * `REDACTED` for their values in its spans (`url.full`, `url.query`) and errors.
 */
const SECRET_PARAMETER = /session|token|secret|key|pass|auth|sig|credential|code/i

/**
 * The caller's redacted query parameter names plus ours (kept by identity, as {@link redactedNames}).
 *
 * @internal
 */
export const withSecretParameters: (names: ReadonlyArray<string | RegExp>) => ReadonlyArray<string | RegExp> =
  redactedNames([SECRET_PARAMETER])

// ---------------------------------------------------------------------------------------------------------------
// The guard

/**
 * A fiber's context with the redirect policy and the redacted header and query parameter names; the same context
 * when it already has all three (an exchange's fiber gets them once, when it starts).
 *
 * @internal
 */
export const guardContext = (withSecrets: (names: ReadonlyArray<string | RegExp>) => ReadonlyArray<string | RegExp>) =>
<R>(context: Context.Context<R>): Context.Context<R> => {
  const headerNames = Context.get(context, Headers.CurrentRedactedNames)
  const parameterNames = Context.get(context, UrlParams.CurrentRedactedNames)
  const headers = withSecrets(headerNames)
  const parameters = withSecretParameters(parameterNames)
  let guarded = noRedirects(context as Context.Context<never>) as Context.Context<R>
  if (headers !== headerNames) guarded = Context.add(guarded, Headers.CurrentRedactedNames, headers)
  if (parameters !== parameterNames) guarded = Context.add(guarded, UrlParams.CurrentRedactedNames, parameters)
  return guarded
}

/**
 * Runs a request with the redirect policy and the redacted header and query parameter names, unless its fiber
 * already has them.
 *
 * @internal
 */
export const guarded = (withSecrets: (names: ReadonlyArray<string | RegExp>) => ReadonlyArray<string | RegExp>) => {
  const guard = guardContext(withSecrets)
  return <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiber((fiber) => {
      const context = fiber.context as Context.Context<R>
      const next = guard(context)
      return next === context ? self : Effect.provideContext(self, next)
    })
}
