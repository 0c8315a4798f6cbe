/**
 * The 2026-07-28 tasks extension against the library's server, in process and on the TestClock: the opt-in (and
 * its absence), `resultType: "task"` driven by `callTool`, `input_required` on a task answered through the
 * elicitation handler with `tasks/update`, cancellation; and a task resumed after a restart from a file-backed
 * `TaskStore`.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import * as McpServer from "@conduit-mcp/server/McpServer"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as ElicitationHandler from "../src/ElicitationHandler.js"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as McpClient from "../src/McpClient.js"
import * as McpTasks from "../src/McpTasks.js"
import * as TaskStore from "../src/TaskStore.js"

const server = McpServer.make({
  name: "modern-tasks",
  version: "1.0.0",
  record: true,
  tasks: { pollIntervalMs: 1_000 },
  tools: [
    McpServer.tool({
      name: "deploy",
      parameters: Schema.Struct({ service: Schema.String }),
      execution: { taskSupport: "required" },
      handler: ({ service }) =>
        Effect.gen(function*() {
          yield* Effect.sleep("2 seconds")
          const answer = yield* McpServer.elicit({
            message: `Deploy ${service}?`,
            requestedSchema: { type: "object", properties: { approve: { type: "boolean" } }, required: ["approve"] }
          })
          yield* Effect.sleep("2 seconds")
          return answer.action === "accept" && answer.content?.approve === true ? `${service} deployed` : "not deployed"
        })
    }),
    McpServer.tool({
      name: "wait",
      parameters: Schema.Struct({ seconds: Schema.Number }),
      execution: { taskSupport: "optional" },
      handler: ({ seconds }) => Effect.as(Effect.sleep(`${seconds} seconds`), `waited ${seconds} s`)
    })
  ]
})

const approving = (asked: Ref.Ref<number>) =>
  ElicitationHandler.ElicitationHandler.of({
    modes: ["form"],
    elicit: () => Effect.as(Ref.update(asked, (n) => n + 1), { action: "accept", content: { approve: true } })
  })

const clientOf = (peer: McpServer.Server, options: McpClient.McpClientOptions = {}) =>
  McpClient.layer({ healthCheckInterval: false, reconnect: false, ...options }).pipe(
    Layer.provideMerge(InProcessTransport.layer(peer))
  )

const settle = Effect.repeat(Effect.yieldNow, { times: 30 })
const advance = (millis: number, times = 1) =>
  Effect.repeat(Effect.andThen(Effect.andThen(settle, TestClock.adjust(`${millis} millis`)), settle), { times: times - 1 })

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string => {
  const first = result.content[0]
  return typeof first === "object" && first !== null && "text" in first ? String(first.text) : ""
}

const paramsOf = (message: unknown): Record<string, unknown> =>
  typeof message === "object" && message !== null && "params" in message && typeof message.params === "object" &&
    message.params !== null
    ? { ...message.params }
    : {}

describe("2026-07-28 tasks extension, in process", () => {
  it.effect("with the opt-in: the extension declared, the task driven, input_required answered with tasks/update", () =>
    Effect.gen(function*() {
      const peer = yield* server
      const asked = yield* Ref.make(0)
      const context = yield* Layer.build(
        clientOf(peer, { tasks: { enabled: true }, elicitation: approving(asked) })
      )
      const client = Context.get(context, McpClient.McpClient)
      const session = yield* client.session
      assert.strictEqual(session.era, "modern")
      assert.isDefined((session.capabilities.extensions ?? {})[McpTasks.EXTENSION_ID])
      const fiber = yield* Effect.forkChild(client.callTool({ name: "deploy", arguments: { service: "api" } }))
      yield* advance(1_000, 8)
      const result = yield* Fiber.join(fiber)
      assert.strictEqual(textOf(result), "api deployed")
      assert.strictEqual(yield* Ref.get(asked), 1)
      const call = (yield* peer.received("tools/call"))[0]!
      const meta = paramsOf(call.message)._meta as Record<string, unknown>
      const capabilities = meta["io.modelcontextprotocol/clientCapabilities"] as Record<string, unknown>
      assert.deepStrictEqual((capabilities.extensions as Record<string, unknown>)[McpTasks.EXTENSION_ID], {})
      const updates = yield* peer.received("tasks/update")
      assert.strictEqual(updates.length, 1)
      assert.deepStrictEqual(paramsOf(updates[0]!.message).inputResponses, {
        elicit_1: { action: "accept", content: { approve: true } }
      })
      // the input request and the result came as notifications/tasks: one poll after the listen began, then none
      // before the 30 s safety net
      assert.strictEqual((yield* peer.received("tasks/get")).length, 1)
      assert.strictEqual((yield* peer.received("subscriptions/listen")).length, 1)
    }))

  it.effect("without the opt-in: a task-required tool is refused with -32021, an optional one runs plainly", () =>
    Effect.gen(function*() {
      const peer = yield* server
      const context = yield* Layer.build(clientOf(peer))
      const client = Context.get(context, McpClient.McpClient)
      const error = yield* Effect.flip(client.callTool({ name: "deploy", arguments: { service: "api" } }))
      assert.strictEqual(error._tag, "MissingClientCapability")
      if (error._tag === "MissingClientCapability") {
        assert.strictEqual(error.cause.code, -32021)
        assert.deepStrictEqual(error.requiredCapabilities, { extensions: { [McpTasks.EXTENSION_ID]: {} } })
      }
      const fiber = yield* Effect.forkChild(client.callTool({ name: "wait", arguments: { seconds: 1 } }))
      yield* advance(1_000, 2)
      assert.strictEqual(textOf(yield* Fiber.join(fiber)), "waited 1 s")
      assert.strictEqual((yield* peer.received("tasks/get")).length, 0)
      const refused = yield* Effect.flip(client.tasks.callTool({ name: "wait", arguments: { seconds: 1 } }))
      assert.strictEqual(refused._tag, "TaskError")
    }))

  it.effect("a handle's interruption cancels the task (tasks/cancel), and the task ends cancelled", () =>
    Effect.gen(function*() {
      const peer = yield* server
      const context = yield* Layer.build(clientOf(peer, { tasks: true }))
      const client = Context.get(context, McpClient.McpClient)
      const handle = yield* client.tasks.callTool({ name: "wait", arguments: { seconds: 100 } })
      assert.strictEqual(handle.era, "modern")
      const waiting = yield* Effect.forkChild(handle.result)
      yield* advance(1_000, 2)
      yield* Fiber.interrupt(waiting)
      const cancels = yield* peer.received("tasks/cancel")
      assert.strictEqual(cancels.length, 1)
      assert.strictEqual(paramsOf(cancels[0]!.message).taskId, handle.taskId)
      assert.strictEqual((yield* client.tasks.get(handle.taskId)).status, "cancelled")
      const listed = yield* Effect.flip(client.tasks.list())
      assert.strictEqual(listed._tag, "TaskError")
    }))
})

describe("2025-11-25 tasks that ask for input", () => {
  it.effect("the server's elicitation/create reaches the elicitation handler while the task shows input_required", () =>
    Effect.gen(function*() {
      const peer = yield* server
      const asked = yield* Ref.make(0)
      const context = yield* Layer.build(clientOf(peer, { era: "legacy", elicitation: approving(asked) }))
      const client = Context.get(context, McpClient.McpClient)
      const handle = yield* client.tasks.callTool({ name: "deploy", arguments: { service: "db" } })
      const result = yield* Effect.forkChild(handle.result)
      yield* advance(1_000, 6)
      assert.strictEqual(textOf(yield* Fiber.join(result)), "db deployed")
      assert.strictEqual(yield* Ref.get(asked), 1)
    }))
})

describe("a durable TaskStore", () => {
  it.effect("a task started by one client is resumed by the next from a file-backed store", () =>
    Effect.gen(function*() {
      const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-tasks-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(directory, { recursive: true, force: true })))
      const storeLayer = TaskStore.layerFileSystem(directory).pipe(Layer.provide(NodeServices.layer), Layer.orDie)
      const store = Context.get(yield* Layer.build(storeLayer), TaskStore.TaskStore)
      const peer = yield* server
      // the first process: starts the task, leaves it running, and goes away
      const taskId = yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(clientOf(peer, { era: "legacy", taskStore: store }))
        const client = Context.get(context, McpClient.McpClient)
        const handle = yield* client.tasks.callTool({ name: "wait", arguments: { seconds: 5 } })
        yield* handle.detach
        return handle.taskId
      }))
      assert.isAbove(Fs.readdirSync(directory).length, 0)
      // the next one finds it in the store and waits for its result
      const context = yield* Layer.build(clientOf(peer, { era: "legacy", taskStore: store }))
      const client = Context.get(context, McpClient.McpClient)
      const stored = yield* client.tasks.stored
      assert.deepStrictEqual(stored.map((task) => [task.taskId, task.tool, task.era]), [[taskId, "wait", "legacy"]])
      const resumed = yield* client.tasks.resume(taskId)
      const result = yield* Effect.forkChild(resumed.result)
      yield* advance(1_000, 7)
      assert.strictEqual(textOf(yield* Fiber.join(result)), "waited 5 s")
      assert.deepStrictEqual(yield* client.tasks.stored, [])
    }))

  it.effect("keyingServers: the store keeps the server's key, and stored matches the task by it", () =>
    Effect.gen(function*() {
      const peer = yield* server
      const memory = yield* TaskStore.makeMemory
      const context = yield* Layer.build(
        clientOf(peer, { era: "legacy", taskStore: TaskStore.keyingServers(memory) })
      )
      const client = Context.get(context, McpClient.McpClient)
      const handle = yield* client.tasks.callTool({ name: "wait", arguments: { seconds: 5 } })
      const target = (yield* client.session).transport.target
      const [kept] = yield* memory.list
      assert.strictEqual(kept?.server, yield* TaskStore.serverKey(target))
      assert.notStrictEqual(kept?.server, target)
      assert.deepStrictEqual((yield* client.tasks.stored).map((task) => task.taskId), [handle.taskId])
    }))

  it.effect("a stored task past its time to live is dropped with TaskError Expired", () =>
    Effect.gen(function*() {
      const peer = yield* server
      const memory = yield* TaskStore.makeMemory
      yield* memory.put({
        taskId: "old",
        server: `in-process:${peer.info.name}`,
        era: "legacy",
        method: "tools/call",
        createdAt: 0,
        expiresAt: 1_000
      })
      yield* TestClock.adjust("2 seconds")
      const context = yield* Layer.build(
        clientOf(peer, { era: "legacy", taskStore: memory })
      )
      const client = Context.get(context, McpClient.McpClient)
      const error = yield* Effect.flip(client.tasks.resume("old"))
      assert.strictEqual(error._tag, "TaskError")
      if (error._tag === "TaskError") assert.strictEqual(error.reason, "Expired")
      assert.deepStrictEqual(yield* memory.list, [])
    }))
})
