/**
 * The protocol version of the MCP request whose refusal started an authorization (the negotiated one, or the
 * modern version of a probe): OAuth discovery requests carry it as `MCP-Protocol-Version`, before the version
 * configured on the OAuth service. Its own module so that the HTTP transport sets it without loading OAuth.
 *
 * @internal
 */
import * as FiberRef from "effect/FiberRef"
import { globalValue } from "effect/GlobalValue"

/** @internal */
export const requestProtocolVersion: FiberRef.FiberRef<string | undefined> = globalValue(
  Symbol.for("@conduit-mcp/client/oauthHttp/requestProtocolVersion"),
  () => FiberRef.unsafeMake<string | undefined>(undefined)
)
