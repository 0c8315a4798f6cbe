/**
 * MCP types of the features (re-exported by `McpSchema`): tools, resources, prompts, completion, progress and
 * logging.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Annotations, ContentBlock, Icons, JsonObject, Meta, Open, ResourceContents } from "./mcpSchemaCore.js"
import { ProgressToken } from "./mcpSchemaJsonRpc.js"

/**
 * @since 0.1.0
 * @category models
 */
export const Tool = Open({
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  inputSchema: JsonObject,
  outputSchema: Schema.optional(JsonObject),
  annotations: Schema.optional(JsonObject),
  icons: Schema.optional(Icons),
  /**
   * How the tool may run (2025-11-25): `taskSupport` is `forbidden` (the default), `optional` or `required`. Kept
   * as any string: a value this client does not know counts as `forbidden`.
   */
  execution: Schema.optional(Open({ taskSupport: Schema.optional(Schema.String) })),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export type Tool = typeof Tool.Type

const Paginated = {
  nextCursor: Schema.optional(Schema.String),
  ttlMs: Schema.optional(Schema.Number),
  cacheScope: Schema.optional(Schema.String),
  resultType: Schema.optional(Schema.String),
  _meta: Meta
}

/**
 * @since 0.1.0
 * @category models
 */
export const ListToolsResult = Open({ tools: Schema.Array(Tool), ...Paginated })

/**
 * @since 0.1.0
 * @category models
 */
export type ListToolsResult = typeof ListToolsResult.Type

/**
 * @since 0.1.0
 * @category models
 */
export const CallToolResult = Open({
  content: Schema.Array(ContentBlock).pipe(Schema.withDecodingDefaultType(Effect.sync(() => []))),
  structuredContent: Schema.optional(Schema.Unknown),
  isError: Schema.optional(Schema.Boolean),
  resultType: Schema.optional(Schema.String),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export type CallToolResult = typeof CallToolResult.Type

/**
 * @since 0.1.0
 * @category models
 */
export const Resource = Open({
  uri: Schema.String,
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String),
  size: Schema.optional(Schema.Number),
  annotations: Schema.optional(Annotations),
  icons: Schema.optional(Icons),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export type Resource = typeof Resource.Type

/**
 * @since 0.1.0
 * @category models
 */
export const ListResourcesResult = Open({ resources: Schema.Array(Resource), ...Paginated })

/**
 * @since 0.1.0
 * @category models
 */
export type ListResourcesResult = typeof ListResourcesResult.Type

/**
 * @since 0.1.0
 * @category models
 */
export const ResourceTemplate = Open({
  uriTemplate: Schema.String,
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String),
  annotations: Schema.optional(Annotations),
  icons: Schema.optional(Icons),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export type ResourceTemplate = typeof ResourceTemplate.Type

/**
 * @since 0.1.0
 * @category models
 */
export const ListResourceTemplatesResult = Open({
  resourceTemplates: Schema.Array(ResourceTemplate),
  ...Paginated
})

/**
 * @since 0.1.0
 * @category models
 */
export type ListResourceTemplatesResult = typeof ListResourceTemplatesResult.Type

/**
 * @since 0.1.0
 * @category models
 */
export const ReadResourceResult = Open({
  contents: Schema.Array(ResourceContents),
  ttlMs: Schema.optional(Schema.Number),
  cacheScope: Schema.optional(Schema.String),
  resultType: Schema.optional(Schema.String),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export type ReadResourceResult = typeof ReadResourceResult.Type

/**
 * @since 0.1.0
 * @category models
 */
export const PromptArgument = Open({
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  required: Schema.optional(Schema.Boolean)
})

/**
 * @since 0.1.0
 * @category models
 */
export const Prompt = Open({
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  arguments: Schema.optional(Schema.Array(PromptArgument)),
  icons: Schema.optional(Icons),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export type Prompt = typeof Prompt.Type

/**
 * @since 0.1.0
 * @category models
 */
export const ListPromptsResult = Open({ prompts: Schema.Array(Prompt), ...Paginated })

/**
 * @since 0.1.0
 * @category models
 */
export type ListPromptsResult = typeof ListPromptsResult.Type

/**
 * @since 0.1.0
 * @category models
 */
export const PromptMessage = Open({
  role: Schema.Literals(["user", "assistant"]),
  content: ContentBlock
})

/**
 * @since 0.1.0
 * @category models
 */
export const GetPromptResult = Open({
  description: Schema.optional(Schema.String),
  messages: Schema.Array(PromptMessage),
  resultType: Schema.optional(Schema.String),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export type GetPromptResult = typeof GetPromptResult.Type

/**
 * What a completion is for: a prompt argument or a resource template variable.
 *
 * @since 0.1.0
 * @category models
 */
export const CompleteReference = Schema.Union([
  Schema.Struct({ type: Schema.Literal("ref/prompt"), name: Schema.String }),
  Schema.Struct({ type: Schema.Literal("ref/resource"), uri: Schema.String })
])

/**
 * @since 0.1.0
 * @category models
 */
export type CompleteReference = typeof CompleteReference.Type

/**
 * @since 0.1.0
 * @category models
 */
export const CompleteResult = Open({
  completion: Open({
    values: Schema.Array(Schema.String),
    total: Schema.optional(Schema.Number),
    hasMore: Schema.optional(Schema.Boolean)
  }),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export type CompleteResult = typeof CompleteResult.Type

/**
 * @since 0.1.0
 * @category models
 */
export const EmptyResult = Open({ _meta: Meta })

/**
 * @since 0.1.0
 * @category models
 */
export const ProgressParams = Schema.Struct({
  progressToken: ProgressToken,
  progress: Schema.Number,
  total: Schema.optional(Schema.Number),
  message: Schema.optional(Schema.String)
})

/**
 * One `notifications/progress` for a request.
 *
 * @since 0.1.0
 * @category models
 */
export type Progress = typeof ProgressParams.Type

/**
 * @since 0.1.0
 * @category models
 */
export const LoggingLevel = Schema.Literals([
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency"
])

/**
 * @since 0.1.0
 * @category models
 */
export type LoggingLevel = typeof LoggingLevel.Type

/**
 * @since 0.1.0
 * @category models
 */
export const LoggingMessageParams = Schema.Struct({
  level: LoggingLevel,
  logger: Schema.optional(Schema.String),
  data: Schema.Unknown
})

/**
 * A server notification as subscribers see it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerNotification {
  readonly method: string
  readonly params: unknown
}
