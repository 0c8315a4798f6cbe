/**
 * The errors of the MCP client. Every public operation names the exact union it can fail with, and callers
 * narrow it by `_tag`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The family of a transport: it selects the era probe rules, the default probe timeout and telemetry
 * attributes.
 *
 * @since 0.1.0
 * @category models
 */
export const TransportKind = Schema.Literal("stdio", "http", "in-process")

/**
 * @since 0.1.0
 * @category models
 */
export type TransportKind = typeof TransportKind.Type

/**
 * The transport could not carry a message: a child that would not start or exited, a broken pipe, an HTTP
 * failure, a frame too large, a stream that ended without an answer.
 *
 * `StreamEnded`: the request's response stream ended or broke before its answer, so the request may have run on
 * the server. A request that only reads (the list requests, `resources/read`, `prompts/get`,
 * `completion/complete`, `server/discover`, `ping`) is then issued once more as a new request, with a new id, and
 * its caller sees this error only when that one is lost too.
 *
 * @since 0.1.0
 * @category errors
 */
export class TransportError extends Schema.TaggedError<TransportError>("@conduit-mcp/client/TransportError")(
  "TransportError",
  {
    transport: TransportKind,
    reason: Schema.Literal(
      "Spawn",
      "Connect",
      "Write",
      "Read",
      "FrameTooLarge",
      "Exited",
      "Closed",
      "HttpStatus",
      "StreamEnded",
      "Timeout"
    ),
    detail: Schema.optional(Schema.String),
    /** HTTP status of a refused request, when there was one. */
    status: Schema.optional(Schema.Number),
    contentType: Schema.optional(Schema.String),
    body: Schema.optional(Schema.String),
    /** Exit code of a child process that ended. */
    exitCode: Schema.optional(Schema.NullOr(Schema.Number)),
    /** The last lines a child process wrote to stderr. */
    stderr: Schema.optional(Schema.Array(Schema.String)),
    cause: Schema.optional(Schema.Defect)
  }
) {
  override get message(): string {
    const parts = [`${this.transport} transport: ${this.reason}`]
    if (this.detail !== undefined) parts.push(`: ${this.detail}`)
    if (this.status !== undefined) parts.push(` (HTTP ${this.status})`)
    if (this.stderr !== undefined && this.stderr.length > 0) {
      parts.push(`\nstderr:\n${this.stderr.join("\n")}`)
    }
    return parts.join("")
  }
}

/**
 * One `WWW-Authenticate` challenge, its parameters by lower-case name.
 *
 * @since 0.1.0
 * @category models
 */
export const Challenge = Schema.Struct({
  scheme: Schema.String,
  params: Schema.Record({ key: Schema.String, value: Schema.String }),
  /** The credentials of a challenge written in the token68 form (`Negotiate abc==`) instead of parameters. */
  token68: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Challenge = typeof Challenge.Type

/**
 * The server refused the request for want of credentials (401) or scope (403).
 *
 * @since 0.1.0
 * @category errors
 */
export class AuthError extends Schema.TaggedError<AuthError>("@conduit-mcp/client/AuthError")("AuthError", {
  status: Schema.Literal(401, 403),
  challenges: Schema.Array(Challenge),
  detail: Schema.optional(Schema.String),
  /** The fingerprint (never the value) of the static bearer token the refused request carried. */
  credential: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    return `authorization required (HTTP ${this.status})${this.detail !== undefined ? `: ${this.detail}` : ""}`
  }
}

/**
 * The server no longer knows the legacy session a request was sent in.
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionExpired extends Schema.TaggedError<SessionExpired>("@conduit-mcp/client/SessionExpired")(
  "SessionExpired",
  { sessionId: Schema.String }
) {
  override get message(): string {
    return `session ${this.sessionId} expired`
  }
}

/**
 * The server answered with a JSON-RPC error object.
 *
 * @since 0.1.0
 * @category errors
 */
export class McpError extends Schema.TaggedError<McpError>("@conduit-mcp/client/McpError")("McpError", {
  code: Schema.Number,
  message: Schema.String,
  data: Schema.optional(Schema.Unknown),
  method: Schema.optional(Schema.String)
}) {}

/**
 * The peer broke the protocol, or the two sides could not agree: an invalid result, an unknown `resultType`,
 * no shared protocol version, a failed negotiation.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProtocolError extends Schema.TaggedError<ProtocolError>("@conduit-mcp/client/ProtocolError")(
  "ProtocolError",
  {
    reason: Schema.Literal(
      "InvalidResult",
      "InvalidResultType",
      "UnsupportedVersion",
      "Negotiation",
      "InputRoundsExceeded",
      "CapabilityMissing",
      "InputFailed",
      "Unsupported"
    ),
    detail: Schema.String,
    method: Schema.optional(Schema.String),
    cause: Schema.optional(Schema.Defect)
  }
) {
  override get message(): string {
    return `${this.reason}${this.method !== undefined ? ` in ${this.method}` : ""}: ${this.detail}`
  }
}

/**
 * A request got no answer before its deadline. The request was cancelled the way the era and binding require.
 *
 * @since 0.1.0
 * @category errors
 */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>("@conduit-mcp/client/RequestTimeout")(
  "RequestTimeout",
  { method: Schema.String, timeoutMillis: Schema.Number }
) {
  override get message(): string {
    return `${this.method} timed out after ${this.timeoutMillis} ms`
  }
}

/**
 * An option given to a layer or constructor is not valid. Raised when the layer is built, before any I/O.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidOption extends Schema.TaggedError<InvalidOption>("@conduit-mcp/client/InvalidOption")(
  "InvalidOption",
  { option: Schema.String, detail: Schema.String }
) {
  override get message(): string {
    return `invalid option ${this.option}: ${this.detail}`
  }
}

/**
 * A task (a long-running request the server runs in the background) did not give a result: it was `Cancelled`,
 * it `Expired` (its time to live passed, or the server no longer knows it after that), the server does not know
 * it (`NotFound`), or the call cannot run as a task (`Unsupported`: the server or the tool does not allow it).
 * A task that failed with a JSON-RPC error fails with that {@link McpError} instead.
 *
 * @since 0.1.0
 * @category errors
 */
export class TaskError extends Schema.TaggedError<TaskError>("@conduit-mcp/client/TaskError")("TaskError", {
  reason: Schema.Literal("Cancelled", "Expired", "NotFound", "Unsupported"),
  taskId: Schema.optional(Schema.String),
  detail: Schema.String
}) {
  override get message(): string {
    return `task${this.taskId !== undefined ? ` ${this.taskId}` : ""} ${this.reason}: ${this.detail}`
  }
}

/**
 * What a transport can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type TransportFailure = TransportError | AuthError | SessionExpired

/**
 * What establishing a connection can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type ConnectError = TransportFailure | McpError | ProtocolError | RequestTimeout

/**
 * What a request to the server can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type McpClientError = TransportError | AuthError | SessionExpired | McpError | ProtocolError | RequestTimeout
