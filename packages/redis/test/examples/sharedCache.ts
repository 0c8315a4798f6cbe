// The README's shared-cache example, kept here so that the type checker compiles it.
import { HttpTransport, McpClient, ResultCache } from "@conduit-mcp/client"
import { RedisKeyValueStore } from "@conduit-mcp/redis"
import { NodeHttpClient } from "@effect/platform-node"
import { Config, Effect, Layer } from "effect"

const RedisStore = Layer.unwrapEffect(Effect.map(Config.redacted("REDIS_PASSWORD"), (password) =>
  RedisKeyValueStore.layer({
    url: "rediss://redis.internal:6380/0", // rediss: TLS
    username: "conduit",
    password,
    keyPrefix: "mcp-cache:",
    commandTimeout: "500 millis"
  })))

export const Client = McpClient.layer().pipe(
  Layer.provide(HttpTransport.layer({ url: "https://mcp.example.com/mcp" })),
  Layer.provide(ResultCache.layerKeyValueStore().pipe(Layer.provide(RedisStore))),
  Layer.provide(NodeHttpClient.layerUndici)
)
