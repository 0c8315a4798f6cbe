// The migration guide's program written with Effect's own MCP client (effect/ai McpClient): connect over stdio,
// list the tools, call one. Kept here so that the type checker compiles it; effect-client-comparison.test.ts runs it
// (with `layer` pointed at the installed server-everything) next to its Conduit twin, migrateFromEffectClient.conduit.ts.
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { McpClient, McpProtocol } from "effect/ai"
import { ChildProcess } from "effect/process"

export const program = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  const tools = yield* client.listTools()
  yield* Console.log(`tools: ${tools.map((tool) => tool.name).join(", ")}`)
  // a call names a listed tool (its descriptor), not a tool name
  const echo = tools.find((tool) => tool.name === "echo")
  if (echo === undefined) return yield* Effect.die(new Error("the server has no echo tool"))
  const result = yield* client.callTool({ tool: echo, arguments: { message: "hi" } })
  yield* Console.log(result.content)
  return result
})

// one protocol revision, chosen here: the server must speak exactly this one
export const layer = (command: string, args: ReadonlyArray<string>) =>
  McpClient.layerStdio({
    name: "example",
    version: "1.0.0",
    protocol: McpProtocol.v2025_11_25,
    command: ChildProcess.make(command, args)
  }).pipe(Layer.provide(NodeServices.layer))

if (process.argv[1] === new URL(import.meta.url).pathname) {
  program.pipe(Effect.provide(layer("npx", ["-y", "@modelcontextprotocol/server-everything"])), NodeRuntime.runMain)
}
