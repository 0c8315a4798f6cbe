/**
 * The HTTP transport: one URL, whatever is behind it. A modern server (2026-07-28 Streamable HTTP), a legacy
 * Streamable HTTP server (2025-03-26 … 2025-11-25) and an old HTTP+SSE server (2024-11-05) all work the same
 * from the caller's side: the client's era probe goes out as a modern POST, a legacy verdict sends `initialize`
 * over POST, and an `initialize` refused with 400/404/405 falls back to the HTTP+SSE stream on the same URL.
 *
 * The transport runs over Effect's `HttpClient` (`effect/http/HttpClient`), taken once when the layer is built and used by every
 * connection, so its connection pool survives reconnects. In Node, provide the undici-backed client
 * (`NodeHttpClient.layerUndici` from `@effect/platform-node`); any other `HttpClient` layer works too. A body
 * whose `content-length` is valid and within `maxEventBytes` is read in one piece with `response.text`; any other
 * (a chunked body, an event stream) through `response.stream`, counted against `maxEventBytes` as it arrives.
 *
 * Sockets belong to the `HttpClient` layer, never to the transport: `NodeHttpClient.layerUndici` makes an undici
 * `Agent` each time it is built, so a program that builds a client layer per connection opens new sockets for
 * every connect, and they close with the layer. Within one connection the handshake and the first request after
 * it share one socket (and a legacy session's GET stream holds another): undici takes a kept-alive socket back only
 * in the turn after the answer it carried, so the transport waits for that turn before each step of the
 * handshake, before the connect resolves and before the session's DELETE (a test that fakes `setImmediate`, as
 * `vi.useFakeTimers()` does by default, must let it run for a connect to finish). To keep kept-alive sockets across
 * clients built one after the other (as the SDKs' `fetch` does with Node's global dispatcher), build the layer from
 * `NodeHttpClient.layerUndiciNoDispatcher` and a dispatcher that outlives the clients:
 * `NodeHttpClient.dispatcherLayerGlobal` (undici's global dispatcher, shared with `fetch`), or one `Agent` of your
 * own, `Layer.succeed(NodeHttpClient.Dispatcher, agent)`. The transport never shares a dispatcher by itself:
 * layers built separately keep their own sockets.
 *
 * - Modern: one POST per request with `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*`
 *   headers of tools whose `inputSchema` declares `x-mcp-header`; answers as JSON or an event stream; cancelling
 *   closes the request's stream and sends nothing.
 * - Legacy Streamable HTTP: the session id of the `initialize` answer on every later request, the GET stream for
 *   server-initiated messages, resumption of a broken response stream with `Last-Event-ID`, `notifications/cancelled`
 *   on cancel, and a DELETE of the session when the connection closes. A 404 in a live session reports
 *   `SessionExpired` and the request is sent once more in the new session.
 * - HTTP+SSE: the GET stream's `endpoint` event names where to POST (it must have the URL's origin).
 * - A request that only reads (`ping`, `server/discover`, the list requests, `resources/read`, `prompts/get`,
 *   `completion/complete`) whose connection is closed under it before any answer (a server closing an idle
 *   kept-alive connection just as the client reuses it) is sent once more; any other request (a tool call could
 *   have reached the server) fails with a `Connect` error.
 * - At most `maxInFlight` requests (default 256) wait for the start of their answer at once; the others wait their
 *   turn. A burst of calls thus reuses kept-alive connections instead of opening a socket per call (which overflows
 *   a server's accept queue: connections reset, calls lost); a server that holds answers until many calls are in
 *   flight still gets them, in steps (see the option). A request whose connection could not be made (refused,
 *   unreachable, reset while connecting) never reached the server and is sent once more, whatever its method.
 * - 401/403 become `AuthError` with the parsed `WWW-Authenticate` challenges. Tokens never appear in errors, logs
 *   or spans; nor do session ids: the values of query parameters named like session ids or credentials (the
 *   HTTP+SSE endpoint's `?sessionId=`, `token`, `key`, …) are recorded as `REDACTED` in the HTTP client's spans
 *   (`url.full`, `url.query`).
 * - Redirects are never followed, so credentials and session ids never go to another origin: a 3xx answer is an
 *   `HttpStatus` failure. The fetch client is told so with every request (`redirect: "manual"`); the platform's
 *   undici and `node:http` clients never follow. A client that follows redirects on its own (wrapped with
 *   `HttpClient.followRedirects`, or an undici dispatcher composed with undici's redirect interceptor) is beyond
 *   the transport's reach: do not give it one.
 * - OAuth: when the transport is given the {@link OAuth.OAuth} service (its `oauth` option; no static `bearerToken`),
 *   every request carries the authorizer's credentials (a Bearer token, or a DPoP-bound token with a fresh proof),
 *   and a 401/403 goes to the authorizer — authorize, refresh, step up scopes, take a DPoP nonce — and the request
 *   is sent again, until it passes or the authorizer gives up with `AuthError`.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Redacted from "effect/Redacted"
import * as Admission from "./internal/httpAdmission.js"
import * as Codec from "./internal/codec.js"
import * as HttpAuth from "./internal/httpAuth.js"
import * as internal from "./internal/httpTransport.js"
import * as McpHeaders from "./internal/mcpHeaders.js"
import * as McpError from "./McpError.js"
import type * as OAuth from "./OAuth.js"
import * as Transport from "./Transport.js"

/**
 * Which HTTP binding to use. `auto` (the default) finds out; `streamable-http` never falls back to HTTP+SSE;
 * `sse` speaks the deprecated HTTP+SSE transport (2024-11-05) from the start.
 *
 * @since 0.1.0
 * @category models
 */
export type BindingOption = "auto" | "streamable-http" | "sse"

/**
 * @since 0.1.0
 * @category models
 */
/**
 * The credentials the HTTP transport sends, as swapped at runtime by `McpClient.setAuth`.
 *
 * @since 0.1.0
 * @category models
 */
export type Auth = Data.TaggedEnum<{
  /** A static token, sent as `Authorization: Bearer …`. */
  Bearer: { readonly token: Redacted.Redacted<string> }
  /** OAuth: the given service, or the one the transport was built with. */
  OAuth: { readonly service?: OAuth.OAuthShape | undefined }
  /** No credentials at all. */
  None: {}
}>

/**
 * Constructors for {@link Auth}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Auth = Data.taggedEnum<Auth>()

/**
 * The options of {@link layer} and {@link make}: the server's URL and how to reach it.
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpTransportOptions<R = never> {
  /** The MCP endpoint (or, for HTTP+SSE, the SSE URL). `http:` or `https:`, without credentials. */
  readonly url: string | URL
  /** Headers sent with every request (static credentials such as an API key). They may not replace the headers
   * the transport owns (`Authorization`, `Accept`, `Content-Type`, `MCP-Protocol-Version`, `Mcp-Method`,
   * `Mcp-Name`, `Mcp-Session-Id`, `Last-Event-ID`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** A static bearer token, sent as `Authorization: Bearer …`. */
  readonly bearerToken?: Redacted.Redacted<string> | undefined
  /**
   * OAuth for this server (ignored when a static `bearerToken` is given): the `OAuth` service, or an effect that
   * gives it — its tag, `oauth: OAuth.OAuth`, to take it from a layer, which then shows in the transport's
   * requirements. Without it, a 401/403 fails with `AuthError`.
   */
  readonly oauth?: OAuth.OAuthShape | Effect.Effect<OAuth.OAuthShape, never, R> | undefined
  /** Defaults to `"auto"`. */
  readonly binding?: BindingOption | undefined
  /** The largest message (an SSE event or a JSON body) the server may send, in bytes (default 64 MiB). */
  readonly maxEventBytes?: number | undefined
  /**
   * How deep the arrays and objects of one message (an SSE event or a JSON body) may nest (default 512), checked in
   * one pass over its text before it is parsed; a deeper one is dropped and logged, and counts against
   * `maxRefusedFrames`.
   */
  readonly maxFrameDepth?: number | undefined
  /**
   * How many values one message may hold, counted as its arrays, objects and the commas between values (default
   * 1 000 000), checked with the depth; a message with more is dropped and logged, and counts against
   * `maxRefusedFrames`.
   */
  readonly maxFrameValues?: number | undefined
  /**
   * How many messages the server may send that are refused (malformed JSON, past `maxFrameDepth` or
   * `maxFrameValues`, not JSON-RPC, larger than `maxEventBytes`) before the connection is closed with
   * `TransportError` `TooManyRefusedFrames` (default 100): that many at once, earned back at that many a minute.
   */
  readonly maxRefusedFrames?: number | undefined
  /** How long to wait for the HTTP+SSE `endpoint` event and for a notification to be acknowledged (default 10 s). */
  readonly connectTimeout?: Duration.Input | undefined
  /** How long the DELETE of a legacy session may take when the connection closes (default 2 s). */
  readonly closeTimeout?: Duration.Input | undefined
  /**
   * The longest wait of the client's own backoff before reopening a broken event stream (default 30 s). A `retry`
   * the server sent on the stream is always waited in full, even when it is longer.
   */
  readonly maxRetryDelay?: Duration.Input | undefined
  /** How many times a broken legacy response stream is resumed without progress before its request fails
   * (default 5). */
  readonly resumeAttempts?: number | undefined
  /** Mirror `x-mcp-header` declarations on `number` properties too. The spec forbids them; off by default. */
  readonly allowNumberHeaders?: boolean | undefined
  /**
   * How many requests may wait for the start of their answer at once (default 256); more wait their turn, in
   * order. Over HTTP/1.1 this bounds the connections opened at once to the server: a burst of calls reuses a few
   * hundred kept-alive connections instead of opening one socket per call. A server that holds its answers until
   * more calls are in flight is never deadlocked: while no request is answered for a second, the bound doubles
   * every second until no request waits (256, 512, 1 024…: a burst of 10 000 is all out after 6 seconds), then it
   * is back to its size.
   */
  readonly maxInFlight?: number | undefined
}

const defaults = {
  maxEventBytes: 64 * 1024 * 1024,
  maxFrameDepth: Codec.defaultLimits.maxDepth,
  maxFrameValues: Codec.defaultLimits.maxValues,
  maxRefusedFrames: Codec.defaultMaxRefusedFrames,
  connectTimeout: Duration.seconds(10),
  closeTimeout: Duration.seconds(2),
  maxRetryDelay: Duration.seconds(30),
  resumeAttempts: 5,
  maxInFlight: Admission.defaultPlaces
}

const invalid = (option: string, detail: string) => Result.fail(new McpError.InvalidOption({ option, detail }))

const duration = (
  option: string,
  input: Duration.Input | undefined,
  fallback: Duration.Duration
): Result.Result<Duration.Duration, McpError.InvalidOption> => {
  if (input === undefined) return Result.succeed(fallback)
  if ((typeof input === "number" || typeof input === "bigint") && !(input > 0)) {
    return invalid(option, "must be a positive duration")
  }
  const decoded = Duration.fromInput(input)
  if (Option.isNone(decoded)) return invalid(option, "not a duration")
  if (!Duration.isFinite(decoded.value) || Duration.toMillis(decoded.value) <= 0) {
    return invalid(option, "must be a positive, finite duration")
  }
  return Result.succeed(decoded.value)
}

const UNSAFE_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/

const resolve = (options: HttpTransportOptions<unknown>): Result.Result<internal.Resolved, McpError.InvalidOption> => {
  // The options may come from Config or from untyped callers: check shapes as well as values.
  const input: unknown = options.url
  let url: URL
  if (input instanceof URL) {
    url = new URL(input.href)
  } else if (typeof input === "string" && URL.canParse(input)) {
    url = new URL(input)
  } else {
    return invalid("url", "must be an absolute URL")
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return invalid("url", "must be an http: or https: URL")
  if (url.username !== "" || url.password !== "") {
    return invalid("url", "must not carry credentials; use bearerToken or headers")
  }
  url.hash = ""
  const headers = options.headers ?? {}
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) {
    return invalid("headers", "must be a record of strings")
  }
  const seen = new Set<string>()
  for (const [name, value] of Object.entries(headers)) {
    if (!McpHeaders.isToken(name)) return invalid("headers", `${JSON.stringify(name)} is not a valid header name`)
    const lower = name.toLowerCase()
    if (McpHeaders.OWNED_HEADERS.has(lower) || lower.startsWith("mcp-param-")) {
      return invalid("headers", `${name} is set by the transport`)
    }
    if (seen.has(lower)) return invalid("headers", `${name} is given twice`)
    seen.add(lower)
    if (typeof value !== "string" || UNSAFE_VALUE.test(value)) {
      return invalid("headers", `the value of ${name} must be a string without control characters`)
    }
  }
  const token = options.bearerToken
  if (token !== undefined) {
    const refused = HttpAuth.checkBearer(token)
    if (refused !== undefined) return invalid("bearerToken", refused)
  }
  const binding = options.binding ?? "auto"
  if (binding !== "auto" && binding !== "streamable-http" && binding !== "sse") {
    return invalid("binding", `must be "auto", "streamable-http" or "sse"`)
  }
  const maxEventBytes = options.maxEventBytes ?? defaults.maxEventBytes
  if (typeof maxEventBytes !== "number" || !Number.isSafeInteger(maxEventBytes) || maxEventBytes <= 0) {
    return invalid("maxEventBytes", "must be a positive integer")
  }
  const positive = (value: unknown): value is number =>
    typeof value === "number" && Number.isSafeInteger(value) && value > 0
  const maxFrameDepth = options.maxFrameDepth ?? defaults.maxFrameDepth
  if (!positive(maxFrameDepth)) return invalid("maxFrameDepth", "must be a positive integer")
  const maxFrameValues = options.maxFrameValues ?? defaults.maxFrameValues
  if (!positive(maxFrameValues)) return invalid("maxFrameValues", "must be a positive integer")
  const maxRefusedFrames = options.maxRefusedFrames ?? defaults.maxRefusedFrames
  if (!positive(maxRefusedFrames)) return invalid("maxRefusedFrames", "must be a positive integer")
  const resumeAttempts = options.resumeAttempts ?? defaults.resumeAttempts
  if (typeof resumeAttempts !== "number" || !Number.isSafeInteger(resumeAttempts) || resumeAttempts < 0) {
    return invalid("resumeAttempts", "must be a non-negative integer")
  }
  const allowNumberHeaders = options.allowNumberHeaders ?? false
  if (typeof allowNumberHeaders !== "boolean") return invalid("allowNumberHeaders", "must be a boolean")
  const maxInFlight = options.maxInFlight ?? defaults.maxInFlight
  if (typeof maxInFlight !== "number" || !Number.isSafeInteger(maxInFlight) || maxInFlight <= 0) {
    return invalid("maxInFlight", "must be a positive integer")
  }
  return Result.map(
    Result.all([
      duration("connectTimeout", options.connectTimeout, defaults.connectTimeout),
      duration("closeTimeout", options.closeTimeout, defaults.closeTimeout),
      duration("maxRetryDelay", options.maxRetryDelay, defaults.maxRetryDelay)
    ]),
    ([connectTimeout, closeTimeout, maxRetryDelay]) => ({
      url,
      origin: url.origin,
      headers: { ...headers },
      bearerToken: token,
      binding,
      maxEventBytes,
      limits: { maxDepth: maxFrameDepth, maxValues: maxFrameValues },
      maxRefusedFrames,
      connectTimeout,
      closeTimeout,
      maxRetryDelay,
      resumeAttempts,
      allowNumberHeaders,
      maxInFlight
    })
  )
}

/**
 * Builds the transport on the `HttpClient` in context. The options are checked first: an invalid one fails with
 * `InvalidOption` before any I/O.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const O extends HttpTransportOptions<unknown>>(
  options: O
): Effect.Effect<
  Transport.Transport["Service"],
  McpError.InvalidOption,
  HttpClient.HttpClient | Requirements<O>
> =>
  Effect.flatMap(Effect.suspend(() => Effect.fromResult(resolve(options))), (resolved) =>
    Effect.map(
      Effect.all([HttpClient.HttpClient, oauthOf(options.oauth)]),
      ([client, oauth]) => internal.make(resolved, client, oauth)
    )) as Effect.Effect<
      Transport.Transport["Service"],
      McpError.InvalidOption,
      // the requirements of the `oauth` effect, which the body reads as `unknown`
      HttpClient.HttpClient | Requirements<O>
    >

/**
 * What a transport built with these options requires besides an `HttpClient`: the `oauth` effect's requirements.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements<O> = O extends { readonly oauth?: infer X } ?
  X extends Effect.Effect<infer _A, infer _E, infer R> ? R : never
  : never

const oauthOf = <R>(
  given: OAuth.OAuthShape | Effect.Effect<OAuth.OAuthShape, never, R> | undefined
): Effect.Effect<OAuth.OAuthShape | undefined, never, R> =>
  given === undefined ? Effect.succeed(undefined) : Effect.isEffect(given) ? given : Effect.succeed(given)

/**
 * The HTTP transport as a Layer.
 *
 * @example
 * ```ts
 * import * as HttpTransport from "@conduit-mcp/client/HttpTransport"
 * import * as McpClient from "@conduit-mcp/client/McpClient"
 * import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
 * import * as Layer from "effect/Layer"
 * import * as Redacted from "effect/Redacted"
 *
 * const ClientLive = McpClient.layer().pipe(
 *   Layer.provide(HttpTransport.layer({ url: "https://mcp.example.com/mcp", bearerToken: Redacted.make("…") })),
 *   Layer.provide(NodeHttpClient.layerUndici)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <const O extends HttpTransportOptions<unknown>>(
  options: O
): Layer.Layer<Transport.Transport, McpError.InvalidOption, HttpClient.HttpClient | Requirements<O>> =>
  Layer.effect(Transport.Transport, make(options))

/**
 * {@link layer} with options read from `Config`.
 *
 * @example
 * ```ts
 * import * as HttpTransport from "@conduit-mcp/client/HttpTransport"
 * import * as Config from "effect/Config"
 *
 * const TransportLive = HttpTransport.layerConfig({
 *   url: Config.String("MCP_URL"),
 *   bearerToken: Config.option(Config.Redacted("MCP_TOKEN")).pipe(Config.map((o) => o._tag === "Some" ? o.value : undefined))
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = <R = never>(
  config: Config.Wrap<Omit<HttpTransportOptions, "oauth">>,
  oauth?: OAuth.OAuthShape | Effect.Effect<OAuth.OAuthShape, never, R>
): Layer.Layer<Transport.Transport, McpError.InvalidOption | Config.ConfigError, HttpClient.HttpClient | R> =>
  Layer.unwrap(Effect.map(Config.unwrap(config), (options) =>
    Layer.effect(
      Transport.Transport,
      make<HttpTransportOptions<R>>(oauth === undefined ? options : { ...options, oauth }) as Effect.Effect<
        Transport.Transport["Service"],
        McpError.InvalidOption,
        HttpClient.HttpClient | R
      >
    )))
