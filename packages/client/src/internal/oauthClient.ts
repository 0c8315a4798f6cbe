/**
 * Who the client is at an authorization server: a pre-registered client, a Client ID Metadata Document, or a
 * dynamic registration (stored, or made now), picked in the specification's order.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as AuthorizationHandler from "../AuthorizationHandler.js"
import type * as OAuth from "../OAuth.js"
import * as TokenStore from "../TokenStore.js"
import { importPkcs8Pem, type SigningKey } from "./oauthCrypto.js"
import type { Discovery } from "./oauthDiscovery.js"
import { oauthError, type OAuthError } from "./oauthError.js"
import { type HttpSettings, postJson } from "./oauthHttp.js"
import { errorOf, RegistrationResponse } from "./oauthMetadata.js"
import { checkUrl } from "./oauthUrl.js"
import { printable } from "./printable.js"

/** Everything a flow needs. @internal */
export interface FlowContext {
  readonly options: OAuth.OAuthOptions<unknown>
  readonly settings: HttpSettings
  readonly store: TokenStore.TokenStoreShape
  readonly handler: Option.Option<AuthorizationHandler.AuthorizationHandlerShape>
  /** The last `DPoP-Nonce` of each authorization server, by issuer. */
  readonly asNonces: Map<string, string>
}

/** A client identity at one authorization server. @internal */
export interface ClientIdentity {
  readonly clientId: string
  readonly secret: Redacted.Redacted<string> | undefined
  readonly authMethod: OAuth.ClientAuthMethod
  readonly signingKey: SigningKey | undefined
  readonly source: "preregistered" | "metadata-document" | "dynamic"
}

const storeFailure = (e: TokenStore.TokenStoreError) => oauthError("Storage", e.message)

const decodeStoredClient = Schema.decodeUnknownOption(Schema.fromJsonString(TokenStore.StoredClient))
const encodeStoredClient = Schema.encodeSync(Schema.fromJsonString(TokenStore.StoredClient))

const isAuthMethod = (value: string | undefined): value is OAuth.ClientAuthMethod =>
  value === "client_secret_basic" || value === "client_secret_post" || value === "none" ||
  value === "private_key_jwt"

const fromPreRegistered = (client: OAuth.PreRegisteredClient): Effect.Effect<ClientIdentity, OAuthError> =>
  Effect.gen(function*() {
    const signingKey = client.privateKey !== undefined
      ? yield* importPkcs8Pem(client.privateKey.pem, client.privateKey.alg, client.privateKey.kid)
      : undefined
    const authMethod = client.authMethod ??
      (signingKey !== undefined
        ? "private_key_jwt"
        : client.clientSecret !== undefined
        ? "client_secret_basic"
        : "none")
    return { clientId: client.clientId, secret: client.clientSecret, authMethod, signingKey, source: "preregistered" }
  })

/** @internal */
export interface ClientPurpose {
  readonly redirectUri?: string | undefined
  readonly grantTypes: ReadonlyArray<string>
  readonly responseTypes: ReadonlyArray<string>
  /** Register dynamically when nothing else applies (default true). */
  readonly register?: boolean | undefined
}

const preRegisteredFor = (context: FlowContext, issuer: string) =>
  Effect.gen(function*() {
    const clients = context.options.clients ?? []
    const exact = clients.find((c) => c.issuer === issuer)
    if (exact !== undefined) return Option.some(exact)
    for (const client of clients.filter((c) => c.issuer === undefined)) {
      const key = TokenStore.bindingKey(client.clientId)
      const bound = yield* context.store.get(key).pipe(Effect.mapError(storeFailure))
      if (Option.isNone(bound)) {
        const done = yield* context.store.compareAndSet(key, Option.none(), Option.some(Redacted.make(issuer))).pipe(
          Effect.mapError(storeFailure)
        )
        if (done) return Option.some(client)
        continue
      }
      if (Redacted.value(bound.value) === issuer) return Option.some(client)
    }
    return Option.none<OAuth.PreRegisteredClient>()
  })

/**
 * Picks the client identity for `discovery.issuer` in the specification's order: pre-registered for this
 * issuer, a Client ID Metadata Document where supported, a stored or new dynamic registration. Credentials
 * of one issuer are never used with another.
 *
 * @internal
 */
export const resolveClient = (
  context: FlowContext,
  discovery: Discovery,
  purpose: ClientPurpose
): Effect.Effect<ClientIdentity, OAuthError> =>
  Effect.gen(function*() {
    const issuer = discovery.issuer
    const pre = yield* preRegisteredFor(context, issuer)
    if (Option.isSome(pre)) return yield* fromPreRegistered(pre.value)
    const cimd = context.options.clientMetadataUrl
    if (cimd !== undefined && discovery.metadata.client_id_metadata_document_supported === true) {
      const identity: ClientIdentity = {
        clientId: cimd,
        secret: undefined,
        authMethod: "none",
        signingKey: undefined,
        source: "metadata-document"
      }
      return identity
    }
    const key = TokenStore.clientKey(issuer)
    const stored = yield* context.store.get(key).pipe(Effect.mapError(storeFailure))
    const previous = Option.flatMap(stored, (value) => decodeStoredClient(Redacted.value(value)))
    if (
      Option.isSome(previous) && previous.value.issuer === issuer &&
      (purpose.redirectUri === undefined || (previous.value.redirectUris ?? []).includes(purpose.redirectUri))
    ) {
      const client = previous.value
      return {
        clientId: client.clientId,
        secret: client.clientSecret,
        authMethod: isAuthMethod(client.authMethod) ? client.authMethod : "none",
        signingKey: undefined,
        source: "dynamic"
      }
    }
    const endpoint = discovery.metadata.registration_endpoint
    if (endpoint === undefined || context.options.dynamicRegistration === false || purpose.register === false) {
      const others = (context.options.clients ?? []).length > 0
        ? " (the pre-registered clients belong to other issuers)"
        : ""
      return yield* oauthError("NoClient", `no client identity for ${issuer}: nothing pre-registered${others}, ` +
        "no client metadata document support, no dynamic registration")
    }
    const registered = yield* register(context, discovery, endpoint, purpose)
    const record: TokenStore.StoredClient = {
      issuer,
      clientId: registered.clientId,
      authMethod: registered.authMethod,
      source: "dynamic",
      ...(registered.secret !== undefined ? { clientSecret: registered.secret } : {}),
      ...(purpose.redirectUri !== undefined ? { redirectUris: [purpose.redirectUri] } : {})
    }
    yield* context.store.compareAndSet(key, stored, Option.some(Redacted.make(encodeStoredClient(record)))).pipe(
      Effect.mapError(storeFailure)
    )
    return registered
  })

const register = (
  context: FlowContext,
  discovery: Discovery,
  endpoint: string,
  purpose: ClientPurpose
): Effect.Effect<ClientIdentity, OAuthError> =>
  Effect.gen(function*() {
    const url = yield* Effect.fromResult(checkUrl(endpoint, context.settings.policy, "registration endpoint"))
    const supported = discovery.metadata.token_endpoint_auth_methods_supported ?? ["client_secret_basic"]
    const preference: ReadonlyArray<OAuth.ClientAuthMethod> = ["client_secret_basic", "client_secret_post", "none"]
    const requested = preference.find((m) => supported.includes(m)) ??
      "client_secret_basic"
    const dcr = context.options.dynamicRegistration === false ? undefined : context.options.dynamicRegistration
    const body = {
      client_name: context.options.clientName ?? "Conduit MCP client",
      // required by the 2026-07-28 revision; `native` covers desktop, CLI and loopback redirect URIs
      application_type: dcr?.applicationType ?? "native",
      grant_types: purpose.grantTypes,
      response_types: purpose.responseTypes,
      token_endpoint_auth_method: requested,
      ...(purpose.redirectUri !== undefined ? { redirect_uris: [purpose.redirectUri] } : { redirect_uris: [] }),
      ...(dcr?.clientUri !== undefined ? { client_uri: dcr.clientUri } : {}),
      ...(dcr?.softwareId !== undefined ? { software_id: dcr.softwareId } : {}),
      ...(dcr?.softwareVersion !== undefined ? { software_version: dcr.softwareVersion } : {})
    }
    const response = yield* postJson(context.settings, url, body).pipe(
      Effect.mapError((e) => oauthError("Registration", e.detail))
    )
    if (response.status !== 200 && response.status !== 201) {
      const error = errorOf(response)
      return yield* oauthError(
        "Registration",
        `registration at ${url.origin}${url.pathname} was refused` +
          (error?.error_description !== undefined ? `: ${error.error_description}` : "") +
          (purpose.redirectUri !== undefined ? ` (redirect URI ${purpose.redirectUri})` : ""),
        { error: error?.error, status: response.status }
      )
    }
    const decoded = Option.flatMap(response.json, Schema.decodeUnknownOption(RegistrationResponse))
    if (Option.isNone(decoded)) {
      return yield* oauthError("Registration", `the registration answer of ${url.origin}${url.pathname} is not valid`)
    }
    const registered = decoded.value
    const secret = registered.client_secret !== undefined ? Redacted.make(registered.client_secret) : undefined
    const answered = registered.token_endpoint_auth_method
    let authMethod: OAuth.ClientAuthMethod = isAuthMethod(answered) ? answered : requested
    if (secret === undefined && authMethod !== "none") authMethod = "none"
    yield* Effect.logDebug("OAuth client registered").pipe(
      Effect.annotateLogs({ issuer: printable(discovery.issuer), authMethod: printable(authMethod) })
    )
    return { clientId: registered.client_id, secret, authMethod, signingKey: undefined, source: "dynamic" }
  })
