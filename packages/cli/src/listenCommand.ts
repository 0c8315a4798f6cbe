/**
 * `conduit listen`: the server's notifications on stdout until interrupted, all of them or those asked for (list
 * changes, updates of some resources). Legacy servers are asked with `resources/subscribe`, modern ones with a
 * `subscriptions/listen` stream; in the shell it runs in the background.
 *
 * @since 0.1.0
 */
import * as McpError from "@conduit-mcp/client/McpError"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Connection from "./connection.js"
import * as Follow from "./follow.js"
import * as Output from "./output.js"
import { SharedClient } from "./sharedClient.js"
import * as Text from "./terminalText.js"
import { withClient } from "./withClient.js"

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const listMethods = {
  tools: "notifications/tools/list_changed",
  prompts: "notifications/prompts/list_changed",
  resources: "notifications/resources/list_changed",
  updated: "notifications/resources/updated"
} as const

/**
 * What `listen` shows.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListenOptions {
  readonly connection: Connection.ConnectionOptions
  readonly tools: boolean
  readonly prompts: boolean
  readonly resources: boolean
  readonly uri: ReadonlyArray<string>
}

/**
 * `listen`.
 *
 * @since 0.1.0
 * @category commands
 */
export const listen = (options: ListenOptions) =>
  withClient(options.connection, (client, resolved) =>
    Effect.gen(function*() {
      const notifications = yield* client.subscribe
      const session = yield* client.session
      for (const uri of options.uri) {
        if (session.era === "modern") continue // subscriptions/listen below asks for it
        if (session.capabilities.resources?.subscribe === true) {
          yield* client.request("resources/subscribe", { uri }, McpSchema.EmptyResult)
        } else {
          yield* Output.stderr(
            `conduit: the server does not offer resource subscriptions (${session.era} era); ` +
              `showing any update of ${Text.line(uri)} it sends`
          )
        }
      }
      const methods = new Set<string>()
      if (options.tools) methods.add(listMethods.tools)
      if (options.prompts) methods.add(listMethods.prompts)
      if (options.resources) methods.add(listMethods.resources)
      if (options.uri.length > 0) methods.add(listMethods.updated)
      const shared = yield* Effect.serviceOption(SharedClient)
      const shell = Option.isSome(shared)
      // in the shell, listen runs in the background: the shell goes on once the subscriptions are in force
      const listening = Option.isSome(shared) && shared.value.listening !== undefined ? shared.value.listening : Effect.void
      const wanted = (notification: McpSchema.ServerNotification) => {
        // the shell prints the server's log messages already
        if (methods.size === 0) return !(shell && notification.method === "notifications/message")
        if (!methods.has(notification.method)) return false
        if (notification.method !== listMethods.updated || options.uri.length === 0) return true
        const params = notification.params
        return isRecord(params) && typeof params.uri === "string" && options.uri.includes(params.uri)
      }
      yield* Output.stderr(
        `conduit: listening to ${Text.line(Connection.describeTarget(resolved.target))}` +
          `${methods.size > 0 ? ` for ${Text.line([...methods].join(", "))}` : ""}; ` +
          `${shell ? "unlisten" : "Ctrl-C"} stops`
      )
      const print = (notification: McpSchema.ServerNotification) =>
        wanted(notification)
          ? resolved.json
            ? Output.stdout(Text.json({ method: notification.method, params: notification.params }))
            : Output.stdout(Output.notification(notification))
          : Effect.void
      // A modern server sends list changes and resource updates only on a subscriptions/listen stream.
      const everything = methods.size === 0
      const listened: ReadonlyArray<Follow.Source<McpSchema.ServerNotification, McpError.McpClientError>> =
        session.era === "modern"
          ? [{
            stream: client.listen({
              toolsListChanged: everything || options.tools,
              promptsListChanged: everything || options.prompts,
              resourcesListChanged: everything || options.resources,
              resourceSubscriptions: options.uri
            }),
            // built on its first pull
            queueFromStart: false,
            handle: (notification) =>
              notification.method === "notifications/subscriptions/acknowledged" ? listening : print(notification),
            recover: (error) =>
              error._tag === "McpError"
                ? Effect.andThen(
                  Output.stderr(
                    `conduit: the server refused subscriptions/listen (${Text.line(error.message)}); showing what it sends`
                  ),
                  listening
                )
                : Effect.fail(error)
          }]
          : []
      if (listened.length === 0) yield* listening
      // the listener's own writes wait for nothing (a command's first let it catch up: see follow.ts)
      const follower = yield* Follow.make<McpSchema.ServerNotification, McpError.McpClientError>(
        [{ stream: notifications, queueFromStart: true, handle: print }, ...listened]
      ).pipe(Effect.provideService(Output.BeforeWrite, Effect.void))
      if (Option.isSome(shared) && shared.value.follow !== undefined) yield* shared.value.follow(follower.catchUp)
      yield* follower.run
      const state = yield* client.state
      return yield* state._tag === "Closed" && state.error !== undefined
        ? Effect.fail(state.error)
        : Effect.fail(
          new McpError.TransportError({
            transport: resolved.target._tag === "Stdio" ? "stdio" : resolved.target._tag === "Http" ? "http" : "in-process",
            reason: "Closed",
            detail: "the connection closed while listening"
          })
        )
    }), { serverLogs: false })
