// Item 2 of the 1.0 API issue, "the error a test sees is the error production sees": the same calls against
// server-everything (the official SDK's reference server, as production meets it, over stdio) and against
// TestServer (a server defined in the test, in-process) fail with the same tagged errors, each handled by
// Effect.catchTag: a tool given arguments its schema refuses, with `isError: "fail"`, is a ToolFailed; a URI the
// server does not have, to readResource({ uri }), is a ResourceNotFound. An unknown tool is where the two servers
// differ (as the README says): server-everything answers an isError result (a ToolFailed here), TestServer the
// specification's JSON-RPC error (McpError -32602).
import { McpClient } from "@conduit-mcp/client"
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { echoTestClient } from "./echoServer.js"
import { expectEqual, run } from "./guard.js"

const require = createRequire(import.meta.url)
const everythingEntry = Path.join(
  Path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js"
)

const Everything = McpClient.layerStdio(
  { command: process.execPath, args: [everythingEntry, "stdio"] },
  { clientInfo: { name: "same-error", version: "1.0.0" } }
).pipe(Layer.provide(NodeServices.layer))

const InTest = echoTestClient("same-error")

const program = Effect.gen(function*() {
  // what each call's handler said: the handler of the tag a newcomer names with catchTag, or (a regression) the
  // error that came instead
  const said = (layer: Layer.Layer<McpClient.McpClient, unknown>) =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const badArguments = yield* client.callTool({ name: "echo", arguments: { message: 42 } }, { isError: "fail" })
        .pipe(
          Effect.map(() => "returned a result"),
          Effect.catchTag("ToolFailed", (error) => Effect.succeed(`ToolFailed (${error.tool})`)),
          Effect.catch((error) => Effect.succeed(`${error._tag}: ${error.message}`))
        )
      const missingResource = yield* client.readResource({ uri: "demo://nothing/here" }).pipe(
        Effect.map(() => "read it"),
        Effect.catchTag("ResourceNotFound", (error) => Effect.succeed(`ResourceNotFound (${error.uri})`)),
        Effect.catch((error) => Effect.succeed(`${error._tag}: ${error.message}`))
      )
      const unknownTool = yield* client.callTool({ name: "no-such-tool", arguments: {} }, { isError: "fail" }).pipe(
        Effect.map(() => "returned a result"),
        Effect.catchTag("ToolFailed", () => Effect.succeed("ToolFailed")),
        Effect.catchTag("McpError", (error) => Effect.succeed(`McpError ${error.code}`)),
        Effect.catch((error) => Effect.succeed(`${error._tag}: ${error.message}`))
      )
      return { badArguments, missingResource, unknownTool }
    }).pipe(Effect.provide(layer))
  const production = yield* said(Everything)
  const inTest = yield* said(InTest)
  const same = {
    badArguments: "ToolFailed (echo)",
    missingResource: "ResourceNotFound (demo://nothing/here)"
  }
  yield* expectEqual(
    { badArguments: production.badArguments, missingResource: production.missingResource },
    same,
    "server-everything (production)"
  )
  yield* expectEqual({ badArguments: inTest.badArguments, missingResource: inTest.missingResource }, same, "TestServer")
  yield* expectEqual(production.unknownTool, "ToolFailed", "an unknown tool, server-everything (an isError result)")
  yield* expectEqual(inTest.unknownTool, "McpError -32602", "an unknown tool, TestServer (the JSON-RPC error)")
})

await run("item 2, the error a test sees is the error production sees", program)
