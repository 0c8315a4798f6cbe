/**
 * One behavioural suite for the client, run over every transport layer and both eras against the fixture
 * server (packages/client/test/utils/fixtureServer.ts): listing, calling, reading, prompts, completion,
 * progress, cancellation, timeouts and errors must look the same from the caller's side whatever carries them.
 */
import { assert, describe, layer as withLayer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as McpClient from "../../src/McpClient.js"
import type * as McpSchema from "../../src/McpSchema.js"
import * as FixtureServer from "./fixtureServer.js"
import { validateClientMessage } from "./schemaValidator.js"
import * as Recording from "./recordingTransport.js"

/** What the suite needs to see on the server's side. */
export class ServerSide extends Context.Service<ServerSide, {
  /** Waits until the server has seen request `id` interrupted (its handler stopped). */
  readonly awaitInterrupted: (id: McpSchema.RequestId) => Effect.Effect<void>
}>()("test/ServerSide") {}

const textOf = (result: McpSchema.CallToolResult) =>
  result.content.flatMap((block) => (block.type === "text" && "text" in block ? [block.text] : [])).join("")

const lastToolCall = (name: string) =>
  Effect.gen(function*() {
    const recorder = yield* Recording.Recorder
    const calls = yield* recorder.sentWithMethod("tools/call")
    const call = [...calls].reverse().find((m) => (m.params as { name?: string }).name === name)
    assert.isDefined(call)
    assert.isTrue(call !== undefined && "id" in call)
    return (call as McpSchema.JsonRpcRequest).id
  })

/** Waits for the first progress report of a running call (the `hang` tool reports progress 0 once running). */
const startHang = (client: McpClient.McpClientService, options: McpClient.RequestOptions = {}) =>
  Effect.gen(function*() {
    let started: (() => void) | undefined
    const running = Effect.callback<void>((resume) => {
      started = () => resume(Effect.void)
    })
    const fiber = yield* Effect.forkChild(
      client.callTool({ name: "hang" }, { ...options, onProgress: () => Effect.sync(() => started?.()) })
    )
    yield* running
    return fiber
  })

export const behaviourSuite = <E>(
  name: string,
  layer: Layer.Layer<McpClient.McpClient | Recording.Recorder | ServerSide, E>,
  expected: { readonly era: McpSchema.Era; readonly binding: string }
) =>
  describe(name, () => {
    // Real processes and real time: the layer runs without the test clock.
    withLayer(layer, { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("connects in the expected era and reports the server", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const session = yield* client.session
          assert.strictEqual(session.era, expected.era)
          assert.strictEqual(session.transport.binding, expected.binding)
          assert.strictEqual(session.serverInfo?.name, FixtureServer.SERVER_NAME)
          assert.strictEqual(session.instructions, FixtureServer.INSTRUCTIONS)
          assert.isDefined(session.capabilities.tools)
        }))

      it.effect("lists every tool across pages and calls them", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const tools = yield* client.listTools()
          assert.deepStrictEqual(tools.map((t) => t.name), [...FixtureServer.TOOL_NAMES])
          const streamed = yield* Stream.runCollect(client.streamTools())
          assert.strictEqual(streamed.length, FixtureServer.TOOL_NAMES.length)
          const echo = yield* client.callTool({ name: "echo", arguments: { text: "héllo 🌍" } })
          assert.strictEqual(textOf(echo), "héllo 🌍")
          const sum = yield* client.callTool({ name: "add", arguments: { a: 2, b: 40 } })
          assert.deepStrictEqual(sum.structuredContent, { sum: 42 })
        }))

      it.effect("a failing tool is a result with isError, an unknown tool a typed error", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const failed = yield* client.callTool({ name: "fail", arguments: { message: "nope" } })
          assert.isTrue(failed.isError)
          assert.strictEqual(textOf(failed), "nope")
          const unknown = yield* Effect.flip(client.callTool({ name: "no-such-tool" }))
          assert.strictEqual(unknown._tag, "McpError")
          if (unknown._tag === "McpError") assert.strictEqual(unknown.method, "tools/call")
        }))

      it.effect("resources, templates, prompts and completion", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const resources = yield* client.listResources()
          assert.deepStrictEqual(resources.map((r) => r.uri), ["fixture://hello"])
          const templates = yield* client.listResourceTemplates()
          assert.deepStrictEqual(templates.map((t) => t.uriTemplate), ["fixture://items/{id}"])
          const hello = yield* client.readResource({ uri: "fixture://hello" })
          assert.strictEqual("text" in hello.contents[0] ? hello.contents[0].text : undefined, "Hello, world!")
          const item = yield* client.readResource({ uri: "fixture://items/20" })
          assert.strictEqual("text" in item.contents[0] ? item.contents[0].text : undefined, "item 20")
          const prompts = yield* client.listPrompts()
          assert.deepStrictEqual(prompts.map((p) => p.name), ["greet"])
          const prompt = yield* client.getPrompt({ name: "greet", arguments: { name: "Ada" } })
          const content = prompt.messages[0].content
          assert.strictEqual(content.type === "text" && "text" in content ? content.text : undefined, "Hello, Ada!")
          const completion = yield* client.complete({
            ref: { type: "ref/prompt", name: "greet" },
            argument: { name: "name", value: "al" }
          })
          assert.deepStrictEqual(completion.completion.values, ["alice", "albert"])
          const missing = yield* Effect.flip(client.readResource({ uri: "fixture://nothing" }))
          // legacy servers answer -32002, 2026-07-28 ones -32602: both are a typed ResourceNotFound
          assert.strictEqual(missing._tag, "ResourceNotFound")
        }))

      it.effect("progress reaches the caller, in order", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const seen: Array<McpSchema.Progress> = []
          const result = yield* client.callTool(
            { name: "slow", arguments: { steps: 4, delayMs: 5 } },
            { onProgress: (p) => Effect.sync(() => seen.push(p)) }
          )
          assert.strictEqual(textOf(result), "done after 4 steps")
          assert.deepStrictEqual(seen.map((p) => [p.progress, p.total]), [[1, 4], [2, 4], [3, 4], [4, 4]])
        }))

      it.effect("progress as a Stream: every report, then the result", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const events = [...yield* Stream.runCollect(
            client.callToolStream({ name: "slow", arguments: { steps: 3, delayMs: 5 } })
          )]
          assert.deepStrictEqual(events.map((e) => e._tag), ["Progress", "Progress", "Progress", "Result"])
          const last = events[3]
          assert.strictEqual(last._tag === "Result" ? textOf(last.result) : "", "done after 3 steps")
        }))

      it.effect("ending a progress stream early cancels the call on the server", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const first = yield* Stream.runHead(client.callToolStream({ name: "hang" }))
          assert.strictEqual(Option.getOrUndefined(first)?._tag, "Progress")
          const id = yield* lastToolCall("hang")
          const server = yield* ServerSide
          yield* server.awaitInterrupted(id)
        }))

      it.effect("interrupting a call cancels it on the server; the connection goes on", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const fiber = yield* startHang(client)
          const id = yield* lastToolCall("hang")
          yield* Fiber.interrupt(fiber)
          const server = yield* ServerSide
          yield* server.awaitInterrupted(id)
          const recorder = yield* Recording.Recorder
          const cancels = (yield* recorder.entries).filter((e) => e._tag === "Cancel")
          assert.isTrue(cancels.some((c) => c._tag === "Cancel" && c.id === id && c.reason === "interrupted"))
          const echo = yield* client.callTool({ name: "echo", arguments: { text: "still here" } })
          assert.strictEqual(textOf(echo), "still here")
        }))

      it.effect("a timeout is a typed error and cancels the call on the server", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const error = yield* Effect.flip(client.callTool({ name: "hang" }, { timeout: "300 millis" }))
          assert.strictEqual(error._tag, "RequestTimeout")
          const id = yield* lastToolCall("hang")
          const server = yield* ServerSide
          yield* server.awaitInterrupted(id)
        }))

      it.effect("the caller's own timeout (Effect.timeout) cancels the same way", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const outcome = yield* client.callTool({ name: "hang" }).pipe(Effect.timeout("200 millis"), Effect.option)
          assert.isTrue(Option.isNone(outcome))
          const id = yield* lastToolCall("hang")
          const server = yield* ServerSide
          yield* server.awaitInterrupted(id)
        }))

      it.effect("server log messages reach the notification stream", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          yield* client.setLoggingLevel("warning")
          const subscription = yield* client.subscribe
          const logs = yield* subscription.pipe(
            Stream.filter((n) => n.method === "notifications/message"),
            Stream.take(5),
            Stream.runCollect,
            Effect.forkChild
          )
          yield* client.callTool({ name: "log" })
          const levels = [...(yield* Fiber.join(logs))].map((n) => (n.params as { level: string }).level)
          assert.deepStrictEqual(levels, ["warning", "error", "critical", "alert", "emergency"])
        }).pipe(Effect.scoped))

      it.effect("every message sent validates against the official schema of its revision", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const session = yield* client.session
          const recorder = yield* Recording.Recorder
          const sent = yield* recorder.sent
          assert.isAbove(sent.length, 10)
          for (const message of sent) {
            const params = "params" in message ? message.params as { _meta?: Record<string, unknown> } : undefined
            const modern = params?._meta?.["io.modelcontextprotocol/protocolVersion"]
            const revision = typeof modern === "string" ? modern : session.protocolVersion
            const verdict = validateClientMessage(revision, message)
            assert.isTrue(verdict.ok, `${JSON.stringify(message)}: ${verdict.ok ? "" : verdict.errors}`)
          }
        }))
    })
  })
