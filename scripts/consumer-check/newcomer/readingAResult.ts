// Item 1 of the 1.0 API issue, "reading a result type-checks": a content block narrows on its `type` as written
// (`c.type === "text" ? c.text : ""`, and in a switch), and the ToolResult helpers (text, texts, decode, isError,
// failOnError) read a result from the module a newcomer imports them from. The narrowing is checked by the strict
// type checks of the app (a block that no longer narrows fails them); the helpers by running this file.
import { McpClient, type McpSchema } from "@conduit-mcp/client"
import * as ToolResult from "@conduit-mcp/client/ToolResult"
import { McpServer, TestServer } from "@conduit-mcp/server"
import { Effect, Layer, Schema } from "effect"
import { expect, expectEqual, run } from "./guard.js"

// the narrowing, as the README writes it: `c.text` is a string once `c.type` is "text" (where an unknown block's
// type was a plain string, the test let unknown blocks through and `c.text` was `unknown`)
export const textOf = (result: McpSchema.CallToolResult): string =>
  result.content.map((c): string => c.type === "text" ? c.text : "").join("")

// and in a switch, with a block of a type this client does not know read through String()
export const describeBlock = (block: McpSchema.ContentBlock): string => {
  switch (block.type) {
    case "text":
      return block.text
    case "image":
      return `an image (${block.mimeType})`
    default:
      return String(block.type)
  }
}

const Weather = Schema.Struct({ sky: Schema.String, celsius: Schema.Number })

const Client = McpClient.layer().pipe(Layer.provide(TestServer.layer({
  name: "reading-a-result",
  version: "1.0.0",
  tools: [
    McpServer.tool({
      name: "weather",
      parameters: Schema.Struct({}),
      handler: () =>
        Effect.succeed({
          content: [McpServer.text("sunny"), McpServer.text("22 C")],
          structuredContent: { sky: "sunny", celsius: 22 }
        })
    }),
    McpServer.tool({
      name: "broken",
      parameters: Schema.Struct({}),
      handler: () => Effect.fail(new McpServer.ToolError({ message: "no sensor" }))
    })
  ]
})))

const program = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  const weather = yield* client.callTool({ name: "weather", arguments: {} })
  yield* expectEqual(textOf(weather), "sunny22 C", "the narrowed text blocks")
  yield* expectEqual(weather.content.map(describeBlock), ["sunny", "22 C"], "the blocks read through a switch")
  yield* expectEqual(ToolResult.texts(weather), ["sunny", "22 C"], "ToolResult.texts")
  yield* expectEqual(ToolResult.text(weather), "sunny\n22 C", "ToolResult.text")
  yield* expect(!ToolResult.isError(weather), "ToolResult.isError: a result that did not fail reads as failed")
  const decoded = yield* ToolResult.decode(Weather)(weather)
  yield* expectEqual(decoded, { sky: "sunny", celsius: 22 }, "ToolResult.decode of the structured content")

  const broken = yield* client.callTool({ name: "broken", arguments: {} })
  yield* expect(ToolResult.isError(broken), "ToolResult.isError: a result with isError: true reads as not failed")
  const handled = yield* ToolResult.failOnError("broken")(broken).pipe(
    Effect.map(() => "returned the result"),
    Effect.catchTag("ToolFailed", (error) => Effect.succeed(`ToolFailed ${error.tool}: ${error.text}`))
  )
  yield* expectEqual(handled, "ToolFailed broken: no sensor", "ToolResult.failOnError, handled by its tag")
}).pipe(Effect.provide(Client))

await run("item 1, reading a result (narrowing on type, ToolResult)", program)
