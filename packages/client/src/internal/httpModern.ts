/**
 * Modern Streamable HTTP (2026-07-28): one POST per request carrying `MCP-Protocol-Version`, `Mcp-Method`,
 * `Mcp-Name` and the `Mcp-Param-*` headers its tool declares; a `HeaderMismatch` refusal refreshes the tool list
 * and re-sends the call once; cancelling aborts the exchange and sends nothing.
 *
 * @internal
 */
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type * as McpError from "../McpError.js"
import * as McpSchema from "../McpSchema.js"
import type * as Transport from "../Transport.js"
import type { Inbound } from "./httpInbound.js"
import { jsonRpcError } from "./httpInbound.js"
import * as Body from "./httpResponse.js"
import type { Sender } from "./httpSender.js"
import type { Binding, State } from "./httpState.js"
import { ACCEPT_BOTH, isObject, transportError } from "./httpState.js"
import * as McpHeaders from "./mcpHeaders.js"
import { printable } from "./printable.js"

/** The most `tools/list` pages read to find a tool after a HeaderMismatch. */
const maxRefreshPages = 20

/** @internal */
export const make = (state: State, sender: Sender, inbound: Inbound): Binding => {
  let refreshes = 0

  /** The `Mcp-Param-*` headers of a request: the caller's (checked), or those its tool declares. */
  const paramHeaders = (
    request: McpSchema.JsonRpcRequest,
    options: Transport.WireOptions
  ): { readonly headers: Record<string, string>; readonly dropped: ReadonlyArray<string> } => {
    if (options.headers !== undefined) return McpHeaders.sanitizeParamHeaders(options.headers)
    const params = request.params
    if (request.method !== "tools/call" || !isObject(params) || typeof params.name !== "string") {
      return { headers: {}, dropped: [] }
    }
    const declarations = state.tools.get(params.name)
    return {
      headers: declarations === undefined ? {} : McpHeaders.paramHeaders(declarations, params.arguments),
      dropped: []
    }
  }

  const modernHeaders = (
    message: McpSchema.JsonRpcRequest | McpSchema.JsonRpcNotification,
    nameField?: string | undefined
  ): Result.Result<Record<string, string>, McpError.TransportError> => {
    const standard = McpHeaders.standardHeaders(message, nameField)
    if (standard._tag === "Refused") return Result.fail(transportError("Write", standard.reason))
    const headers: Record<string, string> = { ...sender.baseHeaders(), accept: ACCEPT_BOTH, ...standard.headers }
    const version = McpHeaders.protocolVersionOf(message) ?? state.version
    if (version !== undefined) headers["mcp-protocol-version"] = version
    return Result.succeed(headers)
  }

  /** A modern request's exchange, in the given Scope (which closes its response). */
  const exchange = (
    request: McpSchema.JsonRpcRequest,
    options: Transport.WireOptions,
    retried = false
  ): Effect.Effect<void, McpError.TransportFailure, Scope.Scope> =>
    Effect.suspend(() => {
      const headers = modernHeaders(request, options.nameField)
      if (Result.isFailure(headers)) return Effect.fail(headers.failure)
      const params = paramHeaders(request, options)
      const sent = Effect.flatMap(
        sender.post(sender.target, request, { ...params.headers, ...headers.success }, request.method, options.idempotent),
        (response) => {
          // Mcp-Param headers from our own index (the caller gave none): on HeaderMismatch the tool's
          // declarations changed or were never listed, so refresh them and send once more
          const ownHeaders = request.method === "tools/call" && options.headers === undefined
          if (!retried && ownHeaders && response.status === 400) return headerMismatch(response, request, options)
          return inbound.answer(response, request, options, "modern")
        }
      )
      if (params.dropped.length === 0) return sent
      return Effect.andThen(
        Effect.forEach(params.dropped, (reason) => Effect.logWarning(printable(`dropped a header: ${reason}`)), {
          discard: true
        }),
        sent
      )
    })

  /** A 400 to a `tools/call` sent with our own `Mcp-Param-*` headers. */
  const headerMismatch = (
    response: HttpClientResponse.HttpClientResponse,
    request: McpSchema.JsonRpcRequest,
    options: Transport.WireOptions
  ): Effect.Effect<void, McpError.TransportFailure> =>
    Effect.gen(function*() {
      const body = yield* Body.readSnippet(response)
      const error = jsonRpcError(body)
      if (error?.code === McpSchema.ErrorCode.HeaderMismatch) {
        yield* Effect.logDebug("the server refused the Mcp-Param headers; refreshing the tool list")
        yield* refreshTools(request)
        return yield* Effect.scoped(exchange(request, options, true))
      }
      if (error !== undefined) return yield* inbound.emitResponse(request, error)
      return yield* Effect.fail(Body.statusError(response, body, "the server answered tools/call with HTTP 400"))
    })

  /** Lists tools (the transport's own requests, never reported) until the named tool's page is seen. */
  const refreshTools = (call: McpSchema.JsonRpcRequest): Effect.Effect<void> =>
    Effect.gen(function*() {
      const params = isObject(call.params) ? call.params : {}
      const meta = isObject(params._meta) ? params._meta : undefined
      const envelope = meta === undefined
        ? {}
        : { _meta: Object.fromEntries(Object.entries(meta).filter(([key]) => key !== "progressToken")) }
      let cursor: string | undefined
      for (let page = 0; page < maxRefreshPages; page++) {
        const list: McpSchema.JsonRpcRequest = {
          jsonrpc: "2.0",
          id: `conduit-tools-refresh-${++refreshes}`,
          method: "tools/list",
          params: cursor === undefined ? envelope : { ...envelope, cursor }
        }
        const box: { listed?: McpSchema.JsonRpcResponse } = {}
        const sent = yield* Effect.result(Effect.scoped(Effect.gen(function*() {
          const response = yield* sender.post(sender.target, list, yield* Effect.fromResult(modernHeaders(list)), list.method)
          yield* inbound.answer(response, list, {}, "modern", { capture: (listed) => (box.listed = listed) })
        })))
        const listed = box.listed
        if (Result.isFailure(sent) || listed === undefined || !("result" in listed) || !isObject(listed.result)) return
        const tools = listed.result.tools
        if (Array.isArray(tools) && tools.some((tool) => isObject(tool) && tool.name === params.name)) return
        const next = listed.result.nextCursor
        if (typeof next !== "string") return
        cursor = next
      }
    }).pipe(Effect.annotateLogs({ method: "tools/list" }))

  const oneWay: Binding["oneWay"] = (message, what) =>
    Effect.scoped(
      Effect.gen(function*() {
        if (!("method" in message)) {
          return yield* Effect.fail(transportError("Write", "a modern server takes no responses from clients"))
        }
        const headers = yield* Effect.fromResult(modernHeaders(message))
        const response = yield* sender.post(sender.target, message, headers, what)
        const status = response.status
        if (status === 401 || status === 403) return yield* sender.authError(status, response)
        if (!Body.isSuccess(status)) return yield* sender.refused(response, what)
        yield* Body.readSnippet(response)
      })
    )

  return { exchange: (request, options) => exchange(request, options), oneWay, announcesCancel: false }
}
