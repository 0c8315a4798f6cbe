/**
 * Capability gating (the `strict` option): a request for a feature the server did not declare is not sent. A
 * list of a kind the server declared nothing of is empty (no round trip); any other request fails with a
 * `ProtocolError` (`CapabilityMissing`) naming the capability and the method. Off by default: some servers
 * serve features they forgot to declare.
 *
 * @internal
 */
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import { methodOf } from "../mcpMethods.js"

/**
 * What a strict client does with a request: send it (undefined), answer it with an empty list (`Empty`), or
 * refuse it (`Refused`).
 *
 * @internal
 */
export type Verdict =
  | { readonly _tag: "Empty"; readonly result: object }
  | { readonly _tag: "Refused"; readonly error: McpError.ProtocolError }

/**
 * @internal
 */
export const check = (
  method: string,
  capabilities: McpSchema.ServerCapabilities
): Verdict | undefined => {
  const definition = methodOf(method)
  const capability = definition?.capability
  if (capability === undefined) return undefined
  const subscribing = capability === "resources.subscribe"
  const declared = capabilities[subscribing ? "resources" : capability]
  if (declared !== undefined && declared !== null) {
    if (subscribing && capabilities.resources?.subscribe !== true) return refused(method, "resources.subscribe")
    return undefined
  }
  const empty = definition?.emptyPage
  if (empty !== undefined) return { _tag: "Empty", result: empty }
  return refused(method, subscribing ? "resources" : capability)
}

const refused = (method: string, capability: string): Verdict => ({
  _tag: "Refused",
  error: new McpError.ProtocolError({
    reason: "CapabilityMissing",
    method,
    detail: `the server did not declare the ${capability} capability, which ${method} needs (strict mode)`
  })
})
