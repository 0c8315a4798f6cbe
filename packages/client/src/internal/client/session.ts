/**
 * What the client's components share about one connection attempt and the session it negotiated.
 *
 * @internal
 */
import type * as Deferred from "effect/Deferred"
import type * as Scope from "effect/Scope"
import type * as McpClient from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as Transport from "../../Transport.js"

/**
 * One connection attempt, from `connect` until the transport closes.
 *
 * @internal
 */
export interface Attempt {
  readonly closed: Deferred.Deferred<McpError.TransportError>
  /** Set as soon as the transport reports it closed, so no request is registered on a dead connection. */
  closedError: McpError.TransportError | undefined
  connection: Transport.TransportConnection | undefined
  era: McpSchema.Era | undefined
  /** Messages received, so that a health check runs only on a quiet connection. */
  inbound: number
  readonly scope: Scope.Scope
  /** A legacy re-initialization after the server forgot the session, while one runs. */
  reinitializing: boolean
  version: McpSchema.ProtocolVersion | undefined
  serverName: string | undefined
}

/**
 * Where a request goes and how its `_meta` is built: `probe` while the era is being found.
 *
 * @internal
 */
export interface Wire {
  readonly attempt: Attempt
  readonly connection: Transport.TransportConnection
  readonly era: McpSchema.Era | "probe"
  readonly version: McpSchema.ProtocolVersion
}

/**
 * What the era negotiation agreed on.
 *
 * @internal
 */
export type Negotiated = Omit<McpClient.ServerSession, "transport">

/**
 * A negotiated session, with what its requests are sent through.
 *
 * @internal
 */
export type Session = McpClient.ServerSession & {
  readonly connection: Transport.TransportConnection
  readonly attempt: Attempt
  /** What requests of this session are sent with. */
  readonly wire: Wire
}

/**
 * @internal
 */
export const sessionOf = (
  negotiated: Negotiated,
  attempt: Attempt,
  connection: Transport.TransportConnection
): Session => ({
  ...negotiated,
  transport: connection.info,
  connection,
  attempt,
  wire: { attempt, connection, era: negotiated.era, version: negotiated.protocolVersion }
})

/**
 * The public view of a session.
 *
 * @internal
 */
export const publicSession = (
  { attempt: _attempt, connection: _connection, wire: _wire, ...session }: Session
): McpClient.ServerSession => session
