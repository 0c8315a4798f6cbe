/**
 * Tasks from the command line, end to end: `conduit demo-server --http 0` as a child process (its tasks outlive
 * each `conduit` run), reached with `--url` in both eras: `tools call` on the task-required `research` tool (the
 * status on stderr, the report on stdout), `--detach` then `tasks get|result|cancel|list`, and their exit codes.
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Cli from "./utils/cli.js"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const demoServer = Effect.gen(function*() {
  const running = yield* Cli.start(["demo-server", "--http", "0"])
  yield* running.awaitStderr("/mcp")
  const stderr = yield* SubscriptionRef.get(running.stderr)
  const url = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr)?.[1]
  assert.isDefined(url, stderr)
  return url ?? ""
})

layer(Cli.layer, { excludeTestServices: true })("conduit and tasks", (it) => {
  it.effect("tools call on a task-required tool: the status on stderr, the result on stdout, in both eras", () =>
    Effect.gen(function*() {
      const url = yield* demoServer
      const [modern, legacy] = yield* Cli.runAll([
        ["--url", url, "tools", "call", "research", "--arg", "seconds=2"],
        ["--url", url, "--era", "legacy", "tools", "call", "research", "--arg", "topic=eels", "--arg", "seconds=2"]
      ])
      assert.strictEqual(modern.code, 0, modern.stderr)
      assert.strictEqual(modern.stdout, "Report on tides: it took 2 s\n")
      assert.match(modern.stderr, /runs as task \S+; Ctrl-C cancels it/)
      assert.match(modern.stderr, /task \S+ working/)
      // 2026-07-28: the progress is the task's status message, pushed by notifications/tasks
      assert.match(modern.stderr, /task \S+ working: researching tides \(1\/2\)/)
      assert.strictEqual(legacy.code, 0, legacy.stderr)
      assert.strictEqual(legacy.stdout, "Report on eels: it took 2 s\n")
      assert.match(legacy.stderr, /task \S+ completed/)
      // 2025-11-25: the progress of the call that created the task
      assert.include(legacy.stderr, "progress 1/2 researching eels")
    }), 60_000)

  it.effect("the demo server as a child process over stdio, in both eras: its task's status, progress and result", () =>
    Effect.gen(function*() {
      const [modern, legacy] = yield* Cli.runAll([
        ["--trace", "--stdio", Cli.demoServerCommand("modern"), "tools", "call", "research", "--arg", "seconds=2"],
        [
          "--trace",
          "--stdio",
          Cli.demoServerCommand("legacy"),
          "tools",
          "call",
          "research",
          "--arg",
          "topic=eels",
          "--arg",
          "seconds=2"
        ]
      ])
      const sent = (result: Cli.Result, method: string) =>
        result.stderr.split("\n").filter((line) => line.startsWith("[trace] →") && line.includes(`"method":"${method}"`))
      // 2026-07-28: the waits listen for the task, and the server pushes its states, the result with the last; the
      // task is polled once per wait (what changed before the listen began), then only every 30 s
      assert.isAtLeast(sent(modern, "subscriptions/listen").length, 1)
      assert.match(modern.stderr, /\[trace\] ← \{"jsonrpc":"2\.0","method":"notifications\/tasks","params":\{[^\n]*"status":"completed"/)
      assert.isAtMost(sent(modern, "tasks/get").length, 2)
      // 2025-11-25: the server's notifications/tasks/status
      assert.match(legacy.stderr, /\[trace\] ← \{"jsonrpc":"2\.0","method":"notifications\/tasks\/status"/)
      assert.strictEqual(modern.code, 0, modern.stderr)
      assert.strictEqual(modern.stdout, "Report on tides: it took 2 s\n")
      assert.match(modern.stderr, /task \S+ working: researching tides \(1\/2\)/)
      assert.match(modern.stderr, /task \S+ completed/)
      assert.strictEqual(legacy.code, 0, legacy.stderr)
      assert.strictEqual(legacy.stdout, "Report on eels: it took 2 s\n")
      assert.include(legacy.stderr, "progress 1/2 researching eels")
      assert.match(legacy.stderr, /task \S+ completed/)
    }), 60_000)

  it.effect("--detach, then tasks get, result, list and cancel by id (legacy and modern)", () =>
    Effect.gen(function*() {
      const url = yield* demoServer
      for (const era of ["legacy", "modern"] as const) {
        const detached = yield* Cli.run(["--url", url, "--era", era, "tools", "call", "research", "--arg", "seconds=2", "--detach"])
        assert.strictEqual(detached.code, 0, detached.stderr)
        const taskId = detached.stdout.trim()
        assert.match(taskId, /^[0-9a-f-]{36}$/)
        // a task certainly still working when looked at (600 s; the 2 s one may be done by the time the next
        // process has started on a loaded machine): its state, then it is cancelled
        const working = yield* Cli.run(["--url", url, "--era", era, "tools", "call", "research", "--arg", "seconds=600", "--detach"])
        assert.strictEqual(working.code, 0, working.stderr)
        const workingId = working.stdout.trim()
        const got = yield* Cli.run(["--url", url, "--era", era, "tasks", "get", workingId, "--json"])
        assert.strictEqual(got.code, 0, got.stderr)
        const state = Cli.parseJson(got)
        assert.isTrue(isRecord(state) && state.taskId === workingId && state.status === "working")
        const stopped = yield* Cli.run(["--url", url, "--era", era, "tasks", "cancel", workingId])
        assert.strictEqual(stopped.code, 0, stopped.stderr)
        assert.strictEqual((yield* Cli.run(["--url", url, "--era", era, "tasks", "result", workingId])).code, 6)
        if (era === "modern") {
          // the 2026-07-28 extension has no tasks/list: the list is what conduit started there, from its task file
          const stored = yield* Cli.run(["--url", url, "--era", era, "tasks", "list", "--json"])
          assert.strictEqual(stored.code, 0, stored.stderr)
          const listed = Cli.parseJson(stored)
          assert.isTrue(
            isRecord(listed) && Array.isArray(listed.stored) &&
              listed.stored.some((task) => isRecord(task) && task.taskId === taskId && task.tool === "research"),
            stored.stdout
          )
        }
        const result = yield* Cli.run(["--url", url, "--era", era, "tasks", "result", taskId])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.strictEqual(result.stdout, "Report on tides: it took 2 s\n")
      }
      // the task file: only the user reads it, it names no server in clear, and a task done is gone from it
      const directory = Path.join(Cli.stateHome, "conduit", "tasks")
      assert.strictEqual(Fs.statSync(directory).mode & 0o777, 0o700)
      const file = Path.join(directory, "tasks.json")
      assert.strictEqual(Fs.statSync(file).mode & 0o777, 0o600)
      const kept = Fs.readFileSync(file, "utf8")
      assert.notInclude(kept, "127.0.0.1")
      assert.deepStrictEqual(JSON.parse(kept), [])
      const listed = yield* Cli.run(["--url", url, "--era", "legacy", "tasks", "list", "--json"])
      assert.strictEqual(listed.code, 0, listed.stderr)
      const page = Cli.parseJson(listed)
      assert.isTrue(isRecord(page) && Array.isArray(page.tasks) && page.tasks.length >= 1)

      const long = yield* Cli.run(["--url", url, "--era", "legacy", "tools", "call", "research", "--arg", "seconds=600", "--detach"])
      const taskId = long.stdout.trim()
      const cancelled = yield* Cli.run(["--url", url, "--era", "legacy", "tasks", "cancel", taskId])
      assert.strictEqual(cancelled.code, 0, cancelled.stderr)
      assert.include(cancelled.stderr, "cancelled")
      // the result of a cancelled task: exit code 6
      const after = yield* Cli.run(["--url", url, "--era", "legacy", "tasks", "result", taskId])
      assert.strictEqual(after.code, 6, after.stderr)
      const unknown = yield* Cli.run(["--url", url, "--era", "legacy", "tasks", "get", "no-such-task"])
      assert.strictEqual(unknown.code, 6, unknown.stderr)
      // against the modern era, tasks list shows the tasks conduit keeps for that server (none left now)
      const modernList = yield* Cli.run(["--url", url, "--era", "modern", "tasks", "list"])
      assert.strictEqual(modernList.code, 0, modernList.stderr)
      assert.strictEqual(modernList.stdout, "(no tasks)\n")
      assert.include(modernList.stderr, "the server does not list its tasks")
    }), 180_000)
})
