/**
 * Sending HTTP requests for the HTTP transport, whatever the binding: the credentials of each request (a static
 * bearer, or OAuth with its retry on 401/403), the names the HTTP client must redact, the redirect policy, and the
 * one re-send a request gets when it provably did not reach the server.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as Scope from "effect/Scope"
import type * as McpError from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"
import type * as OAuth from "../OAuth.js"
import * as codec from "./codec.js"
import * as Admission from "./httpAdmission.js"
import * as HttpAuth from "./httpAuth.js"
import * as Redaction from "./httpRedaction.js"
import * as Body from "./httpResponse.js"
import type { Resolved } from "./httpState.js"
import { JSON_TYPE } from "./httpState.js"
import * as Idempotent from "./idempotent.js"
import { lazyImport } from "./lazyImport.js"
import type * as RequestVersion from "./oauthRequestVersion.js"
import { printable } from "./printable.js"

// OAuth's module, and the reference that gives OAuth discovery the refused request's version, loaded with the
// first request an authorizer handles: a transport without OAuth never loads them (whoever gave the transport the
// OAuth service has loaded them already)
interface OAuthModules {
  readonly OAuth: typeof OAuth
  readonly requestProtocolVersion: typeof RequestVersion.requestProtocolVersion
}
const loadOAuth: Effect.Effect<OAuthModules> = lazyImport(() =>
  Promise.all([import("../OAuth.js"), import("./oauthRequestVersion.js")]).then(([OAuth, version]) => ({
    OAuth,
    requestProtocolVersion: version.requestProtocolVersion
  }))
)

/**
 * The sending half of one HTTP transport, shared by its connections.
 *
 * @internal
 */
export interface Sender {
  readonly auth: HttpAuth.HttpAuth
  /** The MCP endpoint as the HTTP client takes it best. */
  readonly target: URL | string
  /** The caller's redacted header names plus ours (set once on an exchange's fiber). */
  readonly withSecrets: (names: ReadonlyArray<string | RegExp>) => ReadonlyArray<string | RegExp>
  /**
   * Sends one HTTP request. With the OAuth service, the request carries the authorizer's credentials, and a
   * 401/403 is handed to the authorizer (authorize, refresh, step up, take a DPoP nonce) and re-sent, until it
   * passes or the authorizer gives up with `AuthError`.
   */
  readonly execute: (
    request: HttpClientRequest.HttpClientRequest
  ) => Effect.Effect<
    HttpClientResponse.HttpClientResponse,
    HttpClientError.HttpClientError | McpError.AuthError,
    Scope.Scope
  >
  /**
   * POSTs one message. It is sent once more, on another connection, when it provably never reached the server (its
   * connection could not be made), or when it only reads (see `resendable`) and its connection was closed under it
   * before any answer (a kept-alive connection the server closed as it was reused).
   */
  readonly post: (
    url: URL | string,
    message: McpSchema.JsonRpcMessage,
    headers: Record<string, string>,
    what: string,
    /** What the client said of the request's method (`WireOptions.idempotent`); absent: the specification's table. */
    idempotent?: boolean | undefined
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, McpError.TransportFailure, Scope.Scope>
  /** The configured headers and the current `Authorization`. */
  readonly baseHeaders: () => Record<string, string>
  /** Fails with a 401/403 for a request sent without OAuth, naming the static bearer it carried (by fingerprint). */
  readonly authError: (
    status: 401 | 403,
    response: HttpClientResponse.HttpClientResponse
  ) => Effect.Effect<never, McpError.AuthError>
  /** A failed send: an authorization that gave up stays an `AuthError`; anything else is a connect error. */
  readonly sendError: (
    what: string
  ) => (error: HttpClientError.HttpClientError | McpError.AuthError) => McpError.TransportFailure
  /** Fails with the refusal of `what`, its body read for the error. */
  readonly refused: (
    response: HttpClientResponse.HttpClientResponse,
    what: string
  ) => Effect.Effect<never, McpError.TransportError>
}

/** A request that only reads: sent once more when its connection is closed under it (see `post`). */
const resendable = (message: McpSchema.JsonRpcMessage, idempotent: boolean | undefined): boolean =>
  "method" in message && "id" in message && (idempotent ?? Idempotent.isIdempotent(message.method))

/** @internal */
export const make = (
  resolved: Resolved,
  client: HttpClient.HttpClient,
  oauth: OAuth.OAuthShape | undefined
): Sender => {
  // each request is aborted when the Scope it was sent in closes (an exchange's, when the exchange ends)
  const scopedClient = HttpClient.withScope(client)
  // what the HTTP client may record in spans: never credentials or the session id
  const withSecrets = Redaction.redactedNames(Redaction.secretHeaderNames(resolved.headers))
  const guarded = Redaction.guarded(withSecrets)
  const admission = Admission.make(resolved.maxInFlight)
  const send = (
    request: HttpClientRequest.HttpClientRequest
  ): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError, Scope.Scope> =>
    // an exchange's fiber already redacts our names and refuses redirects (see httpExchanges.ts)
    guarded(scopedClient.execute(request))
  // a URL without a query goes to the HTTP client as text, which it takes as is (a URL object is copied, split
  // into its parts and put together again on every request)
  const target: URL | string = resolved.url.search === "" ? resolved.url.href : resolved.url
  // the credentials are read when each request is sent: `setAuth` swaps them for every later send
  const auth = HttpAuth.make(resolved.url, resolved.bearerToken, oauth)
  const authError: Sender["authError"] = (status, response) =>
    Body.authError(status, response, auth.fingerprintOf(response.request.headers["authorization"]))

  const execute: Sender["execute"] = (request) => {
    const mode = auth.current()
    const resolveAuthorizer = mode.authorizer
    if (resolveAuthorizer === undefined) return send(request)
    // the request's protocol version goes with OAuth discovery, should the request be refused
    const version = request.headers["mcp-protocol-version"]
    return Effect.flatMap(loadOAuth, ({ OAuth, requestProtocolVersion }) => {
      const authorized = Effect.flatMap(resolveAuthorizer, (authorizer) =>
        authorizer.execute({ method: request.method, url: new URL(request.url) }, (credentials) =>
          Effect.flatMap(send(HttpClientRequest.setHeaders(request, credentials.headers)), (response) => {
            const nonce = response.headers["dpop-nonce"]
            const status = response.status
            if (status !== 401 && status !== 403) {
              return nonce === undefined
                ? Effect.succeed(response)
                : Effect.as(authorizer.observeNonce(nonce), response)
            }
            // the refusal's body is read (and dropped) so that its connection can serve the re-send
            return Effect.andThen(
              Body.readSnippet(response),
              Effect.flatMap(Body.challengesOf(response), (challenges) =>
                Effect.fail(new OAuth.Unauthorized({ status, challenges, dpopNonce: nonce })))
            )
          })))
      return version === undefined ? authorized : Effect.provideService(authorized, requestProtocolVersion, version)
    })
  }

  const sendError: Sender["sendError"] = (what) => (error) =>
    error._tag === "AuthError" ? error : Body.connectError(what)(error)

  const post: Sender["post"] = (url, message, headers, what, idempotentMethod) => {
    const body = codec.encode(message)
    const posted = HttpClientRequest.bodyText(HttpClientRequest.post(url, { headers }), body, JSON_TYPE)
    const idempotent = resendable(message, idempotentMethod)
    const attempts = Effect.catchIf(
      execute(posted),
      (error) => Body.isNeverSent(error) || (idempotent && Body.isClosedUnderRequest(error)),
      (error) =>
        Effect.andThen(
          Effect.logDebug(
            printable(
              Body.isNeverSent(error)
                ? `${what}: the connection failed before the request was written; sending it again`
                : `${what}: the connection was closed before any answer; sending it again`
            ),
            error.cause
          ),
          execute(posted)
        )
    )
    // a request holds a place until its answer was read (see httpAdmission.ts)
    const sent = "id" in message && "method" in message ? admission.admit(attempts) : attempts
    return Effect.mapError(sent, (error) => sendError(`${what} could not be sent`)(error))
  }

  const baseHeaders = (): Record<string, string> => {
    const headers: Record<string, string> = { ...resolved.headers }
    const bearer = auth.current().header
    if (bearer !== undefined) headers.authorization = bearer
    return headers
  }

  const refused: Sender["refused"] = (response, what) =>
    Effect.flatMap(Body.readSnippet(response), (body) =>
      Effect.fail(Body.statusError(response, body, `the server answered ${what} with HTTP ${response.status}`)))

  return { auth, target, withSecrets, execute, post, baseHeaders, authError, sendError, refused }
}
