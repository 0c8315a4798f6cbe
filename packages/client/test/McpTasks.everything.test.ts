/**
 * The 2025-11-25 task-required tool of a real server: `@modelcontextprotocol/server-everything`'s
 * `simulate-research-query` (`execution.taskSupport: "required"`, four one-second stages, `pollInterval` 1 s) over
 * stdio, called with plain `callTool` and through a handle, and with an ambiguous topic (the task asks for a
 * clarification through `tasks/result`). On the live clock: the server works in real seconds.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as ElicitationHandler from "../src/ElicitationHandler.js"
import * as McpClient from "../src/McpClient.js"
import * as StdioTransport from "../src/StdioTransport.js"
import * as RealServers from "./utils/realServers.js"

const client = McpClient.layer({
  healthCheckInterval: false,
  probeTimeout: "20 seconds",
  clientInfo: { name: "conduit-tests", version: "0.1.0" }
}).pipe(
  Layer.provide(StdioTransport.layer({
    command: RealServers.everything.command,
    args: RealServers.everything.args,
    closeTimeout: "1 second"
  })),
  Layer.provide(NodeServices.layer)
)

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string => {
  const first = result.content[0]
  return typeof first === "object" && first !== null && "text" in first ? String(first.text) : ""
}

describe("server-everything's simulate-research-query (a task-required tool) over stdio", () => {
  it.live("it declares taskSupport required, and callTool drives it to its report", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const session = yield* client.session
      assert.isDefined(session.capabilities.tasks)
      const tools = yield* client.listTools()
      const tool = tools.find((candidate) => candidate.name === "simulate-research-query")
      assert.strictEqual(tool?.execution?.taskSupport, "required")
      const result = yield* client.callTool({ name: "simulate-research-query", arguments: { topic: "tides" } })
      assert.include(textOf(result), "# Research Report: tides")
    }).pipe(Effect.provide(client)), 30_000)

  it.live("a handle: its statuses end with completed, then the result", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const handle = yield* client.tasks.callTool({ name: "simulate-research-query", arguments: { topic: "eels" } })
      const statuses = Array.from(yield* Stream.runCollect(handle.status))
      assert.strictEqual(statuses[statuses.length - 1]?.status, "completed")
      assert.isTrue(statuses.some((state) => (state.statusMessage ?? "").length > 0))
      const result = yield* handle.result
      assert.include(textOf(result), "# Research Report: eels")
    }).pipe(Effect.provide(client)), 30_000)

  it.live("a handle cancelled on the way: tasks/cancel, then the task is cancelled", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const handle = yield* client.tasks.callTool({ name: "simulate-research-query", arguments: { topic: "moss" } })
      yield* handle.cancel
      const state = yield* client.tasks.get(handle.taskId)
      assert.strictEqual(state.status, "cancelled")
      const listed = yield* client.tasks.list()
      assert.isTrue(listed.tasks.some((task) => task.taskId === handle.taskId))
    }).pipe(Effect.provide(client)), 30_000)
})

describe("server-everything's simulate-research-query when the topic is ambiguous", () => {
  it.live("the task asks for a clarification (input_required): the elicitation handler answers it", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<string>>([])
      const elicitation = ElicitationHandler.ElicitationHandler.of({
        modes: ["form"],
        elicit: (request) =>
          Effect.gen(function*() {
            yield* Ref.update(asked, (all) => [...all, request.message])
            // the first interpretation the form offers
            const options = request.mode === "form" ? request.requestedSchema.properties.interpretation?.oneOf : undefined
            const first: unknown = Array.isArray(options) ? options[0] : undefined
            const choice = Predicate.isObject(first) && typeof first.const === "string" ? first.const : "any"
            return { action: "accept" as const, content: { interpretation: choice } }
          })
      })
      const withElicitation = McpClient.layer({
        healthCheckInterval: false,
        probeTimeout: "20 seconds",
        clientInfo: { name: "conduit-tests", version: "0.1.0" },
        elicitation
      }).pipe(
        Layer.provide(StdioTransport.layer({
          command: RealServers.everything.command,
          args: RealServers.everything.args,
          closeTimeout: "1 second"
        })),
        Layer.provide(NodeServices.layer)
      )
      const result = yield* Effect.flatMap(McpClient.McpClient, (client) =>
        client.callTool({ name: "simulate-research-query", arguments: { topic: "python", ambiguous: true } })).pipe(
          Effect.provide(withElicitation)
        )
      assert.strictEqual((yield* Ref.get(asked)).length, 1)
      assert.include(textOf(result), "**Clarification**")
      assert.include(textOf(result), "input_required")
    }), 30_000)
})
