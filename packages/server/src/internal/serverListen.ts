/**
 * What a server's clients hear of: the changes (a list changed, a resource was updated), as legacy notifications
 * or tagged for the modern `subscriptions/listen` streams that asked for them, and the 2026-07-28 tasks
 * extension's `notifications/tasks` for the task ids a listen names.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as McpError from "@conduit-mcp/client/McpError"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as model from "./serverModel.js"
import type * as ServerTasks from "./serverTasks.js"

type JsonObject = model.JsonObject

const record = (value: unknown): JsonObject | undefined => Predicate.isObject(value) ? value : undefined

/** The notification a change becomes. */
export const changeNotification = (change: model.Change): { readonly method: string; readonly params: JsonObject } =>
  change._tag === "ResourceUpdated"
    ? { method: "notifications/resources/updated", params: { uri: change.uri } }
    : { method: `notifications/${change.list}/list_changed`, params: {} }

/** What a modern listen asked for, as the acknowledgement and the filter use it. */
export interface ListenFilter {
  readonly toolsListChanged?: true
  readonly promptsListChanged?: true
  readonly resourcesListChanged?: true
  readonly resourceSubscriptions?: ReadonlyArray<string>
}

export const wants = (filter: ListenFilter, change: model.Change): boolean => {
  switch (change._tag) {
    case "ResourceUpdated":
      return filter.resourceSubscriptions?.includes(change.uri) === true
    case "ListChanged":
      return change.list === "tools"
        ? filter.toolsListChanged === true
        : change.list === "prompts"
        ? filter.promptsListChanged === true
        : filter.resourcesListChanged === true
  }
}

/**
 * A modern `subscriptions/listen`: acknowledged with what the server honours, then open until cancelled. Task ids
 * need the client's tasks extension (-32021 otherwise); the tasks the server has are watched, and their current
 * state is sent right after the acknowledgement (a task may have moved on before its client listened).
 *
 * @internal
 */
export const makeListen = (deps: {
  readonly offers: { readonly tools: boolean; readonly prompts: boolean; readonly resources: boolean }
  readonly tasks: ServerTasks.ServerTasks
  readonly extensionId: string
  readonly notify: (method: string, params: JsonObject) => Effect.Effect<void>
  /** The connection's open listens, by request id. */
  readonly listens: Map<McpSchema.RequestId, ListenFilter>
}) =>
(id: McpSchema.RequestId, params: JsonObject, clientCapabilities: JsonObject): Effect.Effect<never, McpError.McpError> =>
  Effect.suspend(() => {
    const { listens, notify, offers } = deps
    const asked = record(params.notifications) ?? {}
    const strings = (value: unknown) =>
      Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : undefined
    const uris = strings(asked.resourceSubscriptions)
    const taskIds = strings(asked.taskIds)
    if (taskIds !== undefined && record(record(clientCapabilities.extensions)?.[deps.extensionId]) === undefined) {
      return Effect.fail(
        new McpError.McpError({
          code: McpSchema.ErrorCode.MissingRequiredClientCapability,
          message: `Task notifications need the ${deps.extensionId} extension`,
          data: { requiredCapabilities: { extensions: { [deps.extensionId]: {} } } }
        })
      )
    }
    const honoured: ListenFilter = {
      ...(offers.tools && asked.toolsListChanged === true ? { toolsListChanged: true } : {}),
      ...(offers.prompts && asked.promptsListChanged === true ? { promptsListChanged: true } : {}),
      ...(offers.resources && asked.resourcesListChanged === true ? { resourcesListChanged: true } : {}),
      ...(offers.resources && uris !== undefined ? { resourceSubscriptions: uris } : {})
    }
    const tagged = { [McpSchema.MetaKeys.subscriptionId]: id }
    return Effect.acquireUseRelease(
      deps.tasks.watch(taskIds ?? [], (task) => notify("notifications/tasks", { ...task, _meta: tagged })),
      (watching) =>
        notify("notifications/subscriptions/acknowledged", {
          _meta: tagged,
          notifications: { ...honoured, ...(taskIds !== undefined ? { taskIds: watching.watched } : {}) }
        }).pipe(
          Effect.andThen(Effect.sync(() => listens.set(id, honoured))),
          Effect.andThen(watching.current),
          Effect.andThen(Effect.never),
          Effect.ensuring(Effect.sync(() => listens.delete(id)))
        ),
      (watching) => watching.unwatch
    )
  })
