/**
 * The values of the hub that its implementation (internal/hub.ts) makes and `McpHub` exports: its errors, a
 * server's state and the current server's reference. A leaf: it imports no public module of the hub, so the
 * implementation needs no value of `McpHub` (which imports the implementation).
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Schema from "effect/Schema"
import * as McpError from "../McpError.js"
import type * as McpHub from "../McpHub.js"

/**
 * What the hub refuses before any server is asked: a name it does not know, a misconfigured entry, a tool a
 * filter hides. `server` names the entry concerned (absent for a configuration file that cannot be read at all).
 *
 * @since 0.1.0
 * @category errors
 */
export class HubError extends Schema.TaggedError<HubError>("@conduit-mcp/client/HubError")("HubError", {
  reason: Schema.Literals(["UnknownServer", "UnknownName", "InvalidConfig", "DuplicateName", "InvalidName", "NotAllowed"]),
  server: Schema.optional(Schema.String),
  detail: Schema.String
}) {
  override get message(): string {
    return this.server === undefined ? this.detail : `server "${this.server}": ${this.detail}`
  }
}

/**
 * Every error an `McpClient` may fail with, as a Schema.
 *
 * @since 0.1.0
 * @category errors
 */
export const ClientError = Schema.Union([
  McpError.TransportError,
  McpError.AuthError,
  McpError.SessionExpired,
  McpError.McpError,
  McpError.ProtocolError,
  McpError.RequestTimeout,
  McpError.InvalidOption,
  McpError.TaskError,
  McpError.ResourceNotFound,
  McpError.UrlElicitationRequired,
  McpError.MissingClientCapability,
  McpError.UnsupportedProtocolVersion
])

/**
 * A server failed what was asked of it (connecting, or a call): the client's own typed error, under the
 * server's name.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerError extends Schema.TaggedError<ServerError>("@conduit-mcp/client/ServerError")("ServerError", {
  server: Schema.String,
  error: ClientError
}) {
  override get message(): string {
    return `server "${this.server}": ${this.error.message}`
  }
}

/**
 * The constructors of a server's state (`McpHub.ServerState`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const ServerState = Data.taggedEnum<McpHub.ServerState>()

/**
 * The hub name of the server whose request a handler is serving. The handlers given in the hub's `client` options
 * (`sampling`, `elicitation`, `roots`, `extensions`) serve every server; they read this to tell them apart. Outside a hub it is `undefined`.
 *
 * @since 0.1.0
 * @category references
 */
export const CurrentServer: Context.Reference<string | undefined> = Context.Reference<string | undefined>(
  "@conduit-mcp/client/McpHub/CurrentServer",
  { defaultValue: () => undefined }
)
