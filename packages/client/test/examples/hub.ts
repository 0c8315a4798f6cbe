// The README's hub example, kept here so that the type checker compiles it; HubExample.test.ts runs `program`.
import { McpHub } from "@conduit-mcp/client"
import { NodeHttpClient, NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"

export const program = Effect.gen(function*() {
  const hub = yield* McpHub.McpHub
  // every server's tools under <server>__<tool>; a server that cannot answer is reported, not fatal
  const { errors, items } = yield* hub.listTools()
  yield* Console.log(`tools: ${items.map((tool) => tool.name).join(", ")}`)
  for (const error of errors) yield* Console.error(error.message)
  // each call goes to the server its name starts with
  const sum = yield* hub.callTool({ name: "everything__get-sum", arguments: { a: 2, b: 3 } })
  const echo = yield* hub.callTool({ name: "demo__echo", arguments: { text: "routed by name" } })
  yield* Console.log(sum.content, echo.content)
})

// Start the demo server first: npm start -- demo-server --http 8080
export const Hub = McpHub.layer({
  servers: [
    McpHub.stdio("everything", { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] }),
    McpHub.http("demo", { url: "http://127.0.0.1:8080/mcp" })
  ],
  idleTimeToLive: "5 minutes" // a server unused this long is closed (its process ends) until its next use
}).pipe(Layer.provide(NodeServices.layer), Layer.provide(NodeHttpClient.layerUndici))

if (process.argv[1] === new URL(import.meta.url).pathname) program.pipe(Effect.provide(Hub), NodeRuntime.runMain)
