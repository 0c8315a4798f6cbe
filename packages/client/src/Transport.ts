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
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"
import type * as OAuth from "./OAuth.js"

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
  /**
   * Optional: sends a request at once, when the transport can do so without waiting (its outbound buffer has
   * room), and answers true; answers false and sends nothing otherwise, and the client then uses `request`. It
   * must not throw. A transport whose sends are synchronous provides it to save a step per request.
   *
   * @since 0.1.0
   */
  readonly unsafeRequest?: ((message: McpSchema.JsonRpcRequest, options: WireOptions) => boolean) | undefined
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
}

/**
 * Where a transport sends what it receives. Called from the transport's own fibers, in arrival order.
 *
 * @since 0.1.0
 * @category models
 */
export interface Emit {
  (event: TransportEvent): Effect.Effect<void>
  /**
   * Optional: handles an event at once when that needs no effect (the answer to a pending request) and answers
   * true; answers false and does nothing otherwise, and the event then goes through the call. A transport that
   * delivers many events together tries it first for each, in order, to save the steps of an effect per event.
   *
   * @since 0.1.0
   */
  readonly unsafeEmit?: ((event: TransportEvent) => boolean) | undefined
}

/**
 * The credentials a transport sends, as swapped at runtime by `McpClient.setAuth`.
 * @since 0.1.0
 * @category models
 */
export type Auth = Data.TaggedEnum<{
  /** A static token, sent as `Authorization: Bearer …`. */
  Bearer: { readonly token: Redacted.Redacted<string> }
  /** OAuth: the given service, or the one the transport's layer was built with. */
  OAuth: { readonly service?: OAuth.OAuthShape | undefined }
  /** No credentials at all. */
  None: {}
}>

/**
 * Constructors for {@link Auth}.
 * @since 0.1.0
 * @category constructors
 */
export const Auth = Data.taggedEnum<Auth>()

/**
 * The transport service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Transport extends Context.Tag("@conduit-mcp/client/Transport")<Transport, {
  readonly kind: McpError.TransportKind
  /** Opens one connection, owned by the caller's Scope. */
  readonly connect: (emit: Emit) => Effect.Effect<TransportConnection, McpError.TransportFailure, Scope.Scope>
  /**
   * Swaps the credentials of this transport and of every live connection (the seed's `set_auth`): checks them
   * like the layer's options (`InvalidOption` leaves the current ones in place), then every request sent from
   * now on — re-sends after a refusal or an expired session and stream reconnections included — carries the new
   * ones. Absent on transports that take no credentials (stdio, in-process).
   */
  readonly setAuth?: ((auth: Auth) => Effect.Effect<void, McpError.InvalidOption>) | undefined
  /**
   * The partition of private cached results the credentials this transport was built with belong to, never the
   * credentials themselves: the client uses it when no `credentialId` is given, so results one credential may see
   * are never served to another through a shared cache store. Absent or `undefined`: no credentials.
   */
  readonly credentialPartition?: Effect.Effect<string | undefined> | undefined
  /**
   * MCP extensions the transport implements (by identifier, with their settings), which the client declares in
   * `capabilities.extensions` next to the configured ones (an HTTP transport with the OAuth client credentials
   * grant: `io.modelcontextprotocol/oauth-client-credentials`).
   */
  readonly extensions?: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined
}>() {}

/**
 * Default time to wait for an answer to the era probe: 5 s on HTTP, 3 s on every other kind.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultProbeTimeoutMillis = (kind: McpError.TransportKind): number => kind === "http" ? 5_000 : 3_000
