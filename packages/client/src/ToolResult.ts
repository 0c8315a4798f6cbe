/**
 * Reading a tool's result: its text, what it holds decoded with a Schema, and its `isError` as a typed failure.
 *
 * A tool that ran and failed answers with a result whose `isError` is `true` (the model is meant to read why), not
 * with an error: `callTool` returns it as a value unless asked to fail with {@link McpError.ToolFailed}, per call
 * (`{ isError: "fail" }`) or with {@link failOnError}.
 *
 * @example
 * ```ts
 * import { McpClient, ToolResult } from "@conduit-mcp/client"
 * import { Effect, Schema } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const client = yield* McpClient.McpClient
 *   // fails with ToolFailed when the tool reports a failure
 *   const result = yield* client.callTool({ name: "echo", arguments: { message: "hi" } }, { isError: "fail" })
 *   const text = ToolResult.text(result)
 *   // the structured content (or the text's JSON) decoded with a Schema
 *   const sum = yield* client.callTool({ name: "add", arguments: { a: 1, b: 2 } }).pipe(
 *     Effect.flatMap(ToolResult.failOnError("add")),
 *     Effect.flatMap(ToolResult.decode(Schema.Struct({ sum: Schema.Number })))
 *   )
 *   return { text, sum }
 * })
 * ```
 *
 * @since 1.0.0
 */
import type * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import * as ToolResultInternal from "./internal/toolResult.js"
import * as internal from "./internal/typedTool.js"
import type * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * Anything with content blocks: a tool's result, a prompt message's content list, a sampling result's.
 *
 * @since 1.0.0
 * @category models
 */
export interface HasContent {
  readonly content: ReadonlyArray<McpSchema.ContentBlock>
}

/**
 * The text of every `text` block, in order.
 *
 * @since 1.0.0
 * @category getters
 */
export const texts: (result: HasContent) => ReadonlyArray<string> = ToolResultInternal.textsOf

/**
 * The text blocks joined with a newline (`""` when there are none).
 *
 * @since 1.0.0
 * @category getters
 */
export const text: (result: HasContent) => string = ToolResultInternal.textOf

/**
 * Whether the tool reported a failure (`isError: true`).
 *
 * @since 1.0.0
 * @category guards
 */
export const isError = (result: McpSchema.CallToolResult): boolean => result.isError === true

/**
 * A result that reports a failure as {@link McpError.ToolFailed} (with its text and structured content); any
 * other result as it is.
 *
 * @since 1.0.0
 * @category combinators
 */
export const failOnError =
  (tool: string) => (result: McpSchema.CallToolResult): Effect.Effect<McpSchema.CallToolResult, McpError.ToolFailed> =>
    ToolResultInternal.failOnError(tool)(result)

/**
 * Decodes what a result holds with `schema`: its `structuredContent` when there is any, else its text (as the
 * string itself, then as the JSON it holds, as a typed tool reads it). An `isError` result is decoded like any
 * other: pass it through {@link failOnError} first.
 *
 * @since 1.0.0
 * @category decoding
 */
export const decode =
  <A, I>(schema: Schema.Codec<A, I>) => (result: McpSchema.CallToolResult): Effect.Effect<A, Schema.SchemaError> =>
    internal.decodeResult(schema, result)
