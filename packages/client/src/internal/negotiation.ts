/** @internal */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as McpError from "../McpError.js"
import * as McpSchema from "../McpSchema.js"

/**
 * What the connection does after the era probe.
 *
 * @internal
 */
export type ProbeVerdict =
  | { readonly _tag: "Modern"; readonly version: McpSchema.ModernVersion; readonly discover: McpSchema.DiscoverResult }
  | { readonly _tag: "RetryModern"; readonly version: McpSchema.ModernVersion }
  | { readonly _tag: "Legacy"; readonly version: McpSchema.LegacyVersion | undefined }
  | { readonly _tag: "Fail"; readonly error: McpError.ProtocolError | McpError.TransportFailure }

const decodeDiscover = Schema.decodeUnknownEither(McpSchema.DiscoverResult, McpSchema.preserve)
const SupportedData = Schema.Struct({ supported: Schema.Array(Schema.String) })
const decodeSupported = Schema.decodeUnknownEither(SupportedData)

/**
 * The newest version present in both lists, if any.
 *
 * @internal
 */
export const newestShared = <V extends string>(
  ours: ReadonlyArray<V>,
  theirs: ReadonlyArray<string>
): V | undefined => {
  let best: V | undefined
  for (const version of ours) {
    if (theirs.includes(version) && (best === undefined || version > best)) best = version
  }
  return best
}

const fromVersionList = (
  offered: ReadonlyArray<string>,
  supported: ReadonlyArray<McpSchema.ProtocolVersion>,
  onModern: (version: McpSchema.ModernVersion) => ProbeVerdict,
  onNone: () => ProbeVerdict
): ProbeVerdict => {
  const modern = newestShared(supported.filter(McpSchema.isModernVersion), offered)
  if (modern !== undefined) return onModern(modern)
  const legacy = newestShared(supported.filter(McpSchema.isLegacyVersion), offered)
  if (legacy !== undefined) return { _tag: "Legacy", version: legacy }
  return onNone()
}

const noSharedVersion = (offered: ReadonlyArray<string>, supported: ReadonlyArray<string>): ProbeVerdict => ({
  _tag: "Fail",
  error: new McpError.ProtocolError({
    reason: "UnsupportedVersion",
    method: "server/discover",
    detail: `the server supports ${offered.join(", ") || "no version"}; this client supports ${supported.join(", ")}`
  })
})

/**
 * Classifies a successful answer to `server/discover`.
 *
 * @internal
 */
export const classifyProbeResult = (
  result: unknown,
  supported: ReadonlyArray<McpSchema.ProtocolVersion>
): ProbeVerdict => {
  const decoded = decodeDiscover(result)
  if (Either.isLeft(decoded)) {
    // Something answered the method but not with a DiscoverResult: not a modern server.
    return { _tag: "Legacy", version: undefined }
  }
  const discover = decoded.right
  return fromVersionList(
    discover.supportedVersions,
    supported,
    (version) => ({ _tag: "Modern", version, discover }),
    () => noSharedVersion(discover.supportedVersions, supported)
  )
}

/**
 * Classifies a JSON-RPC error answering the probe (the stdio rules; an HTTP 2xx carrying an error uses them too).
 * Only `-32022` with a usable version list is modern evidence; `-32020`/`-32021` mean our own probe was
 * malformed and fail the negotiation; every other code means a legacy server.
 *
 * @internal
 */
export const classifyProbeError = (
  error: McpError.McpError,
  supported: ReadonlyArray<McpSchema.ProtocolVersion>,
  retried: boolean
): ProbeVerdict => {
  if (error.code === McpSchema.ErrorCode.UnsupportedProtocolVersion) {
    const data = decodeSupported(error.data)
    if (Either.isLeft(data)) return { _tag: "Legacy", version: undefined }
    return fromVersionList(
      data.right.supported,
      supported,
      (version) =>
        retried
          ? {
            _tag: "Fail",
            error: new McpError.ProtocolError({
              reason: "UnsupportedVersion",
              method: "server/discover",
              detail: `the server rejected protocol version ${version} twice`
            })
          }
          : { _tag: "RetryModern", version },
      () => noSharedVersion(data.right.supported, supported)
    )
  }
  if (
    error.code === McpSchema.ErrorCode.HeaderMismatch ||
    error.code === McpSchema.ErrorCode.MissingRequiredClientCapability
  ) {
    return {
      _tag: "Fail",
      error: new McpError.ProtocolError({
        reason: "Negotiation",
        method: "server/discover",
        detail: `the server refused the era probe with ${error.code}: ${error.message}`
      })
    }
  }
  return { _tag: "Legacy", version: undefined }
}

/**
 * Classifies a probe that failed without a JSON-RPC answer. On HTTP a 400/404/405 without a modern error body
 * means a legacy server; 401/403 go to the auth path; 5xx and network failures are outages, never verdicts. On
 * every other kind the caller treats a closed transport as "legacy, restart".
 *
 * @internal
 */
export const classifyProbeFailure = (
  kind: McpError.TransportKind,
  error: McpError.TransportFailure,
  supported: ReadonlyArray<McpSchema.ProtocolVersion>,
  retried: boolean
): ProbeVerdict => {
  if (error._tag !== "TransportError" || kind !== "http") return { _tag: "Fail", error }
  if (error.reason !== "HttpStatus" || error.status === undefined) return { _tag: "Fail", error }
  if (error.status >= 400 && error.status < 500 && error.body !== undefined && error.body.length > 0) {
    const modern = modernErrorInBody(error.body)
    if (modern !== undefined) return classifyProbeError(modern, supported, retried)
  }
  if (error.status === 400 || error.status === 404 || error.status === 405) {
    return { _tag: "Legacy", version: undefined }
  }
  return { _tag: "Fail", error }
}

const ErrorBody = Schema.parseJson(Schema.Struct({ error: McpSchema.JsonRpcErrorObject }))
const decodeErrorBody = Schema.decodeUnknownEither(ErrorBody)

const modernErrorInBody = (body: string): McpError.McpError | undefined => {
  const decoded = decodeErrorBody(body)
  if (Either.isLeft(decoded)) return undefined
  const error = decoded.right.error
  if (
    error.code !== McpSchema.ErrorCode.UnsupportedProtocolVersion &&
    error.code !== McpSchema.ErrorCode.HeaderMismatch &&
    error.code !== McpSchema.ErrorCode.MissingRequiredClientCapability
  ) return undefined
  return new McpError.McpError({ code: error.code, message: error.message, data: error.data })
}

/**
 * Whether a failed `initialize` names only modern versions: the cached legacy verdict was wrong.
 *
 * @internal
 */
export const initializeNamesOnlyModern = (error: McpError.McpError): boolean => {
  const data = decodeSupported(error.data)
  if (Either.isLeft(data) || data.right.supported.length === 0) return false
  return data.right.supported.every(McpSchema.isModernVersion)
}
