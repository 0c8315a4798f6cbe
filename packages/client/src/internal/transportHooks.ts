/**
 * What this library's own transports offer the client beyond the public `Transport` contract, kept out of it:
 *
 * - credentials (the HTTP transport): `McpClient.setAuth` swaps them, the result cache keys private entries by
 *   their partition, and the client declares the extensions they bring;
 * - the identity of what a connection reaches (the stdio transport: a keyed digest of the child's command line,
 *   environment and working directory), which keys private cached results where there are no credentials;
 * - fast paths: a connection that can send a request without running an effect (its outbound buffer has room), and
 *   an `emit` that settles the answer to a pending request at once. The benchmark's stdio and HTTP runs measure them
 *   (packages/bench/README.md, "the fast path"): an effect per message saved, on every call.
 *
 * They attach to the objects they belong to (the transport service, a connection, an emit function) in weak maps,
 * so a transport written outside this library implements only the public contract and still works; it just goes
 * without these.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as HttpTransport from "../HttpTransport.js"
import type * as McpError from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"
import type * as Transport from "../Transport.js"

/** @internal */
export interface Credentials {
  /**
   * Swaps the credentials of the transport and of every live connection: checks them like the layer's options
   * (`InvalidOption` leaves the current ones in place); every request sent from now on carries the new ones.
   */
  readonly set: (auth: HttpTransport.Auth) => Effect.Effect<void, McpError.InvalidOption>
  /**
   * The partition of private cached results the credentials the transport was built with belong to, never the
   * credentials themselves; `undefined`: none.
   */
  readonly partition: Effect.Effect<string | undefined>
  /**
   * MCP extensions the credentials bring (by identifier, with their settings), which the client declares in
   * `capabilities.extensions` next to the configured ones (the OAuth client credentials grant:
   * `io.modelcontextprotocol/oauth-client-credentials`).
   */
  readonly extensions?: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined
}

/** @internal */
export type FastRequest = (message: McpSchema.JsonRpcRequest, options: Transport.WireOptions) => boolean

/** @internal */
export type FastEmit = (event: Transport.TransportEvent) => boolean

const credentials = new WeakMap<object, Credentials>()
const identities = new WeakMap<object, Effect.Effect<string>>()
const fastRequests = new WeakMap<object, FastRequest>()
const fastEmits = new WeakMap<object, FastEmit>()

/** Attaches credentials to a transport service; answers the service. @internal */
export const withCredentials = <T extends object>(transport: T, value: Credentials): T => {
  credentials.set(transport, value)
  return transport
}

/** @internal */
export const credentialsOf = (transport: object): Credentials | undefined => credentials.get(transport)

/**
 * Attaches to a connection the partition of private cached results of what it reaches, when that is known and the
 * transport has no credentials: the stdio transport's is a keyed digest of what makes its child (never the values
 * themselves). Answers the connection. @internal
 */
export const withIdentity = <T extends object>(connection: T, partition: Effect.Effect<string>): T => {
  identities.set(connection, partition)
  return connection
}

/** @internal */
export const identityOf = (connection: object): Effect.Effect<string> | undefined => identities.get(connection)

/**
 * Attaches a synchronous send to a connection: it sends the request and answers true, or answers false and sends
 * nothing (then the connection's `request` runs). It must not throw. Answers the connection. @internal
 */
export const withFastRequest = <T extends object>(connection: T, send: FastRequest): T => {
  fastRequests.set(connection, send)
  return connection
}

/** @internal */
export const fastRequestOf = (connection: object): FastRequest | undefined => fastRequests.get(connection)

/**
 * Attaches a synchronous delivery to an emit function: it handles an event at once when that needs no effect (the
 * answer to a pending request) and answers true, or answers false and does nothing. Answers the function. @internal
 */
export const withFastEmit = <T extends object>(emit: T, deliver: FastEmit): T => {
  fastEmits.set(emit, deliver)
  return emit
}

/** @internal */
export const fastEmitOf = (emit: object): FastEmit | undefined => fastEmits.get(emit)
