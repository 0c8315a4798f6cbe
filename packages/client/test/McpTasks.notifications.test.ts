/**
 * What a task's waiter hears besides its polls, on the TestClock: 2026-07-28 `notifications/tasks` through a
 * `subscriptions/listen` for the task (the result, input requests and status messages arrive without a poll; a
 * server that does not push, or refuses the listen, is polled at its interval), 2025-11-25
 * `notifications/tasks/status`, and the progress of a 2025-11-25 task on its creating request's token.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as McpServer from "@conduit-mcp/server/McpServer"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpTransport from "../src/HttpTransport.js"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as ServedHttp from "./fixtures/http/mcpServerHttp.js"
import * as Scripted from "./utils/scriptedTransport.js"

/** A server whose `gate` tool reports progress, then waits for `release`. */
const gated = (release: Deferred.Deferred<void>) =>
  McpServer.make({
    name: "gated",
    version: "1.0.0",
    record: true,
    tasks: { pollIntervalMs: 1_000 },
    tools: [
      McpServer.tool({
        name: "gate",
        parameters: Schema.Struct({}),
        execution: { taskSupport: "required" },
        handler: () =>
          Effect.gen(function*() {
            yield* McpServer.progress(1, { total: 2, message: "halfway" })
            yield* Deferred.await(release)
            yield* McpServer.progress(2, { total: 2, message: "released" })
            return "through the gate"
          })
      })
    ]
  })

const clientOf = (peer: McpServer.Server, options: McpClient.McpClientOptions) =>
  McpClient.layer({ healthCheckInterval: false, reconnect: false, ...options }).pipe(
    Layer.provideMerge(InProcessTransport.layer(peer))
  )

const settle = Effect.repeat(Effect.yieldNow, { times: 50 })

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string => {
  const first = result.content[0]
  return typeof first === "object" && first !== null && "text" in first ? String(first.text) : ""
}

const paramsOf = (message: unknown): Record<string, unknown> =>
  typeof message === "object" && message !== null && "params" in message && typeof message.params === "object" &&
    message.params !== null
    ? { ...message.params }
    : {}

describe("2026-07-28 notifications/tasks", () => {
  it.effect("the waiter listens for its task: the status message and the result come without a poll", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const peer = yield* gated(release)
      const client = Context.get(yield* Layer.build(clientOf(peer, { tasks: { enabled: true } })), McpClient.McpClient)
      const handle = yield* client.tasks.callTool({ name: "gate" })
      const statuses = yield* Effect.forkChild(Stream.runCollect(handle.status))
      const result = yield* Effect.forkChild(handle.result)
      yield* settle
      // the listens name the task, and the server acknowledges it
      const listens = yield* peer.received("subscriptions/listen")
      assert.isAtLeast(listens.length, 1)
      for (const listen of listens) {
        assert.deepStrictEqual(paramsOf(listen.message).notifications, { taskIds: [handle.taskId] })
      }
      yield* Deferred.succeed(release, undefined)
      yield* settle
      // the clock never moved: no poll was due, the notification brought the result
      const done = result.pollUnsafe()
      assert.isTrue(done !== undefined, "the result came by notification")
      assert.strictEqual(textOf(yield* Fiber.join(result)), "through the gate")
      assert.strictEqual((yield* peer.received("tasks/get")).length, 0)
      const seen = Array.from(yield* Fiber.join(statuses))
      // 2026-07-28 has no progress on tasks: the server shows it as the status message
      assert.isTrue(seen.some((state) => state.statusMessage === "halfway (1/2)"), JSON.stringify(seen))
      assert.strictEqual(seen[seen.length - 1]?.status, "completed")
    }))

  it.effect("once acknowledged, the task is polled only at the longest interval, as a safety net", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const peer = yield* gated(release)
      const client = Context.get(yield* Layer.build(clientOf(peer, { tasks: { enabled: true } })), McpClient.McpClient)
      const handle = yield* client.tasks.callTool({ name: "gate" })
      const result = yield* Effect.forkChild(handle.result)
      // one poll at the server's interval after the listen began, then one per 30 s
      for (let second = 0; second < 61; second++) {
        yield* settle
        yield* TestClock.adjust("1 second")
      }
      yield* settle
      assert.strictEqual((yield* peer.received("tasks/get")).length, 3)
      yield* Deferred.succeed(release, undefined)
      yield* settle
      assert.strictEqual(textOf(yield* Fiber.join(result)), "through the gate")
    }))
})

describe("McpServer: subscriptions/listen with taskIds", () => {
  it.effect("needs the client's tasks extension (-32021), and acknowledges only the tasks it has", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const peer = yield* gated(release)
      const without = Context.get(yield* Layer.build(clientOf(peer, {})), McpClient.McpClient)
      const refused = yield* Effect.flip(Stream.runDrain(without.listen({ taskIds: ["t"] })))
      assert.isTrue(refused._tag === "McpError" && refused.code === -32021, String(refused))
      const client = Context.get(
        yield* Layer.build(clientOf(peer, { tasks: { enabled: true } })),
        McpClient.McpClient
      )
      const handle = yield* client.tasks.callTool({ name: "gate" })
      const first = yield* Stream.runCollect(Stream.take(client.listen({ taskIds: [handle.taskId, "unknown"] }), 2))
      const [ack, current] = Array.from(first)
      assert.strictEqual(ack?.method, "notifications/subscriptions/acknowledged")
      assert.deepStrictEqual((ack?.params as { notifications: unknown }).notifications, { taskIds: [handle.taskId] })
      // the task's state as it is now follows the acknowledgement
      assert.strictEqual(current?.method, "notifications/tasks")
      assert.include(current?.params, { taskId: handle.taskId, status: "working", statusMessage: "halfway (1/2)" })
      yield* Deferred.succeed(release, undefined)
    }))
})

const TASK = {
  taskId: "m-1",
  status: "working",
  createdAt: "2026-12-02T00:00:00Z",
  lastUpdatedAt: "2026-12-02T00:00:00Z",
  ttlMs: 60_000,
  pollIntervalMs: 1_000
}

/** A modern server with a task tool whose `subscriptions/listen` is answered by `listen`; done after `polls` polls. */
const modernTasks = (
  listen: (id: McpSchema.RequestId, ctx: Scripted.ScriptContext) => Effect.Effect<void>,
  polls: number
): Scripted.Script => {
  let polled = 0
  return (message, ctx) => {
    if (!("method" in message) || !("id" in message)) return Effect.void
    const id = message.id
    switch (message.method) {
      case "server/discover":
        return ctx.reply(
          id,
          Scripted.discoverResult({ capabilities: { tools: {}, extensions: { "io.modelcontextprotocol/tasks": {} } } })
        )
      case "tools/call":
        return ctx.reply(id, { resultType: "task", ...TASK })
      case "subscriptions/listen":
        return listen(id, ctx)
      case "tasks/get":
        return ++polled < polls
          ? ctx.reply(id, { resultType: "complete", ...TASK })
          : ctx.reply(id, {
            resultType: "complete",
            ...TASK,
            status: "completed",
            result: { content: [{ type: "text", text: "polled to the end" }] }
          })
      default:
        return ctx.fail(id, -32601, "Method not found")
    }
  }
}

const scriptedClient = (script: Scripted.Script) =>
  McpClient.layer({ healthCheckInterval: false, reconnect: false, tasks: { enabled: true } }).pipe(
    Layer.provideMerge(Scripted.layer(script))
  )

const sentOf = (method: string) =>
  Effect.flatMap(Scripted.ScriptLog, (log) =>
    Effect.map(Ref.get(log.sent), (sent) => sent.filter((s) => "method" in s.message && s.message.method === method)))

describe("2026-07-28 servers that do not push", () => {
  const cases: ReadonlyArray<
    readonly [string, (id: McpSchema.RequestId, ctx: Scripted.ScriptContext) => Effect.Effect<void>]
  > = [
    ["refuses the listen (-32601)", (id, ctx) => ctx.fail(id, -32601, "Method not found")],
    ["acknowledges no task ids", (id, ctx) =>
      ctx.notify("notifications/subscriptions/acknowledged", {
        _meta: { "io.modelcontextprotocol/subscriptionId": id },
        notifications: { taskIds: [] }
      })],
    ["never answers the listen", () => Effect.void]
  ]
  for (const [name, listen] of cases) {
    it.effect(`a server that ${name}: the task is polled at its interval`, () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const fiber = yield* Effect.forkChild(client.callTool({ name: "job" }))
        for (let second = 0; second < 4; second++) {
          yield* settle
          yield* TestClock.adjust("1 second")
        }
        yield* settle
        const result = yield* Fiber.join(fiber)
        assert.strictEqual(textOf(result), "polled to the end")
        assert.strictEqual((yield* sentOf("tasks/get")).length, 3)
        assert.strictEqual((yield* sentOf("subscriptions/listen")).length, 1)
      }).pipe(Effect.provide(scriptedClient(modernTasks(listen, 3)))))
  }
})

describe("2025-11-25 tasks: status notifications and progress", () => {
  it.effect("the progress of the creating request's token reaches onProgress for the task's life", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const peer = yield* gated(release)
      const client = Context.get(yield* Layer.build(McpClient.layer({
        era: "legacy",
        healthCheckInterval: false,
        reconnect: false
      }).pipe(Layer.provideMerge(InProcessTransport.layer(peer)))), McpClient.McpClient)
      const reports = yield* Ref.make<ReadonlyArray<McpSchema.Progress>>([])
      const onProgress = (progress: McpSchema.Progress) => Ref.update(reports, (all) => [...all, progress])
      // plain callTool and an explicit handle alike
      const plain = yield* Effect.forkChild(client.callTool({ name: "gate" }, { onProgress }))
      yield* settle
      const handle = yield* client.tasks.callTool({ name: "gate" }, { onProgress })
      const explicit = yield* Effect.forkChild(handle.result)
      yield* settle
      yield* Deferred.succeed(release, undefined)
      yield* settle
      // the server's notifications/tasks/status woke the waiters: no clock moved
      assert.strictEqual(textOf(yield* Fiber.join(plain)), "through the gate")
      assert.strictEqual(textOf(yield* Fiber.join(explicit)), "through the gate")
      assert.strictEqual((yield* peer.received("tasks/get")).length, 0)
      const seen = (yield* Ref.get(reports)).map((p) => `${p.progress}/${p.total} ${p.message}`)
      assert.deepStrictEqual([...seen].sort(), ["1/2 halfway", "1/2 halfway", "2/2 released", "2/2 released"])
    }))
})

describe("a task that outlives its connection, over HTTP on 127.0.0.1", () => {
  for (const era of ["legacy", "modern"] as const) {
    it.live(`${era}: the reports it can no longer send are dropped; it completes for the next client`, () =>
      Effect.scoped(Effect.gen(function*() {
        const release = yield* Deferred.make<void>()
        const peer = yield* gated(release)
        const url = yield* ServedHttp.serve(peer)
        const connect = McpClient.layer({ era, healthCheckInterval: false, reconnect: false, tasks: true }).pipe(
          Layer.provide(HttpTransport.layer({ url })),
          Layer.provide(NodeHttpClient.layerUndici)
        )
        const taskId = yield* Effect.scoped(Effect.gen(function*() {
          const first = Context.get(yield* Layer.build(connect), McpClient.McpClient)
          const handle = yield* first.tasks.callTool({ name: "gate" }, { onProgress: () => Effect.void })
          yield* handle.detach
          return handle.taskId
        }))
        // the first client is gone (its session deleted): the task reports progress and completes regardless
        yield* Deferred.succeed(release, undefined)
        const second = Context.get(yield* Layer.build(connect), McpClient.McpClient)
        const resumed = yield* second.tasks.resume(taskId)
        assert.strictEqual(textOf(yield* resumed.result), "through the gate")
      })), 20_000)
  }
})
