/**
 * A server for tests: `McpServer.make` with its record on, served in-process to `@conduit-mcp/client`'s
 * `InProcessTransport`. One layer gives a test the client's `Transport`, the server itself (to look at what it
 * received, or to publish changes) and the transport's controls (to simulate the server going away).
 *
 * @example
 * ```ts
 * import { McpClient } from "@conduit-mcp/client"
 * import { McpServer, TestServer } from "@conduit-mcp/server"
 * import { Effect, Layer, Schema } from "effect"
 *
 * const Client = McpClient.layer().pipe(Layer.provideMerge(TestServer.layer({
 *   name: "test",
 *   version: "1.0.0",
 *   tools: [McpServer.tool({
 *     name: "echo",
 *     parameters: Schema.Struct({ text: Schema.String }),
 *     handler: ({ text }) => Effect.succeed(text)
 *   })]
 * })))
 * ```
 *
 * @since 0.1.0
 */
import * as InProcessTransport from "@conduit-mcp/client/InProcessTransport"
import type * as Transport from "@conduit-mcp/client/Transport"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as McpServer from "./McpServer.js"

/**
 * The client's `Transport` to a new server, the server as the `McpServer` service and the transport's
 * `Control`. The server records what it receives unless `record: false` is given.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <
  T extends McpServer.Tool<unknown> = never,
  RS extends McpServer.Resource<unknown> = never,
  RT extends McpServer.ResourceTemplate<unknown> = never,
  P extends McpServer.Prompt<unknown> = never
>(
  options: McpServer.MakeOptions<T, RS, RT, P>
): Layer.Layer<
  Transport.Transport | McpServer.McpServer | InProcessTransport.Control,
  never,
  Exclude<
    | McpServer.DefinitionContext<T>
    | McpServer.DefinitionContext<RS>
    | McpServer.DefinitionContext<RT>
    | McpServer.DefinitionContext<P>,
    McpServer.RequestContext
  >
> =>
  Layer.unwrap(
    Effect.map(
      McpServer.make({ ...options, record: options.record ?? true }),
      (server) =>
        Layer.merge(
          InProcessTransport.layerWithControl(server),
          Layer.succeed(McpServer.McpServer, server)
        )
    )
  )
