/**
 * The HTTP transport behind `HttpTransport`: one connection speaks modern Streamable HTTP (2026-07-28), legacy
 * Streamable HTTP (2025-03-26 … 2025-11-25) or HTTP+SSE (2024-11-05), whichever the server turns out to be.
 *
 * Every request runs in its own fiber (kept by request id) that POSTs it and reads its answer, a JSON body or an
 * event stream, reporting what arrives as transport events; interrupting that fiber aborts the HTTP request, which
 * is how a modern request is cancelled (the client cancels a request at its deadline, so the exchange needs no
 * timer of its own). Long-lived streams (the legacy GET stream, the
 * HTTP+SSE stream) run in the connection's own fibers. Closing the connection's Scope interrupts them all, then
 * DELETEs the legacy session (bounded in time).
 *
 * @internal
 */
import * as Headers from "@effect/platform/Headers"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as FiberHandle from "effect/FiberHandle"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as FiberSet from "effect/FiberSet"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as McpError from "../McpError.js"
import * as McpSchema from "../McpSchema.js"
import * as OAuth from "../OAuth.js"
import * as Transport from "../Transport.js"
import * as codec from "./codec.js"
import * as HttpAuth from "./httpAuth.js"
import * as Idempotent from "./idempotent.js"
import * as Body from "./httpResponse.js"
import * as McpHeaders from "./mcpHeaders.js"
import * as Redaction from "./httpRedaction.js"
import * as ScopedHttpClient from "./scopedHttpClient.js"
import * as Tracing from "./tracing.js"
import * as WwwAuthenticate from "./wwwAuthenticate.js"

/** @internal */
export type BindingOption = "auto" | "streamable-http" | "sse"

/**
 * Checked options.
 *
 * @internal
 */
export interface Resolved {
  readonly url: URL
  readonly origin: string
  readonly headers: Readonly<Record<string, string>>
  readonly bearerToken: Redacted.Redacted<string> | undefined
  readonly binding: BindingOption
  readonly maxEventBytes: number
  readonly connectTimeout: Duration.Duration
  readonly closeTimeout: Duration.Duration
  readonly maxRetryDelay: Duration.Duration
  readonly resumeAttempts: number
  readonly allowNumberHeaders: boolean
}

type Route = "modern" | "legacy" | "sse"

interface Verdict {
  readonly era: McpSchema.Era
  readonly binding: "streamable-http" | "sse"
}

interface Parked {
  readonly message: McpSchema.JsonRpcRequest
  readonly options: Transport.WireOptions
  /** Whether this is already the one re-send a request gets after its session expired. */
  readonly resent: boolean
}

/** Where an SSE stream stands, for resuming it. */
interface Cursor {
  lastEventId: string | undefined
  retry: number | undefined
  events: number
  /** The GET stream of the session was open once (a later 404 then means the session is gone). */
  opened?: boolean
}

/** What one frame from the server held. */
interface Delivered {
  readonly answered: boolean
  readonly messages: number
}

/** Whose messages a body or stream carries. */
interface Source {
  readonly request: McpSchema.JsonRpcRequest | undefined
  readonly route: Route
  /** Takes the answer to `request` instead of the connection: the transport's own requests. */
  readonly capture?: ((answer: McpSchema.JsonRpcResponse) => void) | undefined
}

interface State {
  closed: boolean
  binding: "streamable-http" | "sse"
  era: McpSchema.Era | undefined
  version: McpSchema.ProtocolVersion | undefined
  /** The legacy version the server agreed to, known from the `initialize` answer on (before `setSession`). */
  legacyVersion: string | undefined
  sessionId: string | undefined
  /** The legacy session the server forgot, until a new one starts. */
  expiredSession: string | undefined
  negotiated: boolean
  sse: Deferred.Deferred<URL, McpError.TransportFailure> | undefined
  readonly routes: Map<McpSchema.RequestId, Route>
  readonly parked: Map<McpSchema.RequestId, Parked>
  /** `x-mcp-header` declarations by tool name, from the `tools/list` answers this connection carried. */
  readonly tools: Map<string, ReadonlyArray<McpHeaders.ParamHeader>>
}

const ACCEPT_BOTH = "application/json, text/event-stream"
const EVENT_STREAM = "text/event-stream"
const JSON_TYPE = "application/json"
/** From this revision on, legacy requests after `initialize` carry `MCP-Protocol-Version`. */
const VERSION_HEADER_SINCE = "2025-06-18"
const cancelTimeout = Duration.seconds(2)
const initialBackoffMillis = 250
/** The most `tools/list` pages read to find a tool after a HeaderMismatch. */
const maxRefreshPages = 20

const SESSION_ID = /^[\x21-\x7e]+$/

/** A short form of a session id for errors: the id is a secret. */
const redactSession = (id: string): string => id.length <= 8 ? "…" : `${id.slice(0, 4)}…`

const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const ErrorBody = Schema.parseJson(Schema.Struct({ error: McpSchema.JsonRpcErrorObject }))
const decodeErrorBody = Schema.decodeUnknownOption(ErrorBody)

/** The JSON-RPC error object a refusal's body carries, if it is one. */
const jsonRpcError = (body: string): McpSchema.JsonRpcErrorObject | undefined =>
  body.length === 0 ? undefined : Option.getOrUndefined(Option.map(decodeErrorBody(body), (decoded) => decoded.error))

const transportError = (
  reason: McpError.TransportError["reason"],
  detail: string,
  cause?: unknown
): McpError.TransportError =>
  new McpError.TransportError({
    transport: "http",
    reason,
    detail,
    ...(cause === undefined ? {} : { cause })
  })

/** A request that only reads: sent once more when its connection is closed under it (see `post`). */
const resendable = (message: McpSchema.JsonRpcMessage): boolean =>
  "method" in message && "id" in message && Idempotent.isIdempotent(message.method)

const cancelReason = (reason: Transport.CancelReason): string =>
  reason === "timeout" ? "Request timed out" : "Request cancelled by the client"

/**
 * Builds the transport service. The HTTP client is the one given here for every connection, so its connection
 * pool outlives reconnect attempts. The era verdicts of this transport are kept per origin.
 *
 * @internal
 */
export const make = (
  resolved: Resolved,
  client: HttpClient.HttpClient,
  oauth?: OAuth.OAuthShape | undefined
): Context.Tag.Service<Transport.Transport> => {
  const verdicts = new Map<string, Verdict>()
  const scopedClient = ScopedHttpClient.withScope(client)
  // what the HTTP client may record in spans: never credentials or the session id
  const withSecrets = Redaction.redactedNames(Redaction.secretHeaderNames(resolved.headers))
  const guarded = Redaction.guarded(withSecrets)
  const send = (
    request: HttpClientRequest.HttpClientRequest
  ): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError, Scope.Scope> => {
    // an exchange's fiber already redacts our names and refuses redirects (see startExchange)
    const sent = guarded(scopedClient.execute(request))
    const redacted = Redaction.redactQuery(request)
    return redacted === undefined ? sent : Redaction.withRedactedUrl(sent, redacted)
  }
  // a URL without a query goes to the HTTP client as text, which it takes as is (a URL object is copied, split
  // into its parts and put together again on every request)
  const target: URL | string = resolved.url.search === "" ? resolved.url.href : resolved.url
  // the credentials are read when each request is sent: `setAuth` swaps them for every later send
  const auth = HttpAuth.make(resolved.url, resolved.bearerToken, oauth)
  /** A 401/403 for a request sent without OAuth, naming the static bearer it carried (by fingerprint). */
  const authError = (status: 401 | 403, response: HttpClientResponse.HttpClientResponse): McpError.AuthError =>
    Body.authError(status, response, auth.fingerprintOf(response.request.headers["authorization"]))
  /**
   * Sends one HTTP request. With the OAuth service, the request carries the authorizer's credentials, and a
   * 401/403 is handed to the authorizer (authorize, refresh, step up, take a DPoP nonce) and re-sent, until it
   * passes or the authorizer gives up with `AuthError`.
   */
  const execute = (
    request: HttpClientRequest.HttpClientRequest
  ): Effect.Effect<
    HttpClientResponse.HttpClientResponse,
    HttpClientError.HttpClientError | McpError.AuthError,
    Scope.Scope
  > => {
    const mode = auth.current()
    if (mode.authorizer === undefined) return send(request)
    return Effect.flatMap(mode.authorizer, (authorizer) =>
      authorizer.execute({ method: request.method, url: new URL(request.url) }, (credentials) =>
        Effect.flatMap(send(HttpClientRequest.setHeaders(request, credentials.headers)), (response) => {
          const nonce = response.headers["dpop-nonce"]
          if (response.status !== 401 && response.status !== 403) {
            return nonce === undefined
              ? Effect.succeed(response)
              : Effect.as(authorizer.observeNonce(nonce), response)
          }
          const header = response.headers["www-authenticate"]
          // the refusal's body is read (and dropped) so that its connection can serve the re-send
          return Effect.zipRight(
            Body.readSnippet(response),
            Effect.fail(
              new OAuth.Unauthorized({
                status: response.status,
                challenges: header === undefined ? [] : WwwAuthenticate.parse(header),
                dpopNonce: nonce
              })
            )
          )
        })))
  }
  /** A failed send: an authorization that gave up stays an `AuthError`; anything else is a connect error. */
  const sendError = (what: string) => (error: HttpClientError.HttpClientError | McpError.AuthError) =>
    error._tag === "AuthError" ? error : Body.connectError(what)(error)

  const baseHeaders = (): Record<string, string> => {
    const headers: Record<string, string> = { ...resolved.headers }
    const bearer = auth.current().header
    if (bearer !== undefined) headers.authorization = bearer
    return headers
  }

  const backoff = (retry: number | undefined, attempt: number): Duration.Duration => {
    // the server's `retry` is a floor (it MUST be waited, even past `maxRetryDelay`); our own backoff, capped by
    // `maxRetryDelay`, keeps a broken stream from spinning
    const exponential = Duration.min(
      Duration.millis(initialBackoffMillis * 2 ** Math.min(attempt, 16)),
      resolved.maxRetryDelay
    )
    return retry === undefined ? exponential : Duration.max(Duration.millis(retry), exponential)
  }

  const connect = (emit: Transport.Emit) =>
    Effect.gen(function*() {
      yield* auth.ready
      const cached = verdicts.get(resolved.origin)
      const state: State = {
        closed: false,
        binding: resolved.binding === "sse" || (resolved.binding === "auto" && cached?.binding === "sse")
          ? "sse"
          : "streamable-http",
        era: undefined,
        version: undefined,
        legacyVersion: undefined,
        sessionId: undefined,
        expiredSession: undefined,
        negotiated: false,
        sse: undefined,
        routes: new Map(),
        parked: new Map(),
        tools: new Map()
      }
      let refreshes = 0
      const knownEra = state.binding === "sse" ? "legacy" : cached?.era

      // Finalizers run last-added first: stop accepting work, interrupt the streams and requests, DELETE the
      // session, and forget a cached verdict this connection could not confirm.
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          if (!state.negotiated) verdicts.delete(resolved.origin)
        })
      )
      yield* Effect.addFinalizer(() => deleteSession)
      // the fiber of each request's exchange, by request id
      const exchanges = new Map<McpSchema.RequestId, Fiber.RuntimeFiber<void>>()
      yield* Effect.addFinalizer(() =>
        Effect.suspend(() => {
          const fibers = [...exchanges.values()]
          exchanges.clear()
          return Fiber.interruptAll(fibers)
        })
      )
      const background = yield* FiberSet.make()
      const getStream = yield* FiberHandle.make()
      yield* Effect.addFinalizer(() => Effect.sync(() => (state.closed = true)))

      const emitOpen = (event: Transport.TransportEvent) => state.closed ? Effect.void : emit(event)

      const closedError = () => transportError("Closed", "the connection was closed")

      // --- messages from the server

      /**
       * Learns from the answer to one of our requests, and returns the result to report when it differs from the
       * one received: the negotiated legacy version from `initialize`; the `x-mcp-header` declarations from a
       * modern `tools/list`, whose tools with an invalid declaration are left out (2026-07-28 `server/tools.mdx`:
       * an HTTP client MUST reject them).
       */
      const onAnswer = (
        request: McpSchema.JsonRpcRequest,
        route: Route,
        result: unknown
      ): Effect.Effect<unknown> | undefined => {
        if (request.method === "initialize" && isObject(result) && typeof result.protocolVersion === "string") {
          state.legacyVersion = result.protocolVersion
        }
        if (request.method !== "tools/list" || route !== "modern") return undefined
        const index = McpHeaders.indexTools(result, { allowNumber: resolved.allowNumberHeaders })
        for (const [name, declarations] of index.valid) state.tools.set(name, declarations)
        for (const { tool } of index.invalid) state.tools.delete(tool)
        if (index.invalid.length === 0 || !isObject(result) || !Array.isArray(result.tools)) return undefined
        const rejected = new Set(index.invalid.map(({ tool }) => tool))
        const tools = result.tools.filter((tool: unknown) => !(isObject(tool) && rejected.has(String(tool.name))))
        return Effect.as(
          Effect.forEach(
            index.invalid,
            ({ reason, tool }) =>
              Effect.logWarning(`left out tool ${tool}: its x-mcp-header declaration is invalid (${reason})`),
            { discard: true }
          ),
          { ...result, tools }
        )
      }

      /** Reports one message from the server; true when it is the answer to the source's request. */
      const deliverOne = (message: McpSchema.JsonRpcMessage, source: Source): Effect.Effect<boolean> => {
        if (McpSchema.isResponse(message)) {
          const request = source.request
          // an error without an id on a request's own stream or body answers that request
          const own = request !== undefined &&
            (message.id === request.id || (message.id === null && "error" in message))
          if (!own || request === undefined) {
            return Effect.as(emitOpen(Transport.TransportEvent.Response({ message })), false)
          }
          if (!("result" in message)) return Effect.as(reply(source, { ...message, id: request.id }), true)
          const learned = onAnswer(request, source.route, message.result)
          if (learned === undefined) return Effect.as(reply(source, message), true)
          return Effect.flatMap(learned, (result) => Effect.as(reply(source, { ...message, result }), true))
        }
        if (McpSchema.isRequest(message)) {
          if (source.route === "modern") {
            return Effect.as(
              Effect.logWarning(`dropped a ${message.method} request a modern server sent on its stream`),
              false
            )
          }
          return Effect.as(
            emitOpen(Transport.TransportEvent.ServerRequest({ message, related: source.request?.id })),
            false
          )
        }
        return Effect.as(emitOpen(Transport.TransportEvent.Notification({ message })), false)
      }

      /** Reports the messages of one frame, in order; `answered` when it held the answer to the source's request. */
      const deliver = (text: string, source: Source): Effect.Effect<Delivered> =>
        Effect.suspend(() => {
          const frame = codec.decodeFrame(text)
          const messages = frame.messages
          let answered = false
          const from = (index: number): Effect.Effect<Delivered> =>
            index === messages.length
              ? Effect.succeed({ answered, messages: messages.length })
              : Effect.flatMap(deliverOne(messages[index]!, source), (own) => {
                answered ||= own
                return from(index + 1)
              })
          if (frame.invalid.length === 0) return from(0)
          return Effect.zipRight(
            Effect.forEach(frame.invalid, (problem) => Effect.logWarning(`dropped a message from the server: ${problem}`), {
              discard: true
            }),
            Effect.suspend(() => from(0))
          )
        })

      /** Reads an event stream until it ends or carries the answer to the source's request. */
      const readEvents = (
        response: HttpClientResponse.HttpClientResponse,
        source: Source,
        cursor: Cursor
      ): Effect.Effect<boolean, McpError.TransportError, Scope.Scope> =>
        Effect.suspend(() => {
          let answered = false
          return Body.forEachSseItem(response, "the event stream broke off", resolved.maxEventBytes, (item) => {
            switch (item._tag) {
              case "Id":
                cursor.lastEventId = item.id
                return true
              case "Retry":
                cursor.retry = item.millis
                return true
              case "Event":
                cursor.events++
                // keep-alive and priming events carry no message
                if (item.event !== "message" || item.data.trim().length === 0) return true
                // once the answer came, the rest is not read
                return Effect.map(deliver(item.data, source), (outcome) => {
                  answered ||= outcome.answered
                  return !answered
                })
            }
          }).pipe(Effect.map(() => answered))
        })

      /**
       * Reports the answer to the source's request. It is handed to the client at once when the client can settle
       * it without running an effect (`unsafeEmit`), so call this only as the reply is due, not ahead.
       */
      const reply = (source: Source, answer: McpSchema.JsonRpcResponse): Effect.Effect<void> => {
        const capture = source.capture
        if (capture !== undefined) return Effect.sync(() => capture(answer))
        if (state.closed) return Effect.void
        const event = Transport.TransportEvent.Response({ message: answer })
        return emit.unsafeEmit?.(event) === true ? Effect.void : emit(event)
      }

      const emitResponse = (request: McpSchema.JsonRpcRequest, error: McpSchema.JsonRpcErrorObject) =>
        emitOpen(Transport.TransportEvent.Response({ message: { jsonrpc: "2.0", id: request.id, error } }))

      // --- sending

      /**
       * POSTs one message. A request that only reads (see `resendable`) whose connection was closed under it before
       * any answer (a kept-alive connection the server closed as it was reused) is sent once more, on another one.
       */
      const post = (
        url: URL | string,
        message: McpSchema.JsonRpcMessage,
        headers: Record<string, string>,
        what: string
      ) => {
        const body = codec.encode(message)
        const posted = HttpClientRequest.bodyText(HttpClientRequest.post(url, { headers }), body, JSON_TYPE)
        const sent = resendable(message)
          ? Effect.catchIf(execute(posted), Body.isClosedUnderRequest, (error) =>
            Effect.zipRight(
              Effect.logDebug(`${what}: the connection was closed before any answer; sending it again`, error.cause),
              execute(posted)
            ))
          : execute(posted)
        return Effect.mapError(sent, (error) => sendError(`${what} could not be sent`)(error))
      }

      const legacyVersionHeader = (headers: Record<string, string>) => {
        const version = state.legacyVersion
        if (version !== undefined && version >= VERSION_HEADER_SINCE) headers["mcp-protocol-version"] = version
      }

      const refused = (response: HttpClientResponse.HttpClientResponse, what: string) =>
        Effect.flatMap(Body.readSnippet(response), (body) =>
          Effect.fail(Body.statusError(response, body, `the server answered ${what} with HTTP ${response.status}`)))

      /** Handles the answer to a request POST (or a resumption GET); fails when the request got no answer. */
      const answer = (
        response: HttpClientResponse.HttpClientResponse,
        request: McpSchema.JsonRpcRequest,
        options: Transport.WireOptions,
        route: Route,
        capture?: (answer: McpSchema.JsonRpcResponse) => void
      ): Effect.Effect<void, McpError.TransportFailure, Scope.Scope> => {
        const source: Source = { request, route, capture }
        const status = response.status
        if (status === 401 || status === 403) return Effect.fail(authError(status, response))
        if (!Body.isSuccess(status) || status === 202 || status === 204) {
          return Effect.flatMap(Body.readSnippet(response), (body) => {
            if (!Body.isSuccess(status) && options.probe !== true) {
              // a JSON-RPC error in a refusal (a modern 400 HeaderMismatch, a 404 method not found) is the answer
              const error = jsonRpcError(body)
              if (error !== undefined) return reply(source, { jsonrpc: "2.0", id: request.id, error })
            }
            return Effect.fail(
              Body.statusError(response, body, `the server answered ${request.method} with HTTP ${status}`)
            )
          })
        }
        // the HTTP client may rebuild its headers on every read: read them once
        const headers = response.headers
        const type = Body.mediaTypeOf(headers)
        if (type === JSON_TYPE) {
          return Effect.flatMap(
            // a body that breaks off loses the answer as a broken stream does
            Effect.catchIf(
              Body.readBody(response, resolved.maxEventBytes, headers),
              (error) => error.reason === "Read",
              (error) => Effect.fail(streamEnded(request, error))
            ),
            (text) =>
              Effect.flatMap(deliver(text, source), (outcome) => {
                if (outcome.answered) return Effect.void
                return Effect.fail(
                  new McpError.TransportError({
                    transport: "http",
                    reason: "Read",
                    detail: outcome.messages === 0
                      ? `the JSON answer to ${request.method} is not a JSON-RPC message`
                      : `the JSON answer to ${request.method} holds no response to request ${request.id}`,
                    status,
                    contentType: headers["content-type"] ?? JSON_TYPE,
                    body: text.length > Body.SNIPPET_BYTES ? text.slice(0, Body.SNIPPET_BYTES) : text
                  })
                )
              })
          )
        }
        if (type === EVENT_STREAM) {
          const cursor: Cursor = { lastEventId: undefined, retry: undefined, events: 0 }
          return Effect.flatMap(Effect.either(readEvents(response, source, cursor)), (outcome) => {
            if (Either.isRight(outcome) && outcome.right) return Effect.void
            const broken = Either.isLeft(outcome) ? outcome.left : undefined
            if (broken?.reason === "FrameTooLarge") return Effect.fail(broken)
            if (route === "legacy" && cursor.lastEventId !== undefined) return resume(request, cursor)
            return Effect.fail(streamEnded(request, broken))
          })
        }
        return Effect.flatMap(Body.readSnippet(response), (body) => {
          const actual = headers["content-type"]
          return Effect.fail(
            new McpError.TransportError({
              transport: "http",
              reason: "Read",
              detail: `the server answered ${request.method} with the unexpected content type ${actual ?? "(none)"}`,
              status,
              ...(actual === undefined ? {} : { contentType: actual }),
              body
            })
          )
        })
      }

      const streamEnded = (request: McpSchema.JsonRpcRequest, broken: McpError.TransportError | undefined) =>
        transportError(
          "StreamEnded",
          broken === undefined
            ? `the response stream of ${request.method} ended before its answer (the request may have run)`
            : `the response stream of ${request.method} broke off before its answer (the request may have run): ${
              broken.detail ?? broken.reason
            }`,
          broken
        )

      // --- modern Streamable HTTP

      /** The `Mcp-Param-*` headers of a request: the caller's (checked), or those its tool declares. */
      const paramHeaders = (
        request: McpSchema.JsonRpcRequest,
        options: Transport.WireOptions
      ): { readonly headers: Record<string, string>; readonly dropped: ReadonlyArray<string> } => {
        if (options.headers !== undefined) return McpHeaders.sanitizeParamHeaders(options.headers)
        const params = request.params
        if (request.method !== "tools/call" || !isObject(params) || typeof params.name !== "string") {
          return { headers: {}, dropped: [] }
        }
        const declarations = state.tools.get(params.name)
        return {
          headers: declarations === undefined ? {} : McpHeaders.paramHeaders(declarations, params.arguments),
          dropped: []
        }
      }

      const modernHeaders = (
        message: McpSchema.JsonRpcRequest | McpSchema.JsonRpcNotification
      ): Either.Either<Record<string, string>, McpError.TransportError> => {
        const standard = McpHeaders.standardHeaders(message)
        if (standard._tag === "Refused") return Either.left(transportError("Write", standard.reason))
        const headers: Record<string, string> = { ...baseHeaders(), accept: ACCEPT_BOTH, ...standard.headers }
        const version = McpHeaders.protocolVersionOf(message) ?? state.version
        if (version !== undefined) headers["mcp-protocol-version"] = version
        return Either.right(headers)
      }

      /** A modern request's exchange, in the given Scope (which closes its response). */
      const modernExchange = (
        request: McpSchema.JsonRpcRequest,
        options: Transport.WireOptions,
        retried = false
      ): Effect.Effect<void, McpError.TransportFailure, Scope.Scope> =>
        Effect.suspend(() => {
          const headers = modernHeaders(request)
          if (Either.isLeft(headers)) return Effect.fail(headers.left)
          const params = paramHeaders(request, options)
          const sent = Effect.flatMap(
            post(target, request, { ...params.headers, ...headers.right }, request.method),
            (response) => {
              // Mcp-Param headers from our own index (the caller gave none): on HeaderMismatch the tool's
              // declarations changed or were never listed, so refresh them and send once more
              const ownHeaders = request.method === "tools/call" && options.headers === undefined
              if (!retried && ownHeaders && response.status === 400) return headerMismatch(response, request, options)
              return answer(response, request, options, "modern")
            }
          )
          if (params.dropped.length === 0) return sent
          return Effect.zipRight(
            Effect.forEach(params.dropped, (reason) => Effect.logWarning(`dropped a header: ${reason}`), {
              discard: true
            }),
            sent
          )
        })

      /** A 400 to a `tools/call` sent with our own `Mcp-Param-*` headers. */
      const headerMismatch = (
        response: HttpClientResponse.HttpClientResponse,
        request: McpSchema.JsonRpcRequest,
        options: Transport.WireOptions
      ): Effect.Effect<void, McpError.TransportFailure> =>
        Effect.gen(function*() {
          const body = yield* Body.readSnippet(response)
          const error = jsonRpcError(body)
          if (error?.code === McpSchema.ErrorCode.HeaderMismatch) {
            yield* Effect.logDebug("the server refused the Mcp-Param headers; refreshing the tool list")
            yield* refreshTools(request)
            return yield* Effect.scoped(modernExchange(request, options, true))
          }
          if (error !== undefined) return yield* emitResponse(request, error)
          return yield* Effect.fail(Body.statusError(response, body, "the server answered tools/call with HTTP 400"))
        })

      /** Lists tools (the transport's own requests, never reported) until the named tool's page is seen. */
      const refreshTools = (call: McpSchema.JsonRpcRequest): Effect.Effect<void> =>
        Effect.gen(function*() {
          const params = isObject(call.params) ? call.params : {}
          const meta = isObject(params._meta) ? params._meta : undefined
          const envelope = meta === undefined
            ? {}
            : { _meta: Object.fromEntries(Object.entries(meta).filter(([key]) => key !== "progressToken")) }
          let cursor: string | undefined
          for (let page = 0; page < maxRefreshPages; page++) {
            const list: McpSchema.JsonRpcRequest = {
              jsonrpc: "2.0",
              id: `conduit-tools-refresh-${++refreshes}`,
              method: "tools/list",
              params: cursor === undefined ? envelope : { ...envelope, cursor }
            }
            const box: { listed?: McpSchema.JsonRpcResponse } = {}
            const sent = yield* Effect.either(Effect.scoped(Effect.gen(function*() {
              const response = yield* post(target, list, yield* modernHeaders(list), list.method)
              yield* answer(response, list, {}, "modern", (listed) => (box.listed = listed))
            })))
            const listed = box.listed
            if (Either.isLeft(sent) || listed === undefined || !("result" in listed) || !isObject(listed.result)) return
            const tools = listed.result.tools
            if (Array.isArray(tools) && tools.some((tool) => isObject(tool) && tool.name === params.name)) return
            const next = listed.result.nextCursor
            if (typeof next !== "string") return
            cursor = next
          }
        }).pipe(Effect.annotateLogs({ method: "tools/list" }))

      // --- legacy Streamable HTTP

      const adoptSession = (response: HttpClientResponse.HttpClientResponse) =>
        Effect.suspend(() => {
          const id = response.headers["mcp-session-id"]
          state.expiredSession = undefined
          if (id === undefined || SESSION_ID.test(id)) {
            // a sessionless handshake clears the old id
            state.sessionId = id
            return Effect.void
          }
          state.sessionId = undefined
          return Effect.logWarning("ignored a session id that is not visible ASCII")
        })

      /** A legacy request's exchange, in the given Scope (which closes its response). */
      const legacyExchange = (
        request: McpSchema.JsonRpcRequest,
        options: Transport.WireOptions,
        resent: boolean
      ): Effect.Effect<void, McpError.TransportFailure, Scope.Scope> =>
        Effect.suspend(() => {
          const initializing = request.method === "initialize"
          const sessionId = initializing ? undefined : state.sessionId
          const headers: Record<string, string> = { ...baseHeaders(), accept: ACCEPT_BOTH }
          if (!initializing) legacyVersionHeader(headers)
          if (sessionId !== undefined) headers["mcp-session-id"] = sessionId
          return Effect.flatMap(post(target, request, headers, request.method), (response) => {
            const status = response.status
            if (initializing) {
              if ((status === 400 || status === 404 || status === 405) && resolved.binding === "auto") {
                return fallBackToSse(response, request)
              }
              if (Body.isSuccess(status)) {
                return Effect.zipRight(adoptSession(response), answer(response, request, options, "legacy"))
              }
            }
            if (status === 404 && sessionId !== undefined) return expired(request, options, sessionId, resent)
            return answer(response, request, options, "legacy")
          })
        })

      /**
       * A 404 to a notification, a response or the GET stream sent in session `sentWith`: the server forgot the
       * session, and the client starts a new one, unless one already replaced it. Requests still go out in the old
       * session meanwhile: one answered 404 waits for the new one (see `expired`).
       */
      const sessionGone = (sentWith: string): Effect.Effect<void> =>
        Effect.suspend(() => {
          if (state.sessionId !== sentWith) return Effect.void
          return Effect.zipRight(
            Effect.logInfo("the server forgot the session; starting a new one"),
            emitOpen(Transport.TransportEvent.SessionExpired({ id: undefined }))
          )
        })

      /** A 404 to a request sent in a session: the server forgot the session. */
      const expired = (
        request: McpSchema.JsonRpcRequest,
        options: Transport.WireOptions,
        sentWith: string,
        resent: boolean
      ): Effect.Effect<void, McpError.TransportFailure> =>
        Effect.suspend(() => {
          if (resent) return Effect.fail(new McpError.SessionExpired({ sessionId: redactSession(sentWith) }))
          if (state.sessionId !== undefined && state.sessionId !== sentWith) {
            // a new session already started: this request goes there at once
            return Effect.scoped(legacyExchange(request, options, true))
          }
          state.parked.set(request.id, { message: request, options, resent: true })
          if (state.expiredSession !== sentWith) {
            state.expiredSession = sentWith
            state.sessionId = undefined
          }
          return Effect.zipRight(
            Effect.logInfo("the server forgot the session; the request waits for a new one"),
            emitOpen(Transport.TransportEvent.SessionExpired({ id: request.id }))
          )
        })

      /** Resumes a broken legacy response stream with GET and `Last-Event-ID`, until the answer arrives. */
      const resume = (
        request: McpSchema.JsonRpcRequest,
        cursor: Cursor
      ): Effect.Effect<void, McpError.TransportFailure> =>
        Effect.gen(function*() {
          let attempt = 0
          while (true) {
            if (attempt >= resolved.resumeAttempts) {
              return yield* Effect.fail(
                transportError(
                  "StreamEnded",
                  `the response stream of ${request.method} broke off and could not be resumed (${attempt} attempts)`
                )
              )
            }
            yield* Effect.sleep(backoff(cursor.retry, attempt))
            attempt++
            const before = cursor.events
            const answered = yield* Effect.scoped(resumeOnce(request, cursor))
            if (answered) return
            if (cursor.events > before) attempt = 0
          }
        })

      const resumeOnce = (
        request: McpSchema.JsonRpcRequest,
        cursor: Cursor
      ): Effect.Effect<boolean, McpError.TransportFailure, Scope.Scope> =>
        Effect.gen(function*() {
          const headers: Record<string, string> = { ...baseHeaders(), accept: EVENT_STREAM }
          legacyVersionHeader(headers)
          const sessionId = state.sessionId
          if (sessionId !== undefined) headers["mcp-session-id"] = sessionId
          if (cursor.lastEventId !== undefined) headers["last-event-id"] = cursor.lastEventId
          const sent = yield* Effect.either(execute(HttpClientRequest.get(resolved.url, { headers })))
          if (Either.isLeft(sent)) {
            if (sent.left._tag === "AuthError") return yield* Effect.fail(sent.left)
            const { detail } = Body.describeClientError(sent.left)
            yield* Effect.logDebug(`resuming the stream of ${request.method} failed: ${detail}`)
            return false
          }
          const response = sent.right
          const status = response.status
          if (status === 401 || status === 403) return yield* Effect.fail(authError(status, response))
          if (status >= 500 || status === 429) return false
          if (!Body.isSuccess(status) || Body.mediaType(response) !== EVENT_STREAM) {
            const body = yield* Body.readSnippet(response)
            return yield* Effect.fail(
              new McpError.TransportError({
                transport: "http",
                reason: "StreamEnded",
                detail: status === 404
                  ? `the session ended before the answer to ${request.method} arrived`
                  : `the server could not resume the response stream of ${request.method} (HTTP ${status})`,
                status,
                body
              })
            )
          }
          const outcome = yield* Effect.either(readEvents(response, { request, route: "legacy" }, cursor))
          if (Either.isRight(outcome)) return outcome.right
          if (outcome.left.reason === "FrameTooLarge") return yield* Effect.fail(outcome.left)
          return false
        })

      /** A background stream that died of a defect: logged, and the `Read` error its connection closes with. */
      const unexpected = (what: string, cause: Cause.Cause<unknown>) =>
        Effect.as(
          Effect.logError(`${what} failed unexpectedly`, cause),
          transportError("Read", `${what} failed unexpectedly`, Cause.squash(cause))
        )

      /** The GET stream of a legacy session: server requests and notifications, reconnected with backoff. */
      const getLoop = Effect.gen(function*() {
        const cursor: Cursor = { lastEventId: undefined, retry: undefined, events: 0 }
        let attempt = 0
        while (true) {
          const before = cursor.events
          const again = yield* Effect.scoped(openGet(cursor))
          if (!again) return
          if (cursor.events > before) attempt = 0
          yield* Effect.sleep(backoff(cursor.retry, attempt))
          attempt++
        }
      }).pipe(
        // a defect (a bug in delivering what was read) closes the connection rather than ending the stream, and
        // the server requests it carries, in silence
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.flatMap(
            unexpected("the GET stream", cause),
            (error) => emitOpen(Transport.TransportEvent.Closed({ error }))
          )
        ),
        Effect.annotateLogs({ module: "HttpTransport", method: "getStream" })
      )

      /** One GET; true when it is worth opening again. */
      const openGet = (cursor: Cursor): Effect.Effect<boolean, never, Scope.Scope> =>
        Effect.gen(function*() {
          const headers: Record<string, string> = { ...baseHeaders(), accept: EVENT_STREAM }
          legacyVersionHeader(headers)
          const sessionId = state.sessionId
          if (sessionId !== undefined) headers["mcp-session-id"] = sessionId
          if (cursor.lastEventId !== undefined) headers["last-event-id"] = cursor.lastEventId
          const sent = yield* Effect.either(execute(HttpClientRequest.get(resolved.url, { headers })))
          if (Either.isLeft(sent)) {
            if (sent.left._tag === "AuthError") {
              yield* Effect.logWarning(`the GET stream was refused: ${sent.left.message}`)
              return false
            }
            yield* Effect.logDebug(`the GET stream could not be opened: ${Body.describeClientError(sent.left).detail}`)
            return true
          }
          const response = sent.right
          const status = response.status
          if (status === 405) {
            yield* Effect.logDebug("the server offers no GET stream")
            return false
          }
          if (status >= 500 || status === 429) {
            yield* Effect.logDebug(`the GET stream was refused with HTTP ${status}; retrying`)
            return true
          }
          if (status === 404 && sessionId !== undefined && cursor.opened) {
            // the session is gone; the new one opens a GET stream of its own (a first GET refused with 404 is a
            // server without one, not a lost session: no loop of new sessions)
            yield* sessionGone(sessionId)
            return false
          }
          if (!Body.isSuccess(status) || Body.mediaType(response) !== EVENT_STREAM) {
            yield* Effect.logWarning(
              status === 404
                ? "the GET stream found no session"
                : `the GET stream was refused (HTTP ${status}, ${Body.contentType(response) ?? "no content type"})`
            )
            return false
          }
          cursor.opened = true
          const outcome = yield* Effect.either(readEvents(response, { request: undefined, route: "legacy" }, cursor))
          if (Either.isLeft(outcome)) yield* Effect.logDebug(`the GET stream broke off: ${outcome.left.message}`)
          return true
        })

      const deleteSession: Effect.Effect<void> = Effect.suspend(() => {
        const sessionId = state.sessionId
        if (sessionId === undefined || state.binding !== "streamable-http") return Effect.void
        const headers: Record<string, string> = { ...baseHeaders(), "mcp-session-id": sessionId }
        legacyVersionHeader(headers)
        return Effect.scoped(
          Effect.flatMap(execute(HttpClientRequest.del(resolved.url, { headers })), Body.readSnippet)
        ).pipe(
          Effect.interruptible,
          Effect.timeout(resolved.closeTimeout),
          Effect.catchAll((error) => Effect.logDebug(`the session could not be deleted: ${error._tag}`)),
          Effect.annotateLogs({ module: "HttpTransport", method: "close" })
        )
      })

      // --- HTTP+SSE (2024-11-05)

      const resolveEndpoint = (data: string): Either.Either<URL, McpError.TransportError> =>
        Either.flatMap(
          Either.try({
            try: () => new URL(data.trim(), resolved.url),
            catch: () => transportError("Connect", "the endpoint event does not hold a URL")
          }),
          (endpoint) =>
            endpoint.origin === resolved.origin
              ? Either.right(endpoint)
              : Either.left(
                transportError(
                  "Connect",
                  `the endpoint event points to another origin (${endpoint.origin}); only ${resolved.origin} is trusted`
                )
              )
        )

      const sseStream = (ready: Deferred.Deferred<URL, McpError.TransportFailure>) =>
        Effect.scoped(
          Effect.gen(function*() {
            const headers: Record<string, string> = { ...baseHeaders(), accept: EVENT_STREAM }
            const response = yield* execute(HttpClientRequest.get(resolved.url, { headers })).pipe(
              Effect.mapError(sendError("the HTTP+SSE stream could not be opened"))
            )
            const status = response.status
            if (status === 401 || status === 403) return yield* Effect.fail(authError(status, response))
            if (!Body.isSuccess(status)) return yield* refused(response, "the HTTP+SSE GET")
            if (Body.mediaType(response) !== EVENT_STREAM) {
              return yield* Effect.fail(
                transportError(
                  "Connect",
                  `the HTTP+SSE GET answered ${Body.contentType(response) ?? "no content type"}`
                )
              )
            }
            let endpointSeen = false
            yield* Body.forEachSseItem(
              response,
              "the HTTP+SSE stream broke off",
              resolved.maxEventBytes,
              (item): boolean | Effect.Effect<boolean, McpError.TransportError> => {
                if (item._tag !== "Event") return true
                if (!endpointSeen) {
                  if (item.event !== "endpoint") {
                    return Effect.fail(
                      transportError("Connect", `the HTTP+SSE stream began with a ${item.event} event, not endpoint`)
                    )
                  }
                  return Either.match(resolveEndpoint(item.data), {
                    onLeft: Effect.fail,
                    onRight: (endpoint) => {
                      endpointSeen = true
                      return Effect.as(Deferred.succeed(ready, endpoint), true)
                    }
                  })
                }
                if (item.event !== "message" || item.data.trim().length === 0) return true
                return Effect.as(deliver(item.data, { request: undefined, route: "sse" }), true)
              }
            )
            return yield* Effect.fail(transportError("Closed", "the HTTP+SSE stream ended"))
          })
        ).pipe(
          // a defect (a bug in delivering what was read) ends the stream like a failure, rather than in silence
          Effect.catchAllCause((cause) => {
            const failure = Cause.failureOption(cause)
            if (Option.isNone(failure) && Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
            const failed = Option.isSome(failure)
              ? Effect.succeed(failure.value)
              : unexpected("the HTTP+SSE stream", cause)
            return Effect.flatMap(Effect.zip(failed, Deferred.isDone(ready)), ([error, done]) => {
              if (!done) return Deferred.fail(ready, error)
              const closed = error._tag === "TransportError" ? error : transportError("Closed", error.message, error)
              return emitOpen(Transport.TransportEvent.Closed({ error: closed }))
            })
          }),
          Effect.annotateLogs({ module: "HttpTransport", method: "sseStream" })
        )

      /** The endpoint of the HTTP+SSE session, opening the stream the first time. */
      const ensureSse: Effect.Effect<URL, McpError.TransportFailure> = Effect.suspend(() => {
        let ready = state.sse
        const open = ready === undefined
        if (ready === undefined) {
          ready = Deferred.unsafeMake<URL, McpError.TransportFailure>(FiberId.none)
          state.sse = ready
        }
        const opened = open ? Effect.asVoid(FiberSet.run(background, sseStream(ready))) : Effect.void
        return Effect.zipRight(
          opened,
          Deferred.await(ready).pipe(
            Effect.timeoutFail({
              duration: resolved.connectTimeout,
              onTimeout: () =>
                transportError(
                  "Timeout",
                  `no endpoint event within ${Duration.format(resolved.connectTimeout)} on the HTTP+SSE stream`
                )
            })
          )
        )
      })

      const ssePost = (
        message: McpSchema.JsonRpcMessage,
        what: string
      ): Effect.Effect<void, McpError.TransportFailure> =>
        Effect.scoped(
          Effect.gen(function*() {
            const endpoint = yield* ensureSse
            const headers: Record<string, string> = { ...baseHeaders(), accept: ACCEPT_BOTH }
            const response = yield* post(endpoint, message, headers, what)
            const status = response.status
            if (status === 401 || status === 403) return yield* Effect.fail(authError(status, response))
            if (!Body.isSuccess(status)) return yield* refused(response, what)
            yield* Body.readSnippet(response)
          })
        )

      /** `initialize` got 400/404/405: try the HTTP+SSE transport on the same URL and send it there. */
      const fallBackToSse = (
        response: HttpClientResponse.HttpClientResponse,
        request: McpSchema.JsonRpcRequest
      ): Effect.Effect<void, McpError.TransportFailure> =>
        Effect.gen(function*() {
          const body = yield* Body.readSnippet(response)
          const error = jsonRpcError(body)
          // a server that names the versions it supports is a Streamable HTTP server: its error is the answer
          if (error !== undefined && error.code === McpSchema.ErrorCode.UnsupportedProtocolVersion) {
            return yield* emitResponse(request, error)
          }
          const endpoint = yield* Effect.either(ensureSse)
          if (Either.isLeft(endpoint)) {
            if (endpoint.left._tag === "AuthError") return yield* Effect.fail(endpoint.left)
            if (error !== undefined) return yield* emitResponse(request, error)
            const refusal = Body.statusError(
              response,
              body,
              `the server refused initialize with HTTP ${response.status}`
            )
            return yield* Effect.fail(
              new McpError.TransportError({
                ...refusal,
                detail: `${refusal.detail}, and the HTTP+SSE fallback failed: ${endpoint.left.message}`,
                cause: endpoint.left
              })
            )
          }
          yield* Effect.logDebug("the server speaks HTTP+SSE (2024-11-05)")
          state.binding = "sse"
          state.routes.set(request.id, "sse")
          yield* ssePost(request, request.method)
        })

      // --- the connection

      const routeOf = (message: McpSchema.JsonRpcRequest | McpSchema.JsonRpcNotification): Route => {
        if (state.binding === "sse") return "sse"
        if (state.era !== undefined) return state.era
        // before the era is settled: the probe and other modern messages carry the version in `_meta`
        const claimed = McpHeaders.protocolVersionOf(message)
        return claimed !== undefined && !McpSchema.isLegacyVersion(claimed) ? "modern" : "legacy"
      }

      const exchange = (
        route: Route,
        request: McpSchema.JsonRpcRequest,
        options: Transport.WireOptions,
        resent: boolean
      ): Effect.Effect<void, McpError.TransportFailure, Scope.Scope> => {
        switch (route) {
          case "modern":
            return modernExchange(request, options)
          case "legacy":
            return legacyExchange(request, options, resent)
          case "sse":
            return ssePost(request, request.method)
        }
      }

      /** The fiber refs of an exchange's fiber (see startExchange). */
      const exchangeRefs = (
        fiberId: FiberId.Runtime,
        refs: FiberRefs.FiberRefs,
        scope: Scope.Scope,
        method: string,
        untraced: boolean
      ): FiberRefs.FiberRefs => {
        const annotations = FiberRefs.getOrDefault(refs, FiberRef.currentLogAnnotations)
        const context = FiberRefs.getOrDefault(refs, FiberRef.currentContext)
        const redactedNames = FiberRefs.getOrDefault(refs, Headers.currentRedactedNames)
        // one copy of the fiber's refs for all of them
        return FiberRefs.updateManyAs(refs, {
          entries: [
            [
              FiberRef.currentLogAnnotations,
              [[fiberId, HashMap.set(HashMap.set(annotations, "module", "HttpTransport"), "method", method)]]
            ],
            [Headers.currentRedactedNames, [[fiberId, withSecrets(redactedNames)]]],
            [FiberRef.currentContext, [[fiberId, Context.add(Redaction.noRedirects(context), Scope.Scope, scope)]]],
            ...(untraced ? [[FiberRef.currentTracerEnabled, [[fiberId, false]]] as const] : [])
          ]
        })
      }

      const startExchange = (
        route: Route,
        request: McpSchema.JsonRpcRequest,
        options: Transport.WireOptions,
        resent: boolean
      ): Effect.Effect<void> =>
        Effect.withFiberRuntime((sender, status) => {
          // a connection that is closing starts nothing more
          if (state.closed) return Effect.void
          state.routes.set(request.id, route)
          const failed = (error: McpError.TransportFailure) =>
            emitOpen(Transport.TransportEvent.RequestFailed({ id: request.id, error }))
          const work = Effect.catchAllCause(exchange(route, request, options, resent), (cause) => {
            const failure = Cause.failureOption(cause)
            if (Option.isSome(failure)) return failed(failure.value)
            // a bug must not leave the caller waiting for its timeout
            const defect = Cause.dieOption(cause)
            // (an interruption: there is no failure to strip)
            if (Option.isNone(defect)) return Effect.failCause(Cause.stripFailures(cause))
            return Effect.zipRight(
              Effect.logError("the exchange died", defect.value),
              failed(transportError("Read", "the HTTP exchange failed unexpectedly", defect.value))
            )
          })
          // With Effect's own tracer and no span to join (the exchange inherits the sender's), the HTTP client's
          // span could be seen by no one: it is not made (nor its trace context sent).
          const untraced = Tracing.untraced(sender)
          // The exchange has its fiber to itself: its log annotations, the header names the HTTP client must
          // redact and the Scope its response lives in are set once for the whole fiber, in one step (nothing to
          // restore: the fiber ends with the exchange), and the scope is closed when the fiber ends. The fiber
          // is interruptible even when the request is sent from an uninterruptible region (it inherits the sender's
          // flags: made so only then).
          const fiberWork = Effect.flatMap(Scope.make(), (scope) => {
            const exchanging = Effect.zipRight(
              Effect.updateFiberRefs((fiberId, refs) => exchangeRefs(fiberId, refs, scope, request.method, untraced)),
              // the Scope is in the fiber's context from the step above, which the types cannot follow
              Effect.onExit(work as Effect.Effect<void>, (exit) => Scope.close(scope, exit))
            )
            return RuntimeFlags.interruption(status.runtimeFlags) ? exchanging : Effect.interruptible(exchanging)
          })
          return Effect.map(Effect.forkDaemon(fiberWork), (fiber) => {
            const previous = exchanges.get(request.id)
            if (previous !== undefined) previous.unsafeInterruptAsFork(FiberId.none)
            exchanges.set(request.id, fiber)
            fiber.addObserver(() => {
              const current = exchanges.get(request.id)
              if (current === fiber) exchanges.delete(request.id)
              // a later exchange of the same request (a re-send) keeps its route
              if (current === fiber || current === undefined) state.routes.delete(request.id)
            })
          })
        })

      const request = (
        message: McpSchema.JsonRpcRequest,
        options: Transport.WireOptions
      ): Effect.Effect<void, McpError.TransportFailure> =>
        Effect.suspend(() => {
          if (state.closed) return Effect.fail(closedError())
          const route = routeOf(message)
          if (route === "legacy" && state.expiredSession !== undefined && message.method !== "initialize") {
            // the session is being replaced: the request goes out in the new one
            state.parked.set(message.id, { message, options, resent: false })
            return Effect.void
          }
          return startExchange(route, message, options, false)
        })

      /** POSTs a notification or a response; the server acknowledges it with 202. */
      const oneWay = (
        message: McpSchema.JsonRpcNotification | McpSchema.JsonRpcResponse,
        route: Route
      ): Effect.Effect<void, McpError.TransportFailure> => {
        const what = "method" in message ? message.method : "a response"
        if (route === "sse") return ssePost(message, what)
        return Effect.scoped(
          Effect.gen(function*() {
            let headers: Record<string, string>
            let sessionId: string | undefined
            if (route === "modern") {
              if (!("method" in message)) {
                return yield* Effect.fail(transportError("Write", "a modern server takes no responses from clients"))
              }
              headers = yield* modernHeaders(message)
            } else {
              if (state.expiredSession !== undefined) {
                return yield* Effect.logDebug(`dropped ${what}: the session expired`)
              }
              headers = { ...baseHeaders(), accept: ACCEPT_BOTH }
              legacyVersionHeader(headers)
              sessionId = state.sessionId
              if (sessionId !== undefined) headers["mcp-session-id"] = sessionId
            }
            const response = yield* post(target, message, headers, what)
            const status = response.status
            if (status === 401 || status === 403) return yield* Effect.fail(authError(status, response))
            if (status === 404 && sessionId !== undefined) {
              // the message is lost with its session (it belonged to it); the next one goes to a new session
              yield* sessionGone(sessionId)
              return yield* Effect.fail(new McpError.SessionExpired({ sessionId: redactSession(sessionId) }))
            }
            if (!Body.isSuccess(status)) return yield* refused(response, what)
            yield* Body.readSnippet(response)
          })
        )
      }

      const bounds = <A>(self: Effect.Effect<A, McpError.TransportFailure>, what: string) =>
        Effect.timeoutFail(self, {
          duration: resolved.connectTimeout,
          onTimeout: () => transportError("Timeout", `${what} got no acknowledgement in time`)
        })

      const notify = (message: McpSchema.JsonRpcNotification): Effect.Effect<void, McpError.TransportFailure> =>
        Effect.suspend(() =>
          state.closed ? Effect.fail(closedError()) : bounds(oneWay(message, routeOf(message)), message.method)
        ).pipe(Effect.annotateLogs({ module: "HttpTransport", method: message.method }))

      const respond = (message: McpSchema.JsonRpcResponse): Effect.Effect<void, McpError.TransportFailure> =>
        Effect.suspend(() => {
          if (state.closed) return Effect.fail(closedError())
          const route: Route = state.binding === "sse" ? "sse" : state.era === "modern" ? "modern" : "legacy"
          return bounds(oneWay(message, route), "a response")
        }).pipe(Effect.annotateLogs({ module: "HttpTransport", method: "respond" }))

      const cancel = (id: McpSchema.RequestId, reason: Transport.CancelReason): Effect.Effect<void> =>
        Effect.suspend(() => {
          // a request waiting for a new session never reached the server
          if (state.parked.delete(id)) return Effect.void
          const route = state.routes.get(id) ??
            (state.binding === "sse" ? "sse" : state.era === "modern" ? "modern" : "legacy")
          const stop = Effect.suspend(() => {
            const fiber = exchanges.get(id)
            if (fiber === undefined) return Effect.void
            exchanges.delete(id)
            return Fiber.interrupt(fiber)
          })
          if (route === "modern") return stop
          const cancelled: McpSchema.JsonRpcNotification = {
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: id, reason: cancelReason(reason) }
          }
          return Effect.zipRight(
            oneWay(cancelled, route).pipe(
              Effect.catchAll((error) => Effect.logDebug(`notifications/cancelled was not delivered: ${error.message}`))
            ),
            stop
          )
        }).pipe(
          // interruptible: callers run this in release steps, where a plain timeout would not fire
          Effect.interruptible,
          Effect.timeout(cancelTimeout),
          Effect.ignore,
          Effect.annotateLogs({ module: "HttpTransport", method: "cancel" })
        )

      const setSession = (session: Transport.SessionInfo): Effect.Effect<void> =>
        Effect.suspend(() => {
          state.era = session.era
          state.version = session.protocolVersion
          if (session.era === "legacy") state.legacyVersion = session.protocolVersion
          state.negotiated = true
          verdicts.set(resolved.origin, { era: session.era, binding: state.binding })
          if (session.era !== "legacy" || state.binding !== "streamable-http") return Effect.void
          state.expiredSession = undefined
          const parked = [...state.parked.values()]
          state.parked.clear()
          return Effect.zipRight(
            Effect.forEach(parked, (entry) => startExchange("legacy", entry.message, entry.options, entry.resent), {
              discard: true
            }),
            // a new session gets a new GET stream (the old one belonged to the old session)
            Effect.asVoid(FiberHandle.run(getStream, getLoop))
          )
        })

      if (state.binding === "sse") yield* ensureSse

      const info: Transport.ConnectedInfo = {
        get binding(): Transport.Binding {
          return state.binding
        },
        origin: resolved.origin,
        target: resolved.url.href,
        era: knownEra
      }
      const connection: Transport.TransportConnection = { info, request, notify, respond, cancel, setSession }
      return connection
    }).pipe(
      Effect.withSpan("HttpTransport.connect", {
        attributes: { "mcp.transport": "http", "server.address": resolved.origin }
      })
    )

  return Transport.Transport.of({
    kind: "http",
    connect,
    setAuth: auth.set,
    credentialPartition: HttpAuth.partitionOf(resolved.bearerToken, oauth, resolved.headers)
  })
}
