/**
 * What a tool's result says in text, and the failure an `isError` result is when a caller asked for one. Kept apart
 * from the typed tools (which load the JSON Schema comparison) so that the client's core can use it.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as McpError from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"

/** The text of a result's text blocks, in order. */
export const textsOf = (result: { readonly content: ReadonlyArray<McpSchema.ContentBlock> }): ReadonlyArray<string> =>
  result.content.flatMap((block) => block.type === "text" ? [block.text] : [])

/** The text blocks of a result, joined with a newline. */
export const textOf = (result: { readonly content: ReadonlyArray<McpSchema.ContentBlock> }): string =>
  textsOf(result).join("\n")

/** The failure an `isError` result of `tool` is. */
export const toolFailed = (tool: string, result: McpSchema.CallToolResult): McpError.ToolFailed =>
  new McpError.ToolFailed({
    tool,
    text: textOf(result),
    ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {})
  })

/** A result that reports a failure as the failure; any other as it is. */
export const failOnError =
  (tool: string) => (result: McpSchema.CallToolResult): Effect.Effect<McpSchema.CallToolResult, McpError.ToolFailed> =>
    result.isError === true ? Effect.fail(toolFailed(tool, result)) : Effect.succeed(result)
