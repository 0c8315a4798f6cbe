/**
 * The legacy session of one connection (the 2025 revisions): the `initialize` handshake that fixes its version
 * and the client's capabilities, and the requests that need it, with the state they change (`logging/setLevel`,
 * `resources/subscribe` and `resources/unsubscribe`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as McpError from "@conduit-mcp/client/McpError"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as McpServer from "../McpServer.js"
import type * as model from "./serverModel.js"
import {
  decodeImplementation,
  invalidParams,
  isLoggingLevel,
  type LogThreshold,
  methodNotFound,
  record,
  type RequestInfo,
  rpcError
} from "./serverRequest.js"

type JsonObject = model.JsonObject

/**
 * The legacy handshake of one connection.
 *
 * @internal
 */
export interface LegacySession {
  readonly version: McpSchema.LegacyVersion
  readonly clientCapabilities: JsonObject
  readonly clientInfo: McpSchema.Implementation | undefined
}

/**
 * What a legacy client set on its connection: the handshake (none before `initialize`), the log level of
 * `logging/setLevel` (every level until then) and the URIs it subscribed to.
 *
 * @internal
 */
export interface LegacyState {
  session: LegacySession | undefined
  level: LogThreshold
  readonly subscribed: Set<string>
}

/** @internal */
export const makeState = (): LegacyState => ({ session: undefined, level: "all", subscribed: new Set() })

const LEGACY_METHODS: ReadonlySet<string> = new Set([
  "ping",
  "logging/setLevel",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "resources/subscribe",
  "resources/unsubscribe",
  "tasks/get",
  "tasks/result",
  "tasks/cancel",
  "tasks/list"
])

/**
 * The legacy handshake: picks the version (the client's when the server speaks it, the newest otherwise) and
 * keeps the client's capabilities and info for the connection's later requests.
 *
 * @internal
 */
export const initialize = (
  deps: {
    readonly legacyVersions: ReadonlyArray<McpSchema.LegacyVersion>
    readonly modernVersions: ReadonlyArray<McpSchema.ModernVersion>
    readonly capabilities: McpSchema.ServerCapabilities
    readonly info: McpSchema.Implementation
    readonly instructions: string | undefined
  },
  state: LegacyState,
  params: JsonObject
): Effect.Effect<JsonObject, McpError.McpError> => {
  const { legacyVersions } = deps
  const requested = params.protocolVersion
  if (legacyVersions.length === 0) {
    return Effect.fail(
      invalidParams("Unsupported protocol version", { supported: deps.modernVersions, requested })
    )
  }
  if (typeof requested !== "string") return Effect.fail(invalidParams("Missing protocolVersion"))
  const version = legacyVersions.find((candidate) => candidate === requested) ?? legacyVersions[0]
  state.session = {
    version,
    clientCapabilities: record(params.capabilities) ?? {},
    clientInfo: Option.getOrUndefined(decodeImplementation(params.clientInfo))
  }
  return Effect.succeed({
    protocolVersion: version,
    capabilities: deps.capabilities,
    serverInfo: deps.info,
    ...(deps.instructions !== undefined ? { instructions: deps.instructions } : {})
  })
}

/**
 * A legacy request other than `initialize`: refused before the handshake, answered here when it changes the
 * session, run by `run` otherwise.
 *
 * @internal
 */
export const request = (
  deps: {
    readonly eras: McpServer.Eras
    readonly offersResources: boolean
    readonly notify: (method: string, params: JsonObject) => Effect.Effect<void>
    readonly run: (request: RequestInfo) => Effect.Effect<JsonObject, McpError.McpError>
  },
  state: LegacyState,
  request: McpSchema.JsonRpcRequest,
  params: JsonObject,
  meta: JsonObject | undefined
): Effect.Effect<JsonObject, McpError.McpError> => {
  if (request.method === "ping") return Effect.succeed({})
  if (!LEGACY_METHODS.has(request.method)) return Effect.fail(methodNotFound(request.method))
  const session = state.session
  if (session === undefined) {
    return Effect.fail(
      deps.eras === "legacy" ?
        rpcError(McpSchema.ErrorCode.InvalidRequest, "Server not initialized") :
        invalidParams(
          `Missing required _meta field ${McpSchema.MetaKeys.protocolVersion} ` +
            "(clients of the 2025 revisions must send initialize first)"
        )
    )
  }
  if (request.method === "logging/setLevel") {
    const level = params.level
    if (!isLoggingLevel(level)) return Effect.fail(invalidParams("Invalid log level"))
    state.level = level
    return Effect.succeed({})
  }
  if (request.method === "resources/subscribe" || request.method === "resources/unsubscribe") {
    if (!deps.offersResources) return Effect.fail(methodNotFound(request.method))
    const uri = params.uri
    if (typeof uri !== "string") return Effect.fail(invalidParams("Missing uri"))
    if (request.method === "resources/subscribe") state.subscribed.add(uri)
    else state.subscribed.delete(uri)
    return Effect.succeed({})
  }
  return deps.run({
    id: request.id,
    method: request.method,
    params,
    meta: meta ?? {},
    era: "legacy",
    version: session.version,
    clientCapabilities: session.clientCapabilities,
    clientInfo: session.clientInfo,
    logThreshold: state.level,
    notify: deps.notify
  })
}
