/**
 * The stdio transport's body: its options checked, the child process, the reader of its stdout, the drain of its
 * stderr, the writer of its stdin, and the bounded shutdown.
 *
 * @internal
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as PlatformError from "effect/PlatformError"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as PubSub from "effect/PubSub"
import * as Pull from "effect/Pull"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as McpError from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"
import type * as StdioTransport from "../StdioTransport.js"
import * as Transport from "../Transport.js"
import * as codec from "./codec.js"
import * as lineDecoder from "./lineDecoder.js"
import { madeOnUse } from "./madeOnUse.js"
import * as ProcessTree from "./processTree.js"
import { printable } from "./printable.js"
import * as StdioIdentity from "./stdioIdentity.js"

/** The parent's variables a `"minimal"` environment keeps (re-exported by `StdioTransport`). */
export const minimalEnvironment: ReadonlyArray<string> = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TMPDIR",
  "TZ",
  "SystemRoot",
  "SystemDrive",
  "ComSpec",
  "PATHEXT",
  "windir",
  "TEMP",
  "TMP",
  "USERNAME",
  "USERPROFILE",
  "APPDATA",
  "LOCALAPPDATA",
  "HOMEDRIVE",
  "HOMEPATH",
  "ProgramFiles",
  "PROCESSOR_ARCHITECTURE"
]

const defaults = {
  maxFrameBytes: 64 * 1024 * 1024,
  maxFrameDepth: codec.defaultLimits.maxDepth,
  maxFrameValues: codec.defaultLimits.maxValues,
  maxRefusedFrames: codec.defaultMaxRefusedFrames,
  stderrTailLines: 50,
  closeTimeout: Duration.seconds(2),
  termTimeout: Duration.seconds(2)
}

/** The options after their checks, every default filled in. */
export interface Resolved {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string | undefined
  readonly env: Readonly<Record<string, string>>
  readonly envPolicy: StdioTransport.EnvPolicy
  readonly maxFrameBytes: number
  readonly limits: codec.FrameLimits
  readonly maxRefusedFrames: number
  readonly stderrTailLines: number
  readonly closeTimeout: Duration.Duration
  readonly termTimeout: Duration.Duration
}

const invalid = (option: string, detail: string) => Result.fail(new McpError.InvalidOption({ option, detail }))

const isPositiveInteger = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n > 0

const duration = (
  option: string,
  input: Duration.Input | undefined,
  fallback: Duration.Duration
): Result.Result<Duration.Duration, McpError.InvalidOption> => {
  if (input === undefined) return Result.succeed(fallback)
  // Duration would read NaN and negative numbers as zero
  if ((typeof input === "number" || typeof input === "bigint") && !(input >= 0)) {
    return invalid(option, "must be a non-negative duration")
  }
  const decoded = Duration.fromInput(input)
  if (Option.isNone(decoded)) return invalid(option, "not a duration")
  if (!Duration.isFinite(decoded.value)) return invalid(option, "must be finite")
  return Result.succeed(decoded.value)
}

/** The options checked, with their defaults: an invalid one fails with `InvalidOption`. */
export const resolve = (
  options: StdioTransport.StdioTransportOptions
): Result.Result<Resolved, McpError.InvalidOption> => {
  // The options may come from Config or from untyped callers: check shapes as well as values.
  const { command } = options
  if (typeof command !== "string" || command.length === 0) return invalid("command", "must be a non-empty string")
  if (command.includes("\u0000")) return invalid("command", "must not contain NUL")
  const args = options.args ?? []
  if (!Array.isArray(args) || !args.every((arg) => typeof arg === "string" && !arg.includes("\u0000"))) {
    return invalid("args", "must be an array of strings without NUL")
  }
  const cwd = options.cwd
  if (cwd !== undefined && (typeof cwd !== "string" || cwd.length === 0)) {
    return invalid("cwd", "must be a non-empty string")
  }
  const env = options.env ?? {}
  if (typeof env !== "object" || env === null || Array.isArray(env)) return invalid("env", "must be a record")
  for (const [key, value] of Object.entries(env)) {
    if (key.length === 0 || key.includes("=") || key.includes("\u0000")) {
      return invalid("env", `invalid variable name ${JSON.stringify(key)}`)
    }
    if (typeof value !== "string" || value.includes("\u0000")) {
      return invalid("env", `the value of ${key} must be a string without NUL`)
    }
  }
  const envPolicy = options.envPolicy ?? "minimal"
  if (envPolicy !== "inherit" && envPolicy !== "minimal" && envPolicy !== "custom") {
    return invalid("envPolicy", `must be "inherit", "minimal" or "custom"`)
  }
  const maxFrameBytes = options.maxFrameBytes ?? defaults.maxFrameBytes
  if (!isPositiveInteger(maxFrameBytes)) return invalid("maxFrameBytes", "must be a positive integer")
  const maxFrameDepth = options.maxFrameDepth ?? defaults.maxFrameDepth
  if (!isPositiveInteger(maxFrameDepth)) return invalid("maxFrameDepth", "must be a positive integer")
  const maxFrameValues = options.maxFrameValues ?? defaults.maxFrameValues
  if (!isPositiveInteger(maxFrameValues)) return invalid("maxFrameValues", "must be a positive integer")
  const maxRefusedFrames = options.maxRefusedFrames ?? defaults.maxRefusedFrames
  if (!isPositiveInteger(maxRefusedFrames)) return invalid("maxRefusedFrames", "must be a positive integer")
  const stderrTailLines = options.stderrTailLines ?? defaults.stderrTailLines
  if (!(stderrTailLines === 0 || isPositiveInteger(stderrTailLines))) {
    return invalid("stderrTailLines", "must be a non-negative integer")
  }
  return Result.flatMap(
    Result.all([
      duration("closeTimeout", options.closeTimeout, defaults.closeTimeout),
      duration("termTimeout", options.termTimeout, defaults.termTimeout)
    ]),
    ([closeTimeout, termTimeout]) =>
      Result.succeed({
        command,
        args,
        cwd,
        env,
        envPolicy,
        maxFrameBytes,
        limits: { maxDepth: maxFrameDepth, maxValues: maxFrameValues },
        maxRefusedFrames,
        stderrTailLines,
        closeTimeout,
        termTimeout
      })
  )
}

/** A word of the command line as a shell would need it, for messages. */
export const quote = (word: string): string => /^[\w@%+=:,./-]+$/.test(word) ? word : JSON.stringify(word)

const readMinimalEnvironment: Effect.Effect<Record<string, string>> = Effect.map(
  Effect.forEach(minimalEnvironment, (name) =>
    Effect.map(Effect.option(Config.String(name)), Option.map((value) => [name, value] as const))),
  (entries) => Object.fromEntries(entries.flatMap(Option.toArray))
)

/**
 * The command the options describe, its environment after the policy. Released by its Scope while it still runs
 * (the shutdown below is bounded step by step; this bounds the spawner's own release), the child's process group
 * gets SIGTERM, then SIGKILL after `termTimeout`.
 */
export const buildCommand = (options: Resolved): Effect.Effect<ChildProcess.StandardCommand> =>
  Effect.gen(function*() {
    const env = options.envPolicy === "minimal"
      ? { ...(yield* readMinimalEnvironment), ...options.env }
      : { ...options.env }
    return ChildProcess.make(options.command, options.args, {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      env,
      extendEnv: options.envPolicy === "inherit",
      killSignal: "SIGTERM",
      forceKillAfter: options.termTimeout
    })
  })

// How long the end of stdout, the end of stderr and the exit of the child may trail each other before the
// connection reports the close with what it has.
/**
 * What the client reads of this transport: a stream to a child (the default probe rules: silence means a legacy
 * server, a child that quits over the probe is started again), and a send that writes a line and nothing else (no
 * span, no trace context of its own).
 */
const traits: Transport.Traits = { untracedSend: true }

const exitGrace = Duration.seconds(1)
// Bound of the steps after SIGKILL, and of sending `notifications/cancelled`.
const killTimeout = Duration.seconds(1)
const cancelTimeout = Duration.seconds(1)
const stderrLineBytes = 16 * 1024
const stderrHubCapacity = 1024
const outboxCapacity = 256

interface Ring {
  readonly push: (line: string) => void
  readonly snapshot: () => ReadonlyArray<string>
}

const makeRing = (capacity: number): Ring => {
  const lines: Array<string> = []
  return {
    push: (line) => {
      if (capacity === 0) return
      lines.push(line)
      if (lines.length > capacity) lines.shift()
    },
    snapshot: () => lines.slice()
  }
}

const emptyRing = makeRing(0)

const cancelReason = (reason: Transport.CancelReason): string =>
  reason === "timeout" ? "Request timed out" : "Request cancelled by the client"

const encoder = new TextEncoder()

/** The body of `StdioTransport.make`: the transport and the process diagnostics service. */
export const make = (options: StdioTransport.StdioTransportOptions): ReturnType<typeof StdioTransport.make> =>
  Effect.gen(function*() {
    const resolved = yield* Effect.fromResult(resolve(options))
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const listProcesses = yield* ProcessTree.makeLister(spawner)
    // The stderr hub is made by the first subscription: a subscriber only sees the lines written after it
    // subscribed anyway, so until then nothing is published, and a server nobody watches holds no hub (its ring of
    // 1 024 slots is the largest piece of a connection's heap Conduit chooses). It is shut down with the layer; one
    // made after that is shut down at once.
    const stderrHub = yield* madeOnUse(
      Effect.acquireRelease(PubSub.sliding<string>(stderrHubCapacity), PubSub.shutdown)
    )
    const currentTail = yield* Ref.make<Ring>(emptyRing)
    const target = [resolved.command, ...resolved.args].map(quote).join(" ")

    const publishStderr = (tail: Ring) => (lines: ReadonlyArray<string>): Effect.Effect<void> => {
      for (const line of lines) tail.push(line)
      return stderrHub.ifMade(
        (hub) =>
          Effect.sync(() => {
            // (a sliding hub takes every line; once shut down, nobody is listening)
            for (const line of lines) if (!PubSub.isShutdownUnsafe(hub)) PubSub.publishUnsafe(hub, line)
          }),
        undefined
      )
    }

    // Close stdin, wait; SIGTERM the process group, wait; SIGKILL it; then the descendants that left the group
    // (SIGTERM, SIGKILL after `termTimeout`). Every step is bounded, and interruptible inside this finalizer, so a
    // plain timeout fires.
    const bounded = <A, E>(self: Effect.Effect<A, E>, timeout: Duration.Duration) =>
      Effect.timeoutOption(Effect.interruptible(Effect.exit(self)), timeout)
    // Signals the child's process group, then waits (bounded) for the child itself. Not the spawner's `kill`: that
    // also waits for every member of the group to be gone, and an unreaped zombie (no init reaping in a container)
    // would hold each step for its whole bound. On Windows `kill` is `taskkill /T`, which waits for the child only.
    const signalGroup = (
      proc: ChildProcessSpawner.ChildProcessHandle,
      killSignal: "SIGTERM" | "SIGKILL",
      timeout: Duration.Duration
    ) =>
      globalThis.process.platform === "win32"
        ? bounded(proc.kill({ killSignal }), timeout)
        : Effect.andThen(
          Effect.sync(() => {
            try {
              globalThis.process.kill(-proc.pid, killSignal)
            } catch {
              // the group is gone
            }
          }),
          bounded(proc.exitCode, timeout)
        )
    const shutdown = (
      proc: ChildProcessSpawner.ChildProcessHandle,
      closed: Deferred.Deferred<McpError.TransportError>,
      onClosed: () => void,
      outbox: Queue.Queue<string, Cause.Done>,
      processScope: Scope.Closeable
    ) =>
      Effect.gen(function*() {
        const isRunning = Effect.orElseSucceed(proc.isRunning, () => true)
        const first = yield* Deferred.succeed(
          closed,
          // the fields are this module's own: the schema's check on construction (~40 µs a close) is skipped
          new McpError.TransportError(
            { transport: "stdio", reason: "Closed", detail: "the connection was closed" },
            { disableChecks: true }
          )
        )
        if (first) onClosed()
        // the server's descendants while it still runs: one that left its process group and is re-parented when
        // the server exits is still found by its pid and start time
        const before = (yield* isRunning)
          ? Option.flatMap(
            yield* bounded(ProcessTree.snapshot(listProcesses, proc.pid), killTimeout),
            (exit) => Exit.isSuccess(exit) ? exit.value : Option.none()
          )
          : Option.none()
        yield* Queue.end(outbox)
        if (Option.isNone(yield* bounded(proc.exitCode, resolved.closeTimeout))) {
          yield* Effect.logDebug("the server did not exit after its stdin closed: sending SIGTERM")
          yield* signalGroup(proc, "SIGTERM", resolved.termTimeout)
          if (yield* isRunning) {
            yield* Effect.logDebug("the server did not exit after SIGTERM: sending SIGKILL")
            yield* signalGroup(proc, "SIGKILL", killTimeout)
          }
        }
        // The server is gone; what it started in its process group must not outlive it, nor what it started
        // elsewhere (a new session, a detached child).
        yield* signalGroup(proc, "SIGKILL", killTimeout)
        const ended = yield* bounded(
          ProcessTree.terminate(listProcesses, proc.pid, before, resolved.termTimeout),
          Duration.sum(resolved.termTimeout, Duration.times(killTimeout, 2))
        )
        const descendants = Option.isSome(ended) && Exit.isSuccess(ended.value) ? ended.value.value : 0
        if (descendants > 0) {
          yield* Effect.logDebug(`signalled ${descendants} descendant(s) of the server that outlived its process group`)
        }
        // The spawner's release signals the group again and waits for all of it, zombies included: the group was
        // dealt with above, so it is told the child is no longer held (after an exit by a signal or with code 0,
        // its release then does nothing). In a fiber of its own: the bound stops the wait, not the release.
        yield* bounded(proc.unref, killTimeout)
        yield* bounded(Effect.flatMap(Effect.forkDetach(Scope.close(processScope, Exit.void)), Fiber.join), killTimeout)
      }).pipe(Effect.annotateLogs({ module: "StdioTransport", method: "close", pid: proc.pid }))

    const connect = (emit: Transport.Emit, connectOptions?: Transport.ConnectOptions) =>
      Effect.gen(function*() {
        const unsafeEmit = connectOptions?.deliver
        const callerScope = yield* Effect.scope
        // Our own sequential scopes: closing `scope` runs the shutdown finalizer, then interrupts the fibers
        // (in `fibers`, so stderr keeps draining during shutdown), then runs the spawner's own release (in
        // `processScope`), which waits for the exit of the child's process group (up to `termTimeout` and a SIGKILL).
        const scope = yield* Scope.fork(callerScope, "sequential")
        const processScope = yield* Scope.fork(scope, "sequential")
        const fibers = yield* Scope.fork(scope, "sequential")
        const tail = makeRing(resolved.stderrTailLines)
        yield* Ref.set(currentTail, tail)

        // Completed once: by the first failure of the connection, or by the caller closing it.
        const closed = yield* Deferred.make<McpError.TransportError>()
        // Set when `closed` is completed: nothing read after that is delivered.
        let isClosed = false
        const onClosed = () => {
          isClosed = true
        }
        const outbox = yield* Queue.bounded<string, Cause.Done>(outboxCapacity)
        // what was queued is dropped and the writer ends (closing the child's stdin); later offers are refused
        const discardOutbox = Effect.sync(() => {
          Queue.endUnsafe(outbox)
          Queue.shutdownUnsafe(outbox)
        })
        const stdoutDone = yield* Deferred.make<void>()
        const stderrDone = yield* Deferred.make<void>()

        const command = yield* buildCommand(resolved)
        // what the child is made of, as it is started: the partition of its private cached results
        const identity = yield* StdioIdentity.partitionOf(command)
        const proc = yield* spawner.spawn(command).pipe(
          Scope.provide(processScope),
          Effect.tap((proc) => Scope.addFinalizer(scope, shutdown(proc, closed, onClosed, outbox, processScope))),
          Effect.uninterruptible,
          Effect.mapError((cause) =>
            new McpError.TransportError({
              transport: "stdio",
              reason: "Spawn",
              detail: `${target}: ${cause.message}`,
              stderr: tail.snapshot(),
              cause
            })
          )
        )

        const closeWith = (error: McpError.TransportError) =>
          Effect.flatMap(Deferred.succeed(closed, error), (first) => {
            if (!first) return Effect.void
            onClosed()
            return Effect.andThen(discardOutbox, emit(Transport.TransportEvent.Closed({ error })))
          })

        const drop = (reason: string) => Effect.logWarning(printable(`dropped a line from the server: ${reason}`))
        // the lines the server may send that are dropped (see `maxRefusedFrames`)
        const clock = yield* Clock.Clock
        const refused = codec.refusedFrames(resolved.maxRefusedFrames, () => clock.currentTimeMillisUnsafe())
        // The lines read in one chunk, in order: each line's invalid parts are logged, then its messages emitted,
        // one after the other, as long as the connection is open. What can be handled at once (answers to pending
        // requests, the usual lines) is handled when called; the first item that needs an effect (a log, a message
        // to route) is returned as one, with the rest after it. `Effect.void`: all was handled. A line refused past
        // the budget of refused lines fails the reading with the error that closes the connection, after the items
        // before it; the lines after it are not decoded.
        const deliver = (lines: ReadonlyArray<string>): Effect.Effect<void, McpError.TransportError> => {
          const items: Array<Transport.TransportEvent | string> = []
          let spent: McpError.TransportError | undefined
          for (const line of lines) {
            const frame = codec.decodeFrame(line, resolved.limits)
            for (const reason of frame.invalid) items.push(reason)
            for (const message of frame.messages) items.push(codec.toEvent(message))
            if (frame.invalid.length > 0 && !refused.charge()) {
              spent = codec.tooManyRefusedFrames("stdio", resolved.maxRefusedFrames, frame.invalid[0]!)
              break
            }
          }
          let index = 0
          const rest = (): Effect.Effect<void, McpError.TransportError> => {
            while (index < items.length) {
              const item = items[index++]
              if (typeof item === "string") return Effect.andThen(drop(item), Effect.suspend(rest))
              if (isClosed) continue
              if (unsafeEmit?.(item) !== true) return Effect.andThen(emit(item), Effect.suspend(rest))
            }
            return spent === undefined ? Effect.void : Effect.fail(spent)
          }
          return rest()
        }

        // stdout: frames to events
        const frames = lineDecoder.make({ maxLineBytes: resolved.maxFrameBytes, overflow: "fail" })
        const frameTooLarge = (size: number) =>
          new McpError.TransportError({
            transport: "stdio",
            reason: "FrameTooLarge",
            detail: `a message of at least ${size} bytes exceeds maxFrameBytes (${resolved.maxFrameBytes})`
          })
        const onResult = (result: lineDecoder.PushResult) =>
          result._tag === "Lines"
            ? deliver(result.lines)
            : Effect.andThen(deliver(result.lines), Effect.fail(frameTooLarge(result.size)))
        // the buffers read at once: their lines go out together
        const onChunk = (chunk: Arr.NonEmptyReadonlyArray<Uint8Array>): Effect.Effect<void, McpError.TransportError> => {
          if (chunk.length === 1) return onResult(frames.push(chunk[0]))
          const lines: Array<string> = []
          for (const bytes of chunk) {
            const result = frames.push(bytes)
            for (const line of result.lines) lines.push(line)
            if (result._tag === "Overflow") {
              return Effect.andThen(deliver(lines), Effect.fail(frameTooLarge(result.size)))
            }
          }
          return deliver(lines)
        }
        // (pulled chunk by chunk: no sink between the platform's stream and the frames; the end of stdout ends the
        // loop, caught before the other failures)
        const readAll = Effect.flatMap(Stream.toPull(proc.stdout), (pull) => {
          const loop: Effect.Effect<void, McpError.TransportError | PlatformError.PlatformError | Cause.Done> = Effect
            .flatMap(pull, (next) => {
              const delivered = onChunk(next)
              // (all of it handled at once, the usual case: straight on to the next chunk)
              return delivered === Effect.void ? loop : Effect.andThen(delivered, loop)
            })
          return Pull.catchDone(loop, () => Effect.void)
        })
        yield* Effect.scoped(readAll).pipe(
          Effect.mapError((error) =>
            error._tag === "TransportError"
              ? error
              : new McpError.TransportError({ transport: "stdio", reason: "Read", detail: error.message, cause: error })
          ),
          Effect.andThen(Effect.suspend(() => onResult(frames.end()))),
          Effect.catchCause((cause) =>
            Option.match(Cause.findErrorOption(cause), {
              // a defect (a bug in delivering what was read) closes the connection, which fails what is pending,
              // rather than ending the reading in silence
              onNone: () =>
                Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.andThen(
                  Effect.logError("reading the server's output failed unexpectedly", cause),
                  closeWith(
                    new McpError.TransportError({
                      transport: "stdio",
                      reason: "Read",
                      detail: "reading the server's output failed unexpectedly",
                      cause: Cause.squash(cause)
                    })
                  )
                ),
              onSome: closeWith
            })
          ),
          Effect.ensuring(Deferred.succeed(stdoutDone, undefined)),
          Effect.annotateLogs({ module: "StdioTransport", method: "read", pid: proc.pid }),
          Effect.interruptible,
          Effect.forkIn(fibers)
        )

        // stderr: always drained, so the child never blocks on a full pipe
        const stderrLines = lineDecoder.make({ maxLineBytes: stderrLineBytes, overflow: "truncate" })
        const onStderr = publishStderr(tail)
        yield* proc.stderr.pipe(
          Stream.runForEach((chunk) => Effect.suspend(() => onStderr(stderrLines.push(chunk).lines))),
          Effect.andThen(Effect.suspend(() => onStderr(stderrLines.end().lines))),
          Effect.catch((cause) => Effect.logDebug(printable(`stderr of the server failed: ${cause.message}`))),
          Effect.ensuring(Deferred.succeed(stderrDone, undefined)),
          Effect.annotateLogs({ module: "StdioTransport", method: "stderr", pid: proc.pid }),
          Effect.interruptible,
          Effect.forkIn(fibers)
        )

        // stdin: one writer, so lines never interleave
        // the lines queued since the last write go out as one buffer: one write instead of one per message (the
        // queue's stream gives every line waiting as one array); the end of the outbox closes the child's stdin
        yield* Stream.fromQueue(outbox).pipe(
          Stream.mapArray((lines) => [encoder.encode(lines.join(""))]),
          Stream.run(proc.stdin),
          Effect.catch((cause) =>
            Effect.logDebug(printable(`writing to the server failed: ${cause.message}`)).pipe(
              // an exit usually explains a broken pipe better: give the exit monitor the first word
              Effect.andThen(Effect.sleep(exitGrace)),
              Effect.andThen(
                closeWith(
                  new McpError.TransportError({
                    transport: "stdio",
                    reason: "Write",
                    detail: cause.message,
                    stderr: tail.snapshot(),
                    cause
                  })
                )
              )
            )
          ),
          Effect.annotateLogs({ module: "StdioTransport", method: "write", pid: proc.pid }),
          Effect.interruptible,
          Effect.forkIn(fibers)
        )

        // the end of stdout or the exit of the child closes the connection
        const exitOf = Effect.exit(proc.exitCode)
        const isRunning = Effect.orElseSucceed(proc.isRunning, () => true)
        yield* Effect.gen(function*() {
          yield* Effect.raceFirst(Deferred.await(stdoutDone), exitOf)
          yield* Effect.all([Deferred.await(stdoutDone), Deferred.await(stderrDone), exitOf], {
            concurrency: "unbounded",
            discard: true
          }).pipe(Effect.timeoutOption(exitGrace))
          const running = yield* isRunning
          const exit = running ? undefined : yield* exitOf
          const exitCode = exit === undefined ? undefined : Exit.isSuccess(exit) ? exit.value : null
          const detail = exitCode === undefined
            ? "the server closed its stdout"
            : exitCode === null
            ? "the server was terminated by a signal"
            : `the server exited with code ${exitCode}`
          yield* closeWith(
            new McpError.TransportError({
              transport: "stdio",
              reason: "Exited",
              detail,
              ...(exitCode === undefined ? {} : { exitCode }),
              stderr: tail.snapshot()
            })
          )
        }).pipe(Effect.interruptible, Effect.forkIn(fibers))

        const offer = (line: string): Effect.Effect<void, McpError.TransportError> =>
          Effect.flatMap(Queue.offer(outbox, line), (accepted) =>
            accepted ? Effect.void : Effect.flatMap(Deferred.await(closed), (reason) =>
              Effect.fail(
                new McpError.TransportError({
                  transport: "stdio",
                  reason: "Closed",
                  detail: reason.message,
                  cause: reason
                })
              )))
        // queued at once when the outbox has room (the usual case), else through the waiting offer
        const send = (message: McpSchema.JsonRpcMessage): Effect.Effect<void, McpError.TransportError> =>
          Effect.suspend(() => {
            const line = `${codec.encode(message)}\n`
            return Queue.offerUnsafe(outbox, line) ? Effect.void : offer(line)
          })

        const era = yield* Ref.make<McpSchema.Era | undefined>(undefined)

        const connection: Transport.TransportConnection = {
          info: { binding: "stdio", target, pid: proc.pid },
          request: (message) => send(message),
          notify: send,
          respond: send,
          // interruptible: callers run this in release steps, where a plain timeout would not fire
          cancel: (id, reason) =>
            send({
              jsonrpc: "2.0",
              method: "notifications/cancelled",
              params: { requestId: id, reason: cancelReason(reason) }
            }).pipe(Effect.interruptible, Effect.timeout(cancelTimeout), Effect.ignore),
          setSession: (session) => Ref.set(era, session.era),
          partition: identity,
          trySend: (message) => {
            let line: string
            try {
              line = `${codec.encode(message)}\n`
            } catch {
              // (a value JSON cannot hold: `request` fails the call with it)
              return false
            }
            return Queue.offerUnsafe(outbox, line)
          }
        }
        return connection
      }).pipe(
        Effect.withSpan("StdioTransport.connect", {
          attributes: { "mcp.transport": "stdio", "process.command": resolved.command }
        })
      )

    return {
      transport: { kind: "stdio", connect, traits },
      process: {
        stderr: Stream.unwrap(Effect.map(stderrHub.use, (hub) => Stream.fromPubSub(hub))),
        stderrTail: Effect.map(Ref.get(currentTail), (ring) => ring.snapshot())
      }
    }
  })
