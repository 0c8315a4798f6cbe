/**
 * The descendants of a stdio server, found and ended when its connection closes. Killing the server's process group
 * misses a child that left it (a new session with `setsid`, `detached: true` in Node, a daemon): this module finds
 * those by their parent links. On Linux it reads `/proc` (through the platform's `FileSystem`, when the application
 * provides one): from the server down through `/proc/<pid>/task/<tid>/children`, so the cost follows the size of
 * the tree, not of the machine, or, on a kernel without those files, every `/proc/<pid>/stat`. Where `/proc` is
 * absent (macOS, the BSDs) it runs `ps -A -o pid=,ppid=,lstart=`; on Windows it does nothing (the spawner's
 * `taskkill /T` ends the tree there).
 *
 * A snapshot taken while the server still runs keeps its descendants by pid and start time, so one re-parented to
 * init when the server exits is still found; a process whose start time no longer matches (its pid reused) is left
 * alone. Where the listing holds session ids (a whole `/proc` scan), the members of the server's session (the
 * spawner makes the server a session leader) are included too, wherever their parent links lead. Every step is
 * bounded: a listing by time, entries and bytes, the walk by a number of rounds.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as ChildProcess from "effect/process/ChildProcess"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Stream from "effect/Stream"

/** One process of a listing. `start` tells a process from a later one given the same pid. */
export interface Entry {
  readonly pid: number
  readonly ppid: number
  /** The session id, where the listing knows it (Linux). */
  readonly session: number | undefined
  readonly start: string
  /** Exited but not yet reaped: nothing to signal. */
  readonly zombie: boolean
}

/** Processes by pid, each with its start time when it was seen. */
export type Members = ReadonlyMap<number, string>

/**
 * Lists at least the given processes and their descendants (a whole listing of the machine will do), or nothing
 * where that cannot be done.
 */
export type Lister = (roots: ReadonlyArray<number>) => Effect.Effect<Option.Option<ReadonlyArray<Entry>>>

// Bounds of one listing, and of the walk.
const listTimeout = Duration.seconds(1)
const maxEntries = 200_000
const maxPsBytes = 16 * 1024 * 1024
const maxRounds = 8
const pollInterval = Duration.millis(10)

/** Reads one line of `/proc/<pid>/stat`: the command name is in parentheses and may hold anything. */
export const parseStat = (text: string): Entry | undefined => {
  const close = text.lastIndexOf(")")
  const open = text.indexOf("(")
  if (open < 0 || close < open) return undefined
  const pid = Number(text.slice(0, open).trim())
  const fields = text.slice(close + 2).split(" ")
  // fields[0] is field 3 of proc(5): state, ppid, pgrp, session, ... starttime is field 22
  const ppid = Number(fields[1])
  const session = Number(fields[3])
  const start = fields[19]
  if (!Number.isSafeInteger(pid) || !Number.isSafeInteger(ppid) || start === undefined) return undefined
  return {
    pid,
    ppid,
    session: Number.isSafeInteger(session) ? session : undefined,
    start,
    zombie: fields[0] === "Z" || fields[0] === "X"
  }
}

/** Reads the output of `ps -A -o pid=,ppid=,lstart=`: the start time is the rest of each line. */
export const parsePs = (text: string): ReadonlyArray<Entry> => {
  const entries: Array<Entry> = []
  for (const line of text.split("\n")) {
    const match = /^\s*(\d+)\s+(\d+)\s+(.*?)\s*$/.exec(line)
    if (match === null) continue
    entries.push({ pid: Number(match[1]), ppid: Number(match[2]), session: undefined, start: match[3], zombie: false })
    if (entries.length >= maxEntries) break
  }
  return entries
}

/** Every process of the machine: one read of `/proc/<pid>/stat` each. */
export const procScan = (fs: FileSystem.FileSystem): Lister => () =>
  Effect.gen(function*() {
    const names = yield* fs.readDirectory("/proc")
    const pids = names.filter((name) => /^\d+$/.test(name)).slice(0, maxEntries)
    const entries = yield* Effect.forEach(
      pids,
      (pid) =>
        fs.readFileString(`/proc/${pid}/stat`).pipe(
          Effect.map(parseStat),
          // gone since the directory was read
          Effect.orElseSucceed(() => undefined)
        ),
      { concurrency: 16 }
    )
    return Option.some(entries.filter((entry): entry is Entry => entry !== undefined))
  }).pipe(Effect.orElseSucceed(() => Option.none()))

// a process and its children, as the children files of its threads list them (nothing when it is gone)
const readProcess = (fs: FileSystem.FileSystem, pid: number) =>
  Effect.gen(function*() {
    const entry = parseStat(yield* fs.readFileString(`/proc/${pid}/stat`))
    if (entry === undefined) return undefined
    const threads = yield* fs.readDirectory(`/proc/${pid}/task`)
    const lists = yield* Effect.forEach(
      threads.filter((name) => /^\d+$/.test(name)),
      (tid) => Effect.orElseSucceed(fs.readFileString(`/proc/${pid}/task/${tid}/children`), () => ""),
      { concurrency: 8 }
    )
    const children = lists.flatMap((list) => list.split(" ").filter((word) => word !== "").map(Number))
    return { entry, children }
  }).pipe(Effect.orElseSucceed(() => undefined))

/** The roots and their descendants, down the children files of their threads. */
export const procWalk = (fs: FileSystem.FileSystem): Lister => (roots) =>
  Effect.gen(function*() {
    const seen = new Map<number, Entry>()
    const visited = new Set<number>()
    let frontier = [...new Set(roots)]
    while (frontier.length > 0 && visited.size < maxEntries) {
      for (const pid of frontier) visited.add(pid)
      const found = yield* Effect.forEach(frontier, (pid) => readProcess(fs, pid), { concurrency: 8 })
      const next = new Set<number>()
      for (const proc of found) {
        if (proc === undefined) continue
        seen.set(proc.entry.pid, proc.entry)
        for (const child of proc.children) if (!visited.has(child)) next.add(child)
      }
      frontier = [...next]
    }
    return Option.some([...seen.values()])
  })

/** Every process of the machine, as `ps` lists them. */
export const psLister = (spawner: ChildProcessSpawner.ChildProcessSpawner["Service"]): Lister => () =>
  Effect.scoped(Effect.gen(function*() {
    const command = ChildProcess.make("ps", ["-A", "-o", "pid=,ppid=,lstart="], {
      env: { LC_ALL: "C" },
      extendEnv: true,
      // (released when the listing is cut short: the spawner's release waits for the exit, bounded by this)
      forceKillAfter: listTimeout
    })
    const proc = yield* spawner.spawn(command)
    let bytes = 0
    const text = yield* proc.stdout.pipe(
      Stream.takeWhile((chunk) => (bytes += chunk.length) <= maxPsBytes),
      Stream.decodeText(),
      Stream.mkString
    )
    const code = yield* proc.exitCode
    return code === 0 ? Option.some(parsePs(text)) : Option.none()
  })).pipe(Effect.orElseSucceed(() => Option.none()))

const platform = (): string | undefined => typeof process === "undefined" ? undefined : process.platform

/**
 * The lister for this machine: `/proc` when it can be read (down the children files where the kernel has them),
 * `ps` elsewhere except on Windows; each listing is bounded by a second.
 */
export const makeLister = (spawner: ChildProcessSpawner.ChildProcessSpawner["Service"]): Effect.Effect<Lister> =>
  Effect.gen(function*() {
    if (typeof process === "undefined" || platform() === "win32") return () => Effect.succeed(Option.none())
    const found = yield* Effect.serviceOption(FileSystem.FileSystem)
    const fs = Option.getOrUndefined(found)
    const exists = (path: string) =>
      fs === undefined ? Effect.succeed(false) : fs.exists(path).pipe(Effect.orElseSucceed(() => false))
    const list: Lister = fs === undefined || !(yield* exists("/proc/self/stat"))
      ? psLister(spawner)
      : (yield* exists("/proc/thread-self/children"))
      ? procWalk(fs)
      : procScan(fs)
    return (roots) =>
      list(roots).pipe(Effect.timeoutOption(listTimeout), Effect.map(Option.flatten))
  })

/**
 * The descendants of `root` (itself excluded) and of `known` in one listing, following parent links until no
 * more are found; with `session`, every member of the session `root` leads. A process of `known` counts only
 * while its start time is unchanged, and the children of `root` only while its start time is `rootStart`.
 */
export const walk = (
  entries: ReadonlyArray<Entry>,
  root: number,
  rootStart: string | undefined,
  known: Members,
  session: boolean
): Map<number, string> => {
  const byPid = new Map<number, Entry>()
  const children = new Map<number, Array<Entry>>()
  for (const entry of entries) {
    byPid.set(entry.pid, entry)
    const siblings = children.get(entry.ppid)
    if (siblings === undefined) children.set(entry.ppid, [entry])
    else siblings.push(entry)
  }
  const self = typeof process === "undefined" ? -1 : process.pid
  const found = new Map<number, string>()
  const queue: Array<number> = []
  const add = (entry: Entry) => {
    if (entry.pid <= 1 || entry.pid === self || entry.pid === root || found.has(entry.pid)) return
    found.set(entry.pid, entry.start)
    queue.push(entry.pid)
  }
  const rootEntry = byPid.get(root)
  // (a root seen without its start time may be a later process given the same pid: its children are not walked)
  if (rootEntry !== undefined && rootStart !== undefined && rootEntry.start === rootStart) queue.push(root)
  for (const [pid, start] of known) {
    const entry = byPid.get(pid)
    if (entry !== undefined && entry.start === start) add(entry)
  }
  if (session) {
    // a session id stays reserved while a member lives: no later process can lead a session of that number
    for (const entry of entries) if (entry.session === root) add(entry)
  }
  while (queue.length > 0) {
    const pid = queue.pop()!
    for (const child of children.get(pid) ?? []) add(child)
  }
  return found
}

const signal = (pid: number, name: "SIGTERM" | "SIGKILL"): void => {
  try {
    process.kill(pid, name)
  } catch {
    // gone already, or not ours to signal
  }
}

/** What a tree looked like while its root still ran: the root's start time and its descendants. */
export interface Snapshot {
  readonly rootStart: string | undefined
  readonly members: Members
}

/** The descendants of `root` now (with the members of its session on Linux). */
export const snapshot = (list: Lister, root: number): Effect.Effect<Option.Option<Snapshot>> =>
  Effect.map(list([root]), Option.map((entries) => {
    const rootStart = entries.find((entry) => entry.pid === root)?.start
    return { rootStart, members: walk(entries, root, rootStart, new Map(), true) }
  }))

/**
 * Ends what is left of the tree of `root`: the descendants seen in `before` and those found now, walking again
 * after each signal until a listing finds no new one. They get SIGTERM, then SIGKILL once `grace` has passed with
 * some still alive. Answers how many processes were signalled.
 */
export const terminate = (
  list: Lister,
  root: number,
  before: Option.Option<Snapshot>,
  grace: Duration.Duration
): Effect.Effect<number> =>
  Effect.gen(function*() {
    const rootStart = Option.isSome(before) ? before.value.rootStart : undefined
    const known = new Map(Option.isSome(before) ? before.value.members : [])
    const listTree = Effect.suspend(() => list([root, ...known.keys()]))
    const alive = (entries: ReadonlyArray<Entry>) => {
      const members = walk(entries, root, rootStart, known, true)
      for (const entry of entries) if (entry.zombie) members.delete(entry.pid)
      return members
    }
    // SIGTERM every member found, again and again while listings find new ones (a process may fork meanwhile)
    const signalled = new Map<number, string>()
    for (let round = 0; round < maxRounds; round++) {
      const entries = yield* listTree
      if (Option.isNone(entries)) break
      const members = alive(entries.value)
      let fresh = 0
      for (const [pid, start] of members) {
        known.set(pid, start)
        if (signalled.get(pid) === start) continue
        signalled.set(pid, start)
        signal(pid, "SIGTERM")
        fresh++
      }
      if (fresh === 0) break
    }
    if (signalled.size === 0) return 0
    // wait for them to go, for at most `grace`
    let left: ReadonlyMap<number, string> = signalled
    yield* Effect.gen(function*() {
      while (left.size > 0) {
        yield* Effect.sleep(pollInterval)
        const entries = yield* listTree
        if (Option.isNone(entries)) return
        left = alive(entries.value)
      }
    }).pipe(Effect.timeoutOption(grace))
    // SIGKILL what is still there, and what appeared since
    for (let round = 0; round < maxRounds && left.size > 0; round++) {
      for (const pid of left.keys()) signal(pid, "SIGKILL")
      const entries = yield* listTree
      if (Option.isNone(entries)) break
      for (const [pid, start] of left) known.set(pid, start)
      left = alive(entries.value)
    }
    return signalled.size
  })
