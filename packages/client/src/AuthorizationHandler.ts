/**
 * How the user is sent to the authorization server and how the redirect comes back: a loopback redirect
 * listener (desktop apps and the CLI), a paste-the-URL fallback for terminals without a browser on the same
 * machine, and a headless handler for tests that follows the authorization server's redirects itself.
 *
 * The loopback listener needs an HTTP server. It is written against the platform-neutral `HttpServer`
 * service; provide one bound to 127.0.0.1 (for Node, `NodeHttpServer.layer(createServer, { port: 0, host:
 * "127.0.0.1" })`).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Cookies from "effect/http/Cookies"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Terminal from "effect/Terminal"
import * as Body from "./internal/httpResponse.js"
import { oauthError, type OAuthError } from "./internal/oauthError.js"
import { deviceCodeText, printable } from "./internal/printable.js"

/**
 * One authorization in progress.
 *
 * @since 0.1.0
 * @category models
 */
export interface PendingAuthorization {
  /**
   * The redirect URI to register and to put in the authorization request: an https URL, or an http URL on
   * localhost or a loopback address (any other is refused before anything is sent).
   */
  readonly redirectUri: string
  /**
   * Sends the user to `authorizationUrl` and waits for the redirect back. Succeeds with the query parameters
   * of the redirect (`code`, `state`, `iss`, or `error`); checking them is the caller's job.
   */
  readonly complete: (authorizationUrl: URL) => Effect.Effect<URLSearchParams, OAuthError>
}

/**
 * What the user needs to approve a device authorization (RFC 8628).
 *
 * @since 0.1.0
 * @category models
 */
export interface DeviceCode {
  readonly userCode: string
  readonly verificationUri: string
  readonly verificationUriComplete?: string | undefined
  readonly expiresInSeconds: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface AuthorizationHandlerShape {
  /** Prepares one authorization (binds the redirect target); released with the Scope. */
  readonly begin: Effect.Effect<PendingAuthorization, OAuthError, Scope.Scope>
  /** Shows the user code and where to enter it. */
  readonly showDeviceCode: (code: DeviceCode) => Effect.Effect<void>
}

/**
 * The authorization handler service.
 *
 * @since 0.1.0
 * @category tags
 */
export class AuthorizationHandler extends Context.Service<AuthorizationHandler, AuthorizationHandlerShape>()(
  "@conduit-mcp/client/AuthorizationHandler"
) {}

const isWebUrl = (url: URL) => url.protocol === "https:" || url.protocol === "http:"

const logDeviceCode = (code: DeviceCode) =>
  Effect.logInfo(deviceCodeText(code.userCode, [code.verificationUri])).pipe(
    Effect.annotateLogs({ module: "AuthorizationHandler" })
  )

/**
 * Options of {@link layerLoopback}.
 *
 * @since 0.1.0
 * @category models
 */
export interface LoopbackOptions {
  /** Path of the redirect URI (default `/callback`). */
  readonly path?: string | undefined
  /**
   * Opens the authorization URL in the system browser. Implementations must not pass the URL through a shell.
   * Without it the URL is logged at Info level for the user to open.
   */
  readonly open?: ((url: URL) => Effect.Effect<void>) | undefined
  /** How long to wait for the user (default 5 minutes). */
  readonly timeout?: Duration.Input | undefined
  /** Shows a device code; defaults to logging it at Info level. */
  readonly showDeviceCode?: ((code: DeviceCode) => Effect.Effect<void>) | undefined
}

const callbackPage = (title: string) =>
  HttpServerResponse.html(
    `<!doctype html><meta charset="utf-8"><title>${title}</title><p>${title}. You can close this window.</p>`
  )

/**
 * A loopback redirect listener (RFC 8252 §7.3): the redirect URI is `http://127.0.0.1:<port><path>` on the
 * `HttpServer` the layer is given. Callbacks are matched to authorizations by `state`; the server's request
 * tracing is disabled so the code never lands in a span.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLoopback = (
  options?: LoopbackOptions
): Layer.Layer<AuthorizationHandler, never, HttpServer.HttpServer> =>
  Layer.effect(
    AuthorizationHandler,
    Effect.gen(function*() {
      const server = yield* HttpServer.HttpServer
      const path = options?.path ?? "/callback"
      const timeout = Duration.fromInputUnsafe(options?.timeout ?? Duration.minutes(5))
      const waiting = new Map<string, Deferred.Deferred<URLSearchParams>>()
      const app = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const url = new URL(request.url, "http://127.0.0.1")
        if (request.method !== "GET" || url.pathname !== path) return HttpServerResponse.empty({ status: 404 })
        const state = url.searchParams.get("state")
        const deferred = state !== null ? waiting.get(state) : undefined
        if (deferred === undefined) return HttpServerResponse.text("unknown or expired authorization", { status: 400 })
        yield* Deferred.succeed(deferred, url.searchParams)
        return callbackPage(url.searchParams.has("error") ? "Authorization failed" : "Authorization complete")
      })
      yield* server.serve(app).pipe(Effect.provideService(HttpMiddleware.TracerDisabledWhen, () => true))
      const address = server.address
      const inet = address._tag === "UnixPathAddress" ? undefined : address
      // (the address is an object: `NetAddress.formatIp` gives its text)
      const v6 = inet?._tag === "InetAddressV6" ? NetAddress.formatIp(inet.address) : undefined
      const host = v6 !== undefined && v6 !== "::" ? `[${v6}]` : "127.0.0.1"
      const port = inet === undefined ? 0 : inet.port
      const redirectUri = `http://${host}:${port}${path}`
      const open = options?.open ??
        ((url: URL) =>
          Effect.logInfo(printable(`Open this URL in a browser to authorize: ${url.href}`)).pipe(
            Effect.annotateLogs({ module: "AuthorizationHandler" })
          ))
      return AuthorizationHandler.of({
        begin: Effect.succeed<PendingAuthorization>({
          redirectUri,
          complete: (authorizationUrl) =>
            Effect.gen(function*() {
              const state = authorizationUrl.searchParams.get("state")
              if (state === null || !isWebUrl(authorizationUrl)) {
                return yield* oauthError("InvalidCallback", "the authorization URL has no state or is not http(s)")
              }
              const deferred = yield* Deferred.make<URLSearchParams>()
              return yield* Effect.acquireUseRelease(
                Effect.sync(() => waiting.set(state, deferred)),
                () =>
                  Effect.andThen(open(authorizationUrl), Deferred.await(deferred)).pipe(
                    Effect.timeoutOrElse({
                      duration: timeout,
                      orElse: () => Effect.fail(oauthError("Cancelled", "no redirect came back before the timeout"))
                    })
                  ),
                () => Effect.sync(() => waiting.delete(state))
              )
            })
        }),
        showDeviceCode: options?.showDeviceCode ?? logDeviceCode
      })
    })
  )

/**
 * Shows the authorization URL on the terminal and reads back the URL the browser was redirected to (the page
 * itself may fail to load: only its address matters).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPaste = (options: {
  /** A redirect URI registered for this client; nothing needs to listen there. */
  readonly redirectUri: string
}): Layer.Layer<AuthorizationHandler, never, Terminal.Terminal> =>
  Layer.effect(
    AuthorizationHandler,
    Effect.map(Terminal.Terminal, (terminal) => {
      const fail = () => oauthError("Cancelled", "the terminal could not be used to complete the authorization")
      return AuthorizationHandler.of({
        begin: Effect.succeed<PendingAuthorization>({
          redirectUri: options.redirectUri,
          complete: (authorizationUrl) =>
            Effect.gen(function*() {
              yield* terminal.display(
                `Open this URL in a browser and authorize:\n\n  ${printable(authorizationUrl.href)}\n\n` +
                  "Then paste the full address of the page you were redirected to:\n> "
              ).pipe(Effect.mapError(fail))
              const line = (yield* terminal.readLine.pipe(Effect.mapError(fail))).trim()
              const pasted = URL.canParse(line) ? new URL(line) : undefined
              if (pasted === undefined) return yield* oauthError("InvalidCallback", "the pasted text is not a URL")
              return pasted.searchParams
            })
        }),
        // what the authorization server gave is shown escaped, its URLs normalised, and only an http(s) URL
        // without credentials as one to visit
        showDeviceCode: (code) =>
          terminal.display(
            `${deviceCodeText(code.userCode, [code.verificationUriComplete, code.verificationUri])}\n`
          ).pipe(Effect.ignore)
      })
    })
  )

/**
 * A page the headless handler reached that is neither a redirect nor the redirect URI.
 *
 * @since 0.1.0
 * @category models
 */
export interface HeadlessPage {
  readonly url: URL
  readonly status: number
  readonly headers: Headers.Headers
  readonly body: string
}

/**
 * Options of {@link layerHeadless}.
 *
 * @since 0.1.0
 * @category models
 */
export interface HeadlessOptions {
  /** The redirect URI to announce; it is never contacted (default `http://127.0.0.1/callback`). */
  readonly redirectUri?: string | undefined
  /** The most redirects to follow for one authorization (default 10). */
  readonly maxSteps?: number | undefined
  /**
   * Answers a page that needs interaction (a login or consent form): returns the next request to send, or
   * `None` to give up. Without it, any page fails the authorization.
   */
  readonly interact?:
    | ((page: HeadlessPage) => Effect.Effect<Option.Option<HttpClientRequest.HttpClientRequest>>)
    | undefined
  /** Receives device codes (for example to approve them through a test endpoint). */
  readonly showDeviceCode?: ((code: DeviceCode) => Effect.Effect<void>) | undefined
}

/** The largest page the headless handler reads (an authorization server's answers are bounded, see OAuth). */
const MAX_PAGE_BYTES = 1024 * 1024

/**
 * For tests and automation: requests the authorization URL itself, follows redirects (keeping cookies) and
 * returns as soon as a redirect points to the redirect URI, without contacting it. `Location` headers are
 * redacted from the HTTP client's spans, since they carry the code.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHeadless = (
  options?: HeadlessOptions
): Layer.Layer<AuthorizationHandler, never, HttpClient.HttpClient> =>
  Layer.effect(
    AuthorizationHandler,
    Effect.map(HttpClient.HttpClient, (client) => {
      const redirectUri = options?.redirectUri ?? "http://127.0.0.1/callback"
      const target = new URL(redirectUri)
      const isCallback = (url: URL) => url.origin === target.origin && url.pathname === target.pathname
      const maxSteps = options?.maxSteps ?? 10
      const complete = (authorizationUrl: URL) =>
        Effect.gen(function*() {
          const cookies = HttpClient.withCookiesRef(client, yield* Ref.make<ReadonlyArray<Cookies.Cookie>>([]))
          let request = HttpClientRequest.get(authorizationUrl)
          for (let step = 0; step < maxSteps; step++) {
            const url = Option.getOrElse(HttpClientRequest.toUrl(request), () => authorizationUrl)
            const page = yield* Effect.scoped(Effect.gen(function*() {
              const response = yield* cookies.execute(request)
              // (a page is bounded like every answer of an authorization server)
              const body = response.status >= 300 && response.status < 400
                ? ""
                : yield* Body.readBody(response, MAX_PAGE_BYTES)
              return { url, status: response.status, headers: response.headers, body }
            })).pipe(
              Effect.mapError((e) =>
                oauthError(
                  "InvalidCallback",
                  `fetching ${url.origin}${url.pathname} failed: ${
                    e._tag === "HttpClientError" ? Body.reasonName(e.reason) : e.reason
                  }`
                )
              )
            )
            const location = page.headers["location"]
            if (page.status >= 300 && page.status < 400 && location !== undefined) {
              const parsed = Option.liftThrowable(() => new URL(location, url))()
              if (Option.isNone(parsed)) return yield* oauthError("InvalidCallback", "a redirect's Location is not a URL")
              const next = parsed.value
              if (isCallback(next)) return next.searchParams
              if (!isWebUrl(next)) return yield* oauthError("InvalidCallback", "a redirect uses a non-web scheme")
              request = HttpClientRequest.get(next)
              continue
            }
            const answer = options?.interact !== undefined ? yield* options.interact(page) : Option.none()
            if (Option.isNone(answer)) {
              return yield* oauthError(
                "InvalidCallback",
                `the authorization server answered HTTP ${page.status} at ${url.origin}${url.pathname} ` +
                  "without redirecting back"
              )
            }
            request = answer.value
          }
          return yield* oauthError("InvalidCallback", `no redirect back after ${maxSteps} steps`)
        }).pipe(
          Effect.provideService(Headers.CurrentRedactedNames, ["authorization", "cookie", "set-cookie", "location"]),
          // redirects are followed here, one by one, so that the one to the redirect URI is never sent
          Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" })
        )
      return AuthorizationHandler.of({
        begin: Effect.succeed<PendingAuthorization>({ redirectUri, complete }),
        showDeviceCode: options?.showDeviceCode ?? logDeviceCode
      })
    })
  )
