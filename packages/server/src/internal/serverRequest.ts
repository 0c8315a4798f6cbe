/**
 * What the server engine's modules share about one request: what its handlers see of it (`RequestInfo`), the log
 * threshold it runs under, the JSON-RPC errors the methods answer with, and the guards that read its params. A
 * leaf: it imports no other module of the engine but the model.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as McpError from "@conduit-mcp/client/McpError"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as model from "./serverModel.js"

type JsonObject = model.JsonObject

// the schema's literals, least severe first
const LEVELS: ReadonlyArray<McpSchema.LoggingLevel> = McpSchema.LoggingLevel.literals

/** @internal */
export const isLoggingLevel = Schema.is(McpSchema.LoggingLevel)
/** @internal */
export const isProgressToken = Schema.is(McpSchema.ProgressToken)
/** @internal */
export const isRequestId = Schema.is(McpSchema.RequestId)
/** @internal */
export const decodeImplementation = Schema.decodeUnknownOption(McpSchema.Implementation)

/**
 * A log threshold: a minimum level, every level (legacy default) or none (modern default).
 *
 * @internal
 */
export type LogThreshold = McpSchema.LoggingLevel | "all" | "none"

/** @internal */
export const passes = (threshold: LogThreshold, level: McpSchema.LoggingLevel): boolean =>
  threshold === "all" || (threshold !== "none" && LEVELS.indexOf(level) >= LEVELS.indexOf(threshold))

/** @internal */
export const rpcError = (code: number, message: string, data?: unknown): McpError.McpError =>
  new McpError.McpError(data === undefined ? { code, message } : { code, message, data })

/** @internal */
export const invalidParams = (message: string, data?: unknown) =>
  rpcError(McpSchema.ErrorCode.InvalidParams, message, data)

/** @internal */
export const methodNotFound = (method: string) =>
  rpcError(McpSchema.ErrorCode.MethodNotFound, `Method not found: ${method}`)

/** @internal */
export const record = (value: unknown): JsonObject | undefined => Predicate.isObject(value) ? value : undefined

/** @internal */
export const textContent = (value: string): McpSchema.ContentBlock => ({ type: "text", text: value })

/**
 * What the handlers of one request see of it.
 *
 * @internal
 */
export interface RequestInfo {
  readonly id: McpSchema.RequestId
  readonly method: string
  readonly params: JsonObject
  readonly meta: JsonObject
  readonly era: McpSchema.Era
  readonly version: McpSchema.ProtocolVersion
  readonly clientCapabilities: JsonObject
  readonly clientInfo: McpSchema.Implementation | undefined
  readonly logThreshold: LogThreshold
  /** Sends a notification on the request's connection. */
  readonly notify: (method: string, params: JsonObject) => Effect.Effect<void>
}
