/**
 * What the parts of one HTTP connection share: the checked options, the connection's state, the binding
 * interface every binding (modern, legacy session, HTTP+SSE) implements, and the small helpers they all use.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import type * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as McpError from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"
import type * as Transport from "../Transport.js"
import type * as codec from "./codec.js"
import type * as McpHeaders from "./mcpHeaders.js"
import { printable } from "./printable.js"

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
  /** What one message may hold before it is parsed (`maxFrameDepth`, `maxFrameValues`). */
  readonly limits: codec.FrameLimits
  /** The connection's budget of refused messages (see `codec.refusedFrames`). */
  readonly maxRefusedFrames: number
  readonly connectTimeout: Duration.Duration
  readonly closeTimeout: Duration.Duration
  readonly maxRetryDelay: Duration.Duration
  readonly resumeAttempts: number
  readonly allowNumberHeaders: boolean
  /** How many requests may wait for the start of their answer at once (see `httpAdmission.ts`). */
  readonly maxInFlight: number
}

/**
 * Which binding carries a message: modern Streamable HTTP, a legacy Streamable HTTP session, or HTTP+SSE.
 *
 * @internal
 */
export type Route = "modern" | "legacy" | "sse"

/**
 * A request waiting for a new legacy session.
 *
 * @internal
 */
export interface Parked {
  readonly message: McpSchema.JsonRpcRequest
  readonly options: Transport.WireOptions
  /** Whether this is already the one re-send a request gets after its session expired. */
  readonly resent: boolean
}

/**
 * Where an SSE stream stands, for resuming it.
 *
 * @internal
 */
export interface Cursor {
  lastEventId: string | undefined
  retry: number | undefined
  events: number
  /** The GET stream of the session was open once (a later 404 then means the session is gone). */
  opened?: boolean
}

/** @internal */
export const newCursor = (): Cursor => ({ lastEventId: undefined, retry: undefined, events: 0 })

/**
 * Whose messages a body or stream carries.
 *
 * @internal
 */
export interface Source {
  readonly request: McpSchema.JsonRpcRequest | undefined
  readonly route: Route
  /** Takes the answer to `request` instead of the connection: the transport's own requests. */
  readonly capture?: ((answer: McpSchema.JsonRpcResponse) => void) | undefined
  /** `request` is the era probe: a JSON-RPC error with any id answers it (a server that could not read its id). */
  readonly probe?: boolean | undefined
}

/**
 * The state of one connection, shared by its parts: read anywhere, changed only through its transitions, each
 * named for what happened on the wire.
 *
 * @internal
 */
export interface State {
  readonly closed: boolean
  readonly binding: "streamable-http" | "sse"
  readonly era: McpSchema.Era | undefined
  readonly version: McpSchema.ProtocolVersion | undefined
  /** The legacy version the server agreed to, known from the `initialize` answer on (before `setSession`). */
  readonly legacyVersion: string | undefined
  readonly sessionId: string | undefined
  /** The legacy session the server forgot, until a new one starts. */
  readonly expiredSession: string | undefined
  readonly negotiated: boolean
  readonly sse: Deferred.Deferred<URL, McpError.TransportFailure> | undefined
  /** Requests waiting for a new legacy session. */
  readonly parked: ReadonlyMap<McpSchema.RequestId, Parked>
  /** `x-mcp-header` declarations by tool name, from the `tools/list` answers this connection carried. */
  readonly tools: ReadonlyMap<string, ReadonlyArray<McpHeaders.ParamHeader>>

  /** The connection is closed (by its scope, or after too many refused messages). */
  readonly close: () => void
  /** The server speaks HTTP+SSE (2024-11-05): every message goes that way from now on. */
  readonly fellBackToSse: () => void
  /** The HTTP+SSE stream is being opened: `ready` gets its endpoint. */
  readonly sseOpening: (ready: Deferred.Deferred<URL, McpError.TransportFailure>) => void
  /** The client's negotiation ended in `session`. */
  readonly negotiatedSession: (session: Transport.SessionInfo) => void
  /** The server's `initialize` answer agreed to `version`. */
  readonly agreedLegacyVersion: (version: string) => void
  /** A modern `tools/list` answer declared headers for some tools and invalid ones for others. */
  readonly learnedTools: (
    valid: ReadonlyMap<string, ReadonlyArray<McpHeaders.ParamHeader>>,
    invalid: ReadonlyArray<string>
  ) => void
  /** A legacy handshake's answer named the session (`undefined`: a sessionless one, which clears the old id). */
  readonly sessionStarted: (id: string | undefined) => void
  /** The server forgot the session `sentWith` (a 404 to a request sent in it). */
  readonly sessionExpired: (sentWith: string) => void
  /** A request waits for a new session. */
  readonly park: (request: Parked) => void
  /** A parked request is given up: whether it was parked. */
  readonly unpark: (id: McpSchema.RequestId) => boolean
  /** A new session started: what waited for it, which is no longer parked. */
  readonly takeParked: () => ReadonlyArray<Parked>
}

/** @internal */
export const makeState = (binding: State["binding"]): State => {
  const parked = new Map<McpSchema.RequestId, Parked>()
  const tools = new Map<string, ReadonlyArray<McpHeaders.ParamHeader>>()
  const state: { -readonly [K in keyof State]: State[K] } = {
    closed: false,
    binding,
    era: undefined,
    version: undefined,
    legacyVersion: undefined,
    sessionId: undefined,
    expiredSession: undefined,
    negotiated: false,
    sse: undefined,
    parked,
    tools,
    close: () => {
      state.closed = true
    },
    fellBackToSse: () => {
      state.binding = "sse"
    },
    sseOpening: (ready) => {
      state.sse = ready
    },
    negotiatedSession: (session) => {
      state.era = session.era
      state.version = session.protocolVersion
      if (session.era === "legacy") state.legacyVersion = session.protocolVersion
      state.negotiated = true
    },
    agreedLegacyVersion: (version) => {
      state.legacyVersion = version
    },
    learnedTools: (valid, invalid) => {
      for (const [name, declarations] of valid) tools.set(name, declarations)
      for (const tool of invalid) tools.delete(tool)
    },
    sessionStarted: (id) => {
      state.expiredSession = undefined
      state.sessionId = id
    },
    sessionExpired: (sentWith) => {
      if (state.expiredSession === sentWith) return
      state.expiredSession = sentWith
      state.sessionId = undefined
    },
    park: (request) => {
      parked.set(request.message.id, request)
    },
    unpark: (id) => parked.delete(id),
    takeParked: () => {
      state.expiredSession = undefined
      const waiting = [...parked.values()]
      parked.clear()
      return waiting
    }
  }
  return state
}

/**
 * What a binding does with the messages routed to it.
 *
 * @internal
 */
export interface Binding {
  /**
   * A request's exchange: sends it and reports what comes back until its answer, in the given Scope (which closes
   * its response). `resent` marks the one re-send a legacy request gets after its session expired.
   */
  readonly exchange: (
    request: McpSchema.JsonRpcRequest,
    options: Transport.WireOptions,
    resent: boolean
  ) => Effect.Effect<void, McpError.TransportFailure, Scope.Scope>
  /** Sends a notification or a response, which the server acknowledges. */
  readonly oneWay: (
    message: McpSchema.JsonRpcNotification | McpSchema.JsonRpcResponse,
    what: string
  ) => Effect.Effect<void, McpError.TransportFailure>
  /** A cancelled request is announced with `notifications/cancelled` (else aborting its exchange is enough). */
  readonly announcesCancel: boolean
}

/** @internal */
export const ACCEPT_BOTH = "application/json, text/event-stream"
/** @internal */
export const EVENT_STREAM = "text/event-stream"
/** @internal */
export const JSON_TYPE = "application/json"

/** @internal */
export const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** @internal */
export const transportError = (
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

/**
 * A short form of a session id for errors: the id is a secret.
 *
 * @internal
 */
export const redactSession = (id: string): string => id.length <= 8 ? "…" : `${id.slice(0, 4)}…`

/**
 * A background stream that died of a defect: logged, and the `Read` error its connection closes with.
 *
 * @internal
 */
export const unexpected = (what: string, cause: Cause.Cause<unknown>): Effect.Effect<McpError.TransportError> =>
  Effect.as(
    Effect.logError(printable(`${what} failed unexpectedly`), cause),
    transportError("Read", `${what} failed unexpectedly`, Cause.squash(cause))
  )

/**
 * How long to wait before reopening a broken event stream: the server's `retry` is a floor (it MUST be waited,
 * even past `maxRetryDelay`); our own backoff, capped by `maxRetryDelay`, keeps a broken stream from spinning.
 *
 * @internal
 */
export const backoff = (resolved: Resolved, retry: number | undefined, attempt: number): Duration.Duration => {
  const exponential = Duration.min(
    Duration.millis(initialBackoffMillis * 2 ** Math.min(attempt, 16)),
    resolved.maxRetryDelay
  )
  return retry === undefined ? exponential : Duration.max(Duration.millis(retry), exponential)
}

const initialBackoffMillis = 250

/**
 * One turn of the event loop (its `setImmediate` phase, where the runtime has one: Node.js, Deno, Bun; elsewhere
 * nothing). undici hands a kept-alive socket back to its pool only in the turn after the answer it carried ended,
 * so a request sent in the same turn as that answer opens a connection of its own: a TCP (and TLS) handshake, on a
 * remote server one or two round trips more. The transport waits for this turn where it sends right after an
 * answer itself: each step of the handshake, its end (the caller's first request then finds the socket back) and
 * the session's DELETE. A caller's own requests never wait.
 *
 * @internal
 */
export const socketTurn: Effect.Effect<void> = typeof setImmediate === "function"
  ? Effect.callback<void>((resume) => {
    const handle = setImmediate(() => resume(Effect.void))
    return Effect.sync(() => clearImmediate(handle))
  })
  : Effect.void
