/**
 * Tasks on the command line: `tools call` on a tool that runs as a task shows the task's status on stderr (or,
 * with `--detach`, prints the task id and returns), and `tasks list|get|result|cancel` work on tasks by id. The
 * tasks started are kept on disk (taskStore.ts), so a later run knows them.
 *
 * Exit codes: 0 done; 1 the task's tool answered `isError: true`; 2 the server or tool does not run tasks
 * (`--detach` on a plain tool); 5 the task failed with a JSON-RPC
 * error; 6 the task was cancelled, expired, or is unknown to the server; 124 timed out; 130 interrupted (Ctrl-C
 * cancels a task `tools call` waits on, unless it was detached); 143 terminated (SIGTERM, the same).
 *
 * @since 0.1.0
 */
import * as McpClient from "@conduit-mcp/client/McpClient"
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as McpTasks from "@conduit-mcp/client/McpTasks"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Connection from "./connection.js"
import { type CliError, ToolFailed } from "./errors.js"
import type * as Grammar from "./grammar.js"
import * as Output from "./output.js"
import * as Progress from "./progress.js"
import * as Text from "./terminalText.js"

/**
 * Runs a command body against the server given by the command line.
 *
 * @since 0.1.0
 * @category models
 */
export type WithClient = (
  connection: Connection.ConnectionOptions,
  body: (
    client: McpClient.McpClientService,
    resolved: Connection.Resolved
  ) => Effect.Effect<void, CliError, Scope.Scope | Connection.Platform>
) => Effect.Effect<void, CliError, Connection.Platform>

/**
 * What a command runs.
 *
 * @since 0.1.0
 * @category models
 */
export type Run = (parsed: Grammar.Parsed<unknown>) => Effect.Effect<void, CliError, Connection.Platform>

/**
 * One status line for stderr.
 *
 * @since 0.1.0
 * @category formatting
 */
export const statusLine = (state: McpTasks.TaskState): string =>
  `task ${Text.line(state.taskId)} ${state.status}${
    state.statusMessage !== undefined ? `: ${Text.line(state.statusMessage)}` : ""
  }`

/**
 * A task's state as a table of fields.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describeState = (state: McpTasks.TaskState): string =>
  Output.table(["FIELD", "VALUE"], [
    ["taskId", state.taskId],
    ["status", state.status],
    ...(state.statusMessage !== undefined ? [["statusMessage", Text.line(state.statusMessage)]] : []),
    ...(state.createdAt !== undefined ? [["createdAt", state.createdAt]] : []),
    ...(state.lastUpdatedAt !== undefined ? [["lastUpdatedAt", state.lastUpdatedAt]] : []),
    ...(state.ttlMs !== undefined ? [["ttlMs", state.ttlMs === null ? "unlimited" : String(state.ttlMs)]] : []),
    ...(state.pollIntervalMs !== undefined ? [["pollIntervalMs", String(state.pollIntervalMs)]] : [])
  ].map((row) => row.map((cell) => Text.line(cell))))

/** Whether `tools call` runs this tool as a task (it shows the task's status). */
const runsAsTask = (tool: McpSchema.Tool, session: McpClient.ServerSession): boolean =>
  tool.execution?.taskSupport === "required" &&
  (session.era === "modern" || typeof session.capabilities.tasks === "object")

/** The result, printed; an `isError` result fails with `ToolFailed`. */
const printResult = (name: string, result: McpSchema.CallToolResult, json: boolean) =>
  Effect.gen(function*() {
    yield* json ? Output.json(result) : Output.stdout(Output.callResult(result))
    if (result.isError === true) return yield* new ToolFailed({ tool: name })
  })

/**
 * Waits on a handle, its status changes on stderr (and the progress bar of a 2025-11-25 task, cleared before each
 * status line), then prints its result.
 */
const follow = (
  handle: McpTasks.TaskHandle<McpSchema.CallToolResult>,
  name: string,
  json: boolean,
  progress?: Progress.ProgressDisplay
) =>
  Effect.gen(function*() {
    const clear = progress?.clear ?? Effect.void
    const watching = yield* Effect.forkScoped(
      Stream.runForEach(handle.status, (state) => Effect.andThen(clear, Output.stderr(statusLine(state)))).pipe(
        Effect.ignore
      )
    )
    const result = yield* Effect.ensuring(handle.result, clear)
    // the last status line (the final status) is shown before the result, if it comes soon
    yield* Effect.ignore(Effect.timeout(Fiber.join(watching), "2 seconds"))
    yield* clear
    return yield* printResult(name, result, json)
  })

/**
 * `tools call` when the tool runs as a task or `--detach` is given; `None` when neither applies (a plain call).
 *
 * @since 0.1.0
 * @category commands
 */
export const callTool = (
  client: McpClient.McpClientService,
  tool: McpSchema.Tool,
  args: Readonly<Record<string, unknown>> | undefined,
  options: { readonly detach: boolean; readonly json: boolean }
): Effect.Effect<Option.Option<void>, CliError, Scope.Scope> =>
  Effect.gen(function*() {
    const session = yield* client.session
    if (!options.detach && !runsAsTask(tool, session)) return Option.none()
    // a 2025-11-25 task's progress keeps coming on the token of the call that created it
    const progress = yield* Progress.make({ quiet: options.detach })
    const handle = yield* client.tasks.callTool({ name: tool.name, arguments: args }, {
      onProgress: progress.onProgress
    })
    // a 2026-07-28 server may answer at once instead of making a task: that answer is the result
    if (handle.taskId === "") return Option.some(yield* printResult(tool.name, yield* handle.result, options.json))
    if (options.detach) {
      yield* handle.detach
      yield* options.json
        ? Output.json({ taskId: handle.taskId, status: handle.initial.status })
        : Output.stdout(Text.line(handle.taskId))
      return Option.some(undefined)
    }
    yield* Output.stderr(`conduit: ${Text.line(tool.name)} runs as task ${Text.line(handle.taskId)}; Ctrl-C cancels it`)
    return Option.some(yield* follow(handle, tool.name, options.json, progress))
  })

/** Every page of `tasks/list`, within the listing budget of the client's listings (100 pages, 50,000, 32 MiB). */
const listAll = (client: McpClient.McpClientService) =>
  McpClient.collectPages(
    "tasks/list",
    (cursor) => Effect.map(client.tasks.list(cursor), (page) => ({ items: page.tasks, nextCursor: page.nextCursor }))
  )

// The bodies of the `tasks …` commands; their table rows (paths, descriptions, arguments) are in cli.ts with the
// rest of the command table, which loads this module when one of them runs.

/**
 * `tasks list`: the server's tasks, or the tasks conduit started there and keeps on disk.
 *
 * @since 0.1.0
 * @category commands
 */
export const list = (withClient: WithClient, connection: Connection.ConnectionOptions) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const listed = yield* Effect.result(listAll(client))
      if (Result.isSuccess(listed)) {
        const all = listed.success
        return yield* resolved.json
          ? Output.json({ tasks: all })
          : Output.stdout(
            all.length === 0 ? "(no tasks)" : Output.table(
              ["TASK", "STATUS", "MESSAGE"],
              all.map((t) => [Text.line(t.taskId), t.status, Text.line(t.statusMessage ?? "")])
            )
          )
      }
      const error = listed.failure
      if (error._tag !== "TaskError" || error.reason !== "Unsupported") return yield* Effect.fail(error)
      // the 2026-07-28 extension has no tasks/list: what this machine started there is what can be shown
      const stored = yield* client.tasks.stored
      if (resolved.json) return yield* Output.json({ stored })
      yield* Output.stderr("conduit: the server does not list its tasks; these are the tasks conduit started there")
      yield* Output.stdout(
        stored.length === 0 ? "(no tasks)" : Output.table(
          ["TASK", "TOOL", "STARTED", "EXPIRES"],
          stored.map((t) => [
            Text.line(t.taskId),
            Text.line(t.tool ?? ""),
            new Date(t.createdAt).toISOString(),
            t.expiresAt === undefined ? "never" : new Date(t.expiresAt).toISOString()
          ])
        )
      )
    }))

/**
 * `tasks get <task-id>`: a task's status.
 *
 * @since 0.1.0
 * @category commands
 */
export const get = (withClient: WithClient, connection: Connection.ConnectionOptions, taskId: string) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.tasks.get(taskId),
      (state) => resolved.json ? Output.json(state) : Output.stdout(describeState(state))
    ))

/**
 * `tasks result <task-id>`: waits for a task's result (its status on stderr) and prints it.
 *
 * @since 0.1.0
 * @category commands
 */
export const result = (withClient: WithClient, connection: Connection.ConnectionOptions, taskId: string) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const handle = yield* client.tasks.resume(taskId)
      // the task was not started here: giving up waiting leaves it running
      yield* handle.detach
      yield* follow(handle, "the task", resolved.json)
    }))

/**
 * `tasks cancel <task-id>`: asks the server to cancel a task.
 *
 * @since 0.1.0
 * @category commands
 */
export const cancel = (withClient: WithClient, connection: Connection.ConnectionOptions, taskId: string) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      yield* client.tasks.cancel(taskId)
      const state = yield* Effect.option(client.tasks.get(taskId))
      const status = Option.match(state, { onNone: () => "cancel requested", onSome: (s) => s.status })
      yield* resolved.json
        ? Output.json({ taskId, status })
        : Output.stderr(`conduit: task ${Text.line(taskId)}: ${status}`)
    }))
