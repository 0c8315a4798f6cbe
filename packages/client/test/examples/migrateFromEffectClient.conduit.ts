// The migration guide's program written with Conduit's McpClient: connect over stdio, list the tools, call one.
// Kept here so that the type checker compiles it; effect-client-comparison.test.ts runs it (with `layer` pointed at
// the installed server-everything) next to its Effect twin, migrateFromEffectClient.effect.ts.
import { McpClient, StdioTransport } from "@conduit-mcp/client"
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"

export const program = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  const tools = yield* client.listTools()
  yield* Console.log(`tools: ${tools.map((tool) => tool.name).join(", ")}`)
  // a call names the tool; a name the server does not know fails with the server's error
  const result = yield* client.callTool({ name: "echo", arguments: { message: "hi" } })
  yield* Console.log(result.content)
  return result
})

// no revision to choose: the client finds the server's (2026-07-28, or the newest legacy one it answers with)
export const layer = (command: string, args: ReadonlyArray<string>) =>
  McpClient.layer({ clientInfo: { name: "example", version: "1.0.0" } }).pipe(
    Layer.provide(StdioTransport.layer({ command, args })),
    Layer.provide(NodeServices.layer)
  )

if (process.argv[1] === new URL(import.meta.url).pathname) {
  program.pipe(Effect.provide(layer("npx", ["-y", "@modelcontextprotocol/server-everything"])), NodeRuntime.runMain)
}
