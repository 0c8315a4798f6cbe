/**
 * A transport to a server in the same process: any {@link Peer}, such as an `McpServer.Server` of
 * `@conduit-mcp/server` (the client does not depend on that package; a peer is anything of this shape). Not in the specification: it keeps
 * the JSON-RPC format and the `_meta` model, and every message in both directions goes through the same codec
 * as the wire transports (serialized, parsed and decoded), so a value that cannot cross a real wire fails here
 * too. Each connection is a fresh server connection with its own state; each request runs the server handler
 * in its own fiber, and cancelling a request interrupts that fiber (no response is emitted).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as InProcessTransport from "@conduit-mcp/client/InProcessTransport"
 * import * as McpServer from "@conduit-mcp/server/McpServer"
 *
 * const TransportLive = Layer.unwrap(
 *   Effect.map(McpServer.make({ name: "demo", version: "1.0.0" }), InProcessTransport.layer)
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as McpSchema from "./McpSchema.js"
import * as Transport from "./Transport.js"
import * as internal from "./internal/inProcessTransport.js"

/**
 * A server the transport can talk to in the same process. Each client connection opens one peer connection,
 * handing it the function through which the peer sends its messages; closing the Scope ends the connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface Peer {
  readonly info: { readonly name: string }
  readonly connect: (
    send: (message: McpSchema.JsonRpcMessage) => Effect.Effect<void>
  ) => Effect.Effect<PeerConnection, never, Scope.Scope>
}

/**
 * One open connection of a {@link Peer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface PeerConnection {
  /** Takes one message from the client; a request is answered later through the connection's `send`. */
  readonly handle: (message: McpSchema.JsonRpcMessage) => Effect.Effect<void>
  /** Stops serving a request without answering it. */
  readonly cancel: (id: McpSchema.RequestId) => Effect.Effect<void>
}

/**
 * Test controls for the in-process connections of one transport.
 *
 * @since 0.1.0
 * @category tags
 */
export class Control extends Context.Service<Control, {
  /**
   * Simulates the server going away: every open connection stops (its in-flight handlers are interrupted)
   * and reports `Closed`. Later connections work again.
   */
  readonly disconnect: Effect.Effect<void>
  /** How many connections were opened so far. */
  readonly connections: Effect.Effect<number>
  /** How many connections are open now. */
  readonly open: Effect.Effect<number>
}>()("@conduit-mcp/client/InProcessTransport/Control") {}

/**
 * Builds the transport service and its controls.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (server: Peer): Effect.Effect<{
  readonly transport: Transport.Transport["Service"]
  readonly control: Control["Service"]
}> => internal.make(server)

/**
 * The in-process transport (kind `"in-process"`, binding `"in-process"`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (server: Peer): Layer.Layer<Transport.Transport> =>
  Layer.effect(Transport.Transport, Effect.map(make(server), ({ transport }) => transport))

/**
 * The in-process transport together with its {@link Control}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithControl = (server: Peer): Layer.Layer<Transport.Transport | Control> =>
  Layer.effectContext(
    Effect.map(make(server), ({ control, transport }) =>
      Context.make(Transport.Transport, transport).pipe(Context.add(Control, control)))
  )
