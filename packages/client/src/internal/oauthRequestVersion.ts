/**
 * The protocol version of the MCP request whose refusal started an authorization (the negotiated one, or the
 * modern version of a probe): OAuth discovery requests carry it as `MCP-Protocol-Version`, before the version
 * configured on the OAuth service. Its own module so that the HTTP transport sets it without loading OAuth.
 *
 * @internal
 */
import * as Context from "effect/Context"

/**
 * Set with `Effect.provideService(requestProtocolVersion, version)`. References are found by their key, so two
 * copies of this module agree.
 *
 * @internal
 */
export const requestProtocolVersion: Context.Reference<string | undefined> = Context.Reference<string | undefined>(
  "@conduit-mcp/client/oauthHttp/requestProtocolVersion",
  { defaultValue: () => undefined }
)
