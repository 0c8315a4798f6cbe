/**
 * Runs the `conduit` binary as a child process, the way a user does, and collects what it prints.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Fs from "node:fs"
import * as Module from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"

const require = Module.createRequire(import.meta.url)

/** The repository root: this file is `<root>/packages/cli/test/utils/cli.ts`. */
export const repositoryRoot = Url.fileURLToPath(new URL("../../../../", import.meta.url))

/** `packages/cli/bin/conduit.mjs`, what `npm start` runs. */
export const bin = Path.join(repositoryRoot, "packages", "cli", "bin", "conduit.mjs")

export const node = process.execPath

/** The command line that starts the demo server over stdio, for `--stdio`. */
export const demoServerCommand = (era: "auto" | "legacy" | "modern" = "auto") =>
  `${node} ${bin} demo-server --stdio${era === "auto" ? "" : ` --era ${era}`}`

/** `@modelcontextprotocol/server-everything` over stdio. */
export const everythingCommand = `${node} ${
  Path.join(Path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist", "index.js")
} stdio`

export interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export interface RunOptions {
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly cwd?: string | undefined
  /** What the process reads on stdin (then its end); an open pipe that is never written otherwise. */
  readonly stdin?: string | undefined
}

/**
 * The state directory of the runs of this test file (`$XDG_STATE_HOME`, where conduit keeps its tasks and its
 * history): never the user's own; removed when the tests end.
 */
export const stateHome = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-state-"))
process.on("exit", () => Fs.rmSync(stateHome, { recursive: true, force: true }))

const baseEnv = (env: Readonly<Record<string, string>> | undefined) => ({
  // no colors, whatever the test runner's terminal is
  NO_COLOR: "1",
  XDG_STATE_HOME: stateHome,
  ...env
})

const collect = (stream: Stream.Stream<Uint8Array, unknown>, into: SubscriptionRef.SubscriptionRef<string>) =>
  stream.pipe(
    Stream.decodeText(),
    Stream.runForEach((text) => SubscriptionRef.update(into, (all) => all + text)),
    Effect.orDie
  )

/** A running `conduit`: what it printed so far, and the means to signal it. */
export interface Running {
  readonly stdout: SubscriptionRef.SubscriptionRef<string>
  readonly stderr: SubscriptionRef.SubscriptionRef<string>
  /** Waits until stderr contains `text`. */
  readonly awaitStderr: (text: string) => Effect.Effect<void>
  readonly signal: (signal: NodeJS.Signals) => Effect.Effect<void>
  readonly result: Effect.Effect<Result>
}

/** Starts `conduit <args>`; the process is killed if still running when the Scope closes. */
export const start = (
  args: ReadonlyArray<string>,
  options: RunOptions = {}
): Effect.Effect<Running, never, Scope.Scope | ChildProcessSpawner.ChildProcessSpawner> =>
  Effect.gen(function*() {
    const command = ChildProcess.make(node, [bin, ...args], {
      // the test's variables over the runner's own environment
      env: baseEnv(options.env),
      extendEnv: true,
      stdin: options.stdin !== undefined ? Stream.make(new TextEncoder().encode(options.stdin)) : "pipe",
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {})
    })
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const process = yield* spawner.spawn(command).pipe(Effect.orDie)
    const stdout = yield* SubscriptionRef.make("")
    const stderr = yield* SubscriptionRef.make("")
    const readers = yield* Effect.all([collect(process.stdout, stdout), collect(process.stderr, stderr)], {
      concurrency: 2
    }).pipe(Effect.forkScoped)
    return {
      stdout,
      stderr,
      awaitStderr: (text) =>
        SubscriptionRef.changes(stderr).pipe(Stream.filter((all) => all.includes(text)), Stream.take(1), Stream.runDrain),
      // the signal alone, to the process group, as a terminal sends it (the handle's kill also waits for the end)
      signal: (signal) => Effect.sync(() => globalThis.process.kill(-process.pid, signal)),
      result: Effect.gen(function*() {
        const code = Number(yield* Effect.orDie(process.exitCode))
        yield* Fiber.join(readers)
        return { code, stdout: yield* SubscriptionRef.get(stdout), stderr: yield* SubscriptionRef.get(stderr) }
      })
    }
  })

/** Runs `conduit <args>` to the end. */
export const run = (
  args: ReadonlyArray<string>,
  options: RunOptions = {}
): Effect.Effect<Result, never, ChildProcessSpawner.ChildProcessSpawner> =>
  Effect.scoped(Effect.flatMap(start(args, options), (running) => running.result))

/** Runs several invocations in parallel (each is a separate process). */
export const runAll = (
  invocations: ReadonlyArray<ReadonlyArray<string>>,
  options: RunOptions = {}
): Effect.Effect<ReadonlyArray<Result>, never, ChildProcessSpawner.ChildProcessSpawner> =>
  Effect.forEach(invocations, (args) => run(args, options), { concurrency: 2 })

/** Parses the JSON a `--json` run printed, failing the test on anything else on stdout. */
export const parseJson = (result: Result): unknown => JSON.parse(result.stdout)

export const layer = NodeServices.layer
