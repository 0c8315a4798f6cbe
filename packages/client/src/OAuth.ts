/**
 * OAuth 2.1 authorization for MCP servers over HTTP, as the MCP authorization specification asks of a client
 * (revisions 2025-03-26 to 2026-07-28): discovery through Protected Resource Metadata and authorization
 * server metadata, client registration (pre-registered, Client ID Metadata Documents, dynamic registration),
 * the authorization code grant with PKCE S256, `resource` indicators and `iss` validation, refresh,
 * client credentials, JWT bearer (workload identity), identity assertion (enterprise-managed authorization),
 * the device authorization grant, DPoP-bound tokens, and scope step-up.
 *
 * A transport asks the {@link OAuth} service for the {@link Authorizer} of its server URL, attaches
 * {@link Authorizer.headersFor} to every request, and hands every 401/403 to
 * {@link RequestAuthorization.onUnauthorized}, which either succeeds (re-send) or fails with `AuthError`.
 * Tokens never appear in logs, spans or error messages: only their fingerprints (a SHA-256 prefix) do.
 *
 * @example
 * ```ts
 * import { AuthorizationHandler, OAuth, TokenStore } from "@conduit-mcp/client"
 * import { NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { createServer } from "node:http"
 *
 * const OAuthLive = OAuth.layer({ clientName: "my-app", authorization: AuthorizationHandler.AuthorizationHandler }).pipe(
 *   Layer.provide(AuthorizationHandler.layerLoopback()),
 *   Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
 *   Layer.provide(TokenStore.layerMemory),
 *   Layer.provide(NodeHttpClient.layerUndici)
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type * as AuthorizationHandler from "./AuthorizationHandler.js"
import type * as HostResolver from "./HostResolver.js"
import * as internal from "./internal/oauthAuthorizer.js"
import * as internalError from "./internal/oauthError.js"
import type * as McpError from "./McpError.js"
import type * as TokenStore from "./TokenStore.js"

/**
 * An OAuth step failed: discovery, registration, authorization, a token request, or a rule of the
 * specification refused to go on (resource or issuer mismatch, missing PKCE support, `iss` mismatch). The
 * message names endpoints, issuers and the authorization server's `error` code, never a secret.
 *
 * @since 0.1.0
 * @category errors
 */
export const OAuthError = internalError.OAuthError

/**
 * @since 0.1.0
 * @category errors
 */
export type OAuthError = internalError.OAuthError

/**
 * How the client gets its tokens.
 *
 * @since 0.1.0
 * @category models
 */
export type Grant = Data.TaggedEnum<{
  /** Authorization code with PKCE through the {@link AuthorizationHandler.AuthorizationHandler}. */
  AuthorizationCode: {}
  /** Machine to machine (`io.modelcontextprotocol/oauth-client-credentials`): a pre-registered client. */
  ClientCredentials: {}
  /**
   * Workload identity (RFC 7523 JWT bearer grant): the assertion is read anew for each token request, so it
   * may come from a file a platform rotates. Errors of the authorization server are surfaced, not retried.
   */
  JwtBearer: { readonly assertion: Effect.Effect<Redacted.Redacted<string>, OAuthError> }
  /**
   * Enterprise-managed authorization: exchange an identity provider ID token for an ID-JAG (RFC 8693), then
   * present it to the authorization server with the JWT bearer grant.
   */
  IdentityAssertion: {
    readonly idpTokenEndpoint: string
    readonly idToken: Effect.Effect<Redacted.Redacted<string>, OAuthError>
    readonly idpClientId?: string | undefined
    readonly idpClientSecret?: Redacted.Redacted<string> | undefined
  }
  /** RFC 8628 device authorization grant: the user approves on another device. */
  DeviceCode: {}
}>

/**
 * Constructors for {@link Grant}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Grant = Data.taggedEnum<Grant>()

/**
 * How a client authenticates at the token endpoint.
 *
 * @since 0.1.0
 * @category models
 */
export type ClientAuthMethod = "client_secret_basic" | "client_secret_post" | "none" | "private_key_jwt"

/**
 * A client registered out of band.
 *
 * @since 0.1.0
 * @category models
 */
export interface PreRegisteredClient {
  /**
   * The authorization server this client belongs to. Without it, the client is bound to the first issuer
   * it is used with (recorded in the token store) and never presented to another.
   */
  readonly issuer?: string | undefined
  readonly clientId: string
  readonly clientSecret?: Redacted.Redacted<string> | undefined
  /** Default: `client_secret_basic` with a secret, `private_key_jwt` with a key, `none` otherwise. */
  readonly authMethod?: ClientAuthMethod | undefined
  /** For `private_key_jwt`: a PKCS#8 PEM private key and its JWS algorithm. */
  readonly privateKey?: {
    readonly pem: Redacted.Redacted<string>
    readonly alg: "ES256" | "ES384" | "RS256" | "PS256"
    readonly kid?: string | undefined
  } | undefined
  /** Redirect URIs registered for this client (the authorization handler's must be among them). */
  readonly redirectUris?: ReadonlyArray<string> | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface OAuthOptions<R = never> {
  /** Default: {@link Grant.AuthorizationCode}. */
  readonly grant?: Grant | undefined
  /** Clients registered out of band, tried first (for their issuer only). */
  readonly clients?: ReadonlyArray<PreRegisteredClient> | undefined
  /** An https URL serving this client's metadata document, used as `client_id` where the server supports it. */
  readonly clientMetadataUrl?: string | undefined
  /** Dynamic client registration (RFC 7591), used when nothing else applies; `false` disables it. */
  readonly dynamicRegistration?: false | {
    readonly applicationType?: "native" | "web" | undefined
    readonly clientUri?: string | undefined
    readonly softwareId?: string | undefined
    readonly softwareVersion?: string | undefined
  } | undefined
  /** `client_name` for registration (default `Conduit MCP client`). */
  readonly clientName?: string | undefined
  /** Request `offline_access` when the authorization server lists it (default true). */
  readonly offlineAccess?: boolean | undefined
  /**
   * DPoP-bound tokens (RFC 9449). `auto` (default): when the server challenges with the DPoP scheme or
   * lists DPoP algorithms, and the authorization server supports ES256 proofs.
   */
  readonly dpop?: "auto" | "always" | "never" | undefined
  /**
   * Go on when the authorization server does not advertise PKCE S256 (`code_challenge_methods_supported`).
   * The specification says to refuse; S256 is still used.
   */
  readonly allowMissingPkce?: boolean | undefined
  /** Allow loopback targets (and http on them) for a server that is not itself on loopback. */
  readonly allowLoopback?: boolean | undefined
  /** Allow private-network targets for a server that is not itself on a private network. */
  readonly allowPrivateNetwork?: boolean | undefined
  /** The issuer to use when the server lists several authorization servers (default: the first). */
  readonly authorizationServer?: string | undefined
  /** The most authorizations one request may trigger (step-up included; default 3). */
  readonly maxAuthorizations?: number | undefined
  /** Refresh this long before the access token expires (default 30 s). */
  readonly refreshSkew?: Duration.Input | undefined
  /** Bound on each OAuth exchange (default 10 s). */
  readonly requestTimeout?: Duration.Input | undefined
  /** Bound on each metadata or token answer (default 1 MiB). */
  readonly maxResponseBytes?: number | undefined
  /** The protocol revision, sent as `MCP-Protocol-Version` on discovery requests. */
  readonly protocolVersion?: string | undefined
  /**
   * Plays the user's part of interactive grants (the authorization code's browser round trip, the device code's
   * display): the service, or an effect that gives it (its tag, with a layer such as
   * `AuthorizationHandler.layerLoopback()`). Without one, only grants that need no user work.
   */
  readonly authorization?:
    | AuthorizationHandler.AuthorizationHandlerShape
    | Effect.Effect<AuthorizationHandler.AuthorizationHandlerShape, never, R>
    | undefined
  /**
   * Resolves host names before a metadata or token URL is contacted, so that a name pointing into a private network
   * or at loopback is refused (the service, or its tag with a layer such as `HostResolver.fromLookup(...)`); with
   * its `connect`, each exchange connects to the addresses that were checked (see HostResolver). Without one, only
   * literal addresses are checked, and a warning says so.
   */
  readonly hostResolver?: HostResolver.HostResolverShape | Effect.Effect<HostResolver.HostResolverShape, never, R> | undefined
}

/**
 * What a token is, without the token.
 *
 * @since 0.1.0
 * @category models
 */
export interface TokenInfo {
  readonly issuer: string
  readonly resource: string
  readonly tokenType: "Bearer" | "DPoP"
  /** First 8 bytes of the token's SHA-256, in hex. */
  readonly fingerprint: string
  readonly scope: ReadonlyArray<string>
  readonly expiresAt: Option.Option<number>
  readonly refreshable: boolean
}

/**
 * The headers to add to one request to the resource server, and the fingerprint of the token they carry.
 * Empty when no token is held yet, or when the request goes to another origin.
 *
 * @since 0.1.0
 * @category models
 */
export interface Credentials {
  readonly headers: Readonly<Record<string, string>>
  readonly fingerprint: string | undefined
}

/**
 * A 401 or 403 from the resource server, as the transport saw it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Refusal {
  readonly status: 401 | 403
  readonly challenges: ReadonlyArray<McpError.Challenge>
  /** Fingerprint of the token the refused request carried (`undefined`: none). */
  readonly sent: string | undefined
  /** The `DPoP-Nonce` response header, if any. */
  readonly dpopNonce?: string | undefined
}

/**
 * The method and URL of a request to the resource server (DPoP proofs sign both).
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestTarget {
  readonly method: string
  readonly url: URL
}

/**
 * The authorization state of one request across its re-sends.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestAuthorization {
  /** Headers for the next send of this request. */
  readonly headersFor: (request: RequestTarget) => Effect.Effect<Credentials, McpError.AuthError>
  /**
   * Handles a refusal of this request: refreshes, authorizes, steps up or takes a DPoP nonce, then succeeds
   * (re-send) — or fails with `AuthError` (give up). The sent fingerprint is the one of the last
   * `headersFor` unless the refusal names one.
   */
  readonly onUnauthorized: (
    refusal: Omit<Refusal, "sent"> & { readonly sent?: string | undefined }
  ) => Effect.Effect<void, McpError.AuthError>
}

/**
 * Authorization for one MCP server (one canonical resource).
 *
 * @since 0.1.0
 * @category models
 */
export interface Authorizer {
  /** The server URL this authorizer serves. */
  readonly server: URL
  /** Headers for a request (refreshing an expiring token first). No token goes to another origin. */
  readonly headersFor: (request: RequestTarget) => Effect.Effect<Credentials, McpError.AuthError>
  /** Handles one refusal with no history (a fresh request). Succeeds when the request should be re-sent. */
  readonly onUnauthorized: (refusal: Refusal) => Effect.Effect<void, McpError.AuthError>
  /** Starts tracking one request (counts authorizations, step-ups and nonce retries across its re-sends). */
  readonly begin: Effect.Effect<RequestAuthorization>
  /**
   * Runs `send` with credentials, re-sending after each refusal it reports until it succeeds or the
   * authorization path gives up.
   */
  readonly execute: <A, E, R>(
    request: RequestTarget,
    send: (credentials: Credentials) => Effect.Effect<A, E | Unauthorized, R>
  ) => Effect.Effect<A, Exclude<E, Unauthorized> | McpError.AuthError, R>
  /** Runs the full authorization now (discovery, registration, grant), e.g. for a CLI login. */
  readonly authorize: (options?: {
    readonly challenges?: ReadonlyArray<McpError.Challenge> | undefined
    readonly scope?: ReadonlyArray<string> | undefined
  }) => Effect.Effect<TokenInfo, OAuthError>
  /** The token currently held, if any. */
  readonly current: Effect.Effect<Option.Option<TokenInfo>, OAuthError>
  /** Records a `DPoP-Nonce` the server sent on any response. */
  readonly observeNonce: (nonce: string) => Effect.Effect<void>
  /** Forgets the tokens of this server (the client registration is kept). */
  readonly logout: Effect.Effect<void, OAuthError>
}

/**
 * What `send` reports to {@link Authorizer.execute} when the server refuses a request.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthorized extends Data.TaggedError("Unauthorized")<{
  readonly status: 401 | 403
  readonly challenges: ReadonlyArray<McpError.Challenge>
  readonly dpopNonce?: string | undefined
}> {}

/**
 * @since 0.1.0
 * @category models
 */
export interface OAuthShape {
  /** The authorizer of one MCP server; one per canonical server URL, shared by every caller. */
  readonly authorizer: (server: URL | string) => Effect.Effect<Authorizer, OAuthError>
  /**
   * The MCP extensions this service implements as configured, by identifier (`capabilities.extensions`): with the
   * `ClientCredentials` grant, `io.modelcontextprotocol/oauth-client-credentials`. An HTTP transport using the
   * service declares them through the client.
   */
  readonly extensions?: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined
}

/**
 * The identifier of the OAuth client credentials extension.
 *
 * @since 0.1.0
 * @category constants
 */
export const CLIENT_CREDENTIALS_EXTENSION = "io.modelcontextprotocol/oauth-client-credentials"

/**
 * The OAuth service.
 *
 * @since 0.1.0
 * @category tags
 */
export class OAuth extends Context.Service<OAuth, OAuthShape>()("@conduit-mcp/client/OAuth") {}

/**
 * Builds the service. The `AuthorizationHandler` is optional: grants that need a user (authorization code,
 * device code) fail with an `InvalidOption` `OAuthError` without one; machine grants never need it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: <const O extends OAuthOptions<unknown> = {}>(
  options?: O
) => Effect.Effect<OAuthShape, OAuthError, HttpClient.HttpClient | TokenStore.TokenStore | Requirements<O>> =
  internal.make

/**
 * What an `OAuth` service built with these options requires besides an `HttpClient` and a `TokenStore`: the
 * requirements of `authorization` and `hostResolver` given as effects (tags).
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements<O> =
  | (O extends { readonly authorization?: infer X } ? X extends Effect.Effect<infer _A, infer _E, infer R> ? R : never
    : never)
  | (O extends { readonly hostResolver?: infer X } ? X extends Effect.Effect<infer _A, infer _E, infer R> ? R : never
    : never)

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = <const O extends OAuthOptions<unknown> = {}>(
  options?: O
): Layer.Layer<OAuth, OAuthError, HttpClient.HttpClient | TokenStore.TokenStore | Requirements<O>> =>
  Layer.effect(OAuth, make(options))
