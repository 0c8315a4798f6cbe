/**
 * Finding the authorization server of an MCP server: Protected Resource Metadata (RFC 9728), then the
 * authorization server metadata (RFC 8414 / OpenID Connect Discovery), with the 2025-03-26 fallbacks for
 * servers that publish no PRM.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { fetchDocument, type HttpSettings } from "./oauthHttp.js"
import { AuthorizationServerMetadata, ProtectedResourceMetadata } from "./oauthMetadata.js"
import { oauthError, type OAuthError } from "./oauthError.js"
import {
  authorizationServerMetadataUrls,
  canonicalResource,
  checkUrl,
  parseUrl,
  protectedResourceMetadataUrls,
  resourceCovers
} from "./oauthUrl.js"
import { printable } from "./printable.js"

/** What discovery found for one MCP server. @internal */
export interface Discovery {
  readonly server: URL
  /** The `resource` parameter of every authorization and token request. */
  readonly resource: string
  readonly protectedResource: Option.Option<ProtectedResourceMetadata>
  readonly issuer: string
  readonly metadata: AuthorizationServerMetadata
  /** No PRM: the 2025-03-26 rules were applied (metadata at the server's origin, or default endpoints). */
  readonly legacy: boolean
}

/** @internal */
export interface DiscoveryOptions {
  /** `resource_metadata` from the server's challenge. */
  readonly resourceMetadataUrl?: string | undefined
  /** The issuer to pick when the PRM lists several. */
  readonly preferredIssuer?: string | undefined
}

const decodePrm = Schema.decodeUnknownResult(ProtectedResourceMetadata)
const decodeAsm = Schema.decodeUnknownResult(AuthorizationServerMetadata)

const findProtectedResource = (settings: HttpSettings, server: URL, options: DiscoveryOptions) =>
  Effect.gen(function*() {
    const candidates: Array<URL> = []
    if (options.resourceMetadataUrl !== undefined) {
      candidates.push(yield* Effect.fromResult(checkUrl(options.resourceMetadataUrl, settings.policy, "resource_metadata URL")))
    }
    for (const url of protectedResourceMetadataUrls(server)) {
      if (!candidates.some((c) => c.href === url.href)) candidates.push(url)
    }
    for (const url of candidates) {
      const outcome = yield* fetchDocument(settings, url, "protected resource metadata")
      if (outcome._tag === "Missing") continue
      const decoded = decodePrm(outcome.body)
      if (decoded._tag === "Failure") {
        return yield* oauthError("Discovery", `the protected resource metadata at ${url.href} is not valid`)
      }
      return Option.some(decoded.success)
    }
    return Option.none<ProtectedResourceMetadata>()
  })

const findAuthorizationServer = (settings: HttpSettings, issuer: string) =>
  Effect.gen(function*() {
    const issuerUrl = yield* Effect.fromResult(checkUrl(issuer, settings.policy, "authorization server issuer"))
    let mismatched: string | undefined
    for (const url of authorizationServerMetadataUrls(issuerUrl)) {
      const outcome = yield* fetchDocument(settings, url, "authorization server metadata")
      if (outcome._tag === "Missing") continue
      const decoded = decodeAsm(outcome.body)
      if (decoded._tag === "Failure") {
        return yield* oauthError("Discovery", `the authorization server metadata at ${url.href} is not valid`)
      }
      // exact comparison: no normalisation of case, port or trailing slash
      if (decoded.success.issuer !== issuer) {
        mismatched = decoded.success.issuer
        yield* Effect.logWarning("discarding authorization server metadata with a different issuer").pipe(
          Effect.annotateLogs({
            url: printable(url.href),
            expected: printable(issuer),
            declared: printable(decoded.success.issuer)
          })
        )
        continue
      }
      return decoded.success
    }
    return yield* mismatched !== undefined
      ? oauthError("IssuerMismatch", `the metadata of ${issuer} declares the issuer ${mismatched}`)
      : oauthError("Discovery", `no authorization server metadata found for ${issuer}`)
  })

/** The 2025-03-26 rules: the server's origin is the authorization server. @internal */
const legacyAuthorizationServer = (settings: HttpSettings, server: URL) =>
  Effect.gen(function*() {
    const origin = server.origin
    const url = new URL("/.well-known/oauth-authorization-server", origin)
    const outcome = yield* fetchDocument(settings, url, "authorization server metadata")
    if (outcome._tag === "Found") {
      const decoded = decodeAsm(outcome.body)
      if (decoded._tag === "Failure") {
        return yield* oauthError("Discovery", `the authorization server metadata at ${url.href} is not valid`)
      }
      if (decoded.success.issuer !== origin && decoded.success.issuer !== `${origin}/`) {
        return yield* oauthError(
          "IssuerMismatch",
          `the metadata at ${origin} declares the issuer ${decoded.success.issuer}`
        )
      }
      return { issuer: decoded.success.issuer, metadata: decoded.success }
    }
    const metadata: AuthorizationServerMetadata = {
      issuer: origin,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      registration_endpoint: `${origin}/register`,
      response_types_supported: ["code"],
      // the 2025-03-26 revision made PKCE mandatory for every authorization server
      code_challenge_methods_supported: ["S256"]
    }
    return { issuer: origin, metadata }
  })

/**
 * Runs discovery for `server`. Fails with `ResourceMismatch` when the PRM names another resource, before any
 * request to an authorization server.
 *
 * @internal
 */
export const discover: (
  settings: HttpSettings,
  server: URL,
  options: DiscoveryOptions
) => Effect.Effect<Discovery, OAuthError> = Effect.fn("OAuth.discover")(
  function*(settings, server, options) {
    yield* Effect.annotateCurrentSpan("oauth.resource", canonicalResource(server))
    const prm = yield* findProtectedResource(settings, server, options)
    if (Option.isNone(prm)) {
      const legacy = yield* legacyAuthorizationServer(settings, server)
      return {
        server,
        resource: canonicalResource(server),
        protectedResource: prm,
        issuer: legacy.issuer,
        metadata: legacy.metadata,
        legacy: true
      }
    }
    const document = prm.value
    if (!resourceCovers(document.resource, server)) {
      return yield* oauthError(
        "ResourceMismatch",
        `the protected resource metadata names ${document.resource}, not ${canonicalResource(server)}`
      )
    }
    const servers = document.authorization_servers ?? []
    if (servers.length === 0) {
      return yield* oauthError("Discovery", "the protected resource metadata lists no authorization server")
    }
    const issuer = options.preferredIssuer !== undefined && servers.includes(options.preferredIssuer)
      ? options.preferredIssuer
      : servers[0]
    const metadata = yield* findAuthorizationServer(settings, issuer)
    const declared = parseUrl(document.resource)
    return {
      server,
      resource: declared !== undefined ? canonicalResource(declared) : canonicalResource(server),
      protectedResource: prm,
      issuer,
      metadata,
      legacy: false
    }
  }
)
