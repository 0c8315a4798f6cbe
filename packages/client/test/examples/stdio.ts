// The README's example program, kept here so that the type checker compiles it.
import { McpClient, StdioTransport } from "@conduit-mcp/client"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"

// The program needs an McpClient; which server and transport it talks to is decided by the layer.
export const program = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  const tools = yield* client.listTools()
  yield* Console.log(`tools: ${tools.map((tool) => tool.name).join(", ")}`)
  const result = yield* client.callTool({ name: "echo", arguments: { message: "hi" } })
  yield* Console.log(result.content)
})

export const Everything = McpClient.layer({ clientInfo: { name: "example", version: "1.0.0" } }).pipe(
  Layer.provide(StdioTransport.layer({ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] })),
  Layer.provide(NodeContext.layer)
)

if (process.argv[1] === new URL(import.meta.url).pathname) program.pipe(Effect.provide(Everything), NodeRuntime.runMain)
