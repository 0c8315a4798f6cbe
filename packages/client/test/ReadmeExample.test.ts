// The README's test example: the same program with the in-process transport and a server defined in the test.
import { InProcessTransport, McpClient } from "@conduit-mcp/client"
import { McpServer } from "@conduit-mcp/server"
import { assert, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { program } from "./examples/stdio.js"

const TestServer = Layer.unwrapEffect(
  Effect.map(
    McpServer.make({
      name: "test-server",
      version: "1.0.0",
      tools: [McpServer.tool({
        name: "echo",
        parameters: Schema.Struct({ message: Schema.String }),
        handler: ({ message }) => Effect.succeed(`Echo: ${message}`)
      })]
    }),
    InProcessTransport.layer
  )
)

it.effect("the README program runs against an in-process server", () =>
  Effect.gen(function*() {
    yield* program
    const client = yield* McpClient.McpClient
    assert.strictEqual((yield* client.session).transport.binding, "in-process")
  }).pipe(Effect.provide(McpClient.layer().pipe(Layer.provide(TestServer)))))
