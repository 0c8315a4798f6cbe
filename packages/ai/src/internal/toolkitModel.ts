/**
 * The values of the toolkit that its implementation (internal/toolkit.ts) uses and `McpToolkit` exports: the
 * schemas of a call, the origin annotation, the schema bounds and the left-out tool. A leaf: it imports
 * `McpToolkit` for types only, so the implementation needs no value of `McpToolkit` (which imports it).
 *
 * @internal
 */
import * as McpError from "@conduit-mcp/client/McpError"
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import type { SourceTool } from "../McpToolkit.js"

/**
 * What the model gets back from a successful call: the tool's content blocks and its structured content.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Success = Schema.Struct({
  content: Schema.Array(Schema.Unknown),
  structuredContent: Schema.optional(Schema.Unknown)
})

/**
 * What the model gets back from a failed call: the tool's error text (`isError`), or the client's or hub's error
 * message.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Failure = Schema.Struct({ error: Schema.String })

/**
 * The arguments as the model gives them: any JSON object, described to the model by the tool's `inputSchema`.
 * A tool's handler checks the arguments with it (the tool itself is a `Tool.dynamic` whose parameters are the
 * server's JSON Schema, so the toolkit does not decode them): arguments that are not an object come back to the
 * model as a failure, an `AiError` whose reason is a `ToolParameterValidationError`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Parameters = Schema.StructWithRest(Schema.Struct({}), [Schema.Record(Schema.String, Schema.Unknown)])

/**
 * The MCP origin of a tool, as an annotation: the source's name for it, its server (from a hub) and its
 * definition.
 *
 * @since 0.1.0
 * @category annotations
 */
export class Origin extends Context.Service<Origin, SourceTool>()("@conduit-mcp/ai/McpToolkit/Origin") {}

/**
 * The deepest nesting of a tool's `inputSchema` offered to a model: 64 levels (the schema is level 1, each object
 * or array inside it one more). `JSON.stringify`, which every provider runs on it, recurses.
 *
 * @since 0.2.0
 * @category bounds
 */
export const defaultMaxSchemaDepth = 64

/**
 * The longest `inputSchema` offered to a model: 65,536 characters of compact JSON (sent with every request).
 *
 * @since 0.2.0
 * @category bounds
 */
export const defaultMaxSchemaLength = 65_536

/**
 * A tool not offered to the model: its `inputSchema` passes a bound (`SchemaDepth`, `SchemaSize`). `tool` is the
 * source's name for it; the message is escaped for a log line (the name is the server's).
 *
 * @since 0.2.0
 * @category errors
 */
export class ToolLeftOut extends Schema.TaggedError<ToolLeftOut>("@conduit-mcp/ai/McpToolkit/ToolLeftOut")(
  "ToolLeftOut",
  {
    tool: Schema.String,
    server: Schema.optional(Schema.String),
    reason: Schema.Literals(["SchemaDepth", "SchemaSize"]),
    detail: Schema.String
  }
) {
  override get message(): string {
    const from = this.server === undefined ? "" : ` of server ${this.server}`
    return McpError.printable(`McpToolkit: the tool ${this.tool}${from} is left out: ${this.detail}`)
  }
}
