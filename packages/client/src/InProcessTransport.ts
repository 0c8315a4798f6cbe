/**
 * A transport that serves an {@link McpServer.Server} in the same process. Not in the specification: it keeps
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
 * import * as McpServer from "@conduit-mcp/client/McpServer"
 *
 * const TransportLive = Layer.unwrapEffect(
 *   Effect.map(McpServer.make({ name: "demo", version: "1.0.0" }), InProcessTransport.layer)
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as McpServer from "./McpServer.js"
import * as Transport from "./Transport.js"
import * as internal from "./internal/serverInProcess.js"

/**
 * Test controls for the in-process connections of one transport.
 *
 * @since 0.1.0
 * @category tags
 */
export class Control extends Context.Tag("@conduit-mcp/client/InProcessTransport/Control")<Control, {
  /**
   * Simulates the server going away: every open connection stops (its in-flight handlers are interrupted)
   * and reports `Closed`. Later connections work again.
   */
  readonly disconnect: Effect.Effect<void>
  /** How many connections were opened so far. */
  readonly connections: Effect.Effect<number>
  /** How many connections are open now. */
  readonly open: Effect.Effect<number>
}>() {}

/**
 * Builds the transport service and its controls.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (server: McpServer.Server): Effect.Effect<{
  readonly transport: Transport.Transport["Type"]
  readonly control: Control["Type"]
}> => internal.make(server)

/**
 * The in-process transport (kind `"in-process"`, binding `"in-process"`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (server: McpServer.Server): Layer.Layer<Transport.Transport> =>
  Layer.effect(Transport.Transport, Effect.map(make(server), ({ transport }) => transport))

/**
 * The in-process transport together with its {@link Control}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithControl = (server: McpServer.Server): Layer.Layer<Transport.Transport | Control> =>
  Layer.effectContext(
    Effect.map(make(server), ({ control, transport }) =>
      Context.make(Transport.Transport, transport).pipe(Context.add(Control, control)))
  )
