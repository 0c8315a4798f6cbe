/**
 * Where `conduit` keeps the tasks it started, so that `tools call --detach` in one run and `tasks result <id>` (or
 * `tasks list` against a server that cannot list its tasks) in a later one know them: one JSON file,
 * `$XDG_STATE_HOME/conduit/tasks/tasks.json` (`~/.local/state` by default; `~/Library/Application Support` on
 * macOS, `%LOCALAPPDATA%` on Windows).
 *
 * - Only the user reads it: the directory is made (or set back to) 0700, the file is written 0600, whole, through a
 *   temporary file renamed over it.
 * - No secrets: each task names its server by `TaskStore.serverKey` (a SHA-256 of the URL or command line, which
 *   may hold a token), plus its id, era, tool name, and when it started and expires.
 * - Bounded: expired tasks are dropped on every write, and the oldest beyond {@link maxTasks}.
 * - Two `conduit` processes writing at the same moment may lose one of their records (last write wins); a
 *   missing or unreadable file is an empty store.
 *
 * @since 0.1.0
 */
import * as McpTasks from "@conduit-mcp/client/McpTasks"
import * as TaskStore from "@conduit-mcp/client/TaskStore"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"

/**
 * The most tasks the file keeps (the oldest go first).
 *
 * @since 0.1.0
 * @category constants
 */
export const maxTasks = 200

/**
 * Where `conduit` keeps its state: `$XDG_STATE_HOME/conduit` (`~/.local/state/conduit`; the platform's place on
 * macOS and Windows).
 *
 * @since 0.1.0
 * @category paths
 */
export const stateDirectory = (): string => {
  const home = Os.homedir()
  const base = process.env.XDG_STATE_HOME !== undefined && process.env.XDG_STATE_HOME !== ""
    ? process.env.XDG_STATE_HOME
    : process.platform === "darwin"
    ? NodePath.join(home, "Library", "Application Support")
    : process.platform === "win32"
    ? process.env.LOCALAPPDATA ?? NodePath.join(home, "AppData", "Local")
    : NodePath.join(home, ".local", "state")
  return NodePath.join(base, "conduit")
}

/**
 * The directory of the task file.
 *
 * @since 0.1.0
 * @category paths
 */
export const tasksDirectory = (): string => NodePath.join(stateDirectory(), "tasks")

const decodeFile = Schema.decodeUnknownEither(Schema.parseJson(Schema.Array(McpTasks.StoredTask)))

const failure = (operation: TaskStore.TaskStoreError["operation"]) => (cause: unknown) =>
  new TaskStore.TaskStoreError({ operation, detail: cause instanceof Error ? cause.message : String(cause) })

/**
 * A store in `directory` (see the module's notes). `now` tells what has expired.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  directory: string,
  now: () => number = Date.now
): TaskStore.TaskStoreShape => {
  const file = NodePath.join(directory, "tasks.json")

  const read = (): ReadonlyArray<McpTasks.StoredTask> => {
    let text: string
    try {
      text = Fs.readFileSync(file, "utf8")
    } catch {
      return []
    }
    return Either.getOrElse(decodeFile(text), (): ReadonlyArray<McpTasks.StoredTask> => [])
  }

  const write = (tasks: ReadonlyArray<McpTasks.StoredTask>): void => {
    Fs.mkdirSync(directory, { recursive: true, mode: 0o700 })
    Fs.chmodSync(directory, 0o700)
    const temporary = `${file}.${process.pid}.tmp`
    Fs.writeFileSync(temporary, JSON.stringify(tasks), { mode: 0o600 })
    Fs.chmodSync(temporary, 0o600)
    Fs.renameSync(temporary, file)
  }

  /** The tasks to keep: none expired, the newest `maxTasks`. */
  const bounded = (tasks: ReadonlyArray<McpTasks.StoredTask>): ReadonlyArray<McpTasks.StoredTask> => {
    const at = now()
    const live = tasks.filter((task) => task.expiresAt === undefined || task.expiresAt > at)
    return live.length <= maxTasks
      ? live
      : [...live].sort((a, b) => a.createdAt - b.createdAt).slice(live.length - maxTasks)
  }

  return {
    put: (task) =>
      Effect.try({
        try: () => write(bounded([...read().filter((known) => known.taskId !== task.taskId), task])),
        catch: failure("put")
      }),
    get: (taskId) =>
      Effect.try({
        try: () => Option.fromNullable(read().find((task) => task.taskId === taskId)),
        catch: failure("get")
      }),
    remove: (taskId) =>
      Effect.try({
        try: () => {
          const tasks = read()
          if (tasks.some((task) => task.taskId === taskId)) {
            write(bounded(tasks.filter((task) => task.taskId !== taskId)))
          }
        },
        catch: failure("remove")
      }),
    list: Effect.try({ try: read, catch: failure("list") })
  }
}

/**
 * The store `conduit` uses: the file under {@link tasksDirectory}, servers kept by their key.
 *
 * @since 0.1.0
 * @category constructors
 */
export const durable = (): TaskStore.TaskStoreShape => TaskStore.keyingServers(make(tasksDirectory()))
