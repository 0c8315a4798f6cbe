/**
 * `conduit demo-server --http <port>`: the demo server on Node's HTTP server, through the Streamable HTTP binding of
 * `@conduit-mcp/server`. It listens on loopback only, by default.
 *
 * @since 0.1.0
 */
import type * as McpServer from "@conduit-mcp/server/McpServer"
import * as McpServerHttp from "@conduit-mcp/server/McpServerHttp"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as HttpServer from "effect/http/HttpServer"
import * as NetAddress from "effect/net/NetAddress"
import * as Http from "node:http"
import { SystemFailure } from "./errors.js"

/**
 * Serves `server` on `host:port` (port 0 picks a free one) until interrupted, reporting the URL once listening.
 *
 * @since 0.1.0
 * @category running
 */
export const serve = (
  server: McpServer.Server,
  options: { readonly port: number; readonly host?: string | undefined },
  onListening: (url: string) => Effect.Effect<void>
): Effect.Effect<never, SystemFailure> =>
  Effect.scoped(Effect.gen(function*() {
    const http = yield* HttpServer.HttpServer
    const app = yield* McpServerHttp.makeApp(server)
    yield* http.serve(app)
    const address = http.address
    const url = address._tag === "UnixPathAddress"
      ? `unix:${address.path}`
      : `http://${NetAddress.formatUrlHostString(NetAddress.formatIp(address.address))}:${address.port}/mcp`
    yield* onListening(url)
    return yield* Effect.never
  })).pipe(
    Effect.provide(NodeHttpServer.layer(() => Http.createServer(), { port: options.port, host: options.host ?? "127.0.0.1" })),
    Effect.mapError((error) =>
      new SystemFailure({ message: `cannot listen on port ${options.port}: ${error.message}`, exitCode: 3 })
    )
  )
