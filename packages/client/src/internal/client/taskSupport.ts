/**
 * The part of tasks every client carries: the `tasks` option resolved, the capabilities it declares, the tools'
 * task support learnt from their listings, and the routing of `callTool`, which sends the usual plain call without
 * a step more. The rest (the task driver, `client.tasks`, the default in-memory store) is in `taskCalls.ts`,
 * imported the first time a task may be involved: with the public `McpTasks` and `TaskStore` modules it costs
 * ~19 ms of CPU to import in an Effect application (`packages/bench/src/imports.mjs`, measured alone), which a
 * client that never meets a task does not pay.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as McpTasks from "../../McpTasks.js"
import type * as TaskStore from "../../TaskStore.js"
import type * as Calls from "./calls.js"
import type * as Connection from "./connection.js"
import type * as Envelope from "./envelope.js"
import type * as Tasks from "./tasks.js"
import type * as TaskCallsModule from "./taskCalls.js"

const EXTENSION_ID: typeof McpTasks.EXTENSION_ID = "io.modelcontextprotocol/tasks"

/**
 * The task options, resolved.
 *
 * @internal
 */
export interface Resolved {
  readonly enabled: boolean
  readonly ttlMillis: number | undefined
  readonly minPollMillis: number
  readonly maxPollMillis: number
  readonly defaultPollMillis: number
}

/** @internal */
export const defaults: Resolved = {
  enabled: false,
  ttlMillis: undefined,
  minPollMillis: 250,
  maxPollMillis: 30_000,
  defaultPollMillis: 1_000
}

const record = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  Predicate.isObject(value) ? value : undefined

/**
 * Whether a raw result is a 2026-07-28 task handle.
 *
 * @internal
 */
export const isTaskResult = (raw: unknown): boolean => record(raw)?.resultType === "task"

/**
 * Whether a server runs `tools/call` as 2025-11-25 tasks.
 *
 * @internal
 */
export const legacyToolTasks = (capabilities: McpSchema.ServerCapabilities): boolean =>
  record(record(record(capabilities.tasks)?.requests)?.tools)?.call !== undefined

/**
 * The capabilities to declare when tasks are enabled: `tasks` at 2025-11-25 (this client runs no task for the
 * server: it declares no `requests`, `list` or `cancel`), the extension in the modern era.
 *
 * @internal
 */
export const declare = (
  capabilities: McpSchema.ClientCapabilities,
  version: McpSchema.ProtocolVersion,
  resolved: Resolved
): McpSchema.ClientCapabilities => {
  if (!resolved.enabled) return capabilities
  if (McpSchema.isModernVersion(version)) {
    return { ...capabilities, extensions: { ...capabilities.extensions, [EXTENSION_ID]: {} } }
  }
  return version >= "2025-11-25" ? { ...capabilities, tasks: capabilities.tasks ?? {} } : capabilities
}

/**
 * Resolves the `tasks` option (`true` means `{ enabled: true }`).
 *
 * @internal
 */
export const resolveOptions = (
  option: McpTasks.TasksOptions | boolean | undefined
): Effect.Effect<Resolved, McpError.InvalidOption> =>
  Effect.gen(function*() {
    const options: McpTasks.TasksOptions = option === true ? { enabled: true } : option === false ? {} : option ?? {}
    const millis = (name: string, input: Duration.Input | undefined, fallback: number) => {
      if (input === undefined) return Effect.succeed(fallback)
      const decoded = Duration.fromInput(input)
      if (Option.isNone(decoded) || !Duration.isFinite(decoded.value) || Duration.toMillis(decoded.value) <= 0) {
        return Effect.fail(new McpError.InvalidOption({ option: `tasks.${name}`, detail: "must be a positive duration" }))
      }
      return Effect.succeed(Duration.toMillis(decoded.value))
    }
    const minPollMillis = yield* millis("minPollInterval", options.minPollInterval, defaults.minPollMillis)
    const maxPollMillis = yield* millis("maxPollInterval", options.maxPollInterval, defaults.maxPollMillis)
    const defaultPollMillis = yield* millis(
      "defaultPollInterval",
      options.defaultPollInterval,
      defaults.defaultPollMillis
    )
    if (minPollMillis > maxPollMillis) {
      return yield* new McpError.InvalidOption({
        option: "tasks.minPollInterval",
        detail: "must not be longer than tasks.maxPollInterval"
      })
    }
    const ttl = options.ttl === undefined ? undefined : yield* millis("ttl", options.ttl, 0)
    return {
      enabled: options.enabled ?? false,
      ttlMillis: ttl === undefined ? undefined : Math.round(ttl),
      minPollMillis,
      maxPollMillis,
      defaultPollMillis
    }
  })

/**
 * A tool call the server answered with a 2026-07-28 task: driven before the caller sees a result.
 *
 * @internal
 */
export class TaskCreated {
  constructor(readonly raw: unknown) {}
}

/**
 * A `tools/call` result, or the task a 2026-07-28 server answered with instead.
 *
 * @internal
 */
export type CallOutcome = McpSchema.CallToolResult | TaskCreated

/**
 * Lets a 2026-07-28 task through a tool call's decoder.
 *
 * @internal
 */
export const taskAwareDecoder = (
  decode: Calls.SyncDecoder<McpSchema.CallToolResult>
): Calls.SyncDecoder<CallOutcome> =>
(method, raw) => isTaskResult(raw) ? Result.succeed(new TaskCreated(raw)) : decode(method, raw)

/**
 * @internal
 */
export interface TaskCalls {
  readonly resolved: Resolved
  /** Remembers the `execution.taskSupport` of a page of tools. */
  readonly learn: (tools: ReadonlyArray<McpSchema.Tool>) => void
  /**
   * Loads the rest of tasks now when the session may involve one (a 2025-11-25 server that runs tool calls as
   * tasks, the 2026-07-28 extension enabled), so the calls that follow start without waiting for the import.
   */
  readonly prepare: Effect.Effect<void>
  /** Forgets what was learnt (the tool list changed): the next call of a tool lists them again. */
  readonly forget: () => void
  /**
   * Routes a `tools/call`: `plain` (the call as it always was), `taskAware` (the same call, a 2026-07-28 task let
   * through its decoder) or a 2025-11-25 task.
   */
  readonly callTool: (
    params: McpClient.CallToolParams,
    options: McpClient.RequestOptions | undefined,
    plain: Effect.Effect<McpSchema.CallToolResult, McpError.McpClientError>,
    taskAware: Effect.Effect<CallOutcome, McpError.McpClientError>
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpClientError | McpError.TaskError>
  readonly api: McpTasks.Tasks
  /** Whether `callTool` now sends the plain call, no task possible (the session's capabilities and options). */
  readonly plainOnly: () => boolean
}

/**
 * What tasks need of the client.
 *
 * @internal
 */
export interface Deps {
  readonly resolved: Resolved
  readonly status: Connection.Status
  readonly calls: Calls.Calls
  readonly envelope: Envelope.Envelope
  readonly subscribe: Effect.Effect<Stream.Stream<McpSchema.ServerNotification>, never, Scope.Scope>
  readonly listen: Tasks.Deps["listen"]
  /** Keeps the progress of a request's token routed after its answer (`Inbound.keepProgress`). */
  readonly keepProgress: (
    token: McpSchema.ProgressToken,
    onProgress: (progress: McpSchema.Progress) => Effect.Effect<void>
  ) => () => void
  /** The store the user gave (the `taskStore` option); a memory store otherwise, made when tasks load. */
  readonly store: Option.Option<TaskStore.TaskStoreShape>
  readonly toolResult: (
    tool: string | undefined,
    raw: unknown
  ) => Result.Result<McpSchema.CallToolResult, McpError.ProtocolError>
  /** Lists the server's tools (which teaches `learn` their task support). */
  readonly lookupTools: Effect.Effect<unknown, McpError.McpClientError>
  readonly requestTimeout: number
}

/**
 * The task support the tools' listings declared, and `callTool`'s routing: a plain call when no task can come
 * back (a legacy server without `tasks.requests.tools.call`, the modern extension not enabled), the rest through
 * `taskCalls.ts`, imported once per process and built once per client.
 *
 * @internal
 */
export const make = (deps: Deps): TaskCalls => {
  const { resolved, status } = deps
  const support = new Map<string, string>()
  const learn = (tools: ReadonlyArray<McpSchema.Tool>) => {
    for (const tool of tools) support.set(tool.name, tool.execution?.taskSupport ?? "forbidden")
  }
  /** The tool's task support, listing the tools first when it is not known yet. */
  const supportOf = (name: string) =>
    support.has(name)
      ? Effect.succeed(support.get(name) ?? "forbidden")
      : Effect.map(deps.lookupTools, () => support.get(name) ?? "forbidden")

  let built: TaskCallsModule.Loaded | undefined
  const loaded: Effect.Effect<TaskCallsModule.Loaded> = Effect.suspend(() =>
    built !== undefined ? Effect.succeed(built) : Effect.flatMap(
      Effect.promise(() => import("./taskCalls.js")),
      // two first calls at once may both build; the first one built is kept
      (module) => Effect.map(module.make({ ...deps, supportOf }), (made) => (built ??= made))
    )
  )

  /** Whether the session up now may involve a task: `undefined` while none is up. */
  const mayInvolve = (): boolean | undefined => {
    const current = status.current()
    return current === undefined
      ? undefined
      : current.era === "legacy"
      ? legacyToolTasks(current.capabilities)
      : resolved.enabled
  }

  // the usual call takes the plain path without a step more
  const callTool: TaskCalls["callTool"] = (params, options, plain, taskAware) =>
    mayInvolve() === false
      ? plain
      : Effect.flatMap(loaded, (tasks) => tasks.callTool(params, options, plain, taskAware))

  const api: McpTasks.Tasks = {
    callTool: (params, options) => Effect.flatMap(loaded, (tasks) => tasks.api.callTool(params, options)),
    resume: (taskId) => Effect.flatMap(loaded, (tasks) => tasks.api.resume(taskId)),
    get: (taskId) => Effect.flatMap(loaded, (tasks) => tasks.api.get(taskId)),
    cancel: (taskId) => Effect.flatMap(loaded, (tasks) => tasks.api.cancel(taskId)),
    list: (cursor) => Effect.flatMap(loaded, (tasks) => tasks.api.list(cursor)),
    stored: Effect.flatMap(loaded, (tasks) => tasks.api.stored)
  }

  const prepare = Effect.suspend(() => mayInvolve() === true ? Effect.asVoid(loaded) : Effect.void)

  return { resolved, learn, prepare, forget: () => support.clear(), callTool, api, plainOnly: () => mayInvolve() === false }
}
