/**
 * Tasks on the server side, in both designs: tool calls run in the background, kept for their time to live, and
 * the `tasks/*` methods that read, feed, cancel and list them (2025-11-25 `tasks/get|result|cancel|list`; the
 * 2026-07-28 extension's `tasks/get|update|cancel`, its input requests answered by `tasks/update`), and the
 * status notifications: 2025-11-25 `notifications/tasks/status` to the connection that created the task, 2026-07-28
 * `notifications/tasks` to the `subscriptions/listen` streams that asked for the task's id.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Queue from "effect/Queue"
import * as McpError from "@conduit-mcp/client/McpError"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as McpServer from "../McpServer.js"
import * as model from "./serverModel.js"

type JsonObject = model.JsonObject

/** The extension identifier of the 2026-07-28 tasks extension. */
export const EXTENSION_ID = "io.modelcontextprotocol/tasks"

type Status = "working" | "input_required" | "completed" | "failed" | "cancelled"

const terminal = (status: Status) => status === "completed" || status === "failed" || status === "cancelled"

interface Entry {
  readonly taskId: string
  status: Status
  statusMessage: string | undefined
  readonly createdAt: string
  lastUpdatedAt: string
  readonly ttlMs: number | null
  /** When the task is dropped (epoch ms). */
  readonly expiresAt: number
  readonly pollIntervalMs: number
  readonly outcome: Deferred.Deferred<JsonObject, McpError.McpError>
  fiber: Fiber.Fiber<unknown, unknown> | undefined
  /** Modern: the input requests outstanding, by key, with what answers each. */
  readonly inputs: Map<string, {
    readonly method: model.InputMethod
    readonly params: JsonObject
    readonly answer: Deferred.Deferred<JsonObject, model.InputError>
  }>
  inputCount: number
  /** Who hears of the task's changes (a legacy creator, modern listens). */
  readonly watchers: Set<Watcher>
  /** Counts the task's changes (a watcher skips a change it already sent). */
  revision: number
}

/**
 * Who hears of a task's changes: woken by each, it sends the task's state as it is when it runs, in a fiber of its
 * own (a connection that no longer reads must not hold the task, nor a `tasks/cancel`).
 */
interface Watcher {
  readonly wake: Queue.Queue<void>
  readonly fiber: Fiber.Fiber<never>
}

/** The answer a task-augmented call gets instead of its result. */
export type Input = (method: model.InputMethod, params: JsonObject) => Effect.Effect<JsonObject, model.InputError>

/** How a task's handler reports progress (see `RequestContext.progress`). */
export type Progress = model.RequestContext["Service"]["progress"]

/** What a task's handler runs with in place of its request's own: how it asks for input and reports progress. */
export interface TaskContext {
  readonly input: Input
  /** `undefined`: the request's own (2025-11-25: the request's progress token stays valid for the task's life). */
  readonly progress: Progress | undefined
}

/**
 * @internal
 */
export interface ServerTasks {
  /** Whether a tool runs as a task for this request, must, or must not. */
  readonly decide: (
    taskSupport: string | undefined,
    era: McpSchema.Era,
    params: JsonObject,
    clientCapabilities: JsonObject
  ) => "task" | "plain" | McpError.McpError
  /**
   * Starts a task: `run` with the input function it should use, in the background. `legacyInput` is the
   * connection's own way of asking (2025-11-25), `undefined` in the modern era (input requests through
   * `tasks/get` and `tasks/update`). `legacyStatus` (2025-11-25) sends the creator `notifications/tasks/status`.
   * Answers with the era's `CreateTaskResult`.
   */
  readonly start: (
    era: McpSchema.Era,
    params: JsonObject,
    legacy: {
      readonly input: Input
      readonly status: (task: JsonObject) => Effect.Effect<void>
    } | undefined,
    run: (context: TaskContext) => Effect.Effect<JsonObject, McpError.McpError>
  ) => Effect.Effect<JsonObject>
  /**
   * 2026-07-28: sends `notify` each modern task's detailed state (as `notifications/tasks` carries it) whenever it
   * changes, for the tasks of `taskIds` the server has; answers the ids it watches, and how to stop.
   */
  readonly watch: (
    taskIds: ReadonlyArray<string>,
    notify: (task: JsonObject) => Effect.Effect<void>
  ) => Effect.Effect<{
    readonly watched: ReadonlyArray<string>
    /** Sends the watched tasks' state as it is now. */
    readonly current: Effect.Effect<void>
    readonly unwatch: Effect.Effect<void>
  }>
  /** The `tasks/*` methods; `undefined` for any other method. */
  readonly handle: (
    era: McpSchema.Era,
    method: string,
    params: JsonObject
  ) => Effect.Effect<JsonObject, McpError.McpError> | undefined
}

/** Interrupts a fiber without waiting for it to finish. */
const interruptFork = <A, E>(fiber: Fiber.Fiber<A, E>): Effect.Effect<void> =>
  Effect.asVoid(Effect.forkDetach(Fiber.interrupt(fiber)))

const rpcError = (code: number, message: string, data?: unknown): McpError.McpError =>
  new McpError.McpError(data === undefined ? { code, message } : { code, message, data })

const KEYS: Readonly<Record<model.InputMethod, string>> = {
  "elicitation/create": "elicit",
  "sampling/createMessage": "sample",
  "roots/list": "roots"
}

/**
 * @internal
 */
export const make = (options: McpServer.TaskOptions | undefined): ServerTasks => {
  const pollIntervalMs = options?.pollIntervalMs ?? 1_000
  const defaultTtl = options?.ttlMs ?? 300_000
  const maxTtl = options?.maxTtlMs ?? 3_600_000
  const tasks = new Map<string, Entry>()

  const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())
  // Tasks past their time to live are dropped when the tasks are next looked at (no timer keeps a process up).
  const prune = Effect.flatMap(Clock.currentTimeMillis, (millis) =>
    Effect.forEach([...tasks.values()].filter((entry) => millis >= entry.expiresAt), (entry) => {
      tasks.delete(entry.taskId)
      return Effect.andThen(
        Effect.forEach([...entry.watchers], (watching) => unwatch(entry, watching), { discard: true }),
        entry.fiber === undefined ? Effect.void : interruptFork(entry.fiber)
      )
    }, { discard: true }))
  /** Wakes the watchers (never waits for them). */
  const tell = (entry: Entry): Effect.Effect<void> =>
    Effect.forEach([...entry.watchers], (watcher) => Queue.offer(watcher.wake, undefined), { discard: true })
  /** A watcher that sends the task's state each time it is woken, unless it sent that state already. */
  const watcher = (entry: Entry, send: (entry: Entry) => Effect.Effect<void>): Effect.Effect<Watcher> =>
    Effect.gen(function*() {
      const wake = yield* Queue.sliding<void>(1)
      let sent = -1
      const fiber = yield* Effect.forkDetach(Effect.forever(Effect.andThen(
        Queue.take(wake),
        Effect.suspend(() => {
          if (sent === entry.revision) return Effect.void
          sent = entry.revision
          return send(entry)
        })
      )))
      return { wake, fiber }
    })
  const unwatch = (entry: Entry, watching: Watcher) =>
    Effect.suspend(() => {
      entry.watchers.delete(watching)
      return interruptFork(watching.fiber)
    })
  /** A new status (and message); the watchers hear of it unless the task is done (they hear of its outcome). */
  const setStatus = (entry: Entry, status: Status, message?: string, changed = false) =>
    Effect.flatMap(now, (at) => {
      if (terminal(entry.status)) return Effect.void
      if (!changed && entry.status === status && entry.statusMessage === message) return Effect.void
      entry.revision++
      entry.status = status
      entry.statusMessage = message
      entry.lastUpdatedAt = at
      return terminal(status) && status !== "cancelled" ? Effect.void : tell(entry)
    })
  /** 2026-07-28 has no progress on tasks: a handler's progress becomes the task's status message. */
  const progressAsStatus = (entry: Entry): Progress => (progress, details) => {
    const count = details?.total !== undefined ? `${progress}/${details.total}` : `${progress}`
    const message = details?.message !== undefined ? `${details.message} (${count})` : count
    return entry.status === "working" ? setStatus(entry, "working", message) : Effect.void
  }

  const legacyTask = (entry: Entry): JsonObject => ({
    taskId: entry.taskId,
    status: entry.status,
    ...(entry.statusMessage !== undefined ? { statusMessage: entry.statusMessage } : {}),
    createdAt: entry.createdAt,
    lastUpdatedAt: entry.lastUpdatedAt,
    ttl: entry.ttlMs,
    pollInterval: entry.pollIntervalMs
  })
  const modernTask = (entry: Entry): JsonObject => ({
    taskId: entry.taskId,
    status: entry.status,
    ...(entry.statusMessage !== undefined ? { statusMessage: entry.statusMessage } : {}),
    createdAt: entry.createdAt,
    lastUpdatedAt: entry.lastUpdatedAt,
    ttlMs: entry.ttlMs,
    pollIntervalMs: entry.pollIntervalMs
  })

  /** Modern: the input request is published on the task, and answered by `tasks/update`. */
  const askInTask = (entry: Entry): Input => (method, params) =>
    Effect.gen(function*() {
      const answer = yield* Deferred.make<JsonObject, model.InputError>()
      const key = `${KEYS[method]}_${++entry.inputCount}`
      entry.inputs.set(key, { method, params, answer })
      // (a request added to those outstanding is a change even when the status stays)
      yield* setStatus(entry, "input_required", undefined, true)
      return yield* Deferred.await(answer).pipe(
        Effect.ensuring(Effect.suspend(() => {
          entry.inputs.delete(key)
          return entry.inputs.size === 0 ? setStatus(entry, "working") : Effect.void
        }))
      )
    })

  /** Legacy: the connection asks; the task shows `input_required` meanwhile. */
  const askAround = (entry: Entry, input: Input): Input => (method, params) =>
    Effect.andThen(
      setStatus(entry, "input_required"),
      Effect.ensuring(input(method, params), setStatus(entry, "working"))
    )

  const start: ServerTasks["start"] = (era, params, legacy, run) =>
    Effect.gen(function*() {
      const requested = Predicate.isObject(params.task) ? params.task.ttl : undefined
      const ttlMs = typeof requested === "number" && requested > 0 ? Math.min(requested, maxTtl) : defaultTtl
      yield* prune
      const at = yield* now
      const entry: Entry = {
        taskId: crypto.randomUUID(),
        status: "working",
        statusMessage: undefined,
        createdAt: at,
        lastUpdatedAt: at,
        ttlMs,
        expiresAt: (yield* Clock.currentTimeMillis) + ttlMs,
        pollIntervalMs,
        outcome: yield* Deferred.make<JsonObject, McpError.McpError>(),
        fiber: undefined,
        inputs: new Map(),
        inputCount: 0,
        watchers: new Set(),
        revision: 0
      }
      tasks.set(entry.taskId, entry)
      if (legacy !== undefined) entry.watchers.add(yield* watcher(entry, (entry) => legacy.status(legacyTask(entry))))
      const context: TaskContext = legacy === undefined
        ? { input: askInTask(entry), progress: progressAsStatus(entry) }
        : { input: askAround(entry, legacy.input), progress: undefined }
      entry.fiber = yield* Effect.forkDetach(
        run(context).pipe(
          Effect.onExit((exit) =>
            Effect.gen(function*() {
              if (Exit.isSuccess(exit)) yield* setStatus(entry, "completed")
              else if (Exit.hasInterrupts(exit)) yield* setStatus(entry, "cancelled")
              else yield* setStatus(entry, "failed")
              yield* Deferred.done(
                entry.outcome,
                Exit.hasInterrupts(exit) ?
                  Exit.fail(rpcError(McpSchema.ErrorCode.InvalidRequest, "The task was cancelled")) :
                  exit
              )
              // the outcome is known now: the watchers hear the final state with it
              entry.revision++
              yield* tell(entry)
            })
          )
        )
      )
      return era === "legacy"
        ? { task: legacyTask(entry) }
        : { resultType: "task", ...modernTask(entry) }
    })

  const find = (params: JsonObject): Effect.Effect<Entry, McpError.McpError> =>
    Effect.andThen(
      prune,
      Effect.suspend(() => {
        const taskId = params.taskId
        if (typeof taskId !== "string") {
          return Effect.fail(rpcError(McpSchema.ErrorCode.InvalidParams, "Missing taskId"))
        }
        const entry = tasks.get(taskId)
        return entry === undefined
          ? Effect.fail(rpcError(McpSchema.ErrorCode.InvalidParams, `Unknown task: ${taskId}`))
          : Effect.succeed(entry)
      })
    )

  /** Cancels a task that is not done: its work is interrupted, it is `cancelled`. */
  const cancel = (entry: Entry) =>
    Effect.gen(function*() {
      yield* setStatus(entry, "cancelled", "The task was cancelled by request.")
      if (entry.fiber !== undefined) yield* interruptFork(entry.fiber)
    })

  /** A modern task as `tasks/get` (with `resultType`) and `notifications/tasks` show it: its result, error or input requests. */
  const detailed = (entry: Entry, resultType: boolean): Effect.Effect<JsonObject> =>
    Effect.gen(function*() {
      const base: JsonObject = resultType ? { resultType: "complete", ...modernTask(entry) } : modernTask(entry)
      if (entry.status === "input_required") {
        const inputRequests: Record<string, JsonObject> = {}
        for (const [key, input] of entry.inputs) inputRequests[key] = { method: input.method, params: input.params }
        return { ...base, inputRequests }
      }
      if (entry.status !== "completed" && entry.status !== "failed") return base
      const outcome = yield* Deferred.poll(entry.outcome)
      if (Option.isNone(outcome)) return base
      const exit = yield* Effect.exit(outcome.value)
      if (Exit.isSuccess(exit)) return { ...base, result: exit.value }
      // the error of a cause that is one failure, and nothing else
      const reasons = exit.cause.reasons
      const error = reasons.length === 1 && Cause.isFailReason(reasons[0]) ? reasons[0].error : undefined
      return {
        ...base,
        error: error === undefined
          ? { code: McpSchema.ErrorCode.InternalError, message: "Internal error" }
          : { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) }
      }
    })

  const update = (entry: Entry, params: JsonObject) =>
    Effect.gen(function*() {
      const responses = params.inputResponses
      if (!Predicate.isObject(responses)) {
        return yield* rpcError(McpSchema.ErrorCode.InvalidParams, "Missing inputResponses")
      }
      for (const [key, response] of Object.entries(responses)) {
        // unknown and already answered keys are ignored
        const input = entry.inputs.get(key)
        if (input === undefined) continue
        yield* Predicate.isObject(response)
          ? Deferred.succeed(input.answer, response)
          : Deferred.fail(
            input.answer,
            new model.InputError({ method: input.method, reason: "InvalidResponse", detail: "not an object" })
          )
      }
      return { resultType: "complete" }
    })

  const handle: ServerTasks["handle"] = (era, method, params) => {
    switch (method) {
      case "tasks/get":
        return Effect.flatMap(find(params), (entry) =>
          era === "legacy" ? Effect.succeed(legacyTask(entry)) : detailed(entry, true))
      case "tasks/cancel":
        return Effect.flatMap(find(params), (entry) => {
          if (era === "modern") return Effect.as(cancel(entry), { resultType: "complete" })
          if (terminal(entry.status)) {
            return Effect.fail(rpcError(McpSchema.ErrorCode.InvalidParams, `The task is already ${entry.status}`))
          }
          return Effect.map(cancel(entry), () => legacyTask(entry))
        })
      case "tasks/result":
        if (era !== "legacy") return undefined
        return Effect.flatMap(find(params), (entry) =>
          Effect.map(Deferred.await(entry.outcome), (result) => ({
            ...result,
            _meta: {
              ...(Predicate.isObject(result._meta) ? result._meta : {}),
              "io.modelcontextprotocol/related-task": { taskId: entry.taskId }
            }
          })))
      case "tasks/list":
        if (era !== "legacy") return undefined
        return Effect.andThen(prune, Effect.sync(() => ({ tasks: [...tasks.values()].map(legacyTask) })))
      case "tasks/update":
        if (era !== "modern") return undefined
        return Effect.flatMap(find(params), (entry) => update(entry, params))
      default:
        return undefined
    }
  }

  const decide: ServerTasks["decide"] = (taskSupport, era, params, clientCapabilities) => {
    if (taskSupport !== "optional" && taskSupport !== "required") return "plain"
    if (era === "legacy") {
      if (Predicate.isObject(params.task)) return "task"
      return taskSupport === "required"
        ? rpcError(McpSchema.ErrorCode.MethodNotFound, "This tool requires task augmentation (params.task)")
        : "plain"
    }
    const extensions = clientCapabilities.extensions
    if (Predicate.isObject(extensions) && extensions[EXTENSION_ID] !== undefined) return "task"
    return taskSupport === "required"
      ? rpcError(
        McpSchema.ErrorCode.MissingRequiredClientCapability,
        `This tool runs as a task: the client must declare the ${EXTENSION_ID} extension`,
        { requiredCapabilities: { extensions: { [EXTENSION_ID]: {} } } }
      )
      : "plain"
  }

  const watch: ServerTasks["watch"] = (taskIds, notify) =>
    Effect.gen(function*() {
      yield* prune
      const entries = [...new Set(taskIds)].flatMap((taskId) => {
        const entry = tasks.get(taskId)
        return entry === undefined ? [] : [entry]
      })
      const watching = yield* Effect.forEach(entries, (entry) =>
        Effect.map(
          watcher(entry, (entry) => Effect.flatMap(detailed(entry, false), notify)),
          (added) => [entry, added] as const
        ))
      return {
        watched: entries.map((entry) => entry.taskId),
        // each watcher sends the state once woken, whatever the revision
        current: Effect.forEach(watching, ([entry, added]) =>
          Effect.suspend(() => {
            entry.watchers.add(added)
            return Queue.offer(added.wake, undefined)
          }), { discard: true }),
        unwatch: Effect.forEach(watching, ([entry, added]) => unwatch(entry, added), { discard: true })
      }
    })

  return { decide, start, handle, watch }
}
