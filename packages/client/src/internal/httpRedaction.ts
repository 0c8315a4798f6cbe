/**
 * What the HTTP transport keeps out of the HTTP client's spans and out of other origins: the header names the
 * client must redact, the query parameters that carry session ids or credentials (the HTTP+SSE endpoint's
 * `?sessionId=`), and the redirect policy every request is sent with.
 *
 * @internal
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Headers from "@effect/platform/Headers"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as UrlParams from "@effect/platform/UrlParams"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import type * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

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
export const redactedNames = (secret: ReadonlyArray<string>) => {
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

/**
 * Runs a request with the redirect policy and the redacted header names, unless its fiber already has both (an
 * exchange's fiber gets them once, when it starts).
 *
 * @internal
 */
export const guarded = (withSecrets: (names: ReadonlyArray<string | RegExp>) => ReadonlyArray<string | RegExp>) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) => {
    const names = fiber.getFiberRef(Headers.currentRedactedNames)
    const context = fiber.getFiberRef(FiberRef.currentContext)
    if (withSecrets(names) === names && noRedirects(context) === context) return self
    return Effect.locallyWith(
      Effect.locallyWith(self, Headers.currentRedactedNames, withSecrets),
      FiberRef.currentContext,
      noRedirects
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// Query parameters

/** Query parameter names whose values are secrets: session ids, tokens, keys, signatures. */
const SECRET_PARAMETER = /session|token|secret|key|pass|auth|sig|credential|code/i

const REDACTED = "REDACTED"

/**
 * The URL of a request with the values of its secret query parameters replaced, or undefined when it has none.
 *
 * @internal
 */
export const redactQuery = (request: HttpClientRequest.HttpClientRequest): URL | undefined => {
  // a URL given to the request is kept as its parts: the query is in `urlParams`
  const params = request.urlParams
  if (params.length === 0 && !request.url.includes("?")) return undefined
  const url = UrlParams.makeUrl(request.url, params, request.hash)
  if (Either.isLeft(url)) return undefined
  const parsed = url.right
  let redacted = false
  for (const name of new Set(parsed.searchParams.keys())) {
    if (SECRET_PARAMETER.test(name)) {
      parsed.searchParams.set(name, REDACTED)
      redacted = true
    }
  }
  return redacted ? parsed : undefined
}

/**
 * Runs `self` (one HTTP request) so that the HTTP client's span records `redacted` as `url.full` and its query as
 * `url.query`: the spans of the current tracer are wrapped for the duration.
 *
 * @internal
 */
export const withRedactedUrl = <A, E, R>(self: Effect.Effect<A, E, R>, redacted: URL): Effect.Effect<A, E, R> =>
  Effect.tracerWith((tracer) => Effect.withTracer(self, redactingTracer(tracer, redacted)))

const redactingTracer = (tracer: Tracer.Tracer, redacted: URL): Tracer.Tracer => {
  const full = redacted.href
  const query = redacted.search.slice(1)
  return Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) =>
      new RedactedSpan(tracer.span(name, parent, context, links, startTime, kind, options), full, query),
    context: (f, fiber) => tracer.context(f, fiber)
  })
}

/** A span whose `url.full` and `url.query` attributes are replaced by their redacted forms. */
class RedactedSpan implements Tracer.Span {
  readonly _tag = "Span"
  constructor(readonly span: Tracer.Span, readonly full: string, readonly query: string) {}
  get name() {
    return this.span.name
  }
  get spanId() {
    return this.span.spanId
  }
  get traceId() {
    return this.span.traceId
  }
  get parent() {
    return this.span.parent
  }
  get context() {
    return this.span.context
  }
  get status() {
    return this.span.status
  }
  get attributes() {
    return this.span.attributes
  }
  get links() {
    return this.span.links
  }
  get sampled() {
    return this.span.sampled
  }
  get kind() {
    return this.span.kind
  }
  end(endTime: bigint, exit: Parameters<Tracer.Span["end"]>[1]) {
    this.span.end(endTime, exit)
  }
  attribute(key: string, value: unknown) {
    this.span.attribute(key, key === "url.full" ? this.full : key === "url.query" ? this.query : value)
  }
  event(name: string, startTime: bigint, attributes?: Record<string, unknown>) {
    this.span.event(name, startTime, attributes)
  }
  addLinks(links: ReadonlyArray<Tracer.SpanLink>) {
    this.span.addLinks(links)
  }
}
