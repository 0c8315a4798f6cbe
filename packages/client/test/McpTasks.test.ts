/**
 * Tasks against the library's own server, in process, on the TestClock: a task-required tool driven to its end
 * by `callTool` (2025-11-25 `params.task`, `tasks/get` at the suggested interval, `tasks/result`), the tools that
 * must never be augmented, cancellation on interruption, failures, and the explicit handles of `client.tasks`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as McpServer from "@conduit-mcp/server/McpServer"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as McpClient from "../src/McpClient.js"
import * as McpError from "../src/McpError.js"

type Era = "legacy" | "modern"

/** Work that takes `seconds` on the clock, reporting each second in its status. */
const slow = (seconds: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < seconds; i++) yield* Effect.sleep("1 second")
    return `done after ${seconds} s`
  })

const makeServer = (options: { readonly tasks?: boolean; readonly started?: Deferred.Deferred<void> } = {}) =>
  options.tasks === false ? plainServer : McpServer.make({
    name: "tasks",
    version: "1.0.0",
    record: true,
    tasks: { pollIntervalMs: 2_000, ttlMs: 60_000 },
    tools: [
      McpServer.tool({
        name: "research",
        description: "Takes a while; must run as a task.",
        parameters: Schema.Struct({ seconds: Schema.Number }),
        execution: { taskSupport: "required" },
        handler: ({ seconds }) =>
          Effect.andThen(
            options.started === undefined ? Effect.void : Deferred.succeed(options.started, undefined),
            slow(seconds)
          )
      }),
      McpServer.tool({
        name: "maybe",
        parameters: Schema.Struct({}),
        execution: { taskSupport: "optional" },
        handler: () => Effect.succeed("maybe")
      }),
      McpServer.tool({
        name: "never",
        parameters: Schema.Struct({}),
        execution: { taskSupport: "forbidden" },
        handler: () => Effect.succeed("never")
      }),
      McpServer.tool({
        name: "plain",
        parameters: Schema.Struct({}),
        handler: () => Effect.succeed("plain")
      }),
      McpServer.tool({
        name: "broken",
        parameters: Schema.Struct({}),
        execution: { taskSupport: "required" },
        handler: () =>
          Effect.andThen(Effect.sleep("1 second"), Effect.fail(new McpError.McpError({ code: -32603, message: "disk on fire" })))
      })
    ]
  })

/** The same slow tool on a server without tasks. */
const plainServer = McpServer.make({
  name: "plain",
  version: "1.0.0",
  record: true,
  tools: [
    McpServer.tool({
      name: "research",
      parameters: Schema.Struct({ seconds: Schema.Number }),
      handler: ({ seconds }) => slow(seconds)
    })
  ]
})

const clientLayer = (
  era: Era,
  server: Effect.Effect<McpServer.Server>,
  options: Partial<McpClient.McpClientOptions> = {}
) =>
  Layer.unwrap(Effect.map(server, (server) =>
    McpClient.layer({ era: era === "legacy" ? "legacy" : "auto", healthCheckInterval: false, reconnect: false, ...options })
      .pipe(
        Layer.provideMerge(InProcessTransport.layer(server)),
        Layer.provideMerge(Layer.succeed(McpServer.McpServer, server))
      )))

const received = (method: string) => Effect.flatMap(McpServer.McpServer, (server) => server.received(method))

const paramsOf = (message: unknown): Record<string, unknown> =>
  typeof message === "object" && message !== null && "params" in message && typeof message.params === "object" &&
    message.params !== null
    ? { ...message.params }
    : {}

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string => {
  const first = result.content[0]
  return typeof first === "object" && first !== null && "text" in first ? String(first.text) : ""
}

/** Lets the in-process exchange settle, then moves the clock by `millis`, `times` times. */
const advance = (millis: number, times = 1) =>
  Effect.gen(function*() {
    for (let i = 0; i < times; i++) {
      yield* Effect.yieldNow
      yield* TestClock.adjust(`${millis} millis`)
      for (let k = 0; k < 20; k++) yield* Effect.yieldNow
    }
  })

describe("2025-11-25 tasks, in process", () => {
  it.effect("callTool drives a task-required tool: params.task, tasks/get at the server's interval, tasks/result", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const fiber = yield* Effect.forkChild(client.callTool({ name: "research", arguments: { seconds: 5 } }))
      yield* advance(1_000, 8)
      const result = yield* Fiber.join(fiber)
      assert.strictEqual(textOf(result), "done after 5 s")
      const calls = yield* received("tools/call")
      assert.strictEqual(calls.length, 1)
      assert.deepStrictEqual(paramsOf(calls[0]!.message).task, {})
      // the server suggests 2 s: polled at 2 and 4 s, never faster; done at 5 s, its notifications/tasks/status
      // wakes the client before the third poll
      const polls = yield* received("tasks/get")
      assert.strictEqual(polls.length, 2)
      assert.strictEqual((yield* received("tasks/result")).length, 1)
      assert.strictEqual((yield* received("tasks/cancel")).length, 0)
    }).pipe(Effect.provide(clientLayer("legacy", makeServer()))))

  it.effect("tools that are optional, forbidden or silent run as plain calls; so does any tool of a server without tasks", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      for (const name of ["maybe", "never", "plain"]) {
        const result = yield* client.callTool({ name })
        assert.strictEqual(textOf(result), name)
      }
      const calls = yield* received("tools/call")
      assert.deepStrictEqual(calls.map((call) => paramsOf(call.message).task), [undefined, undefined, undefined])
    }).pipe(Effect.provide(clientLayer("legacy", makeServer()))))

  it.effect("a server without the tasks capability: no augmentation, whatever the tool says", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const session = yield* client.session
      assert.isUndefined(session.capabilities.tasks)
      const fiber = yield* Effect.forkChild(client.callTool({ name: "research", arguments: { seconds: 1 } }))
      yield* advance(1_000, 2)
      assert.strictEqual(textOf(yield* Fiber.join(fiber)), "done after 1 s")
      assert.isUndefined(paramsOf((yield* received("tools/call"))[0]!.message).task)
      assert.strictEqual((yield* received("tools/list")).length, 0)
    }).pipe(Effect.provide(clientLayer("legacy", makeServer({ tasks: false })))))

  it.effect("the tools' task support is learnt once, and again after notifications/tools/list_changed", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const server = yield* McpServer.McpServer
      const run = Effect.forkChild(client.callTool({ name: "research", arguments: { seconds: 0 } }))
      yield* Fiber.join(yield* Effect.tap(run, () => advance(2_000, 2)))
      yield* Fiber.join(yield* Effect.tap(run, () => advance(2_000, 2)))
      assert.strictEqual((yield* received("tools/list")).length, 1)
      yield* server.publish(McpServer.Change.ListChanged({ list: "tools" }))
      yield* advance(10)
      yield* Fiber.join(yield* Effect.tap(run, () => advance(2_000, 2)))
      assert.strictEqual((yield* received("tools/list")).length, 2)
    }).pipe(Effect.provide(clientLayer("legacy", makeServer()))))

  it.effect("interrupting callTool cancels the task on the server with tasks/cancel", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const fiber = yield* Effect.forkChild(client.callTool({ name: "research", arguments: { seconds: 100 } }))
      yield* advance(1_000, 3)
      yield* Fiber.interrupt(fiber)
      const cancels = yield* received("tasks/cancel")
      assert.strictEqual(cancels.length, 1)
      const polls = yield* received("tasks/get")
      const taskId = paramsOf(polls[0]!.message).taskId
      assert.strictEqual(paramsOf(cancels[0]!.message).taskId, taskId)
      const state = yield* client.tasks.get(String(taskId))
      assert.strictEqual(state.status, "cancelled")
    }).pipe(Effect.provide(clientLayer("legacy", makeServer()))))

  it.effect("a task that fails gives the server's JSON-RPC error", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const fiber = yield* Effect.forkChild(Effect.exit(client.callTool({ name: "broken" })))
      yield* advance(1_000, 4)
      const exit = yield* Fiber.join(fiber)
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const error = Cause.pretty(exit.cause)
        assert.include(error, "disk on fire")
      }
    }).pipe(Effect.provide(clientLayer("legacy", makeServer()))))

  it.effect("client.tasks.callTool: a handle with the status stream, the result, and detach", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const handle = yield* client.tasks.callTool({ name: "research", arguments: { seconds: 3 } })
      assert.strictEqual(handle.era, "legacy")
      assert.strictEqual(handle.initial.status, "working")
      const statuses = yield* Effect.forkChild(Stream.runCollect(handle.status))
      yield* advance(1_000, 5)
      const seen = Array.from(yield* Fiber.join(statuses)).map((state) => state.status)
      assert.deepStrictEqual(seen, ["working", "completed"])
      const result = yield* Effect.forkChild(handle.result)
      yield* advance(1_000, 2)
      assert.strictEqual(textOf(yield* Fiber.join(result)), "done after 3 s")
    }).pipe(Effect.provide(clientLayer("legacy", makeServer()))))

  it.effect("a detached handle's interruption leaves the task running; resume picks it up", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const handle = yield* client.tasks.callTool({ name: "research", arguments: { seconds: 4 } })
      yield* handle.detach
      const waiting = yield* Effect.forkChild(handle.result)
      yield* advance(1_000, 1)
      yield* Fiber.interrupt(waiting)
      assert.strictEqual((yield* received("tasks/cancel")).length, 0)
      const stored = yield* client.tasks.stored
      assert.deepStrictEqual(stored.map((task) => task.taskId), [handle.taskId])
      const resumed = yield* client.tasks.resume(handle.taskId)
      const result = yield* Effect.forkChild(resumed.result)
      yield* advance(1_000, 6)
      assert.strictEqual(textOf(yield* Fiber.join(result)), "done after 4 s")
      assert.deepStrictEqual(yield* client.tasks.stored, [])
    }).pipe(Effect.provide(clientLayer("legacy", makeServer()))))

  it.effect("tasks/list and explicit cancel; a forbidden tool is refused as a task", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const handle = yield* client.tasks.callTool({ name: "research", arguments: { seconds: 50 } })
      const page = yield* client.tasks.list()
      assert.deepStrictEqual(page.tasks.map((task) => task.taskId), [handle.taskId])
      yield* handle.cancel
      const after = yield* client.tasks.get(handle.taskId)
      assert.strictEqual(after.status, "cancelled")
      const refused = yield* Effect.flip(client.tasks.callTool({ name: "never" }))
      assert.strictEqual(refused._tag, "TaskError")
      if (refused._tag === "TaskError") assert.strictEqual(refused.reason, "Unsupported")
      const waiting = yield* Effect.forkChild(Effect.flip(handle.result))
      yield* advance(1_000, 2)
      const cancelled = yield* Fiber.join(waiting)
      assert.strictEqual(cancelled._tag, "TaskError")
      if (cancelled._tag === "TaskError") assert.strictEqual(cancelled.reason, "Cancelled")
    }).pipe(Effect.provide(clientLayer("legacy", makeServer()))))
})
