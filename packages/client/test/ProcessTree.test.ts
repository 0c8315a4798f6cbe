/**
 * The walk over a listing that finds a stdio server's descendants: parent links followed to any depth, the members
 * of the server's session, and no process whose pid was given to another since it was seen.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import { spawn } from "node:child_process"
import * as ProcessTree from "../src/internal/processTree.js"

const entry = (pid: number, ppid: number, start = "s", session?: number): ProcessTree.Entry => ({
  pid,
  ppid,
  session,
  start,
  zombie: false
})

describe("ProcessTree", () => {
  it("reads /proc/<pid>/stat, whatever the command's name holds, and ps lines", () => {
    const stat = "4242 (a) b (c) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10"
    assert.deepStrictEqual(ProcessTree.parseStat(stat), {
      pid: 4242,
      ppid: 17,
      session: 4242,
      start: "987654",
      zombie: false
    })
    assert.isTrue(ProcessTree.parseStat(stat.replace(") S ", ") Z "))?.zombie)
    assert.isUndefined(ProcessTree.parseStat("garbage"))
    assert.deepStrictEqual(ProcessTree.parsePs("  12   1 Sun Dec  6 05:09:57 2026\nnot a line\n13 12 Mon Dec  7 01:00:00 2026\n"), [
      { pid: 12, ppid: 1, session: undefined, start: "Sun Dec  6 05:09:57 2026", zombie: false },
      { pid: 13, ppid: 12, session: undefined, start: "Mon Dec  7 01:00:00 2026", zombie: false }
    ])
  })

  it("follows parent links from the root, from processes seen before, and takes the root's session", () => {
    // 100 is the server; 101 its child; 200 was its child (re-parented to 1 since); 201 a child of 200; 300 left
    // the tree but stayed in the server's session; 400 is unrelated
    const entries = [
      entry(1, 0),
      entry(100, 1, "r", 100),
      entry(101, 100),
      entry(102, 101),
      entry(200, 1, "a"),
      entry(201, 200),
      entry(300, 1, "s", 100),
      entry(400, 1)
    ]
    const found = ProcessTree.walk(entries, 100, "r", new Map([[200, "a"]]), true)
    assert.deepStrictEqual([...found.keys()].sort(), [101, 102, 200, 201, 300])
    assert.deepStrictEqual([...ProcessTree.walk(entries, 100, "r", new Map(), false).keys()].sort(), [101, 102])
  })

  it("leaves alone a process whose pid now belongs to another, and the children of a root it cannot vouch for", () => {
    const entries = [entry(100, 1, "later"), entry(101, 100), entry(200, 1, "later"), entry(201, 200)]
    // the root and 200 were seen with other start times: the processes now holding their pids are someone else's
    assert.deepStrictEqual([...ProcessTree.walk(entries, 100, "r", new Map([[200, "a"]]), false).keys()], [])
    // a root seen without a start time is not walked either
    assert.deepStrictEqual([...ProcessTree.walk(entries, 100, undefined, new Map(), false).keys()], [])
  })

  it.live.skipIf(process.platform !== "linux")(
    "each listing finds a child that left this process's group and session, with its start time",
    () =>
      Effect.gen(function*() {
        const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { detached: true, stdio: "ignore" })
        yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
        const pid = child.pid ?? 0
        const fs = yield* FileSystem.FileSystem
        const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
        const listers = [ProcessTree.procWalk(fs), ProcessTree.procScan(fs), ProcessTree.psLister(spawner)]
        for (const list of listers) {
          const entries = Option.getOrThrow(yield* list([process.pid]))
          const self = entries.find((entry) => entry.pid === process.pid)
          assert.isDefined(self)
          const found = ProcessTree.walk(entries, process.pid, self?.start, new Map(), false)
          assert.isTrue(found.has(pid), `child ${pid} not found`)
        }
      }).pipe(Effect.scoped, Effect.provide(NodeServices.layer))
  )
})
