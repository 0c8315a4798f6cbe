/**
 * The authorization state of each MCP server: the tokens in use, single-flight refresh and authorization,
 * the stale-fingerprint rule, step-up accounting and DPoP nonces.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import type * as AuthorizationHandler from "../AuthorizationHandler.js"
import type * as HostResolver from "../HostResolver.js"
import * as McpError from "../McpError.js"
import type * as OAuth from "../OAuth.js"
import * as TokenStore from "../TokenStore.js"
import { dpopProof, type DpopKey, fingerprint, generateDpopKey, importDpopKey } from "./oauthCrypto.js"
import { type FlowContext, resolveClient } from "./oauthClient.js"
import { discover, type Discovery } from "./oauthDiscovery.js"
import { oauthError, type OAuthError } from "./oauthError.js"
import * as flow from "./oauthFlow.js"
import { defaultMaxBytes, defaultTimeout, type HttpSettings } from "./oauthHttp.js"
import { canonicalResource, defaultPolicy, parseUrl } from "./oauthUrl.js"
import { printable } from "./printable.js"

interface Current {
  readonly stored: TokenStore.StoredTokens
  /** The value as stored, for compare-and-set. */
  readonly raw: Redacted.Redacted<string>
  readonly fingerprint: string
  readonly dpopKey: DpopKey | undefined
}

interface Tracker {
  sent: string | undefined
  nonceRetries: number
  staleRetries: number
  authorizations: number
  refreshed: boolean
  lastWasAuthorization: boolean
}

const decodeTokens = Schema.decodeUnknownOption(Schema.fromJsonString(TokenStore.StoredTokens))
const encodeTokens = Schema.encodeSync(Schema.fromJsonString(TokenStore.StoredTokens))

const storeFailure = (e: TokenStore.TokenStoreError) => oauthError("Storage", e.message)

const splitScope = (scope: string | undefined): Array<string> =>
  scope === undefined ? [] : scope.split(" ").filter((s) => s.length > 0)

const union = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<string> => [...new Set([...a, ...b])]

/** The challenge the flow follows: DPoP or Bearer, whichever comes first. */
const authChallenge = (challenges: ReadonlyArray<McpError.Challenge>): McpError.Challenge | undefined =>
  challenges.find((c) => {
    const scheme = c.scheme.toLowerCase()
    return scheme === "bearer" || scheme === "dpop"
  })

const validateOptions = (options: OAuth.OAuthOptions<unknown>): Effect.Effect<void, OAuthError> =>
  Effect.gen(function*() {
    if (options.clientMetadataUrl !== undefined) {
      const url = parseUrl(options.clientMetadataUrl)
      if (url === undefined || url.protocol !== "https:" || url.pathname === "/" || url.hash !== "") {
        return yield* oauthError("InvalidOption", "clientMetadataUrl must be an https URL with a path")
      }
    }
    if (options.maxAuthorizations !== undefined && !(options.maxAuthorizations >= 1)) {
      return yield* oauthError("InvalidOption", "maxAuthorizations must be at least 1")
    }
    for (const client of options.clients ?? []) {
      if (client.clientId === "") {
        return yield* oauthError("InvalidOption", "a pre-registered client has an empty clientId")
      }
      const method = client.authMethod
      if ((method === "client_secret_basic" || method === "client_secret_post") && client.clientSecret === undefined) {
        return yield* oauthError("InvalidOption", `client ${client.clientId}: ${method} needs clientSecret`)
      }
      if (method === "private_key_jwt" && client.privateKey === undefined) {
        return yield* oauthError("InvalidOption", `client ${client.clientId}: private_key_jwt needs privateKey`)
      }
    }
    if (options.grant?._tag === "IdentityAssertion" && parseUrl(options.grant.idpTokenEndpoint) === undefined) {
      return yield* oauthError("InvalidOption", "idpTokenEndpoint is not a URL")
    }
  })

/** @internal */
const given = <S, R>(feature: S | Effect.Effect<S, never, R> | undefined): Effect.Effect<S | undefined, never, R> =>
  feature === undefined ? Effect.succeed(undefined) : Effect.isEffect(feature) ? feature : Effect.succeed(feature)

/** @internal */
export const make = <const O extends OAuth.OAuthOptions<unknown> = {}>(
  options: O = {} as O
): Effect.Effect<OAuth.OAuthShape, OAuthError, HttpClient.HttpClient | TokenStore.TokenStore | OAuth.Requirements<O>> =>
  Effect.gen(function*() {
    yield* validateOptions(options)
    const client = yield* HttpClient.HttpClient
    const store = yield* TokenStore.TokenStore
    const handler = Option.fromNullishOr(yield* given(options.authorization))
    const resolver = yield* given(options.hostResolver)
    if (resolver === undefined) {
      yield* Effect.logWarning(
        "OAuth runs without a HostResolver: host names of metadata and token URLs are not resolved, so only literal " +
          "addresses are checked against loopback and private networks (give the hostResolver option)"
      ).pipe(Effect.annotateLogs({ module: "OAuth" }))
    } else if (resolver.connect === undefined) {
      yield* Effect.logWarning(
        "OAuth's HostResolver has no connect: a host name checked before an exchange is resolved again by the HTTP " +
          "client when it connects, so DNS that answers differently the second time (rebinding) can reach a loopback " +
          "or private address (give the resolver a connect, see HostResolver)"
      ).pipe(Effect.annotateLogs({ module: "OAuth" }))
    }
    const authorizers = new Map<string, OAuth.Authorizer>()
    const lock = yield* Semaphore.make(1)
    return {
      ...(options.grant?._tag === "ClientCredentials"
        ? { extensions: { "io.modelcontextprotocol/oauth-client-credentials": {} } }
        : {}),
      authorizer: (input) =>
        Effect.gen(function*() {
          const server = typeof input === "string" ? parseUrl(input) : input
          if (server === undefined || (server.protocol !== "https:" && server.protocol !== "http:")) {
            return yield* oauthError("InvalidOption", "the server URL must be an http(s) URL")
          }
          const key = canonicalResource(server)
          return yield* lock.withPermits(1)(Effect.suspend(() => {
            const existing = authorizers.get(key)
            if (existing !== undefined) return Effect.succeed(existing)
            return Effect.tap(
              makeAuthorizer({ options, client, store, handler, resolver }, server),
              (created) => Effect.sync(() => authorizers.set(key, created))
            )
          }))
        })
    }
  }) as Effect.Effect<
    OAuth.OAuthShape,
    OAuthError,
    // the features' requirements, which the body reads as `unknown`
    HttpClient.HttpClient | TokenStore.TokenStore | OAuth.Requirements<O>
  >

interface Base {
  readonly options: OAuth.OAuthOptions<unknown>
  readonly client: HttpClient.HttpClient
  readonly store: TokenStore.TokenStoreShape
  readonly handler: Option.Option<AuthorizationHandler.AuthorizationHandlerShape>
  readonly resolver: HostResolver.HostResolverShape | undefined
}

const makeAuthorizer = (base: Base, server: URL): Effect.Effect<OAuth.Authorizer> =>
  Effect.gen(function*() {
    const { options, store } = base
    const defaults = defaultPolicy(server)
    const settings: HttpSettings = {
      client: base.client,
      timeout: options.requestTimeout !== undefined ? Duration.fromInputUnsafe(options.requestTimeout) : defaultTimeout,
      maxBytes: options.maxResponseBytes ?? defaultMaxBytes,
      policy: {
        allowLoopback: defaults.allowLoopback || options.allowLoopback === true,
        allowPrivate: defaults.allowPrivate || options.allowPrivateNetwork === true
      },
      protocolVersion: options.protocolVersion,
      resolver: base.resolver
    }
    const context: FlowContext = { options, settings, store, handler: base.handler, asNonces: new Map() }
    const resource = canonicalResource(server)
    const grant = options.grant ?? { _tag: "AuthorizationCode" as const }
    const maxAuthorizations = options.maxAuthorizations ?? 3
    const skew = Duration.toMillis(options.refreshSkew ?? Duration.seconds(30))
    const lock = yield* Semaphore.make(1)
    const state: {
      loaded: boolean
      discovery: Discovery | undefined
      current: Current | undefined
      requested: ReadonlyArray<string>
      serverNonce: string | undefined
    } = { loaded: false, discovery: undefined, current: undefined, requested: [], serverNonce: undefined }

    const annotate = Effect.annotateLogs({ module: "OAuth", resource: printable(resource) })

    const toCurrent = (raw: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const stored = decodeTokens(Redacted.value(raw))
        if (Option.isNone(stored)) return undefined
        const dpopKey = stored.value.dpopKey !== undefined ? yield* importDpopKey(stored.value.dpopKey) : undefined
        if (stored.value.tokenType === "DPoP" && dpopKey === undefined) return undefined
        const current: Current = {
          stored: stored.value,
          raw,
          fingerprint: yield* fingerprint(stored.value.accessToken),
          dpopKey
        }
        return current
      })

    const ensureLoaded = Effect.suspend(() => {
      if (state.loaded) return Effect.void
      return lock.withPermits(1)(Effect.gen(function*() {
        if (state.loaded) return
        const issuer = yield* store.get(TokenStore.activeIssuerKey(resource))
        if (Option.isSome(issuer)) {
          const raw = yield* store.get(TokenStore.tokensKey(Redacted.value(issuer.value), resource))
          if (Option.isSome(raw)) {
            state.current = yield* toCurrent(raw.value)
            state.requested = splitScope(state.current?.stored.scope)
          }
        }
        state.loaded = true
      })).pipe(Effect.mapError(storeFailure))
    })

    const info = (current: Current): OAuth.TokenInfo => ({
      issuer: current.stored.issuer,
      resource: current.stored.resource,
      tokenType: current.stored.tokenType,
      fingerprint: current.fingerprint,
      scope: splitScope(current.stored.scope),
      expiresAt: Option.fromNullishOr(current.stored.expiresAt),
      refreshable: current.stored.refreshToken !== undefined
    })

    /** Stores freshly issued tokens with compare-and-set; adopts what another writer stored when it lost. */
    const save = (discovery: Discovery, issued: flow.IssuedToken, scope: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const previous = state.current !== undefined && state.current.stored.issuer === discovery.issuer
          ? state.current
          : undefined
        const refreshToken = issued.response.refresh_token !== undefined
          ? Redacted.make(issued.response.refresh_token)
          : previous?.stored.refreshToken
        const expiresIn = issued.response.expires_in
        const grantedScope = issued.response.scope ?? (scope.length > 0 ? scope.join(" ") : undefined)
        const stored: TokenStore.StoredTokens = {
          issuer: discovery.issuer,
          resource: discovery.resource,
          accessToken: Redacted.make(issued.response.access_token),
          tokenType: issued.tokenType,
          ...(refreshToken !== undefined ? { refreshToken } : {}),
          ...(expiresIn !== undefined ? { expiresAt: now + expiresIn * 1000 } : {}),
          ...(grantedScope !== undefined ? { scope: grantedScope } : {}),
          ...(issued.dpopKey !== undefined ? { dpopKey: issued.dpopKey.exported } : {})
        }
        const raw = Redacted.make(encodeTokens(stored))
        const key = TokenStore.tokensKey(discovery.issuer, resource)
        // compare-and-set against what this authorizer last saw; a newer authorization replaces whatever
        // another writer stored meanwhile, with a fresh compare-and-set on that value
        let expected = previous !== undefined ? Option.some(previous.raw) : yield* store.get(key)
        for (let attempt = 0; !(yield* store.compareAndSet(key, expected, Option.some(raw))); attempt++) {
          if (attempt === 3) return yield* oauthError("Storage", "the token store kept changing during the update")
          expected = yield* store.get(key)
        }
        const pointer = TokenStore.activeIssuerKey(resource)
        const active = yield* store.get(pointer)
        yield* store.compareAndSet(pointer, active, Option.some(Redacted.make(discovery.issuer)))
        const current: Current = {
          stored,
          raw,
          fingerprint: yield* fingerprint(stored.accessToken),
          dpopKey: issued.dpopKey
        }
        state.current = current
        return current
      }).pipe(Effect.catchTag("TokenStoreError", (e) => Effect.fail(storeFailure(e))))

    const dropTokens = (current: Current) =>
      store.compareAndSet(
        TokenStore.tokensKey(current.stored.issuer, resource),
        Option.some(current.raw),
        Option.none()
      ).pipe(
        Effect.mapError(storeFailure),
        Effect.andThen(Effect.sync(() => {
          if (state.current === current) state.current = undefined
        }))
      )

    const discoveryFor = (challenge: McpError.Challenge | undefined, fresh: boolean) =>
      Effect.suspend(() => {
        if (!fresh && state.discovery !== undefined) return Effect.succeed(state.discovery)
        return Effect.tap(
          discover(settings, server, {
            resourceMetadataUrl: challenge?.params["resource_metadata"],
            preferredIssuer: options.authorizationServer
          }),
          (found) => Effect.sync(() => { state.discovery = found })
        )
      })

    const wantsDpop = (discovery: Discovery, challenges: ReadonlyArray<McpError.Challenge>) => {
      const mode = options.dpop ?? "auto"
      if (mode === "never") return false
      if (mode === "always") return true
      const serverWants = challenges.some((c) => c.scheme.toLowerCase() === "dpop") ||
        Option.exists(discovery.protectedResource, (prm) => prm.dpop_signing_alg_values_supported !== undefined) ||
        state.current?.stored.tokenType === "DPoP"
      return serverWants && (discovery.metadata.dpop_signing_alg_values_supported ?? []).includes("ES256")
    }

    /** Discovery, client identification and the configured grant. Runs under the lock. */
    const fullAuthorization = Effect.fn("OAuth.authorize")(
      function*(challenges: ReadonlyArray<McpError.Challenge>, scopeOverride?: ReadonlyArray<string>) {
        yield* Effect.annotateCurrentSpan({ "oauth.resource": resource, "oauth.grant": grant._tag })
        const challenge = authChallenge(challenges)
        const discovery = yield* discoveryFor(challenge, true)
        let scope: Array<string> = scopeOverride !== undefined
          ? [...scopeOverride]
          : challenge?.params["scope"] !== undefined
          ? splitScope(challenge.params["scope"])
          : [...Option.match(discovery.protectedResource, {
            onNone: () => [],
            onSome: (prm) => prm.scopes_supported ?? []
          })]
        const interactive = grant._tag === "AuthorizationCode" || grant._tag === "DeviceCode"
        if (
          interactive && options.offlineAccess !== false && scope.length > 0 && !scope.includes("offline_access") &&
          (discovery.metadata.scopes_supported ?? []).includes("offline_access")
        ) scope = [...scope, "offline_access"]
        const dpopKey = wantsDpop(discovery, challenges) ? yield* generateDpopKey : undefined
        yield* Effect.logDebug("OAuth authorization starts").pipe(
          Effect.annotateLogs({
            issuer: printable(discovery.issuer),
            grant: grant._tag,
            scope: printable(scope.join(" ")),
            dpop: dpopKey !== undefined
          }),
          annotate
        )
        const issued = yield* runGrant(discovery, scope, dpopKey)
        const current = yield* save(discovery, issued, scope)
        state.requested = scope
        yield* Effect.logDebug("OAuth authorization done").pipe(
          Effect.annotateLogs({ issuer: printable(discovery.issuer), fingerprint: printable(current.fingerprint) }),
          annotate
        )
        return current
      }
    )

    const runGrant = (discovery: Discovery, scope: ReadonlyArray<string>, dpopKey: DpopKey | undefined) => {
      switch (grant._tag) {
        case "AuthorizationCode":
          return flow.authorizationCode(context, discovery, scope, dpopKey)
        case "ClientCredentials":
          return flow.clientCredentials(context, discovery, scope, dpopKey)
        case "JwtBearer":
          return flow.jwtBearer(context, discovery, scope, grant.assertion, dpopKey)
        case "IdentityAssertion":
          return flow.identityAssertion(context, discovery, scope, grant, dpopKey)
        case "DeviceCode":
          return flow.deviceCode(context, discovery, scope, dpopKey)
      }
    }

    /** One refresh. Runs under the lock. `InvalidGrant` means the refresh token is dead. */
    const refreshNow = Effect.fn("OAuth.refresh")(
      function*(current: Current) {
        yield* Effect.annotateCurrentSpan({ "oauth.resource": resource, "oauth.token": current.fingerprint })
        const stored = yield* store.get(TokenStore.tokensKey(current.stored.issuer, resource)).pipe(
          Effect.mapError(storeFailure)
        )
        if (Option.isSome(stored) && Redacted.value(stored.value) !== Redacted.value(current.raw)) {
          // another writer on the same store (another process) refreshed first: its tokens are the live ones
          const theirs = yield* toCurrent(stored.value)
          if (theirs !== undefined) {
            state.current = theirs
            yield* Effect.logDebug("OAuth tokens were rotated by another writer").pipe(annotate)
            return theirs
          }
        }
        const refreshToken = current.stored.refreshToken
        if (refreshToken === undefined) return yield* oauthError("InvalidGrant", "no refresh token")
        const discovery = yield* discoveryFor(undefined, state.discovery?.issuer !== current.stored.issuer)
        if (discovery.issuer !== current.stored.issuer) {
          return yield* oauthError("InvalidGrant", "the server now uses another authorization server")
        }
        const client = yield* resolveClient(context, discovery, {
          grantTypes: ["refresh_token"],
          responseTypes: [],
          register: false
        })
        const issued = yield* flow.refresh(context, discovery, client, refreshToken, current.dpopKey)
        const next = yield* save(discovery, issued, splitScope(current.stored.scope))
        yield* Effect.logDebug("OAuth token refreshed").pipe(
          Effect.annotateLogs({ from: printable(current.fingerprint), to: printable(next.fingerprint) }),
          annotate
        )
        return next
      }
    )

    /** Refreshes unless another fiber already replaced the token `seen`. */
    const refreshOnce = (seen: string) =>
      lock.withPermits(1)(Effect.suspend(() => {
        const current = state.current
        if (current === undefined) return Effect.fail(oauthError("InvalidGrant", "no token"))
        if (current.fingerprint !== seen) return Effect.succeed(current)
        return refreshNow(current)
      }))

    const isExpiring = (current: Current, now: number) =>
      current.stored.expiresAt !== undefined && now + skew >= current.stored.expiresAt

    const headersFor = (request: OAuth.RequestTarget) =>
      Effect.gen(function*() {
        if (request.url.origin !== server.origin) return { headers: {}, fingerprint: undefined }
        yield* ensureLoaded
        let current = state.current
        if (current !== undefined && isExpiring(current, yield* Clock.currentTimeMillis)) {
          const seen = current.fingerprint
          if (current.stored.refreshToken !== undefined) {
            current = yield* refreshOnce(seen).pipe(
              Effect.catch((e) =>
                Effect.as(
                  Effect.logDebug("OAuth proactive refresh failed").pipe(
                    Effect.annotateLogs({ reason: printable(e.reason) }),
                    annotate
                  ),
                  state.current
                )
              )
            )
          } else if (grant._tag !== "AuthorizationCode" && grant._tag !== "DeviceCode") {
            current = yield* lock.withPermits(1)(Effect.suspend(() =>
              state.current !== undefined && state.current.fingerprint !== seen
                ? Effect.succeed(state.current)
                : fullAuthorization([])
            )).pipe(Effect.catch(() => Effect.succeed(state.current)))
          }
        }
        if (current === undefined) return { headers: {}, fingerprint: undefined }
        const token = current.stored.accessToken
        if (current.stored.tokenType === "DPoP" && current.dpopKey !== undefined) {
          const proof = yield* dpopProof({
            key: current.dpopKey,
            method: request.method,
            url: request.url,
            nonce: state.serverNonce,
            accessToken: token
          })
          return {
            headers: { authorization: `DPoP ${Redacted.value(token)}`, dpop: proof },
            fingerprint: current.fingerprint
          }
        }
        return { headers: { authorization: `Bearer ${Redacted.value(token)}` }, fingerprint: current.fingerprint }
      }).pipe(
        Effect.mapError((e) => new McpError.AuthError({ status: 401, challenges: [], detail: e.message }))
      )

    const fail = (refusal: OAuth.Refusal, detail: string, error?: OAuthError) =>
      Effect.fail(
        new McpError.AuthError({
          status: refusal.status,
          challenges: refusal.challenges,
          detail,
          ...(error !== undefined ? { cause: error } : {})
        })
      )

    const handle = (refusal: OAuth.Refusal, tracker: Tracker): Effect.Effect<void, McpError.AuthError> =>
      Effect.gen(function*() {
        const challenge = authChallenge(refusal.challenges)
        const error = challenge?.params["error"]
        if (refusal.dpopNonce !== undefined) state.serverNonce = refusal.dpopNonce
        if (error === "use_dpop_nonce") {
          if (refusal.dpopNonce !== undefined && tracker.nonceRetries < 2) {
            tracker.nonceRetries++
            return
          }
          return yield* fail(refusal, "the server keeps asking for a DPoP nonce")
        }
        yield* ensureLoaded.pipe(Effect.catch(() => Effect.void))
        if (refusal.status === 403) {
          if (error !== "insufficient_scope") return yield* fail(refusal, "the server refused the request (403)")
          if (grant._tag === "ClientCredentials" || grant._tag === "JwtBearer") {
            return yield* fail(refusal, `insufficient scope; the ${grant._tag} grant does not step up`)
          }
          return yield* lock.withPermits(1)(Effect.gen(function*() {
            if (state.current !== undefined && state.current.fingerprint !== refusal.sent && tracker.staleRetries < 3) {
              tracker.staleRetries++
              return
            }
            if (tracker.authorizations >= maxAuthorizations) {
              return yield* fail(
                refusal,
                `insufficient scope after ${tracker.authorizations} authorizations`,
                oauthError("StepUpLimit", `gave up after ${tracker.authorizations} authorizations for one request`)
              )
            }
            const wanted = union(state.requested, splitScope(challenge?.params["scope"]))
            tracker.authorizations++
            yield* fullAuthorization(refusal.challenges, wanted).pipe(
              Effect.catch((e) => fail(refusal, e.message, e))
            )
            tracker.lastWasAuthorization = true
          }))
        }
        return yield* lock.withPermits(1)(Effect.gen(function*() {
          const current = state.current
          if (current !== undefined && current.fingerprint !== refusal.sent && tracker.staleRetries < 3) {
            // the refused request carried an older token: re-send with the current one
            tracker.staleRetries++
            return
          }
          if (tracker.lastWasAuthorization || tracker.authorizations >= maxAuthorizations) {
            return yield* fail(refusal, "the server refused a freshly authorized request")
          }
          if (current !== undefined && current.stored.refreshToken !== undefined && !tracker.refreshed) {
            tracker.refreshed = true
            const refreshed = yield* refreshNow(current).pipe(
              Effect.map(() => true),
              Effect.catch((e) =>
                e.reason === "InvalidGrant"
                  ? Effect.as(dropTokens(current).pipe(Effect.catch(() => Effect.void)), false)
                  : fail(refusal, e.message, e)
              )
            )
            if (refreshed) return
          }
          tracker.authorizations++
          tracker.lastWasAuthorization = true
          yield* fullAuthorization(refusal.challenges).pipe(Effect.catch((e) => fail(refusal, e.message, e)))
        }))
      }).pipe(annotate)

    const newTracker = (): Tracker => ({
      sent: undefined,
      nonceRetries: 0,
      staleRetries: 0,
      authorizations: 0,
      refreshed: false,
      lastWasAuthorization: false
    })

    const begin = Effect.sync((): OAuth.RequestAuthorization => {
      const tracker = newTracker()
      return {
        headersFor: (request) =>
          Effect.tap(headersFor(request), (credentials) =>
            Effect.sync(() => {
              tracker.sent = credentials.fingerprint
            })),
        onUnauthorized: (refusal) =>
          handle({ ...refusal, sent: refusal.sent !== undefined ? refusal.sent : tracker.sent }, tracker)
      }
    })

    const authorizer: OAuth.Authorizer = {
      server,
      headersFor,
      onUnauthorized: (refusal) => handle(refusal, newTracker()),
      begin,
      execute: <A, E, R>(
        request: OAuth.RequestTarget,
        send: (credentials: OAuth.Credentials) => Effect.Effect<A, E | OAuth.Unauthorized, R>
      ): Effect.Effect<A, Exclude<E, OAuth.Unauthorized> | McpError.AuthError, R> =>
        Effect.gen(function*() {
          const tracker = yield* begin
          while (true) {
            const credentials = yield* tracker.headersFor(request)
            const outcome = yield* Effect.result(send(credentials))
            if (outcome._tag === "Success") return outcome.success
            const error = outcome.failure
            if (isOther(error)) return yield* Effect.fail(error)
            if (isUnauthorized(error)) {
              yield* tracker.onUnauthorized({
                status: error.status,
                challenges: error.challenges,
                dpopNonce: error.dpopNonce
              })
            }
          }
        }),
      authorize: (request) =>
        lock.withPermits(1)(fullAuthorization(request?.challenges ?? [], request?.scope)).pipe(Effect.map(info)),
      current: Effect.map(ensureLoaded, () => Option.map(Option.fromNullishOr(state.current), info)),
      observeNonce: (nonce) => Effect.sync(() => { state.serverNonce = nonce }),
      // the stored tokens are read first, so a fresh process can log out of what an earlier one stored
      logout: Effect.andThen(
        ensureLoaded,
        lock.withPermits(1)(Effect.suspend(() => {
          const current = state.current
          if (current === undefined) return Effect.void
          return dropTokens(current)
        }))
      )
    }
    return authorizer
  })

const isUnauthorized = <E>(u: E | OAuth.Unauthorized): u is OAuth.Unauthorized => !isOther(u)

const isOther = <E>(u: E | OAuth.Unauthorized): u is Exclude<E, OAuth.Unauthorized> =>
  !(typeof u === "object" && u !== null && "_tag" in u && u._tag === "Unauthorized")
