/**
 * Tasks: tool calls a server runs in the background, polled until they finish, in both designs the protocol has
 * known. The 2025-11-25 experimental tasks (the client asks with `params.task`, then `tasks/get`, `tasks/result`,
 * `tasks/cancel`, `tasks/list`) and the 2026-07-28 extension `io.modelcontextprotocol/tasks` (the server answers
 * `resultType: "task"`, then `tasks/get`, `tasks/update`, `tasks/cancel`). Both are seen through one model: a
 * {@link TaskState}, and a {@link TaskHandle} to wait on, watch, cancel or leave running.
 *
 * `callTool` drives a task a tool requires by itself; `client.tasks` gives the handle to whoever wants it.
 *
 * @example
 * ```ts
 * import { McpClient } from "@conduit-mcp/client"
 * import { Effect, Stream } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const client = yield* McpClient.McpClient
 *   const task = yield* client.tasks.callTool({ name: "simulate-research-query", arguments: { topic: "tides" } })
 *   yield* Effect.forkScoped(Stream.runForEach(task.status, (state) => Effect.log(state.status)))
 *   return yield* task.result // interrupting this cancels the task, unless `task.detach` ran first
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * The extension identifier of the 2026-07-28 tasks extension.
 *
 * @since 0.1.0
 * @category constants
 */
export const EXTENSION_ID: "io.modelcontextprotocol/tasks" = "io.modelcontextprotocol/tasks"

/**
 * @since 0.1.0
 * @category models
 */
export const TaskStatus = Schema.Literals(["working", "input_required", "completed", "failed", "cancelled"])

/**
 * @since 0.1.0
 * @category models
 */
export type TaskStatus = typeof TaskStatus.Type

/**
 * Whether a status is final (`completed`, `failed`, `cancelled`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isTerminal = (status: TaskStatus): boolean =>
  status === "completed" || status === "failed" || status === "cancelled"

const OptionalInt = Schema.optional(Schema.Number)

/**
 * A task as a 2025-11-25 server describes it (`tasks/get`, `tasks/cancel`, `notifications/tasks/status`, an
 * entry of `tasks/list`). `ttl` is in milliseconds (`null`: unlimited).
 *
 * @since 0.1.0
 * @category schemas
 */
export const LegacyTask = Schema.Struct({
  taskId: Schema.String,
  status: TaskStatus,
  statusMessage: Schema.optional(Schema.String),
  createdAt: Schema.optional(Schema.String),
  lastUpdatedAt: Schema.optional(Schema.String),
  ttl: Schema.optional(Schema.NullOr(Schema.Number)),
  pollInterval: OptionalInt
})

/**
 * The answer to a task-augmented 2025-11-25 request.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LegacyCreateTaskResult = Schema.Struct({ task: LegacyTask })

/**
 * The answer to 2025-11-25 `tasks/list`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LegacyListTasksResult = Schema.Struct({
  tasks: Schema.Array(LegacyTask),
  nextCursor: Schema.optional(Schema.String)
})

/**
 * A JSON-RPC error object, as a failed task carries it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ErrorObject = Schema.Struct({
  code: Schema.Number,
  message: Schema.String,
  data: Schema.optional(Schema.Unknown)
})

/**
 * A task as a 2026-07-28 server describes it (`resultType: "task"`, `tasks/get`, `notifications/tasks`): with
 * the result when `completed`, the error when `failed`, the input requests when `input_required`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModernTask = Schema.Struct({
  taskId: Schema.String,
  status: TaskStatus,
  statusMessage: Schema.optional(Schema.String),
  createdAt: Schema.optional(Schema.String),
  lastUpdatedAt: Schema.optional(Schema.String),
  ttlMs: Schema.optional(Schema.NullOr(Schema.Number)),
  pollIntervalMs: OptionalInt,
  result: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
  error: Schema.optional(ErrorObject),
  inputRequests: Schema.optional(
    Schema.Record(Schema.String, Schema.Struct({ method: Schema.String, params: Schema.optional(Schema.Unknown) }))
  )
})

/**
 * A task in either design, as this client models it.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskState {
  readonly taskId: string
  readonly status: TaskStatus
  readonly statusMessage?: string | undefined
  readonly createdAt?: string | undefined
  readonly lastUpdatedAt?: string | undefined
  /** How long the server keeps the task from its creation, in ms; `null`: unlimited; absent: not said. */
  readonly ttlMs?: number | null | undefined
  /** The polling interval the server suggests, in ms, as it sent it (the client clamps it, see `TasksOptions`). */
  readonly pollIntervalMs?: number | undefined
}

/**
 * How a client works with tasks (the `tasks` option of `McpClient.make`).
 *
 * - `enabled` (default `false`) declares task support: the `tasks` capability to 2025-11-25 servers, the
 *   extension `io.modelcontextprotocol/tasks` to 2026-07-28 servers (which may then answer any tool call with a
 *   task). Without it a tool whose `execution.taskSupport` is `required` is still run as a task (a 2025-11-25
 *   client MUST, and it fails otherwise), and `client.tasks` still works against 2025-11-25 servers.
 * - `ttl`: the time to live asked for new tasks (2025-11-25 `params.task.ttl`); none: the server's default.
 * - `minPollInterval` / `maxPollInterval` / `defaultPollInterval` (defaults 250 ms, 30 s, 1 s): the server's
 *   suggested interval is clamped to [min, max]; a missing, negative or non-finite one means the default.
 *
 * @since 0.1.0
 * @category models
 */
export interface TasksOptions {
  readonly enabled?: boolean | undefined
  readonly ttl?: Duration.Input | undefined
  readonly minPollInterval?: Duration.Input | undefined
  readonly maxPollInterval?: Duration.Input | undefined
  readonly defaultPollInterval?: Duration.Input | undefined
}

/**
 * A task the client started (or resumed): wait on it, watch it, cancel it, or let it run on without you.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskHandle<A> {
  readonly taskId: string
  readonly era: McpSchema.Era
  /** The state the server gave when the task was created (or, for a resumed task, when it was resumed). */
  readonly initial: TaskState
  /**
   * The task's state each time it changes (polling `tasks/get` at the clamped interval, woken early by the
   * server's status notifications), ending after a final status. Each run polls on its own.
   */
  readonly status: Stream.Stream<TaskState, McpError.McpClientError | McpError.TaskError>
  /**
   * Waits for the task's result, answering what it asks for on the way (2026-07-28 `input_required`, through the
   * same handlers as input rounds). Interrupting the waiting fiber cancels the task on the server, unless
   * `detach` ran first. A `failed` task fails with its `McpError`, a cancelled or expired one with `TaskError`.
   */
  readonly result: Effect.Effect<A, McpError.McpClientError | McpError.TaskError>
  /** Asks the server to cancel the task (cooperative: it may still finish). */
  readonly cancel: Effect.Effect<void, McpError.McpClientError | McpError.TaskError>
  /** From now on, interrupting `result` leaves the task running on the server (it stays in the `TaskStore`). */
  readonly detach: Effect.Effect<void>
}

/**
 * A page of `tasks/list`.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskPage {
  readonly tasks: ReadonlyArray<TaskState>
  readonly nextCursor: string | undefined
}

/**
 * The task operations of a client (`client.tasks`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Tasks {
  /**
   * Calls a tool as a task and returns its handle once the server created it. Fails with `TaskError`
   * (`Unsupported`) when the tool cannot run as one: a 2025-11-25 server without `tasks.requests.tools.call`, a
   * tool whose `taskSupport` is missing or `forbidden`, a 2026-07-28 server without the extension (or without
   * the `enabled` option). A 2026-07-28 server that answers with a plain result gives a handle already completed.
   * `onProgress` gets a 2025-11-25 task's progress (its creating request's token stays valid for the task's life)
   * until its result is known; the 2026-07-28 extension has no progress on tasks (watch `status` and its
   * `statusMessage`).
   */
  readonly callTool: (
    params: { readonly name: string; readonly arguments?: Readonly<Record<string, unknown>> | undefined },
    options?: {
      readonly timeout?: Duration.Input | undefined
      readonly onProgress?: ((progress: McpSchema.Progress) => Effect.Effect<void>) | undefined
    } | undefined
  ) => Effect.Effect<TaskHandle<McpSchema.CallToolResult>, McpError.McpClientError | McpError.TaskError>
  /** A handle on a task started earlier, by this process or one before it (its record in the `TaskStore`). */
  readonly resume: (
    taskId: string
  ) => Effect.Effect<TaskHandle<McpSchema.CallToolResult>, McpError.McpClientError | McpError.TaskError>
  /** The task's state now (`tasks/get`). */
  readonly get: (taskId: string) => Effect.Effect<TaskState, McpError.McpClientError | McpError.TaskError>
  /** Asks the server to cancel a task (`tasks/cancel`). */
  readonly cancel: (taskId: string) => Effect.Effect<void, McpError.McpClientError | McpError.TaskError>
  /**
   * One page of the server's tasks (2025-11-25 `tasks/list`, when the server declares `tasks.list`); the
   * 2026-07-28 extension has no listing: `TaskError` (`Unsupported`), use `stored` instead.
   */
  readonly list: (cursor?: string | undefined) => Effect.Effect<TaskPage, McpError.McpClientError | McpError.TaskError>
  /** The tasks this client's `TaskStore` holds for the connected server (expired ones are dropped). */
  readonly stored: Effect.Effect<ReadonlyArray<StoredTask>, McpError.McpClientError>
}

/**
 * What a `TaskStore` keeps of a task, enough to pick it up again after a restart.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StoredTask = Schema.Struct({
  taskId: Schema.String,
  /** The server it runs on (`ConnectedInfo.target`: a URL or a command line), or its `TaskStore.serverKey`. */
  server: Schema.String,
  era: Schema.Literals(["legacy", "modern"]),
  method: Schema.String,
  tool: Schema.optional(Schema.String),
  /** When the client learned of it (epoch ms). */
  createdAt: Schema.Number,
  /** When the server may drop it (epoch ms); absent: no limit was given. */
  expiresAt: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export type StoredTask = typeof StoredTask.Type
