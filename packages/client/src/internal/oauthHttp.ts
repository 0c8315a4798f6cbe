/**
 * HTTP exchanges of the OAuth flow: metadata fetches (no credentials, bounded in size and time, redirects
 * followed by hand and only within the same origin) and form posts to the token, device and registration
 * endpoints. Nothing from a request (whose body may hold codes, verifiers, secrets or refresh tokens) is kept
 * in an error.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as Headers from "effect/http/Headers"
import type * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Body from "./httpResponse.js"
import { requestProtocolVersion } from "./oauthRequestVersion.js"
import { oauthError, type OAuthError } from "./oauthError.js"
import type * as HostResolver from "../HostResolver.js"
import { makePin } from "./hostPin.js"
import { checkUrl, hostClass, parseUrl, type UrlPolicy } from "./oauthUrl.js"
import { printable } from "./printable.js"

/** @internal */
export interface HttpSettings {
  readonly client: HttpClient.HttpClient
  readonly timeout: Duration.Duration
  readonly maxBytes: number
  readonly policy: UrlPolicy
  /** Sent as `MCP-Protocol-Version` on discovery requests (the 2025-03-26 revision asked for it). */
  readonly protocolVersion?: string | undefined
  /**
   * When present, host names are resolved and checked against the policy before each exchange, and the exchange
   * connects to the checked addresses when the resolver has `connect`.
   */
  readonly resolver?: HostResolver.HostResolverShape | undefined
}

/** @internal */
export interface RawResponse {
  readonly status: number
  readonly headers: Headers.Headers
  readonly text: string
  readonly url: URL
}

const describe = (url: URL) => `${url.origin}${url.pathname}`

/** The class of one resolved address, through the same classifier as literal hosts. */
const addressClass = (address: string) => {
  const url = parseUrl(`http://${address.includes(":") ? `[${address}]` : address}/`)
  return url === undefined ? "private" : hostClass(url)
}

/**
 * Resolves a public-looking host name and refuses it when any of its addresses is a loopback or private one
 * the policy does not allow (a literal address was already checked by `checkUrl`); succeeds with the checked
 * addresses (none without a resolver or for a literal address). @internal
 */
export const checkResolved = (
  settings: HttpSettings,
  url: URL,
  failure: "Discovery" | "Transient"
): Effect.Effect<ReadonlyArray<string> | undefined, OAuthError> => {
  const resolver = settings.resolver
  if (resolver === undefined || hostClass(url) !== "public") return Effect.succeed(undefined)
  const host = url.hostname.toLowerCase()
  const unresolved = oauthError(failure, `${describe(url)}: the host name ${host} could not be resolved`)
  return resolver.resolve(host).pipe(
    Effect.mapError(() => unresolved),
    Effect.flatMap((addresses) => {
      if (addresses.length === 0) return unresolved
      for (const address of addresses) {
        const kind = addressClass(address)
        if (
          (kind === "loopback" && !settings.policy.allowLoopback) ||
          (kind === "private" && !settings.policy.allowPrivate)
        ) {
          return oauthError(
            "InsecureUrl",
            `${describe(url)}: ${host} resolves to a ${kind === "loopback" ? "loopback" : "private network"} address`
          )
        }
      }
      return Effect.succeed(addresses)
    })
  )
}

/**
 * The HTTP client of one exchange: for a checked name, the resolver's client connecting to the checked addresses
 * only (the HTTP client would resolve the name again: DNS rebinding), when the resolver can make one.
 */
const clientFor = (
  settings: HttpSettings,
  url: URL,
  checked: ReadonlyArray<string> | undefined
): Effect.Effect<HttpClient.HttpClient, never, Scope.Scope> => {
  const connect = settings.resolver?.connect
  return checked === undefined || connect === undefined
    ? Effect.succeed(settings.client)
    : connect(makePin(url.hostname, checked))
}

/** Runs one request without automatic redirects, bounded in time and size. @internal */
export const send = (
  settings: HttpSettings,
  request: HttpClientRequest.HttpClientRequest,
  url: URL,
  failure: "Discovery" | "Transient"
): Effect.Effect<RawResponse, OAuthError> =>
  Effect.gen(function*() {
    const checked = yield* checkResolved(settings, url, failure)
    const client = yield* clientFor(settings, url, checked)
    const init = yield* Effect.serviceOption(FetchHttpClient.RequestInit)
    const response = yield* client.execute(request).pipe(
      Effect.provideService(FetchHttpClient.RequestInit, { ...Option.getOrElse(init, () => ({})), redirect: "manual" }),
      Effect.mapError((e) =>
        oauthError(failure, `${request.method} ${describe(url)} failed: ${Body.reasonName(e.reason)}`)
      )
    )
    const text = yield* readBounded(response, settings.maxBytes, url, failure)
    return { status: response.status, headers: response.headers, text, url }
  }).pipe(
    Effect.scoped,
    Effect.timeoutOrElse({
      duration: settings.timeout,
      orElse: () => Effect.fail(oauthError(failure, `${request.method} ${describe(url)} timed out`))
    })
  )

const readBounded = (
  response: HttpClientResponse.HttpClientResponse,
  maxBytes: number,
  url: URL,
  failure: "Discovery" | "Transient"
): Effect.Effect<string, OAuthError, Scope.Scope> =>
  Effect.mapError(Body.readBody(response, maxBytes), (error) =>
    oauthError(
      failure,
      error.reason === "FrameTooLarge"
        ? `the answer of ${describe(url)} is larger than ${maxBytes} bytes`
        : `reading the answer of ${describe(url)} failed`
    ))

/** @internal */
export { requestProtocolVersion } from "./oauthRequestVersion.js"

/** @internal */
export type DocumentOutcome =
  | { readonly _tag: "Found"; readonly body: unknown; readonly url: URL }
  | { readonly _tag: "Missing"; readonly status: number; readonly url: URL }

const decodeJson = Schema.decodeUnknownResult(Schema.fromJsonString(Schema.Unknown))

/**
 * GETs a JSON metadata document. A 4xx answer is `Missing` (the caller moves on to the next location); a 5xx,
 * a network failure, a redirect to another origin or a body that is not JSON fails.
 *
 * @internal
 */
export const fetchDocument = (
  settings: HttpSettings,
  start: URL,
  what: string
): Effect.Effect<DocumentOutcome, OAuthError> =>
  Effect.gen(function*() {
    let url = start
    const version = (yield* requestProtocolVersion) ?? settings.protocolVersion
    for (let hop = 0; hop <= 3; hop++) {
      yield* Effect.fromResult(checkUrl(url, settings.policy, what))
      let request = HttpClientRequest.get(url).pipe(HttpClientRequest.acceptJson)
      if (version !== undefined) request = HttpClientRequest.setHeader(request, "mcp-protocol-version", version)
      const response = yield* send(settings, request, url, "Discovery")
      yield* Effect.logDebug("OAuth discovery fetch").pipe(
        Effect.annotateLogs({ url: printable(describe(url)), status: response.status })
      )
      if (response.status >= 300 && response.status < 400) {
        const location = response.headers["location"]
        const next = location !== undefined ? parseUrl(location, url) : undefined
        if (next === undefined) return { _tag: "Missing", status: response.status, url }
        if (next.origin !== start.origin) {
          return yield* oauthError(
            "Discovery",
            `${what} ${describe(start)} redirects to another origin (${next.origin})`
          )
        }
        url = next
        continue
      }
      if (response.status >= 400 && response.status < 500) return { _tag: "Missing", status: response.status, url }
      if (response.status !== 200) {
        return yield* oauthError("Discovery", `${what} ${describe(url)} answered HTTP ${response.status}`, {
          status: response.status
        })
      }
      const body = decodeJson(response.text)
      if (Result.isFailure(body)) return yield* oauthError("Discovery", `${what} ${describe(url)} is not JSON`)
      return { _tag: "Found", body: body.success, url }
    }
    return yield* oauthError("Discovery", `${what} ${describe(start)} redirects too many times`)
  })

/** The answer of a form post, its body parsed as JSON when it is JSON. @internal */
export interface FormResponse {
  readonly status: number
  readonly headers: Headers.Headers
  readonly json: Option.Option<unknown>
}

/** POSTs a form (`application/x-www-form-urlencoded`) to an endpoint of the authorization server. @internal */
export const postForm = (
  settings: HttpSettings,
  endpoint: URL,
  params: ReadonlyArray<readonly [string, string]>,
  headers: Readonly<Record<string, string>>
): Effect.Effect<FormResponse, OAuthError> =>
  Effect.gen(function*() {
    yield* Effect.fromResult(checkUrl(endpoint, settings.policy, "token endpoint"))
    const request = HttpClientRequest.post(endpoint).pipe(
      HttpClientRequest.acceptJson,
      HttpClientRequest.setHeaders(headers),
      HttpClientRequest.bodyUrlParams(params)
    )
    const response = yield* send(settings, request, endpoint, "Transient")
    const json = decodeJson(response.text)
    return { status: response.status, headers: response.headers, json: Result.getSuccess(json) }
  })

/** POSTs a JSON body (dynamic client registration). @internal */
export const postJson = (
  settings: HttpSettings,
  endpoint: URL,
  body: unknown
): Effect.Effect<FormResponse, OAuthError> =>
  Effect.gen(function*() {
    yield* Effect.fromResult(checkUrl(endpoint, settings.policy, "registration endpoint"))
    const request = HttpClientRequest.post(endpoint).pipe(
      HttpClientRequest.acceptJson,
      HttpClientRequest.bodyJsonUnsafe(body)
    )
    const response = yield* send(settings, request, endpoint, "Transient")
    const json = decodeJson(response.text)
    return { status: response.status, headers: response.headers, json: Result.getSuccess(json) }
  })

/** Default limits: 10 s per exchange, 1 MiB per answer. @internal */
export const defaultTimeout = Duration.seconds(10)
/** @internal */
export const defaultMaxBytes = 1024 * 1024

/** Basic credentials as RFC 6749 §2.3.1 encodes them (form-urlencoded, then base64). @internal */
export const basicCredentials = (clientId: string, secret: string): string =>
  `Basic ${Base64.encode(`${formEncode(clientId)}:${formEncode(secret)}`)}`

const formEncode = (value: string): string => new URLSearchParams([["", value]]).toString().slice(1)

