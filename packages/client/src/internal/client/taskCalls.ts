/**
 * Tasks, as the client offers them once one may be involved (imported then by `taskSupport.ts`): `callTool`
 * routed to a 2025-11-25 task when the tool requires one or a 2026-07-28 task when the server answers with one, and
 * `client.tasks`.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import * as McpTasks from "../../McpTasks.js"
import * as TaskStore from "../../TaskStore.js"
import * as Calls from "./calls.js"
import * as InputRounds from "./inputRounds.js"
import type { Session } from "./session.js"
import * as Tasks from "./tasks.js"
import * as TaskSupport from "./taskSupport.js"

type CallParams = McpClient.CallToolParams

type ExplicitOptions = Parameters<McpTasks.Tasks["callTool"]>[1]

const nameAndArguments = (params: CallParams): Record<string, unknown> =>
  params.arguments === undefined ? { name: params.name } : { name: params.name, arguments: params.arguments }

const unsupported = (detail: string) => new McpError.TaskError({ reason: "Unsupported", detail })

/**
 * What `taskSupport.ts` uses once tasks are loaded.
 *
 * @internal
 */
export interface Loaded {
  readonly callTool: TaskSupport.TaskCalls["callTool"]
  readonly api: McpTasks.Tasks
}

/**
 * @internal
 */
export const make = (deps: Omit<TaskSupport.Deps, "store"> & {
  readonly store: Option.Option<TaskStore.TaskStoreShape>
  /** The tool's task support, listing the tools first when it is not known yet. */
  readonly supportOf: (name: string) => Effect.Effect<string, McpError.McpClientError>
}): Effect.Effect<Loaded> =>
  Effect.map(
    Option.match(deps.store, { onNone: () => TaskStore.makeMemory, onSome: Effect.succeed }),
    (store) => build(deps, store)
  )

type BuildDeps = Omit<TaskSupport.Deps, "store"> & {
  readonly supportOf: (name: string) => Effect.Effect<string, McpError.McpClientError>
}

/** What the builders below share: the client's deps, the store, the driver over them and a few helpers. */
interface Shared {
  readonly deps: BuildDeps
  readonly store: TaskStore.TaskStoreShape
  readonly driver: Tasks.Driver
  /** A request whose answer is any object. */
  readonly request: Tasks.Deps["request"]
  /** The session, waited for within the request timeout. */
  readonly session: Tasks.Deps["session"]
}

type StartLegacy = (
  session: Session,
  params: CallParams,
  options: ExplicitOptions | undefined
) => Effect.Effect<McpTasks.TaskHandle<McpSchema.CallToolResult>, McpError.McpClientError | McpError.TaskError>

type StartModern = (
  session: Session,
  raw: unknown,
  tool: string,
  timeoutMillis: number | undefined
) => Effect.Effect<McpTasks.TaskHandle<McpSchema.CallToolResult>, McpError.ProtocolError>

const timeoutOf = (options: { readonly timeout?: Duration.Input | undefined } | undefined) =>
  options?.timeout === undefined ? undefined : Duration.toMillis(Duration.fromInputUnsafe(options.timeout))

const build = (deps: BuildDeps, store: TaskStore.TaskStoreShape): Loaded => {
  const { calls, resolved, status } = deps
  const request: Shared["request"] = (method, params, timeoutMillis) =>
    calls.request(method, params, Schema.Unknown, timeoutMillis === undefined ? undefined : { timeout: timeoutMillis })
  const session = status.awaitSession(deps.requestTimeout, "tasks")
  const driver = Tasks.makeDriver({
    resolved,
    request,
    session,
    answerInputs: InputRounds.makeAnswerer(deps.envelope),
    subscribe: deps.subscribe,
    listen: deps.listen,
    store,
    toolResult: deps.toolResult,
    requestTimeout: deps.requestTimeout
  })
  const shared: Shared = { deps, store, driver, request, session }
  const startLegacy = makeStartLegacy(shared)
  const startModern = makeStartModern(shared)
  return {
    callTool: makeCallTool(shared, startLegacy, startModern),
    api: makeApi(shared, makeExplicitCall(shared, startLegacy, startModern))
  }
}

const record = (
  session: Session,
  state: Tasks.Observed,
  tool: string | undefined
): Effect.Effect<McpTasks.StoredTask> =>
  Effect.map(Clock.currentTimeMillis, (now) => ({
    taskId: state.taskId,
    server: session.transport.target,
    era: session.era,
    method: "tools/call",
    ...(tool !== undefined ? { tool } : {}),
    createdAt: now,
    ...(typeof state.ttlMs === "number" ? { expiresAt: now + state.ttlMs } : {})
  }))

/** A handle on a task just created. */
const started = (
  driver: Tasks.Driver,
  session: Session,
  state: Tasks.Observed,
  tool: string | undefined,
  timeoutMillis: number | undefined,
  releaseProgress?: () => void
) =>
  Effect.gen(function*() {
    const stored = yield* record(session, state, tool)
    yield* driver.remember(stored)
    return yield* driver.handle({ era: session.era, initial: state, stored, timeoutMillis, releaseProgress })
  })

/** A handle on a call the server answered at once (a 2026-07-28 server may choose not to make a task). */
const finished = (result: McpSchema.CallToolResult, era: McpSchema.Era): McpTasks.TaskHandle<McpSchema.CallToolResult> => {
  const initial: McpTasks.TaskState = { taskId: "", status: "completed" }
  return {
    taskId: "",
    era,
    initial,
    status: Stream.make(initial),
    result: Effect.succeed(result),
    cancel: Effect.void,
    detach: Effect.void
  }
}

/**
 * 2025-11-25: `tools/call` with `params.task`. The request's progress token stays valid for the task's life: its
 * progress keeps reaching `onProgress` until the task's result is known.
 */
const makeStartLegacy = ({ deps, driver }: Shared): StartLegacy => (session, params, options) =>
  Effect.gen(function*() {
    const timeoutMillis = timeoutOf(options)
    const onProgress = options?.onProgress
    const task = deps.resolved.ttlMillis === undefined ? {} : { ttl: deps.resolved.ttlMillis }
    let release = (): void => {}
    const requestOptions: McpClient.RequestOptions = {
      ...(timeoutMillis !== undefined ? { timeout: timeoutMillis } : {}),
      ...(onProgress !== undefined ? { onProgress } : {})
    }
    const observed = onProgress === undefined ? requestOptions : Calls.observingIds(requestOptions, (id) => {
      release()
      release = deps.keepProgress(id, onProgress)
    })
    const raw = yield* deps.calls.request("tools/call", { ...nameAndArguments(params), task }, Schema.Unknown, observed)
      .pipe(Effect.onError(() => Effect.sync(() => release())))
    if (!Predicate.isObject(raw) || raw.task === undefined) {
      // the server ran it as a plain call
      release()
      return finished(yield* Effect.fromResult(deps.toolResult(params.name, raw)), "legacy")
    }
    const created = yield* Effect.mapError(
      Schema.decodeUnknownEffect(McpTasks.LegacyCreateTaskResult)(raw),
      (e) => new McpError.ProtocolError({ reason: "InvalidResult", method: "tools/call", detail: e.message })
    ).pipe(Effect.tapError(() => Effect.sync(() => release())))
    return yield* started(driver, session, Tasks.fromLegacy(created.task), params.name, timeoutMillis, () => release())
  })

/** 2026-07-28: the task a tool call was answered with. */
const makeStartModern = ({ driver }: Shared): StartModern => (session, raw, tool, timeoutMillis) =>
  Effect.flatMap(Effect.fromResult(Tasks.readTask("modern", "tools/call", raw)), (state) =>
    started(driver, session, state, tool, timeoutMillis))

/** `callTool` once tasks are loaded: the plain call, or a task the call waits for to its end. */
const makeCallTool = (
  { deps }: Shared,
  startLegacy: StartLegacy,
  startModern: StartModern
): Loaded["callTool"] => {
  const { resolved, status, supportOf } = deps

  /**
   * Waits for a task `callTool` started itself. Nobody else holds its handle: when waiting fails for a reason
   * that leaves the task running (the server's answers broke the protocol, a request timed out, the connection
   * failed), the task is cancelled too, within a bounded wait.
   */
  const toEnd = (handle: McpTasks.TaskHandle<McpSchema.CallToolResult>) =>
    Effect.tapError(handle.result, (error) =>
      error._tag === "McpError" || error._tag === "TaskError"
        ? Effect.void
        : Effect.ignore(Effect.timeout(handle.cancel, Duration.millis(Math.min(deps.requestTimeout, 10_000)))))

  // (`taskSupport.ts` already sent the usual plain call past this; the session is checked again once known)
  return (params, options, plain, taskAware) => {
    const timeoutMillis = timeoutOf(options)
    return Effect.flatMap(status.awaitSession(timeoutMillis ?? deps.requestTimeout, "tools/call"), (session) => {
      if (session.era === "modern") {
        if (!resolved.enabled) return plain
        return Effect.flatMap(taskAware, (outcome) =>
          outcome instanceof TaskSupport.TaskCreated
            ? Effect.flatMap(startModern(session, outcome.raw, params.name, timeoutMillis), toEnd)
            : Effect.succeed(outcome))
      }
      if (!TaskSupport.legacyToolTasks(session.capabilities)) return plain
      // a tool that requires a task MUST be called as one; one that only allows it runs as a plain call here
      return Effect.flatMap(supportOf(params.name), (taskSupport) =>
        taskSupport === "required"
          ? Effect.flatMap(startLegacy(session, params, options), toEnd)
          : plain)
    })
  }
}

/** `client.tasks.callTool`: a task whenever the server runs the tool as one, its handle returned. */
const makeExplicitCall = (
  { deps }: Shared,
  startLegacy: StartLegacy,
  startModern: StartModern
): McpTasks.Tasks["callTool"] => {
  const { calls, resolved, status, supportOf } = deps
  return (params, options) =>
    Effect.gen(function*() {
      const timeoutMillis = timeoutOf(options)
      const session = yield* status.awaitSession(timeoutMillis ?? deps.requestTimeout, "tools/call")
      if (session.era === "legacy") {
        if (!TaskSupport.legacyToolTasks(session.capabilities)) {
          return yield* unsupported("the server does not run tools/call as tasks (no tasks.requests.tools.call)")
        }
        const taskSupport = yield* supportOf(params.name)
        if (taskSupport !== "required" && taskSupport !== "optional") {
          return yield* unsupported(`the tool ${params.name} does not run as a task (taskSupport: ${taskSupport})`)
        }
        return yield* startLegacy(session, params, options)
      }
      if (!resolved.enabled) {
        return yield* unsupported(`the ${McpTasks.EXTENSION_ID} extension is not enabled (the tasks option)`)
      }
      const callOptions = timeoutMillis === undefined ? undefined : { timeout: timeoutMillis }
      const first = yield* calls.raw("tools/call", nameAndArguments(params), callOptions)
      const raw = InputRounds.isInputRequired(first[0])
        ? yield* calls.inputRounds("tools/call", nameAndArguments(params), callOptions, first)
        : first[0]
      if (TaskSupport.isTaskResult(raw)) return yield* startModern(session, raw, params.name, timeoutMillis)
      return finished(yield* Effect.fromResult(deps.toolResult(params.name, raw)), "modern")
    })
}

/** `client.tasks`: the explicit call, and resume, get, cancel, list and the stored tasks by id. */
const makeApi = (
  { driver, request, session, store }: Shared,
  explicitCall: McpTasks.Tasks["callTool"]
): McpTasks.Tasks => {
  /** The stored record of a task, dropped (with `Expired`) once its time to live passed. */
  const storedOf = (taskId: string) =>
    Effect.gen(function*() {
      const found = yield* Effect.orElseSucceed(store.get(taskId), () => Option.none<McpTasks.StoredTask>())
      if (Option.isNone(found)) return undefined
      const now = yield* Clock.currentTimeMillis
      if (found.value.expiresAt !== undefined && now >= found.value.expiresAt) {
        yield* driver.forget(taskId)
        return yield* new McpError.TaskError({
          reason: "Expired",
          taskId,
          detail: "its time to live passed; the server may have dropped it"
        })
      }
      return found.value
    })

  const resume: McpTasks.Tasks["resume"] = (taskId) =>
    Effect.gen(function*() {
      const stored = yield* storedOf(taskId)
      const current = yield* session
      if (stored !== undefined && stored.era !== current.era) {
        return yield* new McpError.TaskError({
          reason: "NotFound",
          taskId,
          detail: `it was started in the ${stored.era} era; the server now speaks the ${current.era} one`
        })
      }
      const state = yield* driver.get(current.era, taskId, stored, undefined)
      const record: McpTasks.StoredTask = stored ?? {
        taskId,
        server: current.transport.target,
        era: current.era,
        method: "tools/call",
        createdAt: yield* Clock.currentTimeMillis
      }
      return yield* driver.handle({ era: current.era, initial: state, stored: record, timeoutMillis: undefined })
    })

  return {
    callTool: explicitCall,
    resume,
    get: (taskId) =>
      Effect.gen(function*() {
        const stored = yield* storedOf(taskId)
        const current = yield* session
        return Tasks.publicState(yield* driver.get(current.era, taskId, stored, undefined))
      }),
    cancel: (taskId) =>
      Effect.gen(function*() {
        const current = yield* session
        yield* driver.cancel(current.era, taskId, undefined)
        yield* driver.forget(taskId)
      }),
    list: (cursor) =>
      Effect.gen(function*() {
        const current = yield* session
        const tasks = Predicate.isObject(current.capabilities.tasks) ? current.capabilities.tasks : undefined
        if (current.era !== "legacy" || tasks?.list === undefined) {
          return yield* unsupported("the server does not list tasks (tasks.list)")
        }
        const raw = yield* request("tasks/list", cursor === undefined ? {} : { cursor }, undefined)
        const page = yield* Effect.mapError(
          Schema.decodeUnknownEffect(McpTasks.LegacyListTasksResult)(raw),
          (e) => new McpError.ProtocolError({ reason: "InvalidResult", method: "tasks/list", detail: e.message })
        )
        return { tasks: page.tasks.map((task) => Tasks.publicState(Tasks.fromLegacy(task))), nextCursor: page.nextCursor }
      }),
    stored: Effect.gen(function*() {
      const current = yield* session
      const all = yield* Effect.orElseSucceed(store.list, (): ReadonlyArray<McpTasks.StoredTask> => [])
      const now = yield* Clock.currentTimeMillis
      const target = current.transport.target
      // a store may keep the target's key instead of the target (TaskStore.keyingServers)
      const key = yield* TaskStore.serverKey(target)
      const live: Array<McpTasks.StoredTask> = []
      for (const task of all) {
        if (task.server !== target && task.server !== key) continue
        if (task.expiresAt !== undefined && now >= task.expiresAt) yield* driver.forget(task.taskId)
        else live.push(task)
      }
      return live
    })
  }
}
