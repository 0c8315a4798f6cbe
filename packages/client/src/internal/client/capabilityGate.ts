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

type Capability = "tools" | "prompts" | "resources" | "completions" | "logging"

/** The capability each gated method needs. */
const needs: Readonly<Record<string, Capability>> = {
  "tools/list": "tools",
  "tools/call": "tools",
  "prompts/list": "prompts",
  "prompts/get": "prompts",
  "resources/list": "resources",
  "resources/templates/list": "resources",
  "resources/read": "resources",
  "resources/subscribe": "resources",
  "resources/unsubscribe": "resources",
  "completion/complete": "completions",
  "logging/setLevel": "logging"
}

/** The empty page of each list method. */
const emptyLists: Readonly<Record<string, object>> = {
  "tools/list": { tools: [] },
  "prompts/list": { prompts: [] },
  "resources/list": { resources: [] },
  "resources/templates/list": { resourceTemplates: [] }
}

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
  const capability = needs[method]
  if (capability === undefined) return undefined
  const declared = capabilities[capability]
  if (declared !== undefined && declared !== null) {
    const subscribing = method === "resources/subscribe" || method === "resources/unsubscribe"
    if (subscribing && capabilities.resources?.subscribe !== true) return refused(method, "resources.subscribe")
    return undefined
  }
  const empty = emptyLists[method]
  if (empty !== undefined) return { _tag: "Empty", result: empty }
  return refused(method, capability)
}

const refused = (method: string, capability: string): Verdict => ({
  _tag: "Refused",
  error: new McpError.ProtocolError({
    reason: "CapabilityMissing",
    method,
    detail: `the server did not declare the ${capability} capability, which ${method} needs (strict mode)`
  })
})
