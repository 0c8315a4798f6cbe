/**
 * The values the server engine and the public module share: the change model, the errors and the request
 * context. A leaf: it imports neither of them.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as McpSchema from "@conduit-mcp/client/McpSchema"

/**
 * A JSON object (a JSON Schema, annotations, `_meta`).
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = { readonly [key: string]: unknown }

/**
 * A change a server tells its clients about: a list changed, or a resource was updated. Legacy clients get the
 * list changes as they happen and resource updates for the URIs they `resources/subscribe`d to; modern clients
 * get what each of their `subscriptions/listen` streams asked for, tagged with its subscription id.
 *
 * @since 0.1.0
 * @category models
 */
export type Change = Data.TaggedEnum<{
  ListChanged: { readonly list: "tools" | "prompts" | "resources" }
  ResourceUpdated: { readonly uri: string }
}>

/**
 * Constructors for {@link Change}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Change = Data.taggedEnum<Change>()

// ---------------------------------------------------------------------------------------------------------------
// Errors

/**
 * A tool failed in a way the model should see: the call answers with `isError: true` and this message as
 * text content (not a JSON-RPC error). Fail with `McpError.McpError` instead for a JSON-RPC error.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolError extends Schema.TaggedError<ToolError>("@conduit-mcp/server/McpServer/ToolError")(
  "ToolError",
  {
    message: Schema.String,
    structuredContent: Schema.optional(Schema.Unknown)
  }
) {}

/**
 * A handler asked the client for input (elicitation, sampling, roots) and could not get it:
 *
 * - `CapabilityMissing`: the client did not declare the capability (legacy: at `initialize`; modern: in this
 *   request's `_meta`). `requiredCapabilities` names it.
 * - `Unsupported`: the request cannot carry input requests (a modern request other than `tools/call`,
 *   `prompts/get`, `resources/read`), or the negotiated revision predates the feature.
 * - `Refused`: the client answered the legacy request with a JSON-RPC error (`code`).
 * - `InvalidResponse`: the client's answer does not have the expected shape.
 *
 * Left unhandled, it answers a tool call with an `isError` result, and other requests with a JSON-RPC error;
 * a missing capability in the modern era is always `-32021` with `requiredCapabilities`.
 *
 * @since 0.1.0
 * @category errors
 */
export class InputError extends Schema.TaggedError<InputError>("@conduit-mcp/server/McpServer/InputError")(
  "InputError",
  {
    method: Schema.String,
    reason: Schema.Literals(["CapabilityMissing", "Unsupported", "Refused", "InvalidResponse"]),
    detail: Schema.String,
    requiredCapabilities: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
    code: Schema.optional(Schema.Number)
  }
) {
  override get message(): string {
    return `${this.method}: ${this.detail}`
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Request context

/**
 * What a handler knows about the request it serves, and how it reports progress and logs.
 *
 * @since 0.1.0
 * @category tags
 */
export class RequestContext extends Context.Service<RequestContext, {
  readonly connection: number
  readonly requestId: McpSchema.RequestId
  readonly method: string
  readonly era: McpSchema.Era
  readonly protocolVersion: McpSchema.ProtocolVersion
  /** Modern: this request's `_meta` capabilities; legacy: those sent with `initialize`. */
  readonly clientCapabilities: JsonObject
  readonly clientInfo: McpSchema.Implementation | undefined
  readonly progressToken: McpSchema.ProgressToken | undefined
  /** The request's `_meta`, as sent. */
  readonly meta: JsonObject
  /** Sends `notifications/progress` when the request asked for progress; does nothing otherwise. */
  readonly progress: (
    progress: number,
    options?: { readonly total?: number | undefined; readonly message?: string | undefined }
  ) => Effect.Effect<void>
  /**
   * Sends `notifications/message` when the level passes the threshold: the request's `_meta` log level
   * (modern; none means no logs) or the connection's `logging/setLevel` (legacy; none means every level).
   */
  readonly log: (level: McpSchema.LoggingLevel, data: unknown, logger?: string) => Effect.Effect<void>
  /**
   * Asks the client for input and returns its raw answer. Legacy: a request to the client on this connection,
   * awaited (interrupting the handler cancels it). Modern: the answer when the client already gave it in a
   * retry of this request; otherwise the handler stops and the request answers `input_required`, and the
   * client's retry runs the handler again from the start. Prefer {@link elicit}, {@link elicitUrl},
   * {@link sample} and {@link listRoots}.
   */
  readonly input: (method: InputMethod, params: JsonObject) => Effect.Effect<JsonObject, InputError>
  /** Tells every connected client that asked about it, on any connection (see {@link Change}). */
  readonly publish: (change: Change) => Effect.Effect<void>
}>()("@conduit-mcp/server/McpServer/RequestContext") {}

/**
 * The requests a handler can send the client.
 *
 * @since 0.1.0
 * @category models
 */
export type InputMethod = "elicitation/create" | "sampling/createMessage" | "roots/list"
