/**
 * Tasks, the driver: the wire of both designs (2025-11-25 `tasks/get|result|cancel|list`, the 2026-07-28
 * extension's `tasks/get|update|cancel`) read into one state, the polling at a clamped interval (woken early by
 * status notifications: 2025-11-25 `notifications/tasks/status` as the server sends them, 2026-07-28
 * `notifications/tasks` through a `subscriptions/listen` for the task), the outcome, and the handle with its
 * cancel-on-interrupt finalizer.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import * as McpTasks from "../../McpTasks.js"
import type * as TaskStore from "../../TaskStore.js"
import type * as InputRounds from "./inputRounds.js"
import type { Session } from "./session.js"
import type { Resolved } from "./taskSupport.js"
import { printable } from "../printable.js"

/**
 * A task's state with what the 2026-07-28 design inlines (the result, the error, the input requests).
 *
 * @internal
 */
export type Observed = McpTasks.TaskState & {
  readonly result?: Readonly<Record<string, unknown>> | undefined
  readonly error?: typeof McpTasks.ErrorObject.Type | undefined
  readonly inputRequests?:
    | Readonly<Record<string, { readonly method: string; readonly params?: unknown }>>
    | undefined
}

/**
 * The interval to wait before the next poll: the server's suggestion clamped to [min, max]; the default when it
 * suggests none (or something that is not a non-negative finite number).
 *
 * @internal
 */
export const pollMillis = (resolved: Resolved, suggested: number | undefined): number => {
  if (suggested === undefined || !Number.isFinite(suggested) || suggested < 0) {
    return Math.min(Math.max(resolved.defaultPollMillis, resolved.minPollMillis), resolved.maxPollMillis)
  }
  return Math.min(Math.max(suggested, resolved.minPollMillis), resolved.maxPollMillis)
}

/** @internal */
export const fromLegacy = (task: typeof McpTasks.LegacyTask.Type): Observed => ({
  taskId: task.taskId,
  status: task.status,
  ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
  ...(task.createdAt !== undefined ? { createdAt: task.createdAt } : {}),
  ...(task.lastUpdatedAt !== undefined ? { lastUpdatedAt: task.lastUpdatedAt } : {}),
  ...(task.ttl !== undefined ? { ttlMs: task.ttl } : {}),
  ...(task.pollInterval !== undefined ? { pollIntervalMs: task.pollInterval } : {})
})

/** @internal */
export const fromModern = (task: typeof McpTasks.ModernTask.Type): Observed => ({
  taskId: task.taskId,
  status: task.status,
  ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
  ...(task.createdAt !== undefined ? { createdAt: task.createdAt } : {}),
  ...(task.lastUpdatedAt !== undefined ? { lastUpdatedAt: task.lastUpdatedAt } : {}),
  ...(task.ttlMs !== undefined ? { ttlMs: task.ttlMs } : {}),
  ...(task.pollIntervalMs !== undefined ? { pollIntervalMs: task.pollIntervalMs } : {}),
  ...(task.result !== undefined ? { result: task.result } : {}),
  ...(task.error !== undefined ? { error: task.error } : {}),
  ...(task.inputRequests !== undefined ? { inputRequests: task.inputRequests } : {})
})

/** The public view of a state (without the inlined result, error and input requests). */
export const publicState = (state: Observed): McpTasks.TaskState => {
  const { error: _error, inputRequests: _inputs, result: _result, ...rest } = state
  return rest
}

const record = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  Predicate.isObject(value) ? value : undefined

const decodeLegacyTask = Schema.decodeUnknownResult(McpTasks.LegacyTask)
const decodeModernTask = Schema.decodeUnknownResult(McpTasks.ModernTask)

const invalid = (method: string, detail: string) =>
  new McpError.ProtocolError({ reason: "InvalidResult", method, detail })

/**
 * Reads a task from the wire of its era.
 *
 * @internal
 */
export const readTask = (
  era: McpSchema.Era,
  method: string,
  raw: unknown
): Result.Result<Observed, McpError.ProtocolError> =>
  era === "legacy"
    ? Result.mapBoth(decodeLegacyTask(raw), {
      onFailure: (e) => invalid(method, `not a task: ${e.message}`),
      onSuccess: fromLegacy
    })
    : Result.mapBoth(decodeModernTask(raw), {
      onFailure: (e) => invalid(method, `not a task: ${e.message}`),
      onSuccess: fromModern
    })

/**
 * What the driver needs of the client.
 *
 * @internal
 */
export interface Deps {
  readonly resolved: Resolved
  /** A request whose answer is any object (`resultType` other than `complete` refused). */
  readonly request: (
    method: string,
    params: Readonly<Record<string, unknown>>,
    timeoutMillis: number | undefined
  ) => Effect.Effect<unknown, McpError.McpClientError>
  readonly session: Effect.Effect<Session, McpError.McpClientError>
  readonly answerInputs: InputRounds.Answerer
  readonly subscribe: Effect.Effect<Stream.Stream<McpSchema.ServerNotification>, never, Scope.Scope>
  /** A modern `subscriptions/listen`. */
  readonly listen: (
    filter: McpClient.ListenFilter
  ) => Stream.Stream<McpSchema.ServerNotification, McpError.McpClientError>
  readonly store: TaskStore.TaskStoreShape
  /** Decodes and checks a tool's result. */
  readonly toolResult: (
    tool: string | undefined,
    raw: unknown
  ) => Result.Result<McpSchema.CallToolResult, McpError.ProtocolError>
  readonly requestTimeout: number
}

/**
 * What a handle is made from.
 *
 * @internal
 */
export interface Started {
  readonly era: McpSchema.Era
  readonly initial: Observed
  readonly stored: McpTasks.StoredTask
  readonly timeoutMillis: number | undefined
  /** Stops routing the progress of the request that created the task (2025-11-25), once its result is known. */
  readonly releaseProgress?: (() => void) | undefined
}

/**
 * What one wait hears of a task: its states as the server pushes them, and whether it said it would.
 */
interface Heard {
  readonly states: Queue.Queue<Observed>
  /** The server acknowledged `notifications/tasks` for the task (2026-07-28). */
  acknowledged: boolean
  /** A poll was started after the acknowledgement (it covers what changed before the listen began). */
  polledSince: boolean
}

/**
 * The driver.
 *
 * @internal
 */
export interface Driver {
  readonly handle: (started: Started) => Effect.Effect<McpTasks.TaskHandle<McpSchema.CallToolResult>>
  readonly get: (
    era: McpSchema.Era,
    taskId: string,
    stored: McpTasks.StoredTask | undefined,
    timeoutMillis: number | undefined
  ) => Effect.Effect<Observed, McpError.McpClientError | McpError.TaskError>
  readonly cancel: (
    era: McpSchema.Era,
    taskId: string,
    timeoutMillis: number | undefined
  ) => Effect.Effect<void, McpError.McpClientError>
  /** Records a task (a store failure is logged, never fails the call). */
  readonly remember: (task: McpTasks.StoredTask) => Effect.Effect<void>
  readonly forget: (taskId: string) => Effect.Effect<void>
}

/** What the waiter needs of the rest of the driver. */
type Basics = Pick<Driver, "get" | "cancel" | "remember" | "forget">

/**
 * @internal
 */
export const makeDriver = (deps: Deps): Driver => {
  const basics = makeBasics(deps)
  return { ...basics, handle: makeHandle(deps, basics) }
}

/** The store (remember, forget) and the wire of one request (get, cancel). */
const makeBasics = (deps: Deps): Basics => {
  const remember = (task: McpTasks.StoredTask) =>
    Effect.catch(
      deps.store.put(task),
      (e) => Effect.logWarning(printable(`the task ${task.taskId} was not stored`), e)
    )
  const forget = (taskId: string) =>
    Effect.catch(
      deps.store.remove(taskId),
      (e) => Effect.logWarning(printable(`the task ${taskId} was not removed`), e)
    )

  /** A `tasks/get` the server refuses as invalid (-32602) after the task's expiry means the task expired. */
  const lost = (taskId: string, stored: McpTasks.StoredTask | undefined) =>
  (error: McpError.McpError): Effect.Effect<never, McpError.McpError | McpError.TaskError> =>
    Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<never, McpError.McpError | McpError.TaskError> => {
      if (error.code !== McpSchema.ErrorCode.InvalidParams) return Effect.fail(error)
      const expired = stored?.expiresAt !== undefined && now >= stored.expiresAt
      return Effect.andThen(
        forget(taskId),
        Effect.fail(
          new McpError.TaskError({
            reason: expired ? "Expired" : "NotFound",
            taskId,
            detail: expired ? "its time to live passed and the server no longer has it" : error.message
          })
        )
      )
    })

  const get = (
    era: McpSchema.Era,
    taskId: string,
    stored: McpTasks.StoredTask | undefined,
    timeoutMillis: number | undefined
  ): Effect.Effect<Observed, McpError.McpClientError | McpError.TaskError> =>
    deps.request("tasks/get", { taskId }, timeoutMillis).pipe(
      Effect.catchTag("McpError", lost(taskId, stored)),
      Effect.flatMap((raw) => Effect.fromResult(readTask(era, "tasks/get", raw))),
      Effect.flatMap((state) =>
        state.taskId === taskId
          ? Effect.succeed(state)
          : Effect.fail(invalid("tasks/get", `asked for task ${taskId}, got ${state.taskId}`))
      )
    )

  const cancel = (_era: McpSchema.Era, taskId: string, timeoutMillis: number | undefined) =>
    Effect.asVoid(deps.request("tasks/cancel", { taskId }, timeoutMillis))

  return { get, cancel, remember, forget }
}

/**
 * Status notifications of one task: 2025-11-25 `notifications/tasks/status` as the server sends them; in the
 * 2026-07-28 era (with the extension enabled) a `subscriptions/listen` for the task's id, whose failure (a server
 * without listens, or that refuses) leaves the polling as it is.
 */
const notified = (deps: Deps, era: McpSchema.Era, taskId: string) =>
  Effect.gen(function*() {
    const heard: Heard = { states: yield* Queue.sliding<Observed>(1), acknowledged: false, polledSince: false }
    const onNotification = (notification: McpSchema.ServerNotification) => {
      if (notification.method === "notifications/subscriptions/acknowledged") {
        const notifications = record(record(notification.params)?.notifications)
        const ids = notifications?.taskIds
        if (Array.isArray(ids) && ids.includes(taskId)) heard.acknowledged = true
        return Effect.void
      }
      if (notification.method !== "notifications/tasks/status" && notification.method !== "notifications/tasks") {
        return Effect.void
      }
      const state = readTask(era, notification.method, notification.params)
      return Result.isSuccess(state) && state.success.taskId === taskId
        ? Queue.offer(heard.states, state.success)
        : Effect.void
    }
    yield* Effect.forkScoped(Stream.runForEach(yield* deps.subscribe, onNotification))
    if (era === "modern" && deps.resolved.enabled) {
      yield* Effect.forkScoped(
        Stream.runForEach(deps.listen({ taskIds: [taskId] }), onNotification).pipe(
          Effect.catch((error) =>
            Effect.logDebug(printable(`no notifications for task ${taskId} (${error.message}); polling`)).pipe(
              Effect.annotateLogs({ module: "McpClient", method: "subscriptions/listen" })
            )
          )
        )
      )
    }
    return heard
  })

/**
 * The interval before the next poll: the server's, clamped; once the server said it reports the task and a poll
 * followed, the longest (the notifications bring the changes, the polls are a safety net).
 */
const interval = (resolved: Resolved, state: Observed, heard: Heard): number => {
  if (heard.acknowledged && heard.polledSince) return resolved.maxPollMillis
  if (heard.acknowledged) heard.polledSince = true
  return pollMillis(resolved, state.pollIntervalMs)
}

/** What a task's state says of its end: its result, its failure, or nothing yet (poll again). */
const outcome = (
  deps: Deps,
  forget: Basics["forget"],
  era: McpSchema.Era,
  state: Observed,
  stored: McpTasks.StoredTask,
  timeoutMillis: number | undefined
): Effect.Effect<Option.Option<McpSchema.CallToolResult>, McpError.McpClientError | McpError.TaskError> => {
  const taskId = state.taskId
  switch (state.status) {
    case "cancelled":
      return Effect.andThen(
        forget(taskId),
        Effect.fail(new McpError.TaskError({ reason: "Cancelled", taskId, detail: state.statusMessage ?? "" }))
      )
    case "completed":
    case "failed":
      if (era === "legacy") {
        // what the call would have returned: its result, or its JSON-RPC error
        return deps.request("tasks/result", { taskId }, timeoutMillis).pipe(
          Effect.flatMap((raw) => Effect.fromResult(deps.toolResult(stored.tool, raw))),
          Effect.ensuring(forget(taskId)),
          Effect.map(Option.some)
        )
      }
      if (state.status === "failed") {
        const error = state.error
        const failure: McpError.McpError | McpError.ProtocolError = error === undefined
          ? invalid("tasks/get", `the failed task ${taskId} carries no error`)
          : new McpError.McpError({ ...error, method: stored.method })
        return Effect.andThen(forget(taskId), Effect.fail(failure))
      }
      if (state.result === undefined) return Effect.succeed(Option.none()) // poll again for the result
      return Effect.andThen(forget(taskId), Effect.map(Effect.fromResult(deps.toolResult(stored.tool, state.result)), Option.some))
    case "input_required":
      return era === "legacy"
        // 2025-11-25: the server's requests come through `tasks/result`, which answers once the task is done;
        // a deadline on it only returns to polling
        ? deps.request("tasks/result", { taskId }, timeoutMillis ?? deps.requestTimeout).pipe(
          Effect.flatMap((raw) => Effect.fromResult(deps.toolResult(stored.tool, raw))),
          Effect.tap(() => forget(taskId)),
          Effect.map(Option.some),
          Effect.catchTag("RequestTimeout", () => Effect.succeed(Option.none()))
        )
        : Effect.succeed(Option.none())
    case "working":
      return Effect.succeed(Option.none())
  }
}

/** Answers a modern task's outstanding input requests once each, with `tasks/update`. */
const answer = (deps: Deps, state: Observed, answered: Set<string>, timeoutMillis: number | undefined) =>
  Effect.gen(function*() {
    const pending = Object.fromEntries(
      Object.entries(state.inputRequests ?? {}).filter(([key]) => !answered.has(key))
    )
    if (Object.keys(pending).length === 0) return
    const session = yield* deps.session
    const inputResponses = yield* deps.answerInputs("tools/call", session, pending)
    yield* deps.request("tasks/update", { taskId: state.taskId, inputResponses }, timeoutMillis)
    for (const key of Object.keys(pending)) answered.add(key)
  })

/** The handle on a task: its status stream, its result (the wait), cancel and detach. */
const makeHandle = (deps: Deps, basics: Basics): Driver["handle"] => {
  const { cancel, forget, get } = basics

  /** Waits the interval, or less when a status notification comes first; then the state. */
  const next = (
    era: McpSchema.Era,
    state: Observed,
    stored: McpTasks.StoredTask,
    timeoutMillis: number | undefined,
    heard: Heard
  ) =>
    Effect.raceFirst(
      Effect.andThen(
        Effect.sleep(Duration.millis(interval(deps.resolved, state, heard))),
        get(era, state.taskId, stored, timeoutMillis)
      ),
      Queue.take(heard.states)
    )

  const run = (
    started: Started
  ): Effect.Effect<McpSchema.CallToolResult, McpError.McpClientError | McpError.TaskError> =>
    Effect.scoped(Effect.gen(function*() {
      const { era, stored, timeoutMillis } = started
      const heard = yield* notified(deps, era, stored.taskId)
      const answered = new Set<string>()
      let state = started.initial
      for (;;) {
        const done = yield* outcome(deps, forget, era, state, stored, timeoutMillis)
        if (Option.isSome(done)) return done.value
        if (state.status === "input_required" && era === "modern") yield* answer(deps, state, answered, timeoutMillis)
        state = yield* next(era, state, stored, timeoutMillis, heard)
      }
    }))

  const statusStream = (
    started: Started
  ): Stream.Stream<McpTasks.TaskState, McpError.McpClientError | McpError.TaskError> =>
    Stream.unwrap(Effect.gen(function*() {
      const { era, stored, timeoutMillis } = started
      const heard = yield* notified(deps, era, stored.taskId)
      const rest = Stream.unfold(started.initial, (
        state
      ): Effect.Effect<
        readonly [Observed, Observed] | undefined,
        McpError.McpClientError | McpError.TaskError
      > =>
        McpTasks.isTerminal(state.status)
          ? Effect.succeed(undefined)
          : Effect.map(
            next(era, state, stored, timeoutMillis, heard),
            (after) => [after, after] as const
          ))
      return Stream.concat(Stream.make(started.initial), rest).pipe(
        Stream.changesWith((a, b) =>
          a.status === b.status && a.statusMessage === b.statusMessage && a.lastUpdatedAt === b.lastUpdatedAt
        ),
        Stream.map(publicState)
      )
    }))

  return (started: Started) =>
    Effect.map(Ref.make(false), (detached): McpTasks.TaskHandle<McpSchema.CallToolResult> => {
      const taskId = started.stored.taskId
      const cancelNow = Effect.andThen(cancel(started.era, taskId, started.timeoutMillis), forget(taskId))
      return {
        taskId,
        era: started.era,
        initial: publicState(started.initial),
        status: statusStream(started),
        result: Effect.onInterrupt(Effect.ensuring(run(started), Effect.sync(() => started.releaseProgress?.())), () =>
          Effect.flatMap(Ref.get(detached), (leave) =>
            leave
              ? Effect.void
              // the finalizer's cancel gets a bounded wait: an unanswered cancel must not hold the interruption
              : Effect.ignore(Effect.timeout(cancelNow, Duration.millis(Math.min(deps.requestTimeout, 10_000)))))),
        cancel: cancelNow,
        detach: Ref.set(detached, true)
      }
    })
}
