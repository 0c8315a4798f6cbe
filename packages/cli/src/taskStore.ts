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
 * - Two `conduit` processes may write at the same moment (`--detach` in one terminal, `tasks result` in another):
 *   each change (read, change, write) holds a lock file, `tasks.json.lock`, made with `O_EXCL`; a process waits up to
 *   {@link lockWaitMillis} for it, and a lock older than {@link staleLockMillis} (its process died) is broken. After
 *   the wait the change is made without the lock rather than lost. A missing or unreadable file is an empty store.
 *
 * @since 0.1.0
 */
import * as McpTasks from "@conduit-mcp/client/McpTasks"
import * as TaskStore from "@conduit-mcp/client/TaskStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
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
 * How long a change waits for the lock of another process before it goes on without it.
 *
 * @since 0.1.0
 * @category constants
 */
export const lockWaitMillis = 2_000

/**
 * The age past which a lock file is taken for the leftover of a process that died, and removed.
 *
 * @since 0.1.0
 * @category constants
 */
export const staleLockMillis = 10_000

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

const decodeFile = Schema.decodeUnknownResult(Schema.fromJsonString(Schema.Array(McpTasks.StoredTask)))

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
    return Result.getOrElse(decodeFile(text), (): ReadonlyArray<McpTasks.StoredTask> => [])
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

  // the lock: held from the read to the rename of a change, so two processes never write over each other's change
  const lockFile = `${file}.lock`
  const isTaken = (cause: unknown) => (cause as NodeJS.ErrnoException | undefined)?.code === "EEXIST"
  const tryLock = Effect.try({
    try: () => {
      Fs.mkdirSync(directory, { recursive: true, mode: 0o700 })
      Fs.closeSync(Fs.openSync(lockFile, "wx", 0o600))
      return true
    },
    catch: (cause) => cause
  }).pipe(
    Effect.tapError((cause) =>
      isTaken(cause)
        ? Effect.sync(() => {
          try {
            if (Date.now() - Fs.statSync(lockFile).mtimeMs > staleLockMillis) Fs.rmSync(lockFile, { force: true })
          } catch {
            // (released meanwhile)
          }
        })
        : Effect.void
    )
  )
  const lock = tryLock.pipe(
    Effect.retry({
      while: isTaken,
      schedule: Schedule.spaced("10 millis").pipe(Schedule.upTo({ duration: `${lockWaitMillis} millis` }))
    }),
    // taken too long, or no lock can be made (an unwritable directory: the change itself reports it)
    Effect.orElseSucceed(() => false)
  )
  const unlock = (held: boolean) => held ? Effect.sync(() => Fs.rmSync(lockFile, { force: true })) : Effect.void
  const change = (operation: "put" | "remove", body: () => void) =>
    Effect.acquireUseRelease(lock, () => Effect.try({ try: body, catch: failure(operation) }), unlock)

  return {
    put: (task) => change("put", () => write(bounded([...read().filter((known) => known.taskId !== task.taskId), task]))),
    get: (taskId) =>
      Effect.try({
        try: () => Option.fromNullishOr(read().find((task) => task.taskId === taskId)),
        catch: failure("get")
      }),
    remove: (taskId) =>
      change("remove", () => {
        const tasks = read()
        if (tasks.some((task) => task.taskId === taskId)) {
          write(bounded(tasks.filter((task) => task.taskId !== taskId)))
        }
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
