// A client of a test server with the echo tool server-everything has (the same parameter) and one resource, for
// the cases that compare what a test and production see.
import { McpClient } from "@conduit-mcp/client"
import { McpServer, TestServer } from "@conduit-mcp/server"
import { Effect, Layer, Schema } from "effect"

export const echoTestClient = (name: string) =>
  McpClient.layer().pipe(Layer.provide(TestServer.layer({
    name,
    version: "1.0.0",
    tools: [McpServer.tool({
      name: "echo",
      parameters: Schema.Struct({ message: Schema.String }),
      handler: ({ message }) => Effect.succeed(`Echo: ${message}`)
    })],
    resources: [McpServer.resource({ uri: "demo://here", name: "here", read: Effect.succeed("here") })]
  })))
