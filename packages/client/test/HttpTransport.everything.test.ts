/**
 * The client over HTTP against `@modelcontextprotocol/server-everything` (SDK v1), started as a child process in
 * its streamable-HTTP mode (legacy Streamable HTTP with sessions) and in its SSE mode (HTTP+SSE, 2024-11-05).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Common from "./fixtures/http/common.js"
import * as Everything from "./fixtures/http/everything.js"

const textOf = (result: McpSchema.CallToolResult) =>
  result.content.flatMap((block) => (block.type === "text" && "text" in block ? [block.text] : [])).join("")

/** Turns on the server's simulated logging and waits for the first `notifications/message`. */
const firstLogMessage = (client: McpClient.McpClientService) =>
  Effect.gen(function*() {
    const notifications = yield* client.subscribe
    yield* client.callTool({ name: "toggle-simulated-logging", arguments: {} })
    return yield* notifications.pipe(
      Stream.filter((notification) => notification.method === "notifications/message"),
      Stream.runHead,
      Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.fail("no notifications/message arrived") }),
      Effect.orDie
    )
  })

describe("server-everything over HTTP", () => {
  it.live("streamable-HTTP mode: legacy Streamable HTTP, session kept, GET stream notifications, DELETE at close", () =>
    Effect.gen(function*() {
      const server = yield* Everything.start("streamableHttp")
      const sessionId = yield* Effect.scoped(
        Effect.gen(function*() {
          const { client, recorder } = yield* Common.connect({ url: server.url })
          const session = yield* client.session
          assert.strictEqual(session.era, "legacy")
          assert.strictEqual(session.protocolVersion, "2025-11-25")
          assert.strictEqual(session.transport.binding, "streamable-http")
          assert.strictEqual(session.serverInfo?.name, "mcp-servers/everything")

          const tools = yield* client.listTools()
          assert.include(tools.map((tool) => tool.name), "echo")
          const echo = yield* client.callTool({ name: "echo", arguments: { message: "over http" } })
          assert.strictEqual(textOf(echo), "Echo: over http")
          const sum = yield* client.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } })
          assert.include(textOf(sum), "42")

          // the server sends its log messages on the GET stream (they belong to no request)
          const initialized = yield* server.awaitLine("Session initialized with ID: ")
          const id = initialized.slice(initialized.indexOf("ID: ") + 4).trim()
          yield* server.awaitLine(`Establishing new SSE stream for session ${id}`)
          const message = yield* firstLogMessage(client)
          assert.isTrue(typeof message === "object" && message._tag === "Some")

          // one session for everything: a request without it would have opened another
          assert.strictEqual(server.stdout.filter((line) => line.includes("Session initialized")).length, 1)
          yield* Common.assertSentMessagesValid(recorder, session.protocolVersion)
          return id
        })
      )
      yield* server.awaitLine(`Received session termination request for session ${sessionId}`).pipe(
        Effect.timeoutOrElse({ duration: "5 seconds", orElse: () => Effect.fail("no DELETE arrived") }),
        Effect.orDie
      )
    }).pipe(Effect.scoped), 30_000)

  it.live("SSE mode: HTTP+SSE is detected from the same kind of URL and fully usable", () =>
    Effect.gen(function*() {
      const server = yield* Everything.start("sse")
      const { client, recorder } = yield* Common.connect({ url: server.url })
      const session = yield* client.session
      assert.strictEqual(session.era, "legacy")
      assert.strictEqual(session.transport.binding, "sse")
      assert.strictEqual(session.serverInfo?.name, "mcp-servers/everything")
      const tools = yield* client.listTools()
      assert.include(tools.map((tool) => tool.name), "get-sum")
      const echo = yield* client.callTool({ name: "echo", arguments: { message: "over sse" } })
      assert.strictEqual(textOf(echo), "Echo: over sse")
      const resource = yield* client.readResource({ uri: "demo://resource/dynamic/text/1" })
      assert.strictEqual(resource.contents[0]!.uri, "demo://resource/dynamic/text/1")
      const prompt = yield* client.getPrompt({ name: "simple-prompt" })
      assert.strictEqual(prompt.messages.length, 1)
      const reports: Array<number> = []
      const long = yield* client.callTool(
        { name: "trigger-long-running-operation", arguments: { duration: 0.2, steps: 2 } },
        { onProgress: (report) => Effect.sync(() => reports.push(report.progress)) }
      )
      assert.include(textOf(long), "Long running operation completed")
      assert.deepStrictEqual(reports, [1, 2])
      const message = yield* firstLogMessage(client)
      assert.isTrue(message._tag === "Some")
      yield* Common.assertSentMessagesValid(recorder, session.protocolVersion)
    }).pipe(Effect.scoped), 30_000)
})
