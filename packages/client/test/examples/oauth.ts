// The README's OAuth example, kept here so that the type checker compiles it.
import { AuthorizationHandler, HostResolver, HttpTransport, McpClient, OAuth, TokenStore } from "@conduit-mcp/client"
import { NodeContext, NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import { Layer } from "effect"
import * as Dns from "node:dns/promises"
import { createServer } from "node:http"

const OAuthLive = OAuth.layer({ clientName: "my-app" }).pipe(
  Layer.provide(AuthorizationHandler.layerLoopback()), // the redirect comes back to 127.0.0.1 (`open` a browser)
  Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(TokenStore.layerFileSystem("/home/me/.config/my-app/tokens.json")), // 0600, safe across processes
  Layer.provide(HostResolver.fromLookup((host) => Dns.lookup(host, { all: true, verbatim: true }))),
  Layer.provide(NodeContext.layer)
)

export const Client = McpClient.layer().pipe(
  Layer.provide(HttpTransport.layer({ url: "https://mcp.example.com/mcp" })),
  Layer.provide(OAuthLive),
  Layer.provide(NodeHttpClient.layerUndici)
)
