/**
 * Where a client records the tasks it started, so that after a restart or a reconnection `client.tasks.resume`
 * (or `client.tasks.stored`) picks up waiting for their results. In memory by default (what `McpClient` uses
 * when its `taskStore` option is not given); over any `KeyValueStore` (the file system, Redis) to outlive the
 * process.
 *
 * @example
 * ```ts
 * import { McpClient, TaskStore } from "@conduit-mcp/client"
 * import { NodeServices } from "@effect/platform-node"
 * import { Layer } from "effect"
 *
 * // one file per task under ~/.cache/my-app/tasks
 * const Tasks = TaskStore.layerFileSystem("/home/me/.cache/my-app/tasks").pipe(Layer.provide(NodeServices.layer))
 * const Client = McpClient.layer({ tasks: { enabled: true }, taskStore: TaskStore.TaskStore }).pipe(Layer.provide(Tasks))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Hex from "effect/encoding/Hex"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Path from "effect/Path"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import type * as PlatformError from "effect/PlatformError"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import * as McpTasks from "./McpTasks.js"
import { sha256 } from "./internal/digest.js"

/**
 * The store could not be read or written.
 *
 * @since 0.1.0
 * @category errors
 */
export class TaskStoreError extends Schema.TaggedError<TaskStoreError>("@conduit-mcp/client/TaskStoreError")(
  "TaskStoreError",
  { operation: Schema.Literals(["get", "put", "remove", "list"]), detail: Schema.String }
) {
  override get message(): string {
    return `task store ${this.operation} failed: ${this.detail}`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface TaskStoreShape {
  readonly put: (task: McpTasks.StoredTask) => Effect.Effect<void, TaskStoreError>
  readonly get: (taskId: string) => Effect.Effect<Option.Option<McpTasks.StoredTask>, TaskStoreError>
  readonly remove: (taskId: string) => Effect.Effect<void, TaskStoreError>
  readonly list: Effect.Effect<ReadonlyArray<McpTasks.StoredTask>, TaskStoreError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class TaskStore extends Context.Service<TaskStore, TaskStoreShape>()("@conduit-mcp/client/TaskStore") {}

/**
 * A store in this process's memory.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<TaskStoreShape> = Effect.sync(() => {
  const tasks = new Map<string, McpTasks.StoredTask>()
  return {
    put: (task) => Effect.sync(() => void tasks.set(task.taskId, task)),
    get: (taskId) => Effect.sync(() => Option.fromUndefinedOr(tasks.get(taskId))),
    remove: (taskId) => Effect.sync(() => void tasks.delete(taskId)),
    list: Effect.sync(() => [...tasks.values()])
  }
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<TaskStore> = Layer.effect(TaskStore, makeMemory)

/**
 * What a store may keep in place of a task's `server` (`ConnectedInfo.target`, a URL or a command line, either of
 * which can carry a secret: a token in a query, a key in an argument): `sha256:` and the hex SHA-256 of the target.
 * `client.tasks.stored` matches a task by its target or by this key.
 *
 * @since 0.1.0
 * @category keys
 */
export const serverKey = (target: string): Effect.Effect<string> =>
  Effect.map(sha256(target), (digest) => `sha256:${Hex.encode(digest)}`)

/**
 * The same store, keeping `serverKey(server)` instead of each task's `server`: what it writes names no server in
 * clear (for stores on disk or shared).
 *
 * @since 0.1.0
 * @category combinators
 */
export const keyingServers = (store: TaskStoreShape): TaskStoreShape => ({
  ...store,
  put: (task) =>
    task.server.startsWith("sha256:")
      ? store.put(task)
      : Effect.flatMap(serverKey(task.server), (server) => store.put({ ...task, server }))
})

const Entry = Schema.fromJsonString(McpTasks.StoredTask)
const Index = Schema.fromJsonString(Schema.Array(Schema.String))
const decodeEntry = Schema.decodeEffect(Entry)
const encodeEntry = Schema.encodeEffect(Entry)
const decodeIndex = Schema.decodeEffect(Index)
const encodeIndex = Schema.encodeEffect(Index)
const INDEX_KEY = "index"

/**
 * A store over any `KeyValueStore`: one JSON entry per task under `prefix` (default `conduit-task:`), and an
 * index entry listing their ids. Writes are serialized within this process.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerKeyValueStore = (options?: {
  readonly prefix?: string | undefined
}): Layer.Layer<TaskStore, never, KeyValueStore.KeyValueStore> =>
  Layer.effect(
    TaskStore,
    Effect.gen(function*() {
      const store = KeyValueStore.prefix(yield* KeyValueStore.KeyValueStore, options?.prefix ?? "conduit-task:")
      const lock = yield* Semaphore.make(1)
      const failed = (operation: TaskStoreError["operation"]) => (e: { readonly message: string }) =>
        new TaskStoreError({ operation, detail: e.message })
      const entryKey = (taskId: string) => `task:${encodeURIComponent(taskId)}`
      const readIndex = Effect.flatMap(store.get(INDEX_KEY), (text) =>
        text === undefined
          ? Effect.succeed<ReadonlyArray<string>>([])
          // an unreadable index is rebuilt from nothing rather than failing every operation
          : Effect.orElseSucceed(decodeIndex(text), (): ReadonlyArray<string> => []))
      const writeIndex = (ids: ReadonlyArray<string>) =>
        Effect.flatMap(encodeIndex(ids), (text) => store.set(INDEX_KEY, text))
      const get = (taskId: string) =>
        store.get(entryKey(taskId)).pipe(
          Effect.flatMap((text) =>
            text === undefined ? Effect.succeedNone : Effect.option(decodeEntry(text))
          ),
          Effect.mapError(failed("get"))
        )
      return TaskStore.of({
        put: (task) =>
          lock.withPermits(1)(Effect.gen(function*() {
            yield* store.set(entryKey(task.taskId), yield* encodeEntry(task))
            const ids = yield* readIndex
            if (!ids.includes(task.taskId)) yield* writeIndex([...ids, task.taskId])
          })).pipe(Effect.mapError(failed("put"))),
        get,
        remove: (taskId) =>
          lock.withPermits(1)(Effect.gen(function*() {
            yield* store.remove(entryKey(taskId))
            const ids = yield* readIndex
            if (ids.includes(taskId)) yield* writeIndex(ids.filter((id) => id !== taskId))
          })).pipe(Effect.mapError(failed("remove"))),
        list: Effect.gen(function*() {
          const ids = yield* Effect.mapError(readIndex, failed("list"))
          const found = yield* Effect.forEach(ids, get)
          return found.flatMap((entry) => Option.isSome(entry) ? [entry.value] : [])
        })
      })
    })
  )

/**
 * A store in a directory (one file per entry, the directory created if missing), through
 * `KeyValueStore.layerFileSystem`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFileSystem = (
  directory: string
): Layer.Layer<TaskStore, PlatformError.PlatformError, FileSystem.FileSystem | Path.Path> =>
  layerKeyValueStore().pipe(Layer.provide(KeyValueStore.layerFileSystem(directory)))
