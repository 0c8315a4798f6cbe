// The README's typed-tool example, kept here so that the type checker compiles it; TypedTool.test.ts runs it.
import { McpClient, TypedTool } from "@conduit-mcp/client"
import { Effect, Schema } from "effect"

// the demo server's add tool: its outputSchema is { sum: number }, sent as structuredContent
export const Add = TypedTool.make("add", {
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  success: Schema.Struct({ sum: Schema.Number })
})

export const program = Effect.gen(function*() {
  const add = yield* TypedTool.bind(Add) // checked against the server's tool list
  const { sum } = yield* add({ a: 2, b: 3 }) // (params: { a: number; b: number }) => Effect<{ sum: number }, …>
  return sum
}).pipe(Effect.provide(McpClient.layer()))
