/**
 * The spec's errors with a meaning of their own, told apart from other JSON-RPC errors by their code (and the
 * `data` the spec gives them): `-32002` resource not found, `-32042` URL elicitation required, `-32021` missing
 * client capability, `-32022` unsupported protocol version. Each becomes its tagged error with the server's
 * `McpError` as its cause; an error whose `data` does not have the spec's shape stays an `McpError`.
 *
 * From 2026-07-28 a server reports a missing resource as `-32602` (invalid params) to `resources/read`, whose only
 * parameter is the URI (`-32002` is still accepted, as the revision asks of clients); the official SDK's servers
 * answered so in the 2025 revisions already. A `-32602` to `resources/read` is therefore `ResourceNotFound` in
 * every era: the URI is what the server could not read. Other methods' `-32602` stay `McpError`s.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"

const decodeElicitations = Schema.decodeUnknownResult(
  Schema.Struct({ elicitations: Schema.NonEmptyArray(McpError.UrlElicitation) })
)
const decodeRequired = Schema.decodeUnknownResult(
  Schema.Struct({ requiredCapabilities: Schema.Record(Schema.String, Schema.Unknown) })
)
const decodeSupported = Schema.decodeUnknownResult(
  Schema.Struct({ supported: Schema.Array(Schema.String), requested: Schema.optional(Schema.String) })
)
const decodeUri = Schema.decodeUnknownResult(Schema.Struct({ uri: Schema.String }))

const uriOf = (error: McpError.McpError, params: Readonly<Record<string, unknown>> | undefined) => {
  const fromParams = typeof params?.uri === "string" ? params.uri : undefined
  return fromParams ?? Result.getOrUndefined(Result.map(decodeUri(error.data), (data) => data.uri))
}

/**
 * The tagged error for a server's JSON-RPC error, when the spec gives its code a meaning (else the error itself).
 *
 * @internal
 */
export const fromMcpError = (
  error: McpError.McpError,
  method: string,
  params: Readonly<Record<string, unknown>> | undefined
): McpError.McpError | McpError.SpecError => {
  switch (error.code) {
    case McpSchema.ErrorCode.InvalidParams: {
      if (method !== "resources/read") return error
      const uri = uriOf(error, params)
      return new McpError.ResourceNotFound({ method, ...(uri === undefined ? {} : { uri }), cause: error })
    }
    case McpSchema.ErrorCode.ResourceNotFound: {
      const uri = uriOf(error, params)
      return new McpError.ResourceNotFound({ method, ...(uri === undefined ? {} : { uri }), cause: error })
    }
    case McpSchema.ErrorCode.UrlElicitationRequired:
      return Result.match(decodeElicitations(error.data), {
        onFailure: () => error,
        onSuccess: (data) =>
          new McpError.UrlElicitationRequired({ method, elicitations: data.elicitations, cause: error })
      })
    case McpSchema.ErrorCode.MissingRequiredClientCapability:
      return Result.match(decodeRequired(error.data), {
        onFailure: () => error,
        onSuccess: (data) =>
          new McpError.MissingClientCapability({ method, requiredCapabilities: data.requiredCapabilities, cause: error })
      })
    case McpSchema.ErrorCode.UnsupportedProtocolVersion:
      return Result.match(decodeSupported(error.data), {
        onFailure: () => error,
        onSuccess: (data) =>
          new McpError.UnsupportedProtocolVersion({
            method,
            supported: data.supported,
            ...(data.requested === undefined ? {} : { requested: data.requested }),
            cause: error
          })
      })
    default:
      return error
  }
}

/**
 * A call's error with the spec's errors told apart.
 *
 * @internal
 */
export const typed = (
  error: McpError.McpClientError,
  method: string,
  params: Readonly<Record<string, unknown>> | undefined
): McpError.McpClientError => error._tag === "McpError" ? fromMcpError(error, method, params) : error

/**
 * The same for a call's cause.
 *
 * @internal
 */
export const typedCause = (
  cause: Cause.Cause<McpError.McpClientError>,
  method: string,
  params: Readonly<Record<string, unknown>> | undefined
): Cause.Cause<McpError.McpClientError> => Cause.map(cause, (error) => typed(error, method, params))
