/**
 * Handlers for what a server sends that this library does not know: requests of protocol extensions or
 * experimental methods, and their notifications.
 *
 * Requests: give the client handlers in its `extensions` option (or its tag, and this module's layer); a server
 * request whose method the client does not serve itself is answered by the handler registered for it, or refused
 * with `-32601` when there is none. This covers the requests a server sends on the connection (the 2025 handshake's era); an
 * unknown method inside a 2026-07-28 `input_required` round is still refused by the client. Declare what your
 * client supports with the client's `capabilities` option (`experimental`, `extensions`).
 *
 * Notifications of any method already reach `client.notifications` and `client.subscribe`; {@link
 * onNotifications} runs a handler per method on them.
 *
 * @example
 * ```ts
 * import { ExtensionHandler, McpClient, McpError } from "@conduit-mcp/client"
 * import { Effect, Layer } from "effect"
 *
 * const Extensions = ExtensionHandler.layer({
 *   "acme/whoami": () => Effect.succeed({ user: "ada" }),
 *   "acme/delete": () => Effect.fail(new McpError.McpError({ code: -32000, message: "not allowed" }))
 * })
 * const Client = McpClient.layer({
 *   capabilities: { experimental: { acme: {} } },
 *   extensions: ExtensionHandler.ExtensionHandler
 * }).pipe(Layer.provide(Extensions))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as McpClient from "./McpClient.js"
import type * as McpError from "./McpError.js"
import { printable } from "./internal/printable.js"

/**
 * What a request handler knows of the request beyond its params.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestContext {
  readonly method: string
  /** The server's self-reported name (display only). */
  readonly serverName: string | undefined
}

/**
 * Answers one request: the result object, or an `McpError` sent back as the JSON-RPC error.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestHandler = (params: unknown, context: RequestContext) => Effect.Effect<unknown, McpError.McpError>

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Handlers by method (the methods the client serves itself, such as sampling, are never looked up). */
  readonly requests: Readonly<Record<string, RequestHandler>>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class ExtensionHandler extends Context.Service<ExtensionHandler, Service>()(
  "@conduit-mcp/client/ExtensionHandler"
) {}

/**
 * The handlers, for the client's `extensions` option.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (requests: Readonly<Record<string, RequestHandler>>): Service => ({ requests })

/**
 * The handlers as a layer, for a client given `extensions: ExtensionHandler.ExtensionHandler`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (requests: Readonly<Record<string, RequestHandler>>): Layer.Layer<ExtensionHandler> =>
  Layer.succeed(ExtensionHandler, make(requests))

/**
 * Runs `handlers[method]` for each server notification of that method, from now until the Scope closes. A
 * handler's failure or defect is logged and the next notification is handled.
 *
 * @since 0.1.0
 * @category notifications
 */
export const onNotifications = (
  client: McpClient.McpClientService,
  handlers: Readonly<Record<string, (params: unknown) => Effect.Effect<void>>>
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.flatMap(client.subscribe, (notifications) =>
    notifications.pipe(
      Stream.runForEach((notification) => {
        const handler = Object.hasOwn(handlers, notification.method) ? handlers[notification.method] : undefined
        return handler === undefined ? Effect.void : handler(notification.params).pipe(
          Effect.catchCause((cause) =>
            Effect.logWarning(printable(`the handler of ${notification.method} failed`), cause)
          ),
          Effect.annotateLogs({ module: "ExtensionHandler", method: printable(notification.method) })
        )
      }),
      Effect.forkScoped,
      Effect.asVoid
    ))
