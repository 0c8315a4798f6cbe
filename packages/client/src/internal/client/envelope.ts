/**
 * The `_meta` envelope of requests: the capabilities a client declares at each version, the modern per-request
 * fields (version, client info, capabilities, log level, trace context) and the client's own progress tokens.
 *
 * @internal
 */
import * as McpSchema from "../../McpSchema.js"
import * as Features from "../clientFeatures.js"
import type { Wire } from "./session.js"

/**
 * What shapes the `_meta` of one request.
 *
 * @internal
 */
export interface MetaOptions {
  readonly onProgress: unknown
  readonly resetOnProgress: boolean
  readonly meta: Readonly<Record<string, unknown>> | undefined
}

/**
 * @internal
 */
export interface Envelope {
  readonly clientInfo: McpSchema.Implementation
  readonly handlers: Features.Handlers
  /** The capabilities declared at a version: the configured ones and what the handlers offer. */
  readonly capabilitiesFor: (version: McpSchema.ProtocolVersion) => McpSchema.ClientCapabilities
  /** The elicitation modes declared at a version. */
  readonly declaredModes: (version: McpSchema.ProtocolVersion) => ReadonlyArray<"form" | "url">
  /** The level last set with `setLoggingLevel`: sent again on new legacy sessions, in every modern request. */
  readonly logLevel: () => McpSchema.LoggingLevel | undefined
  readonly setLogLevel: (level: McpSchema.LoggingLevel) => void
  /** A request's params with its `_meta`. */
  readonly params: (
    wire: Wire,
    id: McpSchema.RequestId,
    params: Readonly<Record<string, unknown>> | undefined,
    options: MetaOptions,
    traceparent: string | undefined
  ) => Record<string, unknown> | undefined
}

/**
 * @internal
 */
export const make = (
  clientInfo: McpSchema.Implementation,
  configured: McpSchema.ClientCapabilities,
  handlers: Features.Handlers,
  /** What other features add to the capabilities declared at a version (tasks). */
  extend: (
    capabilities: McpSchema.ClientCapabilities,
    version: McpSchema.ProtocolVersion
  ) => McpSchema.ClientCapabilities = (capabilities) => capabilities
): Envelope => {
  let logLevel: McpSchema.LoggingLevel | undefined
  const capabilityCache = new Map<McpSchema.ProtocolVersion, McpSchema.ClientCapabilities>()
  const capabilitiesFor = (version: McpSchema.ProtocolVersion): McpSchema.ClientCapabilities => {
    let caps = capabilityCache.get(version)
    if (caps === undefined) {
      caps = extend(Features.capabilitiesFor(handlers, configured, version), version)
      capabilityCache.set(version, caps)
    }
    return caps
  }
  const declaredModes = (version: McpSchema.ProtocolVersion): ReadonlyArray<"form" | "url"> => {
    const elicitation = capabilitiesFor(version).elicitation
    if (elicitation === undefined) return []
    const modes: Array<"form" | "url"> = []
    if ("form" in elicitation || !("url" in elicitation)) modes.push("form")
    if ("url" in elicitation) modes.push("url")
    return modes
  }
  const params = (
    wire: Wire,
    id: McpSchema.RequestId,
    params: Readonly<Record<string, unknown>> | undefined,
    send: MetaOptions,
    traceparent: string | undefined
  ): Record<string, unknown> | undefined => {
    const callerMeta = params?._meta
    const extraMeta = typeof callerMeta === "object" && callerMeta !== null ? callerMeta : undefined
    // Progress tokens are the client's (the request's id, routed to its caller): one a caller put in `_meta`
    // could name another request, whose caller would then get this one's progress.
    const callerToken = (extraMeta !== undefined && "progressToken" in extraMeta) ||
      (send.meta !== undefined && "progressToken" in send.meta)
    const wantsProgress = send.onProgress !== undefined || send.resetOnProgress
    if (wire.era === "legacy") {
      if (!wantsProgress && send.meta === undefined && !callerToken) return params
      const legacyMeta: Record<string, unknown> = { ...extraMeta, ...send.meta }
      if (wantsProgress) legacyMeta.progressToken = id
      else delete legacyMeta.progressToken
      return { ...params, _meta: legacyMeta }
    }
    // (the usual request has no `_meta` of its own: no spreads then)
    const meta: Record<string, unknown> = extraMeta === undefined && send.meta === undefined
      ? {}
      : { ...extraMeta, ...send.meta }
    if (callerToken) delete meta.progressToken
    meta[McpSchema.MetaKeys.protocolVersion] = wire.version
    meta[McpSchema.MetaKeys.clientInfo] = clientInfo
    meta[McpSchema.MetaKeys.clientCapabilities] = capabilitiesFor(wire.version)
    if (logLevel !== undefined && wire.era === "modern") meta[McpSchema.MetaKeys.logLevel] = logLevel
    // A token only when the caller wants progress, or an idle timeout needs it.
    if (wantsProgress) meta.progressToken = id
    if (traceparent !== undefined) meta.traceparent = traceparent
    return { ...params, _meta: meta }
  }
  return {
    clientInfo,
    handlers,
    capabilitiesFor,
    declaredModes,
    logLevel: () => logLevel,
    setLogLevel: (level) => {
      logLevel = level
    },
    params
  }
}

const TRACE_ID = /^(?!0{32}$)[0-9a-f]{32}$/
const SPAN_ID = /^(?!0{16}$)[0-9a-f]{16}$/

/**
 * The W3C `traceparent` of a span, so a server can join the caller's trace; none for a span whose ids W3C calls
 * invalid (not lowercase hex of the right length, or all zeros: an invalid span context of OpenTelemetry).
 *
 * @internal
 */
export const traceContext = (
  span: { readonly traceId: string; readonly spanId: string; readonly sampled: boolean } | undefined
): string | undefined =>
  span !== undefined && TRACE_ID.test(span.traceId) && SPAN_ID.test(span.spanId)
    ? `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`
    : undefined
