/**
 * The grants: token endpoint requests with client authentication and DPoP, and each way of getting a token (the
 * client's identity at the authorization server is `oauthClient`'s).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as AuthorizationHandler from "../AuthorizationHandler.js"
import { type ClientIdentity, type FlowContext, resolveClient } from "./oauthClient.js"
import { clientAssertion, dpopProof, type DpopKey, makePkce, randomString } from "./oauthCrypto.js"
import type { Discovery } from "./oauthDiscovery.js"
import { oauthError, type OAuthError } from "./oauthError.js"
import { basicCredentials, type FormResponse, postForm } from "./oauthHttp.js"
import { DeviceAuthorizationResponse, errorOf, TokenResponse } from "./oauthMetadata.js"
import { checkUrl, hostClass } from "./oauthUrl.js"
import { deviceCodeText, printable } from "./printable.js"

/** A redirect URI the authorization code may be sent to: https, or http on localhost or a loopback address. */
const isAllowedRedirect = (uri: string): boolean => {
  if (!URL.canParse(uri)) return false
  const url = new URL(uri)
  return url.protocol === "https:" || (url.protocol === "http:" && hostClass(url) === "loopback")
}

/** Client authentication for a token-endpoint style request (RFC 6749 §2.3, RFC 7523). @internal */
const authenticate = (
  client: ClientIdentity | undefined,
  audience: string
): Effect.Effect<{ readonly params: Array<[string, string]>; readonly headers: Record<string, string> }, OAuthError> =>
  Effect.gen(function*() {
    if (client === undefined) return { params: [], headers: {} }
    switch (client.authMethod) {
      case "client_secret_basic": {
        if (client.secret === undefined) {
          return yield* oauthError("InvalidOption", "client_secret_basic needs a client secret")
        }
        return {
          params: [],
          headers: { authorization: basicCredentials(client.clientId, Redacted.value(client.secret)) }
        }
      }
      case "client_secret_post": {
        if (client.secret === undefined) {
          return yield* oauthError("InvalidOption", "client_secret_post needs a client secret")
        }
        return {
          params: [["client_id", client.clientId], ["client_secret", Redacted.value(client.secret)]],
          headers: {}
        }
      }
      case "private_key_jwt": {
        if (client.signingKey === undefined) {
          return yield* oauthError("InvalidOption", "private_key_jwt needs a private key")
        }
        const assertion = yield* clientAssertion({ key: client.signingKey, clientId: client.clientId, audience })
        return {
          params: [
            ["client_id", client.clientId],
            ["client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"],
            ["client_assertion", assertion]
          ],
          headers: {}
        }
      }
      case "none":
        return { params: [["client_id", client.clientId]], headers: {} }
    }
  })

/** A token endpoint answer the caller can use. @internal */
export interface IssuedToken {
  readonly response: TokenResponse
  readonly tokenType: "Bearer" | "DPoP"
  readonly dpopKey: DpopKey | undefined
}

const classify = (response: FormResponse, what: string): OAuthError => {
  const error = errorOf(response)
  if (response.status >= 500) {
    return oauthError("Transient", `${what} answered HTTP ${response.status}`, { status: response.status })
  }
  const description = error?.error_description !== undefined ? `: ${error.error_description}` : ""
  return oauthError(
    error?.error === "invalid_grant" ? "InvalidGrant" : "TokenRequest",
    `${what} refused the request${description}`,
    { error: error?.error, status: response.status }
  )
}

/**
 * POSTs a token request: client authentication, `resource`, a DPoP proof (retried once with the nonce the
 * server asks for), and classification of the answer (`InvalidGrant`, `TokenRequest`, `Transient`).
 *
 * @internal
 */
export const requestToken: (
  context: FlowContext,
  discovery: Discovery,
  client: ClientIdentity | undefined,
  params: ReadonlyArray<readonly [string, string]>,
  dpopKey: DpopKey | undefined
) => Effect.Effect<IssuedToken, OAuthError> = Effect.fn("OAuth.tokenRequest")(
  function*(context, discovery, client, params, dpopKey) {
    yield* Effect.annotateCurrentSpan({
      "oauth.issuer": discovery.issuer,
      "oauth.grant_type": params.find(([k]) => k === "grant_type")?.[1]
    })
    const endpoint = discovery.metadata.token_endpoint
    if (endpoint === undefined) return yield* oauthError("Discovery", `${discovery.issuer} has no token endpoint`)
    const url = yield* Effect.fromResult(checkUrl(endpoint, context.settings.policy, "token endpoint"))
    const what = `the token endpoint ${url.origin}${url.pathname}`
    for (let attempt = 0; attempt < 2; attempt++) {
      const auth = yield* authenticate(client, discovery.issuer)
      const headers: Record<string, string> = { ...auth.headers }
      if (dpopKey !== undefined) {
        headers["dpop"] = yield* dpopProof({
          key: dpopKey,
          method: "POST",
          url,
          nonce: context.asNonces.get(discovery.issuer)
        })
      }
      const response = yield* postForm(context.settings, url, [...params, ...auth.params], headers)
      const nonce = response.headers["dpop-nonce"]
      if (nonce !== undefined) context.asNonces.set(discovery.issuer, nonce)
      if (response.status === 200) {
        const decoded = Option.flatMap(response.json, Schema.decodeUnknownOption(TokenResponse))
        if (Option.isNone(decoded)) {
          return yield* oauthError("TokenRequest", `${what} answered an invalid token response`)
        }
        const type = decoded.value.token_type.toLowerCase()
        if (type !== "bearer" && type !== "dpop" && type !== "n_a") {
          return yield* oauthError(
            "TokenRequest",
            `${what} issued an unsupported token type ${decoded.value.token_type}`
          )
        }
        if (type === "dpop" && dpopKey === undefined) {
          return yield* oauthError("TokenRequest", `${what} issued a DPoP token without a proof`)
        }
        const issued: IssuedToken = {
          response: decoded.value,
          tokenType: type === "dpop" ? "DPoP" : "Bearer",
          dpopKey: type === "dpop" ? dpopKey : undefined
        }
        return issued
      }
      if (
        dpopKey !== undefined && attempt === 0 && nonce !== undefined && response.status === 400 &&
        errorOf(response)?.error === "use_dpop_nonce"
      ) continue
      return yield* classify(response, what)
    }
    return yield* oauthError("TokenRequest", `${what} kept asking for a new DPoP nonce`)
  }
)

const scopeParam = (scope: ReadonlyArray<string>): Array<[string, string]> =>
  scope.length > 0 ? [["scope", scope.join(" ")]] : []

/** Checks the authorization response (RFC 9207 and `state`) before the code goes anywhere. @internal */
export const validateCallback = (
  params: URLSearchParams,
  expected: { readonly state: string; readonly issuer: string; readonly issSupported: boolean }
): Result.Result<string, OAuthError> => {
  if (params.get("state") !== expected.state) {
    return Result.fail(oauthError("StateMismatch", "the authorization response does not carry the state we sent"))
  }
  const iss = params.get("iss")
  if (iss !== null && iss !== expected.issuer) {
    // error, error_description and error_uri of a response from an unexpected issuer are not shown
    return Result.fail(
      oauthError("IssuerResponseMismatch", `the authorization response comes from ${iss}, not ${expected.issuer}`)
    )
  }
  if (iss === null && expected.issSupported) {
    return Result.fail(
      oauthError("IssuerResponseMismatch", `the authorization response of ${expected.issuer} has no iss`)
    )
  }
  const error = params.get("error")
  if (error !== null) {
    const description = params.get("error_description")
    const shown = description !== null ? `: ${description}` : ""
    return Result.fail(oauthError("AuthorizationDenied", `authorization refused${shown}`, { error }))
  }
  const code = params.get("code")
  if (code === null || code === "") {
    return Result.fail(oauthError("InvalidCallback", "the authorization response carries no code"))
  }
  return Result.succeed(code)
}

const needHandler = (context: FlowContext, grant: string) =>
  Option.match(context.handler, {
    onNone: () => Effect.fail(oauthError("InvalidOption", `the ${grant} grant needs an AuthorizationHandler`)),
    onSome: Effect.succeed
  })

/** Authorization code with PKCE S256, `resource`, `state` and `iss` checks (OAuth 2.1, RFC 9207). @internal */
export const authorizationCode: (
  context: FlowContext,
  discovery: Discovery,
  scope: ReadonlyArray<string>,
  dpopKey: DpopKey | undefined
) => Effect.Effect<IssuedToken, OAuthError> = Effect.fn("OAuth.authorizationCode")(
  function*(context, discovery, scope, dpopKey) {
    yield* Effect.annotateCurrentSpan("oauth.issuer", discovery.issuer)
    const metadata = discovery.metadata
    const handler = yield* needHandler(context, "authorization code")
    if (metadata.authorization_endpoint === undefined) {
      return yield* oauthError("Discovery", `${discovery.issuer} has no authorization endpoint`)
    }
    const endpoint = yield* Effect.fromResult(checkUrl(metadata.authorization_endpoint, context.settings.policy, "authorization endpoint"))
    if (metadata.response_types_supported !== undefined && !metadata.response_types_supported.includes("code")) {
      return yield* oauthError("Unsupported", `${discovery.issuer} does not support the code response type`)
    }
    const methods = metadata.code_challenge_methods_supported
    if ((methods === undefined || !methods.includes("S256")) && context.options.allowMissingPkce !== true) {
      return yield* oauthError(
        "PkceUnsupported",
        `${discovery.issuer} does not advertise PKCE S256 (code_challenge_methods_supported); refusing to authorize`
      )
    }
    const pending = yield* handler.begin
    if (!isAllowedRedirect(pending.redirectUri)) {
      return yield* oauthError(
        "InvalidOption",
        "the authorization handler's redirect URI must be an https URL or an http URL on localhost / a loopback address"
      )
    }
    const client = yield* resolveClient(context, discovery, {
      redirectUri: pending.redirectUri,
      grantTypes: ["authorization_code", "refresh_token"],
      responseTypes: ["code"]
    })
    const pkce = yield* makePkce
    const state = randomString(16)
    const url = new URL(endpoint.href)
    const query: Array<[string, string]> = [
      ["response_type", "code"],
      ["client_id", client.clientId],
      ["redirect_uri", pending.redirectUri],
      ["code_challenge", pkce.challenge],
      ["code_challenge_method", "S256"],
      ["state", state],
      ...scopeParam(scope),
      ["resource", discovery.resource]
    ]
    for (const [key, value] of query) url.searchParams.set(key, value)
    yield* Effect.logDebug("OAuth authorization request").pipe(
      Effect.annotateLogs({
        issuer: printable(discovery.issuer),
        endpoint: printable(`${url.origin}${url.pathname}`),
        scope: printable(scope.join(" "))
      })
    )
    const callback = yield* pending.complete(url)
    const code = yield* Effect.fromResult(validateCallback(callback, {
      state,
      issuer: discovery.issuer,
      issSupported: metadata.authorization_response_iss_parameter_supported === true
    }))
    return yield* requestToken(context, discovery, client, [
      ["grant_type", "authorization_code"],
      ["code", code],
      ["redirect_uri", pending.redirectUri],
      ["code_verifier", Redacted.value(pkce.verifier)],
      ["resource", discovery.resource]
    ], dpopKey)
  },
  Effect.scoped
)

/** @internal */
export const refresh = (
  context: FlowContext,
  discovery: Discovery,
  client: ClientIdentity | undefined,
  refreshToken: Redacted.Redacted<string>,
  dpopKey: DpopKey | undefined
): Effect.Effect<IssuedToken, OAuthError> =>
  requestToken(context, discovery, client, [
    ["grant_type", "refresh_token"],
    ["refresh_token", Redacted.value(refreshToken)],
    ["resource", discovery.resource]
  ], dpopKey)

/** @internal */
export const clientCredentials = (
  context: FlowContext,
  discovery: Discovery,
  scope: ReadonlyArray<string>,
  dpopKey: DpopKey | undefined
): Effect.Effect<IssuedToken, OAuthError> =>
  Effect.gen(function*() {
    const client = yield* resolveClient(context, discovery, { grantTypes: ["client_credentials"], responseTypes: [] })
    return yield* requestToken(context, discovery, client, [
      ["grant_type", "client_credentials"],
      ...scopeParam(scope),
      ["resource", discovery.resource]
    ], dpopKey)
  })

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"

const optionalClient = (context: FlowContext, discovery: Discovery, grantTypes: ReadonlyArray<string>) =>
  resolveClient(context, discovery, { grantTypes, responseTypes: [] }).pipe(
    Effect.map((client): ClientIdentity | undefined => client),
    Effect.catchIf((e) => e.reason === "NoClient", () => Effect.succeed(undefined))
  )

/** Workload identity: the RFC 7523 JWT bearer grant with an externally issued assertion. @internal */
export const jwtBearer = (
  context: FlowContext,
  discovery: Discovery,
  scope: ReadonlyArray<string>,
  assertion: Effect.Effect<Redacted.Redacted<string>, OAuthError>,
  dpopKey: DpopKey | undefined
): Effect.Effect<IssuedToken, OAuthError> =>
  Effect.gen(function*() {
    const client = yield* optionalClient(context, discovery, [JWT_BEARER])
    const jwt = yield* assertion
    return yield* requestToken(context, discovery, client, [
      ["grant_type", JWT_BEARER],
      ["assertion", Redacted.value(jwt)],
      ...scopeParam(scope),
      ["resource", discovery.resource]
    ], dpopKey)
  })

/**
 * Enterprise-managed authorization: an RFC 8693 token exchange at the identity provider turns its ID token
 * into an ID-JAG for this authorization server and resource, which is then presented with the JWT bearer
 * grant.
 *
 * @internal
 */
export const identityAssertion = (
  context: FlowContext,
  discovery: Discovery,
  scope: ReadonlyArray<string>,
  grant: {
    readonly idpTokenEndpoint: string
    readonly idToken: Effect.Effect<Redacted.Redacted<string>, OAuthError>
    readonly idpClientId?: string | undefined
    readonly idpClientSecret?: Redacted.Redacted<string> | undefined
  },
  dpopKey: DpopKey | undefined
): Effect.Effect<IssuedToken, OAuthError> =>
  Effect.gen(function*() {
    const idp = yield* Effect.fromResult(checkUrl(grant.idpTokenEndpoint, context.settings.policy, "identity provider token endpoint"))
    const idToken = yield* grant.idToken
    const idpAuth: { params: Array<[string, string]>; headers: Record<string, string> } =
      grant.idpClientId === undefined
        ? { params: [], headers: {} }
        : grant.idpClientSecret !== undefined
        ? {
          params: [],
          headers: { authorization: basicCredentials(grant.idpClientId, Redacted.value(grant.idpClientSecret)) }
        }
        : { params: [["client_id", grant.idpClientId]], headers: {} }
    const exchange = yield* postForm(context.settings, idp, [
      ["grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"],
      ["requested_token_type", "urn:ietf:params:oauth:token-type:id-jag"],
      ["subject_token", Redacted.value(idToken)],
      ["subject_token_type", "urn:ietf:params:oauth:token-type:id_token"],
      ["audience", discovery.issuer],
      ["resource", discovery.resource],
      ...scopeParam(scope),
      ...idpAuth.params
    ], idpAuth.headers)
    const what = `the identity provider ${idp.origin}${idp.pathname}`
    if (exchange.status !== 200) return yield* classify(exchange, what)
    const jag = Option.flatMap(exchange.json, Schema.decodeUnknownOption(TokenResponse))
    if (Option.isNone(jag)) {
      return yield* oauthError("TokenRequest", `${what} answered an invalid token exchange response`)
    }
    const client = yield* optionalClient(context, discovery, [JWT_BEARER])
    return yield* requestToken(context, discovery, client, [
      ["grant_type", JWT_BEARER],
      ["assertion", jag.value.access_token],
      ...scopeParam(scope),
      ["resource", discovery.resource]
    ], dpopKey)
  })

const DEVICE_CODE = "urn:ietf:params:oauth:grant-type:device_code"

/**
 * The device grant's timings come from the authorization server; a hostile or broken one could stall `login`
 * forever with a huge `expires_in` or `interval`. They are clamped: the code lives at most 30 minutes (RFC 8628's
 * example lifetime), and polling waits between 1 and 60 seconds, `slow_down` included.
 */
const DEVICE_MAX_LIFETIME_SECONDS = 30 * 60
const DEVICE_MIN_INTERVAL_SECONDS = 1
const DEVICE_MAX_INTERVAL_SECONDS = 60

const clamp = (value: number, low: number, high: number): number =>
  Number.isFinite(value) ? Math.min(high, Math.max(low, value)) : high

/** RFC 8628: device authorization, then polling at the announced interval (slowing down when asked). @internal */
export const deviceCode: (
  context: FlowContext,
  discovery: Discovery,
  scope: ReadonlyArray<string>,
  dpopKey: DpopKey | undefined
) => Effect.Effect<IssuedToken, OAuthError> = Effect.fn("OAuth.deviceCode")(
  function*(context, discovery, scope, dpopKey) {
    yield* Effect.annotateCurrentSpan("oauth.issuer", discovery.issuer)
    const endpoint = discovery.metadata.device_authorization_endpoint
    if (endpoint === undefined) {
      return yield* oauthError("Unsupported", `${discovery.issuer} has no device authorization endpoint`)
    }
    const url = yield* Effect.fromResult(checkUrl(endpoint, context.settings.policy, "device authorization endpoint"))
    const client = yield* resolveClient(context, discovery, {
      grantTypes: [DEVICE_CODE, "refresh_token"],
      responseTypes: []
    })
    const auth = yield* authenticate(client, discovery.issuer)
    const started = yield* postForm(context.settings, url, [
      ...scopeParam(scope),
      ["resource", discovery.resource],
      ...(auth.params.some(([k]) => k === "client_id") ? [] : [["client_id", client.clientId] as [string, string]]),
      ...auth.params
    ], auth.headers)
    const what = `the device authorization endpoint ${url.origin}${url.pathname}`
    if (started.status !== 200) return yield* classify(started, what)
    const device = Option.flatMap(started.json, Schema.decodeUnknownOption(DeviceAuthorizationResponse))
    if (Option.isNone(device)) return yield* oauthError("TokenRequest", `${what} answered an invalid response`)
    const verification = yield* Effect.fromResult(checkUrl(device.value.verification_uri, context.settings.policy, "verification URI"))
    // (the complete URI is shown normalised, as the other is, or not at all)
    const complete = Option.flatMap(
      Option.fromNullishOr(device.value.verification_uri_complete),
      (uri) => Result.getSuccess(checkUrl(uri, context.settings.policy, "verification URI"))
    )
    const lifetime = clamp(device.value.expires_in, 1, DEVICE_MAX_LIFETIME_SECONDS)
    const code: AuthorizationHandler.DeviceCode = {
      userCode: device.value.user_code,
      verificationUri: verification.href,
      expiresInSeconds: lifetime,
      ...(Option.isSome(complete) ? { verificationUriComplete: complete.value.href } : {})
    }
    yield* Option.match(context.handler, {
      onNone: () => Effect.logInfo(deviceCodeText(code.userCode, [code.verificationUri])),
      onSome: (handler) => handler.showDeviceCode(code)
    })
    const deadline = (yield* Clock.currentTimeMillis) + lifetime * 1000
    let interval = clamp(device.value.interval ?? 5, DEVICE_MIN_INTERVAL_SECONDS, DEVICE_MAX_INTERVAL_SECONDS)
    while ((yield* Clock.currentTimeMillis) < deadline) {
      yield* Effect.sleep(Duration.seconds(interval))
      const outcome = yield* requestToken(context, discovery, client, [
        ["grant_type", DEVICE_CODE],
        ["device_code", device.value.device_code],
        ["resource", discovery.resource]
      ], dpopKey).pipe(Effect.result)
      if (Result.isSuccess(outcome)) return outcome.success
      const error = outcome.failure.error
      if (error === "authorization_pending") continue
      if (error === "slow_down") {
        interval = Math.min(interval + 5, DEVICE_MAX_INTERVAL_SECONDS)
        continue
      }
      return yield* outcome.failure
    }
    return yield* oauthError("Cancelled", "the device code expired before the user approved it")
  }
)
