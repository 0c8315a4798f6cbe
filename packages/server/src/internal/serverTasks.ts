/**
 * Tasks on the server side, in both designs: tool calls run in the background, kept for their time to live, and
 * the `tasks/*` methods that read, feed, cancel and list them (2025-11-25 `tasks/get|result|cancel|list`; the
 * 2026-07-28 extension's `tasks/get|update|cancel`, its input requests answered by `tasks/update`).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
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
  fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined
  /** Modern: the input requests outstanding, by key, with what answers each. */
  readonly inputs: Map<string, {
    readonly method: model.InputMethod
    readonly params: JsonObject
    readonly answer: Deferred.Deferred<JsonObject, model.InputError>
  }>
  inputCount: number
}

/** The answer a task-augmented call gets instead of its result. */
export type Input = (method: model.InputMethod, params: JsonObject) => Effect.Effect<JsonObject, model.InputError>

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
   * `tasks/get` and `tasks/update`). Answers with the era's `CreateTaskResult`.
   */
  readonly start: (
    era: McpSchema.Era,
    params: JsonObject,
    legacyInput: Input | undefined,
    run: (input: Input) => Effect.Effect<JsonObject, McpError.McpError>
  ) => Effect.Effect<JsonObject>
  /** The `tasks/*` methods; `undefined` for any other method. */
  readonly handle: (
    era: McpSchema.Era,
    method: string,
    params: JsonObject
  ) => Effect.Effect<JsonObject, McpError.McpError> | undefined
}

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
      return entry.fiber === undefined ? Effect.void : Fiber.interruptFork(entry.fiber)
    }, { discard: true }))
  const setStatus = (entry: Entry, status: Status, message?: string) =>
    Effect.map(now, (at) => {
      if (terminal(entry.status)) return
      entry.status = status
      entry.statusMessage = message
      entry.lastUpdatedAt = at
    })

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
      yield* setStatus(entry, "input_required")
      return yield* Deferred.await(answer).pipe(
        Effect.ensuring(Effect.suspend(() => {
          entry.inputs.delete(key)
          return entry.inputs.size === 0 ? setStatus(entry, "working") : Effect.void
        }))
      )
    })

  /** Legacy: the connection asks; the task shows `input_required` meanwhile. */
  const askAround = (entry: Entry, input: Input): Input => (method, params) =>
    Effect.zipRight(
      setStatus(entry, "input_required"),
      Effect.ensuring(input(method, params), setStatus(entry, "working"))
    )

  const start: ServerTasks["start"] = (era, params, legacyInput, run) =>
    Effect.gen(function*() {
      const requested = Predicate.isRecord(params.task) ? params.task.ttl : undefined
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
        inputCount: 0
      }
      tasks.set(entry.taskId, entry)
      const input = legacyInput === undefined ? askInTask(entry) : askAround(entry, legacyInput)
      entry.fiber = yield* Effect.forkDaemon(
        run(input).pipe(
          Effect.onExit((exit) =>
            Effect.gen(function*() {
              if (Exit.isSuccess(exit)) yield* setStatus(entry, "completed")
              else if (Exit.isInterrupted(exit)) yield* setStatus(entry, "cancelled")
              else yield* setStatus(entry, "failed")
              yield* Deferred.done(
                entry.outcome,
                Exit.isInterrupted(exit) ?
                  Exit.fail(rpcError(McpSchema.ErrorCode.InvalidRequest, "The task was cancelled")) :
                  exit
              )
            })
          )
        )
      )
      return era === "legacy"
        ? { task: legacyTask(entry) }
        : { resultType: "task", ...modernTask(entry) }
    })

  const find = (params: JsonObject): Effect.Effect<Entry, McpError.McpError> =>
    Effect.zipRight(
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
      if (entry.fiber !== undefined) yield* Fiber.interruptFork(entry.fiber)
    })

  /** A modern task as `tasks/get` shows it: with its result, error or input requests. */
  const detailed = (entry: Entry): Effect.Effect<JsonObject> =>
    Effect.gen(function*() {
      const base: JsonObject = { resultType: "complete", ...modernTask(entry) }
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
      const error = Option.getOrUndefined(Exit.causeOption(exit).pipe(Option.flatMap((cause) =>
        Option.fromNullable(cause._tag === "Fail" ? cause.error : undefined)
      )))
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
      if (!Predicate.isRecord(responses)) {
        return yield* rpcError(McpSchema.ErrorCode.InvalidParams, "Missing inputResponses")
      }
      for (const [key, response] of Object.entries(responses)) {
        // unknown and already answered keys are ignored
        const input = entry.inputs.get(key)
        if (input === undefined) continue
        yield* Predicate.isRecord(response)
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
          era === "legacy" ? Effect.succeed(legacyTask(entry)) : detailed(entry))
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
              ...(Predicate.isRecord(result._meta) ? result._meta : {}),
              "io.modelcontextprotocol/related-task": { taskId: entry.taskId }
            }
          })))
      case "tasks/list":
        if (era !== "legacy") return undefined
        return Effect.zipRight(prune, Effect.sync(() => ({ tasks: [...tasks.values()].map(legacyTask) })))
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
      if (Predicate.isRecord(params.task)) return "task"
      return taskSupport === "required"
        ? rpcError(McpSchema.ErrorCode.MethodNotFound, "This tool requires task augmentation (params.task)")
        : "plain"
    }
    const extensions = clientCapabilities.extensions
    if (Predicate.isRecord(extensions) && extensions[EXTENSION_ID] !== undefined) return "task"
    return taskSupport === "required"
      ? rpcError(
        McpSchema.ErrorCode.MissingRequiredClientCapability,
        `This tool runs as a task: the client must declare the ${EXTENSION_ID} extension`,
        { requiredCapabilities: { extensions: { [EXTENSION_ID]: {} } } }
      )
      : "plain"
  }

  return { decide, start, handle }
}
