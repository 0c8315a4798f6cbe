/**
 * Wire types of the Model Context Protocol: the JSON-RPC envelope and the era-neutral MCP types of every
 * revision from 2024-11-05 to 2026-07-28. Everything that enters the client is decoded from `unknown` with
 * these schemas. Objects keep members they do not name, so newer fields reach the caller untouched.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as mcpSchemaCore from "./internal/mcpSchemaCore.js"
import * as protoKeys from "./internal/protoKeys.js"

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

/**
 * `JSON.parse` for a message's text from a peer, with every member named `__proto__` removed at any depth (written
 * plainly or with `\u` escapes): Effect Schema's decode of a `Record`, or of a value whose extra members are kept,
 * copies by assignment, which would make such a member's value the copy's prototype. The client's transports decode
 * every frame so; `@conduit-mcp/server` decodes a client's messages with it. Throws what `JSON.parse` throws.
 *
 * @since 0.2.0
 * @category decoding
 */
export const parseJson: (text: string) => unknown = protoKeys.parse

/**
 * The JSON-RPC envelope, the lifecycle and content types and the feature types live in internal modules of their
 * own, re-exported here as they are.
 *
 * @since 0.1.0
 */
export * from "./internal/mcpSchemaJsonRpc.js"

/**
 * @since 0.1.0
 */
export * from "./internal/mcpSchemaCore.js"

/**
 * @since 0.1.0
 */
export * from "./internal/mcpSchemaResults.js"

// ---------------------------------------------------------------------------------------------------------------
// Client features: what the server asks and the client answers (shared by the client's handlers and servers)

/**
 * The user's answer.
 *
 * @since 0.1.0
 * @category models
 */
export const ElicitResult = Schema.Struct({
  action: Schema.Literals(["accept", "decline", "cancel"]),
  content: Schema.optional(
    Schema.Record(
      Schema.String,
      Schema.Union([Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String)])
    )
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
export const CreateMessageParams = mcpSchemaCore.Open({
  messages: Schema.Array(mcpSchemaCore.Open({ role: Schema.Literals(["user", "assistant"]), content: Schema.Unknown })),
  maxTokens: Schema.optional(Schema.Number),
  systemPrompt: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type CreateMessageParams = typeof CreateMessageParams.Type

/**
 * @since 0.1.0
 * @category models
 */
export const CreateMessageResult = Schema.Struct({
  role: Schema.Literals(["user", "assistant"]),
  content: Schema.Unknown,
  model: Schema.String,
  stopReason: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type CreateMessageResult = typeof CreateMessageResult.Type

