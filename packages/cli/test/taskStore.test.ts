/**
 * The CLI's task file: written 0600 in a 0700 directory (even one that existed with looser modes), servers kept
 * only by their key, expired and surplus tasks dropped, a broken file read as empty; changes of two processes
 * serialised by a lock file (a waiting change under the TestClock, a stale lock broken, a lock held too long).
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpTasks from "@conduit-mcp/client/McpTasks"
import * as TaskStore from "@conduit-mcp/client/TaskStore"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as TaskStoreFile from "../src/taskStore.js"

const tempDirectory = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-tasks-"))),
  (directory) => Effect.sync(() => Fs.rmSync(directory, { recursive: true, force: true }))
)

const task = (taskId: string, overrides: Partial<McpTasks.StoredTask> = {}): McpTasks.StoredTask => ({
  taskId,
  server: "https://mcp.example.com/mcp?token=s3cret",
  era: "modern",
  method: "tools/call",
  tool: "research",
  createdAt: 1_000,
  ...overrides
})

const modeOf = (path: string) => Fs.statSync(path).mode & 0o777

describe("the CLI's task file", () => {
  it.effect("0700 directory, 0600 file, the server by its key only; read back by id and matched by key", () =>
    Effect.gen(function*() {
      const root = yield* tempDirectory
      const directory = Path.join(root, "conduit", "tasks")
      Fs.mkdirSync(directory, { recursive: true, mode: 0o755 })
      Fs.chmodSync(directory, 0o755)
      const store = TaskStore.keyingServers(TaskStoreFile.make(directory, () => 2_000))
      yield* store.put(task("t-1"))
      const file = Path.join(directory, "tasks.json")
      assert.strictEqual(modeOf(directory), 0o700)
      assert.strictEqual(modeOf(file), 0o600)
      const text = Fs.readFileSync(file, "utf8")
      assert.notInclude(text, "s3cret")
      assert.notInclude(text, "mcp.example.com")
      const key = yield* TaskStore.serverKey("https://mcp.example.com/mcp?token=s3cret")
      assert.match(key, /^sha256:[0-9a-f]{64}$/)
      const found = yield* store.get("t-1")
      assert.isTrue(Option.isSome(found) && found.value.server === key && found.value.tool === "research")
      yield* store.remove("t-1")
      assert.deepStrictEqual(yield* store.list, [])
      // no temporary file is left behind
      assert.deepStrictEqual(Fs.readdirSync(directory), ["tasks.json"])
    }))

  it.effect("bounded: expired tasks go on every write, and the oldest beyond the limit", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      let now = 10_000
      const store = TaskStoreFile.make(directory, () => now)
      yield* store.put(task("expiring", { expiresAt: 10_500 }))
      yield* store.put(task("forever"))
      now = 11_000
      yield* store.put(task("new", { createdAt: 11_000 }))
      assert.deepStrictEqual((yield* store.list).map((t) => t.taskId), ["forever", "new"])
      for (let i = 0; i < TaskStoreFile.maxTasks + 5; i++) {
        yield* store.put(task(`bulk-${i}`, { createdAt: 20_000 + i }))
      }
      const kept = yield* store.list
      assert.strictEqual(kept.length, TaskStoreFile.maxTasks)
      assert.isFalse(kept.some((t) => t.taskId === "forever" || t.taskId === "new"))
      assert.isTrue(kept.some((t) => t.taskId === `bulk-${TaskStoreFile.maxTasks + 4}`))
    }))

  it.effect("a file that is not a list of tasks reads as empty, and is replaced on the next write", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      Fs.writeFileSync(Path.join(directory, "tasks.json"), "{not json")
      const store = TaskStoreFile.make(directory)
      assert.deepStrictEqual(yield* store.list, [])
      yield* store.put(task("t-2"))
      assert.deepStrictEqual((yield* store.list).map((t) => t.taskId), ["t-2"])
    }))

  it.effect("a directory that cannot be written: TaskStoreError", () =>
    Effect.gen(function*() {
      const root = yield* tempDirectory
      const blocker = Path.join(root, "file")
      Fs.writeFileSync(blocker, "")
      const error = yield* Effect.flip(TaskStoreFile.make(Path.join(blocker, "tasks")).put(task("t-3")))
      assert.strictEqual(error._tag, "TaskStoreError")
      assert.strictEqual(error.operation, "put")
    }))
  it.effect("a change waits for the lock another process holds, and goes on when it is released", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const store = TaskStoreFile.make(directory)
      yield* store.put(task("t-1"))
      const lockFile = Path.join(directory, "tasks.json.lock")
      // another process's change in progress
      Fs.writeFileSync(lockFile, "")
      const waiting = yield* Effect.forkChild(store.put(task("t-2")))
      yield* TestClock.adjust("500 millis")
      assert.deepStrictEqual((yield* store.list).map((t) => t.taskId), ["t-1"])
      // that process writes its change and releases the lock; ours reads it and adds to it
      Fs.writeFileSync(Path.join(directory, "tasks.json"), JSON.stringify([task("t-1"), task("t-other")]))
      Fs.rmSync(lockFile)
      yield* TestClock.adjust("20 millis")
      yield* Fiber.join(waiting)
      assert.deepStrictEqual((yield* store.list).map((t) => t.taskId), ["t-1", "t-other", "t-2"])
      assert.isFalse(Fs.existsSync(lockFile))
    }))

  it.effect("a stale lock is broken; a lock held past the wait is left and the change made anyway", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const store = TaskStoreFile.make(directory)
      const lockFile = Path.join(directory, "tasks.json.lock")
      Fs.writeFileSync(lockFile, "")
      const old = (Date.now() - TaskStoreFile.staleLockMillis - 5_000) / 1000
      Fs.utimesSync(lockFile, old, old)
      const stale = yield* Effect.forkChild(store.put(task("t-1")))
      yield* TestClock.adjust("20 millis")
      yield* Fiber.join(stale)
      assert.isFalse(Fs.existsSync(lockFile))

      Fs.writeFileSync(lockFile, "")
      const held = yield* Effect.forkChild(store.remove("t-1"))
      yield* TestClock.adjust(`${TaskStoreFile.lockWaitMillis - 100} millis`)
      assert.deepStrictEqual((yield* store.list).map((t) => t.taskId), ["t-1"])
      yield* TestClock.adjust("200 millis")
      yield* Fiber.join(held)
      assert.deepStrictEqual(yield* store.list, [])
      // not ours: left to the process that made it
      assert.isTrue(Fs.existsSync(lockFile))
    }))
})
