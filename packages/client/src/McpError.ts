/**
 * The errors of the MCP client. Every public operation names the exact union it can fail with, and callers
 * narrow it by `_tag`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as internalPrintable from "./internal/printable.js"

/**
 * The label of a transport in errors, logs and telemetry: `"stdio"`, `"http"` or `"in-process"` for this package's
 * transports, any other string for a transport written elsewhere (its `Transport.kind`). It is a label only: what
 * the client does differently from one transport to another comes from the transport's declared
 * `Transport.Traits`, never from its kind. The schema accepts any string; the type names the known labels so that
 * editors offer them.
 *
 * @since 0.1.0
 * @category models
 */
export const TransportKind: Schema.Codec<TransportKind> = Schema.String

/**
 * @since 0.1.0
 * @category models
 */
export type TransportKind = "stdio" | "http" | "in-process" | (string & {})

/**
 * The transport could not carry a message: a child that would not start or exited, a broken pipe, an HTTP
 * failure, a frame too large, a stream that ended without an answer.
 *
 * `StreamEnded`: the request's response stream ended or broke before its answer, so the request may have run on
 * the server. A request that only reads (the list requests, `resources/read`, `prompts/get`,
 * `completion/complete`, `server/discover`, `ping`) is then issued once more as a new request, with a new id, and
 * its caller sees this error only when that one is lost too.
 *
 * `TooManyRefusedFrames`: the server sent more frames the transport had to drop (malformed JSON, nested deeper
 * than `maxFrameDepth`, more values than `maxFrameValues`, not JSON-RPC; over HTTP also larger than
 * `maxEventBytes`) than its `maxRefusedFrames` budget allows (default 100 at once, earned back at 100 a minute),
 * and the connection was closed.
 *
 * @since 0.1.0
 * @category errors
 */
export class TransportError extends Schema.TaggedError<TransportError>("@conduit-mcp/client/TransportError")(
  "TransportError",
  {
    transport: TransportKind,
    reason: Schema.Literals([
      "Spawn",
      "Connect",
      "Write",
      "Read",
      "FrameTooLarge",
      "Exited",
      "Closed",
      "HttpStatus",
      "StreamEnded",
      "Timeout",
      "TooManyRefusedFrames"
    ]),
    detail: Schema.optional(Schema.String),
    /** HTTP status of a refused request, when there was one. */
    status: Schema.optional(Schema.Number),
    contentType: Schema.optional(Schema.String),
    body: Schema.optional(Schema.String),
    /** Exit code of a child process that ended. */
    exitCode: Schema.optional(Schema.NullOr(Schema.Number)),
    /** The last lines a child process wrote to stderr. */
    stderr: Schema.optional(Schema.Array(Schema.String)),
    cause: Schema.optional(Schema.Defect())
  }
) {
  override get message(): string {
    const parts = [`${this.transport} transport: ${this.reason}`]
    if (this.detail !== undefined) parts.push(`: ${this.detail}`)
    // (a detail that names the status already says it)
    if (this.status !== undefined && !(this.detail ?? "").includes(`HTTP ${this.status}`)) {
      parts.push(` (HTTP ${this.status})`)
    }
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
  params: Schema.Record(Schema.String, Schema.String),
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
  status: Schema.Literals([401, 403]),
  challenges: Schema.Array(Challenge),
  detail: Schema.optional(Schema.String),
  /** The fingerprint (never the value) of the static bearer token the refused request carried. */
  credential: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.Defect())
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
 * The resource a request named does not exist: the legacy `-32002` (which the 2026-07-28 revision still asks
 * clients to accept from older servers), or a 2026-07-28 server's `-32602` to `resources/read` (that revision's code
 * for it). The server's error is kept as `cause`.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResourceNotFound extends Schema.TaggedError<ResourceNotFound>("@conduit-mcp/client/ResourceNotFound")(
  "ResourceNotFound",
  { method: Schema.String, uri: Schema.optional(Schema.String), cause: McpError }
) {
  override get message(): string {
    return `resource not found${this.uri !== undefined ? `: ${this.uri}` : ""} (${this.cause.message})`
  }
}

/**
 * One URL-mode elicitation a server requires before it can go on (2025-11-25 `ElicitRequestURLParams`).
 *
 * @since 0.1.0
 * @category models
 */
export const UrlElicitation = Schema.Struct({
  mode: Schema.Literal("url"),
  elicitationId: Schema.String,
  url: Schema.String,
  message: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export type UrlElicitation = typeof UrlElicitation.Type

/**
 * The server needs the user to visit one or more URLs before it can run the request (`-32042`, 2025-11-25). Show
 * each through URL consent; when they are done (or when the user asks), send the request again.
 *
 * @since 0.1.0
 * @category errors
 */
export class UrlElicitationRequired
  extends Schema.TaggedError<UrlElicitationRequired>("@conduit-mcp/client/UrlElicitationRequired")(
    "UrlElicitationRequired",
    { method: Schema.String, elicitations: Schema.Array(UrlElicitation), cause: McpError }
  )
{
  override get message(): string {
    return `${this.method} needs ${this.elicitations.length} URL elicitation(s) first`
  }
}

/**
 * The server needs a client capability this client did not declare (`-32021`): `requiredCapabilities` names it.
 * Configure the capability (a handler) to make the request possible.
 *
 * @since 0.1.0
 * @category errors
 */
export class MissingClientCapability
  extends Schema.TaggedError<MissingClientCapability>("@conduit-mcp/client/MissingClientCapability")(
    "MissingClientCapability",
    {
      method: Schema.String,
      requiredCapabilities: Schema.Record(Schema.String, Schema.Unknown),
      cause: McpError
    }
  )
{
  override get message(): string {
    return `${this.method} needs the client capabilities ${Object.keys(this.requiredCapabilities).join(", ")}`
  }
}

/**
 * The server does not support the protocol version a request was sent in (`-32022`) and the client found no
 * shared version to send it in again: `supported` lists the server's versions.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnsupportedProtocolVersion
  extends Schema.TaggedError<UnsupportedProtocolVersion>("@conduit-mcp/client/UnsupportedProtocolVersion")(
    "UnsupportedProtocolVersion",
    {
      method: Schema.String,
      requested: Schema.optional(Schema.String),
      supported: Schema.Array(Schema.String),
      cause: McpError
    }
  )
{
  override get message(): string {
    return `${this.method}: the server supports protocol versions ${this.supported.join(", ") || "(none)"}${
      this.requested !== undefined ? `, not ${this.requested}` : ""
    }`
  }
}

/**
 * The spec's errors with a meaning of their own, each a tagged error mapped from its JSON-RPC code.
 *
 * @since 0.1.0
 * @category errors
 */
export type SpecError = ResourceNotFound | UrlElicitationRequired | MissingClientCapability | UnsupportedProtocolVersion

/**
 * The budgets of one listing (every page of `tools/list`, `prompts/list`, `resources/list`,
 * `resources/templates/list`), named as the client's options that set them.
 *
 * @since 0.2.0
 * @category models
 */
export const ListingBudget = Schema.Literals(["maxPages", "maxListItems", "maxListBytes"])

/**
 * @since 0.2.0
 * @category models
 */
export type ListingBudget = typeof ListingBudget.Type

/**
 * The peer broke the protocol, or the two sides could not agree: an invalid result, an unknown `resultType`,
 * no shared protocol version, a failed negotiation.
 *
 * A listing that would pass one of its budgets fails with `ListingBudgetExceeded`: `budget` names the option
 * (`maxPages`, `maxListItems`, `maxListBytes`) and `limit` its value. One whose server answers a cursor it gave
 * before in the same listing (which would page forever) fails with `RepeatedCursor`. A request sent by its
 * method's definition (`McpMethod`) whose parameters the definition's schema refuses fails with `InvalidParams`,
 * before anything is sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProtocolError extends Schema.TaggedError<ProtocolError>("@conduit-mcp/client/ProtocolError")(
  "ProtocolError",
  {
    reason: Schema.Literals([
      "InvalidResult",
      "InvalidResultType",
      "UnsupportedVersion",
      "Negotiation",
      "InputRoundsExceeded",
      "CapabilityMissing",
      "InputFailed",
      "InvalidParams",
      "ListingBudgetExceeded",
      "RepeatedCursor"
    ]),
    detail: Schema.String,
    method: Schema.optional(Schema.String),
    /** `ListingBudgetExceeded`: the budget the listing would have passed. */
    budget: Schema.optional(ListingBudget),
    /** `ListingBudgetExceeded`: that budget's value. */
    limit: Schema.optional(Schema.Number),
    /** `InputRoundsExceeded`: the last interim (`input_required`) result, as the server sent it. */
    lastResult: Schema.optional(Schema.Unknown),
    cause: Schema.optional(Schema.Defect())
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
  reason: Schema.Literals(["Cancelled", "Expired", "NotFound", "Unsupported"]),
  taskId: Schema.optional(Schema.String),
  detail: Schema.String
}) {
  override get message(): string {
    return `task${this.taskId !== undefined ? ` ${this.taskId}` : ""} ${this.reason}: ${this.detail}`
  }
}

/**
 * The tool ran and reported a failure (a result with `isError: true`); `text` is its text content. A call asked for
 * it (`callTool`'s `isError: "fail"`, {@link ToolResult.failOnError}, a typed tool) fails with it instead of
 * returning the result.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolFailed extends Schema.TaggedError<ToolFailed>("@conduit-mcp/client/ToolFailed")("ToolFailed", {
  tool: Schema.String,
  text: Schema.String,
  structuredContent: Schema.optional(Schema.Unknown)
}) {
  override get message(): string {
    return `tool "${this.tool}" failed${this.text === "" ? "" : `: ${this.text}`}`
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
 * What a request to the server can fail with: every error of the client's methods (a call run as a task adds
 * `TaskError`, which is one of them, so that one type names what any call fails with). `ToolFailed` comes on top
 * only where a call asks for it (`isError: "fail"`, a typed tool).
 *
 * @since 0.1.0
 * @category errors
 */
export type McpClientError = RequestError | SpecError | TaskError

/**
 * What one request on the wire can fail with, before the spec's errors are told apart from other `McpError`s.
 *
 * @since 0.1.0
 * @category errors
 */
export type RequestError = TransportError | AuthError | SessionExpired | McpError | ProtocolError | RequestTimeout

/**
 * Whether a value is one of the client's typed errors (what a promise of `McpPromiseClient` rejects with when a
 * request fails): narrow a caught `unknown` with it, then tell the errors apart by `_tag`.
 *
 * @since 0.1.0
 * @category refinements
 */
export const isMcpClientError = (u: unknown): u is McpClientError =>
  u instanceof TransportError || u instanceof AuthError || u instanceof SessionExpired || u instanceof McpError ||
  u instanceof ProtocolError || u instanceof RequestTimeout || u instanceof ResourceNotFound ||
  u instanceof UrlElicitationRequired || u instanceof MissingClientCapability || u instanceof UnsupportedProtocolVersion ||
  u instanceof TaskError

/**
 * A server's text made fit for a log line or a display: every control character and every invisible one (C0 and
 * C1 controls, DEL, format characters such as the bidirectional overrides and zero-width characters, the other
 * default-ignorable code points, line and paragraph separators) is written as a visible escape (`\x1b`, `\u202e`,
 * `\u{e0041}`), so that nothing a server wrote reaches a terminal as a control or unseen. The messages of these
 * errors hold a server's text as it was sent (its error message, a transport's detail, a child's stderr): escape
 * them before logging or printing them. The library's own logs already do.
 *
 * @example
 * import { McpError } from "@conduit-mcp/client"
 * import { Effect } from "effect"
 *
 * const report = (error: McpError.McpClientError) => Effect.logWarning(McpError.printable(error.message))
 *
 * @since 0.2.0
 * @category formatting
 */
export const printable: (text: string) => string = internalPrintable.printable
