import * as NodeChildProcessSpawner from "@effect/platform-node/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as McpError from "../src/McpError.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as StdioTransport from "../src/StdioTransport.js"
import * as Transport from "../src/Transport.js"

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/stdio/${name}`, import.meta.url))
const node = process.execPath
const echo = fixture("echo.mjs")

const fast = { closeTimeout: Duration.millis(300), termTimeout: Duration.millis(300) } as const

// A guard against hangs, not a timing assertion.
const within = <A, E, R>(self: Effect.Effect<A, E, R>, what: string) =>
  Effect.timeoutOrElse(self, {
    duration: "15 seconds",
    orElse: () => Effect.fail(new Error(`timed out waiting for ${what}`))
  })

const withStdio = (options: StdioTransport.StdioTransportOptions) =>
<A, E, R>(
  self: Effect.Effect<A, E, R>
) =>
  self.pipe(
    Effect.scoped,
    Effect.provide(StdioTransport.layer(options).pipe(Layer.provide(NodeServices.layer)))
  )

interface Session {
  readonly connection: Transport.TransportConnection
  readonly events: Queue.Queue<Transport.TransportEvent>
}

const open = Effect.gen(function*() {
  const transport = yield* Transport.Transport
  assert.strictEqual(transport.kind, "stdio")
  const events = yield* Queue.unbounded<Transport.TransportEvent>()
  const connection = yield* transport.connect((event) => Queue.offer(events, event).pipe(Effect.asVoid))
  return { connection, events } satisfies Session
})

const nextEvent = (session: Session) => within(Queue.take(session.events), "an event")

// Takes events until one matches; returns it with the ones before it.
const awaitEvent = <B extends Transport.TransportEvent>(
  session: Session,
  match: (event: Transport.TransportEvent) => event is B
) =>
  Effect.gen(function*() {
    const before: Array<Transport.TransportEvent> = []
    while (true) {
      const event = yield* nextEvent(session)
      if (match(event)) return { event, before }
      before.push(event)
    }
  })

const isResponseTo = (id: McpSchema.RequestId) => (event: Transport.TransportEvent) =>
  event._tag === "Response" && event.message.id === id

const isClosed = Transport.TransportEvent.$is("Closed")
const isNotification = Transport.TransportEvent.$is("Notification")

const call = (session: Session, id: number, method: string, params?: unknown) =>
  Effect.gen(function*() {
    yield* session.connection.request({ jsonrpc: "2.0", id, method, params }, {})
    const { before, event } = yield* awaitEvent(
      session,
      (e): e is Transport.TransportEvent & { _tag: "Response" } => isResponseTo(id)(e)
    )
    assert.isTrue("result" in event.message, `${method} failed: ${JSON.stringify(event.message)}`)
    return { result: "result" in event.message ? event.message.result : undefined, before }
  })

const captureWarnings = () => {
  const warnings: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    if (logLevel === "Warn") warnings.push(Array.isArray(message) ? message.join(" ") : String(message))
  })
  return { warnings, layer: Logger.layer([logger]) }
}

// A process that was killed but not yet reaped (a zombie) is not alive.
const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  if (process.platform !== "linux") return true
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const state = stat.slice(stat.lastIndexOf(")") + 2).charAt(0)
    return state !== "Z" && state !== "X"
  } catch {
    return false
  }
}

// Waits (bounded) for a process to disappear: the kernel finishes a kill asynchronously.
const awaitGone = (pid: number) =>
  Effect.suspend(() => isAlive(pid) ? Effect.fail(`process ${pid} is still running`) : Effect.void).pipe(
    Effect.retry(Schedule.max([Schedule.spaced("20 millis"), Schedule.recurs(150)])),
    Effect.result
  )

// Whatever happens in a test, no process it learned about survives it: a safety net that runs after the test's
// scopes (and so the transport's own shutdown) have closed.
const spawned = new Set<number>()
const reap = (pids: ReadonlyArray<number>) =>
  Effect.sync(() => {
    for (const pid of pids) if (pid > 0) spawned.add(pid)
  })
afterEach(() => {
  for (const pid of spawned) {
    if (isAlive(pid)) process.kill(pid, "SIGKILL")
  }
  spawned.clear()
})

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "conduit-stdio-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

describe("StdioTransport", () => {
  it.live("round-trips requests with multi-byte text, split writes and CRLF terminators", () =>
    Effect.gen(function*() {
      const session = yield* open
      const info = session.connection.info
      assert.strictEqual(info.binding, "stdio")
      assert.isNumber(info.pid)
      yield* reap([info.pid ?? 0])
      assert.include(info.target, "echo.mjs")
      const params = { text: "héllo 😀 漢字 🇯🇵", nested: { list: [1, "二", null] } }
      assert.deepStrictEqual((yield* call(session, 1, "echo", params)).result, { echo: params })
      assert.deepStrictEqual((yield* call(session, 2, "fixture/split", params)).result, { echo: params })
      assert.deepStrictEqual((yield* call(session, 3, "fixture/crlf")).result, { crlf: true })
      yield* session.connection.setSession({ era: "legacy", protocolVersion: "2025-06-18" })
      yield* session.connection.notify({ jsonrpc: "2.0", method: "notifications/initialized" })
      const { event } = yield* awaitEvent(session, isNotification)
      assert.deepStrictEqual(event.message.params, {
        message: { jsonrpc: "2.0", method: "notifications/initialized" }
      })
    }).pipe(withStdio({ command: node, args: [echo], ...fast })))

  it.live("the synchronous paths: requests sent at once, answers taken by unsafeEmit in order with the rest", () =>
    Effect.gen(function*() {
      const transport = yield* Transport.Transport
      const seen: Array<string> = []
      const events = yield* Queue.unbounded<Transport.TransportEvent>()
      const emit: Transport.Emit = (event: Transport.TransportEvent) =>
        Effect.suspend(() => {
          seen.push(`effect ${event._tag === "Response" ? event.message.id : event._tag}`)
          return Queue.offer(events, event)
        })
      // takes the answers to even ids only
      const deliver = (event: Transport.TransportEvent) => {
        if (event._tag !== "Response" || Number(event.message.id) % 2 !== 0) return false
        seen.push(`sync ${event.message.id}`)
        return true
      }
      const connection = yield* transport.connect(emit, { deliver })
      const sendAtOnce = connection.trySend
      assert.isDefined(sendAtOnce)
      for (const id of [1, 2, 3, 4]) {
        assert.isTrue(sendAtOnce!({ jsonrpc: "2.0", id, method: "echo", params: { id } }, {}))
      }
      // a value JSON cannot hold is not sent: the caller falls back to `request`, which fails
      assert.isFalse(sendAtOnce!({ jsonrpc: "2.0", id: 5, method: "echo", params: { n: 1n } }, {}))
      yield* connection.request({ jsonrpc: "2.0", id: 7, method: "echo" }, {})
      const last = yield* within(Queue.take(events).pipe(Effect.repeat({ until: (e) => isResponseTo(7)(e) })), "id 7")
      assert.isTrue(isResponseTo(7)(last))
      assert.deepStrictEqual(seen, ["effect 1", "sync 2", "effect 3", "sync 4", "effect 7"])
    }).pipe(withStdio({ command: node, args: [echo], ...fast })))

  it.live("a defect while delivering what was read closes the connection with a Read error", () =>
    Effect.gen(function*() {
      const transport = yield* Transport.Transport
      const events = yield* Queue.unbounded<Transport.TransportEvent>()
      // the client's emit never dies (it drops what it cannot handle); this one does, like a bug would
      const connection = yield* transport.connect((event) =>
        event._tag === "Notification"
          ? Effect.die(new Error("a bug in delivering a notification"))
          : Queue.offer(events, event).pipe(Effect.asVoid)
      )
      yield* connection.notify({ jsonrpc: "2.0", method: "notifications/poke" })
      const closed = yield* within(
        Queue.take(events).pipe(Effect.repeat({ until: (e) => e._tag === "Closed" })),
        "Closed"
      )
      assert.isTrue(closed._tag === "Closed")
      if (closed._tag === "Closed") {
        assert.strictEqual(closed.error.reason, "Read")
        assert.strictEqual(closed.error.detail, "reading the server's output failed unexpectedly")
      }
    }).pipe(withStdio({ command: node, args: [echo], ...fast })))

  it.live("drops garbage, non-JSON-RPC values and malformed lines, and keeps working", () => {
    const { layer, warnings } = captureWarnings()
    return Effect.gen(function*() {
      const session = yield* open
      yield* reap([session.connection.info.pid ?? 0])
      const first = yield* call(session, 1, "echo", { n: 1 })
      assert.deepStrictEqual(first.before, [])
      // garbage before the first message
      assert.strictEqual(warnings.length, 2)
      const garbage = yield* call(session, 2, "fixture/garbage")
      // the response with an unknown id is the client's business: the transport passes it on
      assert.deepStrictEqual(garbage.before.map((e) => e._tag === "Response" ? e.message.id : e._tag), [
        "nobody-asked"
      ])
      assert.strictEqual(warnings.length, 5)
      assert.isTrue(warnings.some((w) => w.includes("not a JSON-RPC message")))
      assert.isTrue(warnings.some((w) => w.includes("malformed JSON")))
      assert.deepStrictEqual((yield* call(session, 3, "echo", { n: 3 })).result, { echo: { n: 3 } })
    }).pipe(
      withStdio({ command: node, args: [echo, "--garbage-first"], ...fast }),
      Effect.provide(layer)
    )
  })

  it.live("closes the connection with FrameTooLarge on an oversize message", () =>
    Effect.gen(function*() {
      const session = yield* open
      yield* reap([session.connection.info.pid ?? 0])
      yield* call(session, 1, "echo", { small: "x".repeat(200) })
      yield* session.connection.request(
        { jsonrpc: "2.0", id: 2, method: "fixture/oversize", params: { size: 5000 } },
        {}
      )
      const { before, event } = yield* awaitEvent(session, isClosed)
      assert.deepStrictEqual(before, [])
      assert.strictEqual(event.error.reason, "FrameTooLarge")
      const error = yield* Effect.flip(session.connection.request({ jsonrpc: "2.0", id: 3, method: "echo" }, {}))
      assert.strictEqual(error._tag, "TransportError")
      assert.strictEqual(error._tag === "TransportError" ? error.reason : undefined, "Closed")
    }).pipe(withStdio({ command: node, args: [echo], maxFrameBytes: 1024, ...fast })))

  it.live("reports a server that exits at start, with its exit code and stderr", () =>
    Effect.gen(function*() {
      const result = yield* Effect.result(open)
      const error = yield* Effect.gen(function*() {
        if (result._tag === "Failure") return result.failure
        const { event } = yield* awaitEvent(result.success, isClosed)
        return event.error
      })
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag !== "TransportError") return
      assert.include(["Exited", "Spawn"], error.reason)
      assert.include(error.stderr ?? [], "fatal: missing configuration file")
      assert.include(error.stderr ?? [], "hint: set MCP_CONFIG")
      if (error.reason === "Exited") assert.strictEqual(error.exitCode, 3)
      const tail = yield* Effect.flatMap(StdioTransport.StdioProcess, (p) => p.stderrTail)
      assert.deepStrictEqual(tail, ["fatal: missing configuration file", "hint: set MCP_CONFIG"])
    }).pipe(withStdio({ command: node, args: [fixture("exit-at-start.mjs")], ...fast })))

  it.live("reports a server that exits after answering: the answer first, then Closed exactly once", () =>
    Effect.gen(function*() {
      const session = yield* open
      const pid = session.connection.info.pid ?? 0
      yield* reap([pid])
      yield* session.connection.request({
        jsonrpc: "2.0",
        id: 1,
        method: "fixture/exit",
        params: { code: 5, stderr: "bye\n" }
      }, {})
      assert.isTrue(isResponseTo(1)(yield* nextEvent(session)))
      const closed = yield* nextEvent(session)
      assert.isTrue(isClosed(closed))
      if (!isClosed(closed)) return
      assert.strictEqual(closed.error.reason, "Exited")
      assert.strictEqual(closed.error.exitCode, 5)
      assert.include(closed.error.stderr ?? [], "bye")
      const write = yield* Effect.flip(session.connection.notify({ jsonrpc: "2.0", method: "x" }))
      assert.strictEqual(write._tag === "TransportError" ? write.reason : undefined, "Closed")
      assert.isFalse(isAlive(pid))
      assert.strictEqual(yield* Queue.size(session.events), 0)
    }).pipe(withStdio({ command: node, args: [echo], ...fast })))

  it.live("fails with Spawn when the command does not exist", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(open)
      assert.strictEqual(error._tag, "TransportError")
      assert.strictEqual(error._tag === "TransportError" ? error.reason : undefined, "Spawn")
    }).pipe(withStdio({ command: "conduit-no-such-command-4f1b2c", ...fast })))

  it.live("fails with Spawn when the working directory does not exist", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(open)
      assert.strictEqual(error._tag === "TransportError" ? error.reason : undefined, "Spawn")
    }).pipe(withStdio({ command: node, args: [echo], cwd: "/conduit/no/such/directory", ...fast })))

  it.live("cancel sends notifications/cancelled with the request id", () =>
    Effect.gen(function*() {
      const session = yield* open
      yield* reap([session.connection.info.pid ?? 0])
      yield* session.connection.setSession({ era: "modern", protocolVersion: "2026-07-28" })
      yield* session.connection.cancel(7, "timeout")
      yield* session.connection.cancel("req-8", "interrupted")
      const first = yield* awaitEvent(session, isNotification)
      const second = yield* awaitEvent(session, isNotification)
      assert.deepStrictEqual(first.event.message.params, {
        message: {
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: 7, reason: "Request timed out" }
        }
      })
      assert.deepStrictEqual(second.event.message.params, {
        message: {
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: "req-8", reason: "Request cancelled by the client" }
        }
      })
    }).pipe(withStdio({ command: node, args: [echo], ...fast })))

  it.live("cancel on a closed connection neither fails nor waits", () =>
    Effect.gen(function*() {
      const session = yield* open
      yield* reap([session.connection.info.pid ?? 0])
      yield* session.connection.request({ jsonrpc: "2.0", id: 1, method: "fixture/exit", params: { code: 0 } }, {})
      yield* awaitEvent(session, isClosed)
      yield* within(session.connection.cancel(1, "timeout"), "cancel")
    }).pipe(withStdio({ command: node, args: [echo], ...fast })))

  it.live("rejects invalid options when the layer is built, before starting anything", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const started = join(dir, "started")
      const base = { command: node, args: [echo, "--started-file", started] }
      const cases: ReadonlyArray<readonly [string, StdioTransport.StdioTransportOptions]> = [
        ["command", { ...base, command: "" }],
        ["maxFrameBytes", { ...base, maxFrameBytes: 0 }],
        ["maxFrameBytes", { ...base, maxFrameBytes: 1.5 }],
        ["stderrTailLines", { ...base, stderrTailLines: -1 }],
        ["env", { ...base, env: { "A=B": "x" } }],
        ["closeTimeout", { ...base, closeTimeout: Duration.infinity }],
        ["termTimeout", { ...base, termTimeout: Number.NaN }]
      ]
      for (const [option, options] of cases) {
        const error = yield* Effect.flip(open.pipe(withStdio(options)))
        assert.instanceOf(error, McpError.InvalidOption)
        assert.strictEqual(error._tag === "InvalidOption" ? error.option : undefined, option)
      }
      assert.isFalse(existsSync(started))
      // the same options with valid values do start the server
      yield* Effect.gen(function*() {
        const session = yield* open
        yield* reap([session.connection.info.pid ?? 0])
        yield* call(session, 1, "echo")
      }).pipe(withStdio({ ...base, ...fast }))
      assert.isTrue(existsSync(started))
    }))

  it.live("layerConfig reads and checks the options", () =>
    Effect.gen(function*() {
      const config = {
        command: Config.String("COMMAND"),
        args: Config.Array(Schema.String, "ARGS"),
        maxFrameBytes: Config.Int("MAX_FRAME_BYTES"),
        closeTimeout: Config.Duration("CLOSE_TIMEOUT")
      }
      const provider = (maxFrameBytes: string) =>
        ConfigProvider.fromEnvRecord({
          COMMAND: node,
          ARGS: echo,
          MAX_FRAME_BYTES: maxFrameBytes,
          CLOSE_TIMEOUT: "300 millis"
        })
      const layer = StdioTransport.layerConfig(config).pipe(Layer.provide(NodeServices.layer))
      const bad = yield* Effect.flip(Effect.scoped(open).pipe(
        Effect.provide(layer),
        Effect.provideService(ConfigProvider.ConfigProvider, provider("0"))
      ))
      assert.strictEqual(bad._tag === "InvalidOption" ? bad.option : bad._tag, "maxFrameBytes")
      yield* Effect.gen(function*() {
        const session = yield* open
        yield* reap([session.connection.info.pid ?? 0])
        assert.deepStrictEqual((yield* call(session, 1, "echo", { ok: true })).result, { echo: { ok: true } })
      }).pipe(Effect.scoped, Effect.provide(layer), Effect.provideService(ConfigProvider.ConfigProvider, provider("4096")))
    }))

  it.live("applies the environment policy", () =>
    Effect.gen(function*() {
      const secret = "CONDUIT_STDIO_TEST_SECRET"
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          process.env[secret] = "parent"
        }),
        () => Effect.sync(() => delete process.env[secret])
      )
      const envOf = (policy: StdioTransport.EnvPolicy | undefined) =>
        Effect.gen(function*() {
          const session = yield* open
          yield* reap([session.connection.info.pid ?? 0])
          const { result } = yield* call(session, 1, "fixture/env")
          const env = typeof result === "object" && result !== null && "env" in result ? result.env : undefined
          assert.isObject(env)
          return typeof env === "object" && env !== null ? Object.fromEntries(Object.entries(env)) : {}
        }).pipe(withStdio({ command: node, args: [echo], env: { GIVEN: "yes" }, envPolicy: policy, ...fast }))
      const inherit = yield* envOf("inherit")
      assert.strictEqual(inherit[secret], "parent")
      assert.strictEqual(inherit.GIVEN, "yes")
      const minimal = yield* envOf("minimal")
      assert.isUndefined(minimal[secret])
      assert.strictEqual(minimal.GIVEN, "yes")
      assert.strictEqual(minimal.PATH, process.env.PATH)
      const custom = yield* envOf("custom")
      assert.deepStrictEqual(Object.keys(custom), ["GIVEN"])
      // the default keeps the parent's secrets from the server
      const byDefault = yield* envOf(undefined)
      assert.isUndefined(byDefault[secret])
      assert.strictEqual(byDefault.GIVEN, "yes")
      assert.strictEqual(byDefault.PATH, process.env.PATH)
      assert.strictEqual(byDefault.HOME, process.env.HOME)
    }))

  it.live("streams the server's stderr and keeps its tail", () =>
    Effect.gen(function*() {
      const stdio = yield* StdioTransport.StdioProcess
      const lines = yield* stdio.stderr.pipe(
        Stream.filter((line) => line.startsWith("diag")),
        Stream.take(3),
        Stream.runCollect,
        Effect.forkChild
      )
      const session = yield* open
      yield* reap([session.connection.info.pid ?? 0])
      // a round trip first, so the subscription above is in place
      yield* call(session, 1, "echo")
      yield* call(session, 2, "fixture/stderr", { lines: ["diag 1", "diag 2 ✓", "diag 3"] })
      assert.deepStrictEqual([...(yield* within(Fiber.join(lines), "stderr lines"))], ["diag 1", "diag 2 ✓", "diag 3"])
      const tail = yield* stdio.stderrTail
      assert.deepStrictEqual(tail.slice(-2), ["diag 2 ✓", "diag 3"])
      assert.strictEqual(tail.length, 3)
    }).pipe(withStdio({ command: node, args: [echo], stderrTailLines: 3, ...fast })))

  it.live("stderr lines nobody subscribed to still reach the tail; a subscription after the layer closed ends", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.acquireRelease(Scope.make(), (scope) => Scope.close(scope, Exit.void))
      const services = yield* Layer.buildWithScope(
        StdioTransport.layer({ command: node, args: [echo], stderrTailLines: 3, ...fast }).pipe(
          Layer.provide(NodeServices.layer)
        ),
        scope
      )
      const stdio = Context.get(services, StdioTransport.StdioProcess)
      const session = yield* Scope.provide(open, scope).pipe(Effect.provide(services))
      yield* call(session, 1, "fixture/stderr", { lines: ["diag 1", "diag 2"] })
      yield* within(
        Effect.repeat(stdio.stderrTail, {
          until: (tail) => tail.includes("diag 2"),
          schedule: Schedule.spaced("10 millis")
        }),
        "the tail"
      )
      yield* within(Scope.close(scope, Exit.void), "the scope to close")
      const late = yield* within(Effect.exit(Stream.runCollect(stdio.stderr)), "a late subscription to end")
      assert.isTrue(Exit.isSuccess(late) && late.value.length === 0)
    }).pipe(Effect.scoped))

  it.live("closing the scope closes stdin and the server exits", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const closedFile = join(dir, "closed")
      yield* Effect.gen(function*() {
        const scope = yield* Scope.make()
        const session = yield* Scope.provide(open, scope)
        const pid = session.connection.info.pid ?? 0
        yield* reap([pid])
        yield* call(session, 1, "echo")
        yield* within(Scope.close(scope, Exit.void), "the scope to close")
        assert.strictEqual(readFileSync(closedFile, "utf8"), "stdin closed")
        assert.isFalse(isAlive(pid))
        // closing is not a failure of the connection
        assert.strictEqual(yield* Queue.size(session.events), 0)
      }).pipe(withStdio({ command: node, args: [echo, "--closed-file", closedFile], ...fast }))
    }))

  it.live("a server that exits cleanly leaves no process of its group behind", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const closedFile = join(dir, "closed")
      yield* Effect.gen(function*() {
        const scope = yield* Scope.make()
        const session = yield* Scope.provide(open, scope)
        const pid = session.connection.info.pid ?? 0
        yield* reap([pid])
        const { event } = yield* awaitEvent(session, isNotification)
        assert.strictEqual(event.message.method, "fixture/grandchild")
        const params = event.message.params
        const grandchild = typeof params === "object" && params !== null && "pid" in params ? params.pid : undefined
        assert.isNumber(grandchild)
        if (typeof grandchild !== "number") return
        yield* reap([grandchild])
        assert.isTrue(isAlive(grandchild))
        yield* within(Scope.close(scope, Exit.void), "the scope to close")
        // the server went the graceful way, yet its grandchild is gone too
        assert.strictEqual(readFileSync(closedFile, "utf8"), "stdin closed")
        assert.isFalse(isAlive(pid))
        assert.isTrue((yield* awaitGone(grandchild))._tag === "Success", `grandchild ${grandchild} survived`)
      }).pipe(withStdio({ command: node, args: [echo, "--grandchild", "--closed-file", closedFile], ...fast }))
    }))

  it.live("a server that ignores SIGTERM and its grandchild leave no process behind", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const session = yield* Scope.provide(open, scope)
      yield* reap([session.connection.info.pid ?? 0])
      const { event } = yield* awaitEvent(session, isNotification)
      assert.strictEqual(event.message.method, "fixture/pids")
      const params = event.message.params
      const pid = typeof params === "object" && params !== null && "pid" in params ? params.pid : undefined
      const grandchild = typeof params === "object" && params !== null && "grandchild" in params
        ? params.grandchild
        : undefined
      assert.isNumber(pid)
      assert.isNumber(grandchild)
      if (typeof pid !== "number" || typeof grandchild !== "number") return
      yield* reap([pid, grandchild])
      assert.strictEqual(pid, session.connection.info.pid)
      assert.isTrue(isAlive(grandchild))
      yield* within(Scope.close(scope, Exit.void), "the scope to close")
      assert.isFalse(isAlive(pid))
      assert.isTrue((yield* awaitGone(grandchild))._tag === "Success", `grandchild ${grandchild} survived`)
    }).pipe(withStdio({ command: node, args: [fixture("stubborn.mjs")], ...fast })))

  // the platform's FileSystem reads /proc; without one (and where /proc is absent, as on macOS) `ps` lists them
  const platforms = [
    ["/proc", NodeServices.layer],
    ["ps", Layer.provide(NodeChildProcessSpawner.layer, Layer.merge(NodeFileSystem.layer, NodePath.layer))]
  ] as const
  it.live.each(platforms)(
    "descendants in new sessions are ended with the server, though it exits first and they ignore SIGTERM (%s)",
    ([, platform]) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const session = yield* Scope.provide(open, scope)
        const pid = session.connection.info.pid ?? 0
        yield* reap([pid])
        const { event } = yield* awaitEvent(session, isNotification)
        assert.strictEqual(event.message.method, "fixture/escaped")
        const params = event.message.params as { readonly grandchild?: unknown; readonly greatGrandchild?: unknown }
        const { grandchild, greatGrandchild } = params
        assert.isNumber(grandchild)
        assert.isNumber(greatGrandchild)
        if (typeof grandchild !== "number" || typeof greatGrandchild !== "number") return
        yield* reap([grandchild, greatGrandchild])
        assert.isTrue(isAlive(grandchild) && isAlive(greatGrandchild))
        if (process.platform === "linux") {
          // each leads a session of its own: neither the server's process group nor its session holds them
          const sessionOf = (p: number) => Number(readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ")[3])
          assert.deepStrictEqual([sessionOf(pid), sessionOf(grandchild), sessionOf(greatGrandchild)], [
            pid,
            grandchild,
            greatGrandchild
          ])
        }
        yield* within(Scope.close(scope, Exit.void), "the scope to close")
        assert.isFalse(isAlive(pid))
        assert.isTrue((yield* awaitGone(grandchild))._tag === "Success", `grandchild ${grandchild} survived`)
        assert.isTrue((yield* awaitGone(greatGrandchild))._tag === "Success", `great-grandchild ${greatGrandchild} survived`)
      }).pipe(
        Effect.scoped,
        Effect.provide(
          StdioTransport.layer({ command: node, args: [fixture("session-escape.mjs")], ...fast }).pipe(
            Layer.provide(platform)
          )
        )
      )
  )
})
