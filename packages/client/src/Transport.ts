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
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * How the transport binds to the server, as reported once connected.
 *
 * @since 0.1.0
 * @category models
 */
export type Binding = "stdio" | "in-process" | "streamable-http" | "sse"

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
  readonly kind: McpError.TransportKind
  /** Opens one connection, owned by the caller's Scope. */
  readonly connect: (
    emit: Emit,
    options?: ConnectOptions
  ) => Effect.Effect<TransportConnection, McpError.TransportFailure, Scope.Scope>
  /** Optional: the credentials the transport sends (see {@link Credentials}). */
  readonly credentials?: Credentials | undefined
}>()("@conduit-mcp/client/Transport") {}
