/**
 * Reading HTTP responses for the HTTP transport: media types, bounded bodies, and the translation of HTTP
 * outcomes into the transport's typed failures. Nothing here puts a request header (a bearer token, a session id)
 * into an error.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Headers from "effect/http/Headers"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as McpError from "../McpError.js"
import { concatBytes } from "./bytes.js"
import { lazyImport } from "./lazyImport.js"
import * as Sse from "./sse.js"
import type * as WwwAuthenticate from "./wwwAuthenticate.js"

// The `WWW-Authenticate` parser, loaded with the first refusal that carries the header: a connection the server
// never refuses does not load it
const loadWwwAuthenticate: Effect.Effect<typeof WwwAuthenticate> = lazyImport(() => import("./wwwAuthenticate.js"))

/** How much of a refusal's body is kept for diagnostics and the era probe. */
export const SNIPPET_BYTES = 64 * 1024

/** How long reading a refusal's body may take. */
const snippetTimeout = Duration.seconds(2)

/**
 * The media type of a response (`application/json`, `text/event-stream`), lower case, without parameters.
 *
 * @internal
 */
export const mediaType = (response: HttpClientResponse.HttpClientResponse): string | undefined =>
  mediaTypeOf(response.headers)

/**
 * The media type named by a response's headers, lower case, without parameters.
 *
 * @internal
 */
export const mediaTypeOf = (headers: Headers.Headers): string | undefined => {
  const header = headers["content-type"]
  if (header === undefined) return undefined
  const semicolon = header.indexOf(";")
  const type = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase()
  return type.length === 0 ? undefined : type
}

/**
 * The raw `content-type` header, for error reports.
 *
 * @internal
 */
export const contentType = (response: HttpClientResponse.HttpClientResponse): string | undefined =>
  response.headers["content-type"]

/** @internal */
export const isSuccess = (status: number): boolean => status >= 200 && status < 300

const utf8 = new TextDecoder("utf-8")

/**
 * Describes a failure of the HTTP client without its request (whose headers may carry credentials): only the
 * underlying cause is kept.
 *
 * @internal
 */
export const describeClientError = (error: HttpClientError.HttpClientError): { detail: string; cause: unknown } =>
  describeCause(error.reason.cause, reasonName(error.reason))

/**
 * The short name of a client failure's reason (`Transport`, `Decode`, `StatusCode`, ...: the names Effect 3 gave
 * them), for details that must not carry the request (its URL, its headers).
 *
 * @internal
 */
export const reasonName = (reason: HttpClientError.HttpClientErrorReason): string =>
  reason._tag.endsWith("Error") ? reason._tag.slice(0, -5) : reason._tag

/** Whether a client failure is a transport failure of its request (nothing was answered): its underlying cause. */
const transportCause = (error: HttpClientError.HttpClientError | McpError.AuthError): { readonly cause: unknown } | undefined =>
  error._tag === "HttpClientError" && error.reason._tag === "TransportError" ? { cause: error.reason.cause } : undefined

const describeCause = (inner: unknown, fallback: string): { detail: string; cause: unknown } => {
  const message = inner instanceof Error ? inner.message : fallback
  const code = innerCode(inner)
  return { detail: code === undefined || message.includes(code) ? message : `${message} (${code})`, cause: inner }
}

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

/** The error code of a client's failure, or of the error it wraps (fetch wraps undici's). */
const innerCode = (inner: unknown): string | undefined =>
  codeOf(inner) ?? (typeof inner === "object" && inner !== null && "cause" in inner ? codeOf(inner.cause) : undefined)

/** What the HTTP clients report when a connection is closed under a request: undici (and fetch over it), Node.js. */
const closedUnderRequest = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"])

/**
 * Whether a request failed because its connection was closed under it before any answer came: what a server does
 * to an idle kept-alive connection it closes while the client reuses it. The request then most likely never reached
 * the server (a request that did, and crashed it, gets the same error).
 *
 * @internal
 */
export const isClosedUnderRequest = (error: HttpClientError.HttpClientError | McpError.AuthError): boolean => {
  const transport = transportCause(error)
  if (transport === undefined) return false
  const code = innerCode(transport.cause)
  return code !== undefined && closedUnderRequest.has(code)
}

/** What the HTTP clients report when a connection could not be made: nothing of a request was written. */
const connectFailures = new Set([
  "ECONNREFUSED",
  "EADDRNOTAVAIL",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT"
])

const syscallOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "syscall" in error && typeof error.syscall === "string"
    ? error.syscall
    : undefined

/**
 * Whether a request failed because its connection could not be made (refused, unreachable, not resolved, timed
 * out or reset while connecting): not a byte of the request was written, so the server never saw it, and even a
 * request that is not idempotent may be sent again. A connection that failed after it was made (a reset while
 * reading) is not one of these: the request may have reached the server.
 *
 * @internal
 */
export const isNeverSent = (error: HttpClientError.HttpClientError | McpError.AuthError): boolean => {
  const transport = transportCause(error)
  if (transport === undefined) return false
  const inner = transport.cause
  const wrapped = typeof inner === "object" && inner !== null && "cause" in inner ? inner.cause : undefined
  if (syscallOf(inner) === "connect" || syscallOf(wrapped) === "connect") return true
  const code = innerCode(inner)
  return code !== undefined && connectFailures.has(code)
}

/**
 * A request that could not be sent or whose answer did not arrive: a refused connection, a reset, a DNS failure.
 *
 * @internal
 */
export const connectError = (what: string) => (error: HttpClientError.HttpClientError): McpError.TransportError => {
  const { cause, detail } = describeClientError(error)
  return new McpError.TransportError({
    transport: "http",
    reason: error.response !== undefined ? "Read" : "Connect",
    detail: `${what}: ${detail}`,
    cause
  })
}

/**
 * Runs `f` on each chunk of a response body, in order, until the body ends or `f` answers false. A body left
 * unread is released when the reading stops, and the request is aborted when the given Scope closes (the
 * transport's client aborts every request of a closed Scope). A broken body fails with a `Read` error naming
 * `what`.
 *
 * The body is pulled chunk by chunk from the response's stream (`Stream.toPull`) rather than run into a sink: per
 * request far less work for the one or two chunks a JSON answer usually comes in. The end of the body is the pull's
 * `Cause.Done`.
 *
 * @internal
 */
export const forEachChunk = <E>(
  response: HttpClientResponse.HttpClientResponse,
  what: string,
  f: (chunk: Uint8Array) => Effect.Effect<boolean, E>
): Effect.Effect<void, E | McpError.TransportError, Scope.Scope> =>
  Effect.flatMap(Stream.toPull(response.stream), (pull) => {
    const each = (chunks: ReadonlyArray<Uint8Array>, index: number): Effect.Effect<void, E | McpError.TransportError> =>
      index === chunks.length
        ? next
        : Effect.flatMap(f(chunks[index]!), (more) => more ? each(chunks, index + 1) : Effect.void)
    const next: Effect.Effect<void, E | McpError.TransportError> = Effect.matchEffect(pull, {
      onFailure: (error) => Cause.isDone(error) ? Effect.void : Effect.fail(connectError(what)(error)),
      onSuccess: (chunks) => each(chunks, 0)
    })
    return next
  })

/**
 * Runs `f` on each item of an event stream body, in order, until the body ends or `f` answers false (`f` answers
 * at once, or with an effect). An event larger than `maxEventBytes` fails with `FrameTooLarge` once the items
 * before it were taken. A broken body fails with a `Read` error naming `what`.
 *
 * @internal
 */
export const forEachSseItem = <E>(
  response: HttpClientResponse.HttpClientResponse,
  what: string,
  maxEventBytes: number,
  f: (item: Sse.SseItem) => boolean | Effect.Effect<boolean, E>
): Effect.Effect<void, E | McpError.TransportError, Scope.Scope> =>
  Effect.suspend(() => {
    const parser = Sse.makeParser({ maxEventBytes })
    const take = (items: ReadonlyArray<Sse.SseItem>, from: number): Effect.Effect<boolean, E> => {
      for (let index = from; index < items.length; index++) {
        const more = f(items[index]!)
        if (more === false) return Effect.succeed(false)
        if (more !== true) return Effect.flatMap(more, (go) => go ? take(items, index + 1) : Effect.succeed(false))
      }
      return Effect.succeed(true)
    }
    return forEachChunk(response, what, (chunk) => {
      const pushed = parser.push(chunk)
      const taken = take(pushed.items, 0)
      const size = pushed.tooLarge
      if (size === undefined) return taken
      // what came before the oversized event is still taken, then the body fails
      return Effect.flatMap(taken, (more) => more ? Effect.fail(Sse.tooLarge(size, maxEventBytes)) : Effect.succeed(false))
    })
  })

const tooLarge = (size: number, limit: number) =>
  new McpError.TransportError({
    transport: "http",
    reason: "FrameTooLarge",
    detail: `a response body of at least ${size} bytes exceeds maxEventBytes (${limit})`
  })

const DIGITS = /^[0-9]+$/

/**
 * The `content-length` of a response, when it is one well-formed number.
 *
 * @internal
 */
export const declaredLength = (headers: Headers.Headers): number | undefined => {
  const header = headers["content-length"]
  if (header === undefined || !DIGITS.test(header)) return undefined
  const length = Number(header)
  return Number.isSafeInteger(length) ? length : undefined
}

/**
 * Whether a body arrives as it was sent: no `content-encoding`, or `identity`. An encoded body's `content-length`
 * counts its compressed bytes, and an HTTP client that decodes it (`fetch` does) makes of them what the server
 * chose: a few KiB of gzip can be gigabytes.
 *
 * @internal
 */
export const isIdentityEncoded = (headers: Headers.Headers): boolean => {
  const encoding = headers["content-encoding"]?.trim().toLowerCase()
  return encoding === undefined || encoding === "" || encoding === "identity"
}

/**
 * Reads a whole body, failing past `limit` bytes (`FrameTooLarge`) or when the connection breaks (`Read`).
 *
 * A body whose `content-length` exceeds the limit is refused before it is read; one whose `content-length` is
 * within the limit and that is not encoded (see {@link isIdentityEncoded}) is read in one piece (the HTTP client
 * reads no more than that length, and a whole read is cheaper than the stream); any other (a chunked body, a
 * compressed one) is pulled from the response's stream and counted as it comes, after the HTTP client decoded it.
 *
 * @internal
 */
export const readBody = (
  response: HttpClientResponse.HttpClientResponse,
  limit: number,
  headers: Headers.Headers = response.headers
): Effect.Effect<string, McpError.TransportError, Scope.Scope> => {
  const length = declaredLength(headers)
  if (length !== undefined && length > limit) return Effect.fail(tooLarge(length, limit))
  if (length !== undefined && isIdentityEncoded(headers)) {
    return Effect.mapError(response.text, connectError("the response body broke off"))
  }
  return Effect.suspend(() => {
    const chunks: Array<Uint8Array> = []
    let size = 0
    return Effect.map(
      forEachChunk(response, "the response body broke off", (chunk) => {
        size += chunk.length
        if (size > limit) return Effect.fail(tooLarge(size, limit))
        chunks.push(chunk)
        return Effect.succeed(true)
      }),
      () => utf8.decode(concatBytes(chunks, size))
    )
  })
}

const noBody: Effect.Effect<string> = Effect.succeed("")

/**
 * Reads the start of a refusal's body: at most {@link SNIPPET_BYTES}, for at most two seconds. Never fails; what
 * could be read is returned.
 *
 * A body declared empty (`content-length: 0`, as a 202 to a notification or a 405 usually is) has nothing to read:
 * the HTTP client has already ended it, so neither its stream nor the timer is started (an empty read cost a
 * quarter of the Effect operations of a legacy `notifications/initialized`, and two fibers).
 *
 * @internal
 */
export const readSnippet = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string> =>
  declaredLength(response.headers) === 0 ? noBody : Effect.suspend(() => {
    const chunks: Array<Uint8Array> = []
    let size = 0
    return forEachChunk(response, "the refusal's body broke off", (chunk) => {
      const room = SNIPPET_BYTES - size
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk
      chunks.push(kept)
      size += kept.length
      return Effect.succeed(size < SNIPPET_BYTES)
    }).pipe(
      Effect.scoped,
      Effect.ignore,
      Effect.timeoutOption(snippetTimeout),
      Effect.map(() => utf8.decode(concatBytes(chunks, size)))
    )
  })

/**
 * The challenges of every `WWW-Authenticate` field of a response (none without the header).
 *
 * @internal
 */
export const challengesOf = (
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<Array<McpError.Challenge>> => {
  const header = response.headers["www-authenticate"]
  return header === undefined
    ? Effect.succeed([])
    : Effect.map(loadWwwAuthenticate, (parser) => parser.parse(header))
}

/**
 * Fails with a 401 or 403, with the challenges of every `WWW-Authenticate` field.
 *
 * @internal
 */
export const authError = (
  status: 401 | 403,
  response: HttpClientResponse.HttpClientResponse,
  credential?: string | undefined
): Effect.Effect<never, McpError.AuthError> =>
  Effect.flatMap(challengesOf(response), (challenges) =>
    Effect.fail(
      new McpError.AuthError({
        status,
        challenges,
        detail: status === 401 ? "the server requires authorization" : "the server refused the credentials",
        ...(credential !== undefined ? { credential } : {})
      })
    ))

/**
 * What a 404 to a connection's first request means (a session's later 404 is its expiry, handled apart).
 *
 * @internal
 */
export const notFoundHint = (status: number): string =>
  status === 404 ? " (nothing serves MCP at this URL: check its path)" : ""

/**
 * The failure for an HTTP status the transport does not act on, with what the era probe needs to classify it.
 *
 * @internal
 */
export const statusError = (
  response: HttpClientResponse.HttpClientResponse,
  body: string,
  detail: string
): McpError.TransportError => {
  const type = contentType(response)
  return new McpError.TransportError({
    transport: "http",
    reason: "HttpStatus",
    detail,
    status: response.status,
    ...(type === undefined ? {} : { contentType: type }),
    body
  })
}
