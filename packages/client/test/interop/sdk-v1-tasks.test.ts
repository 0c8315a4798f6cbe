/**
 * Interop: tasks against a third-party server, the official SDK v1's experimental task API
 * (`experimental.tasks.registerToolTask` over its InMemoryTaskStore), over stdio and Streamable HTTP on 127.0.0.1:
 * a task-required tool driven by plain `callTool` (its progress on the creating call's token, over stdio), a
 * handle's status messages, cancellation reaching the server, `tasks/list`, and a task that fails. On the real
 * clock: the server works in real time.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as McpClient from "../../src/McpClient.js"
import type * as McpSchema from "../../src/McpSchema.js"
import * as Interop from "../utils/interop.js"

const script = Interop.fixture("sdk-v1-tasks.mjs")

const textOf = (result: McpSchema.CallToolResult): string =>
  result.content.flatMap((block) => (block.type === "text" && "text" in block ? [block.text] : [])).join("")

const bindings = [
  ["stdio", Interop.overStdio([script, "stdio"])],
  [
    "Streamable HTTP",
    Interop.overHttp(Effect.map(
      Interop.startHttp((port) => [script, "http", String(port)], "interop server listening"),
      (port) => `http://127.0.0.1:${port}/mcp`
    ))
  ]
] as const

for (const [binding, clientLayer] of bindings) {
  describe(`SDK v1 experimental tasks over ${binding}`, () => {
    layer(clientLayer, { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("the tools require tasks; callTool drives one to its result", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const session = yield* client.session
          assert.strictEqual(session.era, "legacy")
          assert.isDefined(session.capabilities.tasks)
          const tools = yield* client.listTools()
          assert.strictEqual(tools.find((tool) => tool.name === "countdown")?.execution?.taskSupport, "required")
          const reports = yield* Ref.make<ReadonlyArray<number>>([])
          const result = yield* client.callTool(
            { name: "countdown", arguments: { steps: 3 } },
            { onProgress: (progress) => Ref.update(reports, (all) => [...all, progress.progress]) }
          )
          assert.strictEqual(textOf(result), "counted to 3")
          // over stdio the server's reports after the task was created reach the caller; the SDK's HTTP transport
          // has no stream left for them once the creating call was answered
          if (binding === "stdio") assert.deepStrictEqual(yield* Ref.get(reports), [1, 2, 3])
        }))

      it.effect("a handle: the status messages, then completed; tasks/list knows the task", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const handle = yield* client.tasks.callTool({ name: "countdown", arguments: { steps: 4 } })
          const statuses = yield* Stream.runCollect(handle.status)
          assert.strictEqual(statuses[statuses.length - 1]?.status, "completed")
          assert.isTrue(statuses.some((state) => /^step \d of 4$/.test(state.statusMessage ?? "")), JSON.stringify(statuses))
          assert.strictEqual(textOf(yield* handle.result), "counted to 4")
          const page = yield* client.tasks.list()
          assert.isTrue(page.tasks.some((task) => task.taskId === handle.taskId))
        }))

      it.effect("interrupting the wait sends tasks/cancel: the server's task ends cancelled", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const handle = yield* client.tasks.callTool({ name: "countdown", arguments: { steps: 500 } })
          const waiting = yield* Effect.forkChild(handle.result)
          yield* Effect.sleep("300 millis")
          yield* Fiber.interrupt(waiting)
          const state = yield* client.tasks.get(handle.taskId)
          assert.strictEqual(state.status, "cancelled")
        }))

      it.effect("a task that fails: its isError result", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const result = yield* client.callTool({ name: "explode" })
          assert.isTrue(result.isError)
          assert.strictEqual(textOf(result), "the fuse burnt out")
        }))
    })
  })
}
