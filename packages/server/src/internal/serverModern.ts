/**
 * A modern request (2026-07-28): every request carries its version, the client's capabilities and log level in
 * `_meta`, checked here; `server/discover` and `subscriptions/listen` are answered here, every other method is
 * run by `run`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as McpError from "@conduit-mcp/client/McpError"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as model from "./serverModel.js"
import {
  decodeImplementation,
  invalidParams,
  isLoggingLevel,
  record,
  type RequestInfo,
  rpcError
} from "./serverRequest.js"

type JsonObject = model.JsonObject

/** @internal */
export const request = (
  deps: {
    readonly modernVersions: ReadonlyArray<McpSchema.ModernVersion>
    readonly supportedVersions: ReadonlyArray<McpSchema.ProtocolVersion>
    readonly capabilities: McpSchema.ServerCapabilities
    readonly instructions: string | undefined
    readonly notify: (method: string, params: JsonObject) => Effect.Effect<void>
    readonly finish: (request: RequestInfo, result: JsonObject, cacheable: boolean) => JsonObject
    readonly listen: (
      id: McpSchema.RequestId,
      params: JsonObject,
      clientCapabilities: JsonObject
    ) => Effect.Effect<never, McpError.McpError>
    readonly run: (request: RequestInfo) => Effect.Effect<JsonObject, McpError.McpError>
  },
  request: McpSchema.JsonRpcRequest,
  params: JsonObject,
  meta: JsonObject | undefined
): Effect.Effect<JsonObject, McpError.McpError> => {
  const version = meta?.[McpSchema.MetaKeys.protocolVersion]
  const clientCapabilities = record(meta?.[McpSchema.MetaKeys.clientCapabilities])
  if (meta === undefined || typeof version !== "string" || clientCapabilities === undefined) {
    return Effect.fail(invalidParams(
      `Missing required _meta fields: ${McpSchema.MetaKeys.protocolVersion} and ` +
        `${McpSchema.MetaKeys.clientCapabilities}`
    ))
  }
  const supported = deps.modernVersions.find((candidate) => candidate === version)
  if (supported === undefined) {
    return Effect.fail(
      rpcError(McpSchema.ErrorCode.UnsupportedProtocolVersion, "Unsupported protocol version", {
        supported: deps.supportedVersions,
        requested: version
      })
    )
  }
  const logLevel = meta[McpSchema.MetaKeys.logLevel]
  if (logLevel !== undefined && !isLoggingLevel(logLevel)) {
    return Effect.fail(invalidParams(`Invalid log level: ${String(logLevel)}`))
  }
  const requestInfo: RequestInfo = {
    id: request.id,
    method: request.method,
    params,
    meta,
    era: "modern",
    version: supported,
    clientCapabilities,
    clientInfo: Option.getOrUndefined(decodeImplementation(meta[McpSchema.MetaKeys.clientInfo])),
    logThreshold: logLevel ?? "none",
    notify: deps.notify
  }
  if (request.method === "server/discover") {
    return Effect.succeed(deps.finish(requestInfo, {
      supportedVersions: deps.supportedVersions,
      capabilities: deps.capabilities,
      ...(deps.instructions !== undefined ? { instructions: deps.instructions } : {})
    }, true))
  }
  if (request.method === "subscriptions/listen") return deps.listen(request.id, params, clientCapabilities)
  return deps.run(requestInfo)
}
