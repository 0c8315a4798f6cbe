/**
 * Wire types of the Model Context Protocol: the JSON-RPC envelope and the era-neutral MCP types of every
 * revision from 2024-11-05 to 2026-07-28. Everything that enters the client is decoded from `unknown` with
 * these schemas. Objects keep members they do not name, so newer fields reach the caller untouched.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

// ---------------------------------------------------------------------------------------------------------------
// Revisions

/**
 * The legacy revisions (an `initialize` handshake fixes the version), oldest first.
 *
 * @since 0.1.0
 * @category constants
 */
export const LEGACY_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] as const

/**
 * The modern revisions (the version travels in every request's `_meta`), oldest first.
 *
 * @since 0.1.0
 * @category constants
 */
export const MODERN_VERSIONS = ["2026-07-28"] as const

/**
 * @since 0.1.0
 * @category models
 */
export type LegacyVersion = typeof LEGACY_VERSIONS[number]

/**
 * @since 0.1.0
 * @category models
 */
export type ModernVersion = typeof MODERN_VERSIONS[number]

/**
 * @since 0.1.0
 * @category models
 */
export type ProtocolVersion = LegacyVersion | ModernVersion

/**
 * @since 0.1.0
 * @category models
 */
export type Era = "legacy" | "modern"

/**
 * @since 0.1.0
 * @category guards
 */
export const isLegacyVersion = (version: string): version is LegacyVersion =>
  (LEGACY_VERSIONS as ReadonlyArray<string>).includes(version)

/**
 * @since 0.1.0
 * @category guards
 */
export const isModernVersion = (version: string): version is ModernVersion =>
  (MODERN_VERSIONS as ReadonlyArray<string>).includes(version)

/**
 * The era a revision belongs to.
 *
 * @since 0.1.0
 * @category constructors
 */
export const eraOf = (version: ProtocolVersion): Era => isModernVersion(version) ? "modern" : "legacy"

/**
 * `_meta` keys of the modern envelope.
 *
 * @since 0.1.0
 * @category constants
 */
export const MetaKeys = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  logLevel: "io.modelcontextprotocol/logLevel",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  subscriptionId: "io.modelcontextprotocol/subscriptionId"
} as const

/**
 * JSON-RPC and MCP error codes a client reacts to.
 *
 * @since 0.1.0
 * @category constants
 */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
  UrlElicitationRequired: -32042,
  ResourceNotFound: -32002
} as const

// ---------------------------------------------------------------------------------------------------------------
// JSON-RPC envelope

/**
 * A JSON-RPC request id: a string or an integer, never null.
 *
 * @since 0.1.0
 * @category models
 */
export const RequestId = Schema.Union(Schema.String, Schema.Int)

/**
 * @since 0.1.0
 * @category models
 */
export type RequestId = typeof RequestId.Type

/**
 * @since 0.1.0
 * @category models
 */
export const ProgressToken = Schema.Union(Schema.String, Schema.Number)

/**
 * @since 0.1.0
 * @category models
 */
export type ProgressToken = typeof ProgressToken.Type

const jsonrpc = Schema.Literal("2.0")

/**
 * @since 0.1.0
 * @category models
 */
export const JsonRpcRequest = Schema.Struct({
  jsonrpc,
  id: RequestId,
  method: Schema.String,
  params: Schema.optional(Schema.Unknown)
})

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcRequest = typeof JsonRpcRequest.Type

/**
 * @since 0.1.0
 * @category models
 */
export const JsonRpcNotification = Schema.Struct({
  jsonrpc,
  method: Schema.String,
  params: Schema.optional(Schema.Unknown)
})

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcNotification = typeof JsonRpcNotification.Type

/**
 * @since 0.1.0
 * @category models
 */
export const JsonRpcSuccess = Schema.Struct({
  jsonrpc,
  id: RequestId,
  result: Schema.Unknown
})

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcSuccess = typeof JsonRpcSuccess.Type

/**
 * @since 0.1.0
 * @category models
 */
export const JsonRpcErrorObject = Schema.Struct({
  code: Schema.Number,
  message: Schema.String,
  data: Schema.optional(Schema.Unknown)
})

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcErrorObject = typeof JsonRpcErrorObject.Type

/**
 * @since 0.1.0
 * @category models
 */
export const JsonRpcFailure = Schema.Struct({
  jsonrpc,
  id: Schema.NullOr(RequestId),
  error: JsonRpcErrorObject
})

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcFailure = typeof JsonRpcFailure.Type

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure

/**
 * Any single JSON-RPC message.
 *
 * @since 0.1.0
 * @category models
 */
export const JsonRpcMessage = Schema.Union(JsonRpcRequest, JsonRpcSuccess, JsonRpcFailure, JsonRpcNotification)

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcMessage = typeof JsonRpcMessage.Type

const decodeRequest = Schema.decodeUnknownEither(JsonRpcRequest)
const decodeNotification = Schema.decodeUnknownEither(JsonRpcNotification)
const decodeSuccess = Schema.decodeUnknownEither(JsonRpcSuccess)
const decodeFailure = Schema.decodeUnknownEither(JsonRpcFailure)

const notAMessage = (input: unknown) =>
  Either.left(
    new ParseResult.ParseError({
      issue: new ParseResult.Type(JsonRpcMessage.ast, input, "not a JSON-RPC 2.0 message")
    })
  )

/**
 * Decodes one parsed JSON value as a JSON-RPC message. The shape picks the one member schema that applies
 * (request, notification, success, failure), so the hot path decodes the envelope once; `params` and `result`
 * stay `unknown` until the method that owns them decodes them.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeMessage = (input: unknown): Either.Either<JsonRpcMessage, ParseResult.ParseError> => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return notAMessage(input)
  // The usual envelopes are checked by hand, to the same result as their schemas (members in schema order, other
  // members dropped); anything else, valid or not, goes through the schemas.
  const valid = "jsonrpc" in input && input.jsonrpc === "2.0"
  if ("method" in input) {
    if (valid && typeof input.method === "string") {
      const method = input.method
      const params = hasOwn(input, "params") ? { params: "params" in input ? input.params : undefined } : {}
      if (!("id" in input)) return Either.right({ jsonrpc: "2.0", method, ...params })
      const id = input.id
      if (isRequestId(id) && hasOwn(input, "id")) return Either.right({ jsonrpc: "2.0", id, method, ...params })
    }
    return "id" in input ? decodeRequest(input) : decodeNotification(input)
  }
  if ("result" in input) {
    if (valid && "id" in input && isRequestId(input.id) && hasOwn(input, "id") && hasOwn(input, "result")) {
      return Either.right({ jsonrpc: "2.0", id: input.id, result: input.result })
    }
    return decodeSuccess(input)
  }
  if ("error" in input) return decodeFailure(input)
  return notAMessage(input)
}

const hasOwn = (input: object, key: string): boolean => Object.prototype.hasOwnProperty.call(input, key)

const isRequestId = (id: unknown): id is RequestId =>
  typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id))

/**
 * @since 0.1.0
 * @category guards
 */
export const isRequest = (message: JsonRpcMessage): message is JsonRpcRequest => "method" in message && "id" in message

/**
 * @since 0.1.0
 * @category guards
 */
export const isNotification = (message: JsonRpcMessage): message is JsonRpcNotification =>
  "method" in message && !("id" in message)

/**
 * @since 0.1.0
 * @category guards
 */
export const isResponse = (message: JsonRpcMessage): message is JsonRpcResponse => !("method" in message)

// ---------------------------------------------------------------------------------------------------------------
// MCP types (era-neutral: the union of the fields every revision defines)

/**
 * Decoding options for MCP results: members a schema does not name are kept.
 *
 * @since 0.1.0
 * @category decoding
 */
export const preserve = { onExcessProperty: "preserve", errors: "first" } as const

const Meta = Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * @since 0.1.0
 * @category models
 */
export const Icon = Schema.Struct({
  src: Schema.String,
  mimeType: Schema.optional(Schema.String),
  sizes: Schema.optional(Schema.Array(Schema.String)),
  theme: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Icon = typeof Icon.Type

const safeImageData = /^data:image\/(png|jpeg|jpg|gif|webp)(;[^,]*)?,/i

/**
 * Whether an icon may reach a user interface: an `https:` URL, or a `data:` URI of a raster image type (PNG, JPEG,
 * GIF, WebP); a declared `mimeType` must be an image type. Every other scheme (`javascript:`, `file:`, `http:`,
 * SVG data that can carry scripts, …) is unsafe (2025-11-25 `basic/index.mdx`: clients MUST reject unsafe URI
 * schemes).
 *
 * @since 0.1.0
 * @category icons
 */
export const isSafeIcon = (icon: Icon): boolean => {
  if (icon.mimeType !== undefined && !icon.mimeType.toLowerCase().startsWith("image/")) return false
  const src = icon.src.trim()
  if (safeImageData.test(src)) return true
  if (!/^https:/i.test(src)) return false
  try {
    return new URL(src).protocol === "https:"
  } catch {
    return false
  }
}

/**
 * A list of icons as a server sends it, decoded to the safe ones only (see {@link isSafeIcon}).
 *
 * @since 0.1.0
 * @category icons
 */
export const Icons = Schema.transform(Schema.Array(Icon), Schema.Array(Icon), {
  strict: true,
  decode: (icons) => icons.filter(isSafeIcon),
  encode: (icons) => icons
})

/**
 * Name and version of a client or server (self-reported: for display and logs only).
 *
 * @since 0.1.0
 * @category models
 */
export const Implementation = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  websiteUrl: Schema.optional(Schema.String),
  icons: Schema.optional(Icons)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Implementation = typeof Implementation.Type

/**
 * @since 0.1.0
 * @category models
 */
export const ServerCapabilities = Schema.Struct({
  tools: Schema.optional(Schema.Struct({ listChanged: Schema.optional(Schema.Boolean) })),
  prompts: Schema.optional(Schema.Struct({ listChanged: Schema.optional(Schema.Boolean) })),
  resources: Schema.optional(
    Schema.Struct({ subscribe: Schema.optional(Schema.Boolean), listChanged: Schema.optional(Schema.Boolean) })
  ),
  completions: Schema.optional(JsonObject),
  logging: Schema.optional(JsonObject),
  experimental: Schema.optional(JsonObject),
  extensions: Schema.optional(JsonObject),
  tasks: Schema.optional(JsonObject)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ServerCapabilities = typeof ServerCapabilities.Type

/**
 * @since 0.1.0
 * @category models
 */
export const ClientCapabilities = Schema.Struct({
  roots: Schema.optional(Schema.Struct({ listChanged: Schema.optional(Schema.Boolean) })),
  sampling: Schema.optional(JsonObject),
  elicitation: Schema.optional(JsonObject),
  experimental: Schema.optional(JsonObject),
  extensions: Schema.optional(JsonObject),
  tasks: Schema.optional(JsonObject)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ClientCapabilities = typeof ClientCapabilities.Type

/**
 * @since 0.1.0
 * @category models
 */
export const InitializeResult = Schema.Struct({
  protocolVersion: Schema.String,
  capabilities: ServerCapabilities,
  serverInfo: Implementation,
  instructions: Schema.optional(Schema.String),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export type InitializeResult = typeof InitializeResult.Type

/**
 * The answer to `server/discover` (2026-07-28).
 *
 * @since 0.1.0
 * @category models
 */
export const DiscoverResult = Schema.Struct({
  resultType: Schema.optional(Schema.String),
  supportedVersions: Schema.Array(Schema.String),
  capabilities: ServerCapabilities,
  instructions: Schema.optional(Schema.String),
  ttlMs: Schema.optional(Schema.Number),
  cacheScope: Schema.optional(Schema.String),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export type DiscoverResult = typeof DiscoverResult.Type

const Annotations = Schema.Struct({
  audience: Schema.optional(Schema.Array(Schema.String)),
  priority: Schema.optional(Schema.Number),
  lastModified: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export const TextContent = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  annotations: Schema.optional(Annotations),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export const ImageContent = Schema.Struct({
  type: Schema.Literal("image"),
  data: Schema.String,
  mimeType: Schema.String,
  annotations: Schema.optional(Annotations),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export const AudioContent = Schema.Struct({
  type: Schema.Literal("audio"),
  data: Schema.String,
  mimeType: Schema.String,
  annotations: Schema.optional(Annotations),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export const TextResourceContents = Schema.Struct({
  uri: Schema.String,
  mimeType: Schema.optional(Schema.String),
  text: Schema.String,
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export const BlobResourceContents = Schema.Struct({
  uri: Schema.String,
  mimeType: Schema.optional(Schema.String),
  blob: Schema.String,
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export const ResourceContents = Schema.Union(TextResourceContents, BlobResourceContents)

/**
 * @since 0.1.0
 * @category models
 */
export type ResourceContents = typeof ResourceContents.Type

/**
 * @since 0.1.0
 * @category models
 */
export const EmbeddedResource = Schema.Struct({
  type: Schema.Literal("resource"),
  resource: ResourceContents,
  annotations: Schema.optional(Annotations),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export const ResourceLink = Schema.Struct({
  type: Schema.Literal("resource_link"),
  uri: Schema.String,
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String),
  size: Schema.optional(Schema.Number),
  annotations: Schema.optional(Annotations),
  _meta: Meta
})

/**
 * A content block a newer revision defines and this client does not know yet; kept as it came.
 *
 * @since 0.1.0
 * @category models
 */
export const UnknownContent = Schema.Struct({ type: Schema.String })

/**
 * @since 0.1.0
 * @category models
 */
export const ContentBlock = Schema.Union(
  TextContent,
  ImageContent,
  AudioContent,
  EmbeddedResource,
  ResourceLink,
  UnknownContent
)

/**
 * @since 0.1.0
 * @category models
 */
export type ContentBlock = typeof ContentBlock.Type

/**
 * @since 0.1.0
 * @category models
 */
export const Tool = Schema.Struct({
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
  execution: Schema.optional(Schema.Struct({ taskSupport: Schema.optional(Schema.String) })),
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
export const ListToolsResult = Schema.Struct({ tools: Schema.Array(Tool), ...Paginated })

/**
 * @since 0.1.0
 * @category models
 */
export type ListToolsResult = typeof ListToolsResult.Type

/**
 * @since 0.1.0
 * @category models
 */
export const CallToolResult = Schema.Struct({
  content: Schema.optionalWith(Schema.Array(ContentBlock), { default: () => [] }),
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
export const Resource = Schema.Struct({
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
export const ListResourcesResult = Schema.Struct({ resources: Schema.Array(Resource), ...Paginated })

/**
 * @since 0.1.0
 * @category models
 */
export type ListResourcesResult = typeof ListResourcesResult.Type

/**
 * @since 0.1.0
 * @category models
 */
export const ResourceTemplate = Schema.Struct({
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
export const ListResourceTemplatesResult = Schema.Struct({
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
export const ReadResourceResult = Schema.Struct({
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
export const PromptArgument = Schema.Struct({
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  required: Schema.optional(Schema.Boolean)
})

/**
 * @since 0.1.0
 * @category models
 */
export const Prompt = Schema.Struct({
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
export const ListPromptsResult = Schema.Struct({ prompts: Schema.Array(Prompt), ...Paginated })

/**
 * @since 0.1.0
 * @category models
 */
export type ListPromptsResult = typeof ListPromptsResult.Type

/**
 * @since 0.1.0
 * @category models
 */
export const PromptMessage = Schema.Struct({
  role: Schema.Literal("user", "assistant"),
  content: ContentBlock
})

/**
 * @since 0.1.0
 * @category models
 */
export const GetPromptResult = Schema.Struct({
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
export const CompleteReference = Schema.Union(
  Schema.Struct({ type: Schema.Literal("ref/prompt"), name: Schema.String }),
  Schema.Struct({ type: Schema.Literal("ref/resource"), uri: Schema.String })
)

/**
 * @since 0.1.0
 * @category models
 */
export type CompleteReference = typeof CompleteReference.Type

/**
 * @since 0.1.0
 * @category models
 */
export const CompleteResult = Schema.Struct({
  completion: Schema.Struct({
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
export const EmptyResult = Schema.Struct({ _meta: Meta })

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
export const LoggingLevel = Schema.Literal(
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency"
)

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

// ---------------------------------------------------------------------------------------------------------------
// Client features: what the server asks and the client answers (shared by the client's handlers and servers)

/**
 * The user's answer.
 *
 * @since 0.1.0
 * @category models
 */
export const ElicitResult = Schema.Struct({
  action: Schema.Literal("accept", "decline", "cancel"),
  content: Schema.optional(
    Schema.Record({
      key: Schema.String,
      value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String))
    })
  )
})

/**
 * @since 0.1.0
 * @category models
 */
export type ElicitResult = typeof ElicitResult.Type

/**
 * The parameters of `sampling/createMessage`, kept as the server sent them (messages, systemPrompt,
 * maxTokens, modelPreferences, tools, ...).
 *
 * @since 0.1.0
 * @category models
 */
export const CreateMessageParams = Schema.Struct({
  messages: Schema.Array(Schema.Struct({ role: Schema.Literal("user", "assistant"), content: Schema.Unknown })),
  maxTokens: Schema.optional(Schema.Number),
  systemPrompt: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type CreateMessageParams = typeof CreateMessageParams.Type & Readonly<Record<string, unknown>>

/**
 * @since 0.1.0
 * @category models
 */
export const CreateMessageResult = Schema.Struct({
  role: Schema.Literal("user", "assistant"),
  content: Schema.Unknown,
  model: Schema.String,
  stopReason: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type CreateMessageResult = typeof CreateMessageResult.Type
