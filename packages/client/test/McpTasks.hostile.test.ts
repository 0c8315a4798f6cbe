/**
 * Tasks against scripted servers that misbehave: polling intervals of 0 and of hours (clamped to 250 ms and
 * 30 s), an unknown status, a task id that is not a string, a result that never comes under the caller's
 * deadline, a task that expires. Each ends in a typed error, with the task cancelled when the caller gave up, no
 * request left pending and no tight loop. On the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/testing/TestClock"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Scripted from "./utils/scriptedTransport.js"

const TOOL = {
  name: "job",
  inputSchema: { type: "object", properties: {} },
  execution: { taskSupport: "required" }
}

const task = (overrides: Record<string, unknown> = {}) => ({
  taskId: "t-1",
  status: "working",
  createdAt: "2026-12-02T00:00:00Z",
  lastUpdatedAt: "2026-12-02T00:00:00Z",
  ttl: 60_000,
  pollInterval: 1_000,
  ...overrides
})

/** A 2025-11-25 server with tasks whose `tasks/get` answers what `poll` says (by poll number, from 1). */
const legacyTasks = (options: {
  readonly created?: unknown
  readonly poll: (n: number) => { readonly result: unknown } | { readonly error: number }
}): Scripted.Script => {
  let polls = 0
  return (message, ctx) => {
    if (!("method" in message) || !("id" in message)) return Effect.void
    const id = message.id
    switch (message.method) {
      case "server/discover":
        return ctx.fail(id, -32601, "Method not found")
      case "initialize":
        return ctx.reply(id, {
          protocolVersion: "2025-11-25",
          capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
          serverInfo: { name: "scripted-tasks", version: "1.0.0" }
        })
      case "tools/list":
        return ctx.reply(id, { tools: [TOOL] })
      case "tools/call":
        return ctx.reply(id, { task: options.created ?? task() })
      case "tasks/get": {
        const answer = options.poll(++polls)
        return "result" in answer ? ctx.reply(id, answer.result) : ctx.fail(id, answer.error, "Unknown task")
      }
      case "tasks/cancel":
        return ctx.reply(id, task({ status: "cancelled" }))
      case "tasks/result":
        return ctx.reply(id, { content: [{ type: "text", text: "the result" }] })
      default:
        return ctx.fail(id, -32601, "Method not found")
    }
  }
}

const clientOver = (script: Scripted.Script) =>
  McpClient.layer({ era: "legacy", healthCheckInterval: false, reconnect: false }).pipe(
    Layer.provideMerge(Scripted.layer(script))
  )

const sentOf = (method: string) =>
  Effect.flatMap(Scripted.ScriptLog, (log) =>
    Effect.map(
      Ref.get(log.sent),
      (sent) => sent.filter((s) => "method" in s.message && s.message.method === method)
    ))

const settle = Effect.repeat(Effect.yieldNow, { times: 30 })

const advance = (millis: number) => Effect.andThen(Effect.andThen(settle, TestClock.adjust(`${millis} millis`)), settle)

const call = Effect.flatMap(McpClient.McpClient, (client) => client.callTool({ name: "job" }))

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) && exit.cause.reasons.length === 1 && exit.cause.reasons[0]._tag === "Fail"
    ? exit.cause.reasons[0].error
    : undefined

describe("tasks against hostile servers", () => {
  it.effect("a pollInterval of 0 is clamped to 250 ms: four polls a second, not a tight loop", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(call)
      for (let i = 0; i < 4; i++) yield* advance(250)
      assert.strictEqual((yield* sentOf("tasks/get")).length, 4)
      yield* advance(100)
      assert.strictEqual((yield* sentOf("tasks/get")).length, 4)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual((yield* sentOf("tasks/cancel")).length, 1)
    }).pipe(Effect.provide(clientOver(legacyTasks({
      created: task({ pollInterval: 0 }),
      poll: () => ({ result: task({ pollInterval: 0 }) })
    })))))

  it.effect("a pollInterval of hours is clamped to 30 s", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(call)
      yield* advance(29_000)
      assert.strictEqual((yield* sentOf("tasks/get")).length, 0)
      yield* advance(1_000)
      assert.strictEqual((yield* sentOf("tasks/get")).length, 1)
      yield* advance(30_000)
      const result = yield* Fiber.join(fiber)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "the result" }])
      assert.strictEqual((yield* sentOf("tasks/get")).length, 2)
    }).pipe(Effect.provide(clientOver(legacyTasks({
      created: task({ pollInterval: 3 * 3_600_000 }),
      poll: (n) => ({ result: task({ pollInterval: 3 * 3_600_000, status: n < 2 ? "working" : "completed" }) })
    })))))

  it.effect("an unknown status is a ProtocolError, and the task is cancelled", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Effect.exit(call))
      yield* advance(1_000)
      const error = failureOf(yield* Fiber.join(fiber))
      assert.strictEqual(error?._tag, "ProtocolError")
      if (error?._tag === "ProtocolError") assert.strictEqual(error.reason, "InvalidResult")
      // nobody else can reach the task callTool started: it is cancelled
      assert.strictEqual((yield* sentOf("tasks/cancel")).length, 1)
    }).pipe(Effect.provide(clientOver(legacyTasks({ poll: () => ({ result: task({ status: "pondering" }) }) })))))

  it.effect("a task id that is not a string is a ProtocolError at once", () =>
    Effect.gen(function*() {
      const error = failureOf(yield* Effect.exit(call))
      assert.strictEqual(error?._tag, "ProtocolError")
      assert.strictEqual((yield* sentOf("tasks/get")).length, 0)
    }).pipe(Effect.provide(clientOver(legacyTasks({
      created: task({ taskId: 42 }),
      poll: () => ({ result: task() })
    })))))

  it.effect("a result that never comes: the caller's deadline holds, the task is cancelled, nothing pending", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Effect.exit(Effect.timeout(call, "5 seconds")))
      for (let i = 0; i < 6; i++) yield* advance(1_000)
      const error = failureOf(yield* Fiber.join(fiber))
      assert.strictEqual(error?._tag, "TimeoutError")
      const polls = (yield* sentOf("tasks/get")).length
      assert.isAtMost(polls, 5)
      const cancels = yield* sentOf("tasks/cancel")
      assert.strictEqual(cancels.length, 1)
      assert.deepStrictEqual((cancels[0]!.message as McpSchema.JsonRpcRequest).params, { taskId: "t-1" })
      // nothing polls any more
      yield* advance(10_000)
      assert.strictEqual((yield* sentOf("tasks/get")).length, polls)
    }).pipe(Effect.provide(clientOver(legacyTasks({ poll: () => ({ result: task() }) })))))

  it.effect("a task the server drops after its time to live: TaskError Expired", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Effect.exit(call))
      yield* advance(1_000)
      yield* advance(1_000)
      yield* advance(1_000)
      const error = failureOf(yield* Fiber.join(fiber))
      assert.strictEqual(error?._tag, "TaskError")
      if (error?._tag === "TaskError") {
        assert.strictEqual(error.reason, "Expired")
        assert.strictEqual(error.taskId, "t-1")
      }
      const client = yield* McpClient.McpClient
      assert.deepStrictEqual(yield* client.tasks.stored, [])
    }).pipe(Effect.provide(clientOver(legacyTasks({
      created: task({ ttl: 2_000 }),
      poll: (n) => n < 3 ? { result: task({ ttl: 2_000 }) } : { error: -32602 }
    })))))

  it.effect("a task the server does not know: TaskError NotFound", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* Effect.flip(client.tasks.get("nope"))
      assert.strictEqual(error._tag, "TaskError")
      if (error._tag === "TaskError") assert.strictEqual(error.reason, "NotFound")
    }).pipe(Effect.provide(clientOver(legacyTasks({ poll: () => ({ error: -32602 }) })))))
})
