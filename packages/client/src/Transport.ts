/**
 * The transport contract. A transport moves JSON-RPC messages between the client's connection and one MCP
 * server. Each transport kind is a Layer providing the `Transport` service; its options are checked when the
 * layer is built, before any I/O.
 *
 * Lifecycle: `connect` runs once per connection attempt inside the attempt's Scope and returns when messages
 * can flow; `request` / `notify` / `respond` / `cancel` are used while connected; closing the Scope closes the
 * connection. Everything the server sends reaches the client as a {@link TransportEvent} through the `emit`
 * function given to `connect`.
 *
 * What the client needs to know of a transport beyond the message pipe it reads from the service's optional
 * members, never from its `kind` (a label for errors and telemetry): its {@link Traits}, its {@link Credentials},
 * and on a connection its `trySend` and `partition`. A transport written outside this package declares the same
 * members and is treated the same way.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * How the transport binds to the server, as reported once connected: `"stdio"`, `"in-process"`,
 * `"streamable-http"` or `"sse"` for this package's transports, any other label for one written elsewhere. The
 * client reports it and reads nothing from it.
 *
 * @since 0.1.0
 * @category models
 */
export type Binding = "stdio" | "in-process" | "streamable-http" | "sse" | (string & {})

/**
 * What a transport knows once it can carry messages.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectedInfo {
  readonly binding: Binding
  /** The server's origin (`https://host[:port]`) for HTTP transports; URL-mode elicitation compares with it. */
  readonly origin?: string | undefined
  /** The era the transport already knows the server speaks (the HTTP probe finds it out), if any. */
  readonly era?: McpSchema.Era | undefined
  /** A stable description of the target (command line, URL) used to key caches and verdicts. */
  readonly target: string
  /** Process id of a child server, when there is one. */
  readonly pid?: number | undefined
}

/**
 * Per-request instructions to the transport. Unknown keys are ignored.
 *
 * @since 0.1.0
 * @category models
 */
export interface WireOptions {
  /** The request is the era probe (`server/discover`): HTTP transports report refusals in detail. */
  readonly probe?: boolean | undefined
  /** Absolute time (epoch milliseconds of the Effect Clock) after which the request is certainly cancelled. */
  readonly deadline?: number | undefined
  /** Extra HTTP headers for a modern request (`Mcp-Param-*`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** The request is a modern `subscriptions/listen`: a long-lived stream with no deadline. */
  readonly listen?: boolean | undefined
  /**
   * The request only reads: a transport may send it once more when its connection closed before any answer (the
   * HTTP transport does). Absent: the transport knows the specification's methods itself.
   */
  readonly idempotent?: boolean | undefined
  /**
   * The parameter the `Mcp-Name` header mirrors (2026-07-28 HTTP), when the method has one. Absent: the transport
   * knows the specification's methods itself.
   */
  readonly nameField?: string | undefined
}

/**
 * The era and version the connection negotiated; transports that depend on it (HTTP headers, cancellation)
 * read it through `setSession`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionInfo {
  readonly era: McpSchema.Era
  readonly protocolVersion: McpSchema.ProtocolVersion
}

/**
 * Why a request is cancelled.
 *
 * @since 0.1.0
 * @category models
 */
export type CancelReason = "timeout" | "interrupted"

/**
 * What a transport reports to the connection.
 *
 * @since 0.1.0
 * @category models
 */
export type TransportEvent = Data.TaggedEnum<{
  /** The answer to a request this client sent. */
  Response: { readonly message: McpSchema.JsonRpcResponse }
  /**
   * A request failed without an answer: an HTTP refusal (`TransportError` reason "HttpStatus" with status,
   * content type and body, which the era probe classifies), a 401/403 (`AuthError` with the parsed
   * challenges), a stream that ended early.
   */
  RequestFailed: { readonly id: McpSchema.RequestId; readonly error: McpError.TransportFailure }
  /**
   * The server no longer knows the legacy session (HTTP 404). The connection initializes a new session without
   * failing anything. `id`: the request that learned it, which the transport re-sends itself (once) when
   * `setSession` reports the new session; undefined when a notification, a response or the GET stream learned it.
   */
  SessionExpired: { readonly id: McpSchema.RequestId | undefined }
  /** A server notification. */
  Notification: { readonly message: McpSchema.JsonRpcNotification }
  /** A legacy server-to-client request; `related` is the client request it belongs to, when known. */
  ServerRequest: { readonly message: McpSchema.JsonRpcRequest; readonly related: McpSchema.RequestId | undefined }
  /** The transport can no longer carry messages: every pending request fails and the connection reconnects. */
  Closed: { readonly error: McpError.TransportError }
}>

/**
 * Constructors for {@link TransportEvent}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const TransportEvent = Data.taggedEnum<TransportEvent>()

/**
 * One live connection of a transport.
 *
 * @since 0.1.0
 * @category models
 */
export interface TransportConnection {
  readonly info: ConnectedInfo
  /** Sends a request; its answer arrives as a `Response` or `RequestFailed` event. */
  readonly request: (
    message: McpSchema.JsonRpcRequest,
    options: WireOptions
  ) => Effect.Effect<void, McpError.TransportFailure>
  readonly notify: (message: McpSchema.JsonRpcNotification) => Effect.Effect<void, McpError.TransportFailure>
  /** Answers a legacy server-to-client request. */
  readonly respond: (message: McpSchema.JsonRpcResponse) => Effect.Effect<void, McpError.TransportFailure>
  /**
   * Gives up on a request the way the binding requires: stdio sends `notifications/cancelled`, modern HTTP
   * closes the response stream, legacy HTTP posts `notifications/cancelled` then closes the stream,
   * in-process interrupts the handler. Never fails; bounded in time.
   */
  readonly cancel: (id: McpSchema.RequestId, reason: CancelReason) => Effect.Effect<void>
  /** Tells the transport which era and version it now serves. */
  readonly setSession: (session: SessionInfo) => Effect.Effect<void>
  /**
   * Optional: sends a request without running an effect when it can (its outbound buffer has room), answering
   * `true`, or answers `false` and sends nothing (then `request` runs). It must not throw. The client's fast path
   * uses it: an effect per call saved. A decorator that wraps `request` (to log, to count) wraps this too, or leaves
   * it out.
   */
  readonly trySend?: ((message: McpSchema.JsonRpcRequest, options: WireOptions) => boolean) | undefined
  /**
   * Optional: the partition of private cached results for what this connection reaches, when it is known and the
   * transport has no credentials (the stdio transport's: a keyed digest of what makes its child, never the values).
   */
  readonly partition?: Effect.Effect<string> | undefined
}

/**
 * What the client hands a transport with its {@link Emit}.
 *
 * @since 1.0.0
 * @category models
 */
export interface ConnectOptions {
  /**
   * Delivers an event at once when that needs no effect (the answer to a pending request), answering `true`, or
   * answers `false` and does nothing (then `emit` runs). It never throws. A decorator that wraps `emit` passes
   * this on, wrapped the same way, or leaves it out.
   */
  readonly deliver?: ((event: TransportEvent) => boolean) | undefined
}

/**
 * The credentials of a transport that sends some (the HTTP transport's), which the client reaches through the
 * service: `McpClient.setAuth` swaps them, the result cache keys private entries by their partition, and the
 * client declares the MCP extensions they bring.
 *
 * @since 1.0.0
 * @category models
 */
export interface Credentials {
  /**
   * Swaps the credentials of the transport and of every live connection (`auth`: what `McpClient.setAuth` is
   * given, an `HttpTransport.Auth`): checked like the layer's options (`InvalidOption` leaves the current ones in
   * place); every request sent from then on carries the new ones.
   */
  readonly set: (auth: unknown) => Effect.Effect<void, McpError.InvalidOption>
  /**
   * The partition of private cached results the credentials in force belong to, never the credentials themselves;
   * `undefined`: none.
   */
  readonly partition: Effect.Effect<string | undefined>
  /** MCP extensions the credentials bring (by identifier, with their settings), declared by the client. */
  readonly extensions?: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined
}

/**
 * How a failed era probe (`server/discover`, sent while the era of a server is unknown) reads on a transport. A
 * JSON-RPC error answering the probe reads the same on every transport; what differs is a probe that gets no
 * answer:
 *
 * - `"status"` (the HTTP transport's): the server answers every request, and a legacy server refuses the probe with
 *   a status, which the transport reports as a `RequestFailed` event carrying a `TransportError` of reason
 *   `"HttpStatus"` (with its status, content type and body). 400, 404 and 405 mean a legacy server, unless the body
 *   holds a modern JSON-RPC error, which is read as that error; any other status is a failure. A probe that times
 *   out is an outage (a `TransportError` of reason `"Timeout"`), never a verdict.
 * - `"stream"` (the default; stdio, in-process): messages go over a stream to a server that may not know the probe
 *   and may say nothing: a probe that times out means a legacy server. Some legacy servers quit on any request
 *   before `initialize`: when the transport closes over the probe, the client connects again and speaks the legacy
 *   era at once (unless the transport's error says the server failed on its own: an exit code other than 0 with
 *   nothing about the probe in what it wrote). Any other failure of the probe is a failure.
 *
 * Either way, a server already known to be modern is never taken for a legacy one: silence is then an outage.
 *
 * @since 1.0.0
 * @category models
 */
export type ProbeFailures = "status" | "stream"

/**
 * What a transport declares of itself, for what the client does differently from one transport to another. Every
 * member is optional; a transport that declares nothing (as one written outside this package may) gets the
 * defaults, which suit a stream of messages to a server.
 *
 * @since 1.0.0
 * @category models
 */
export interface Traits {
  /**
   * How long to wait for an answer to the era probe when the client's `probeTimeout` option is not given: a
   * positive duration (default 3 seconds; the HTTP transport's: 5 seconds).
   */
  readonly probeTimeout?: Duration.Input | undefined
  /** How a failed era probe reads (see {@link ProbeFailures}; default `"stream"`). */
  readonly probeFailures?: ProbeFailures | undefined
  /**
   * `true`: sending a message runs nothing that could see a span (no span of its own, no trace context besides the
   * `_meta` the client writes itself), as writing a line to a child's stdin (the stdio transport). The client then
   * sends outside the call's span and, under Effect's own tracer, makes no span for a legacy call (whose message
   * carries no trace context) unless something comes to need it. Default `false`: `request` runs with the call's
   * span as its parent.
   */
  readonly untracedSend?: boolean | undefined
}

/**
 * Where a transport sends what it receives. Called from the transport's own fibers, in arrival order.
 *
 * @since 0.1.0
 * @category models
 */
export type Emit = (event: TransportEvent) => Effect.Effect<void>

/**
 * The transport service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Transport extends Context.Service<Transport, {
  /**
   * A label for errors (`TransportError.transport`), logs and telemetry (`mcp.transport`): `"stdio"`, `"http"` and
   * `"in-process"` for this package's transports, any other for one written elsewhere. The client never reads
   * behaviour from it.
   */
  readonly kind: McpError.TransportKind
  /** Opens one connection, owned by the caller's Scope. */
  readonly connect: (
    emit: Emit,
    options?: ConnectOptions
  ) => Effect.Effect<TransportConnection, McpError.TransportFailure, Scope.Scope>
  /** Optional: the credentials the transport sends (see {@link Credentials}). */
  readonly credentials?: Credentials | undefined
  /** Optional: what the transport declares of itself (see {@link Traits}); none: the defaults. */
  readonly traits?: Traits | undefined
}>()("@conduit-mcp/client/Transport") {}
