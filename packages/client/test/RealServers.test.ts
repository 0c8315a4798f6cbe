/**
 * The client against real MCP servers from npm, started as child processes over stdio.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as StdioTransport from "../src/StdioTransport.js"
import * as Recording from "./utils/recordingTransport.js"
import * as RealServers from "./utils/realServers.js"
import { validateClientMessage } from "./utils/schemaValidator.js"

const clientOver = (server: RealServers.ServerCommand, options: McpClient.McpClientOptions = {}) =>
  McpClient.layer({
    healthCheckInterval: false,
    // a slow start on a loaded machine must not read as "legacy"
    probeTimeout: "20 seconds",
    clientInfo: { name: "conduit-tests", version: "0.1.0" },
    ...options
  })
    .pipe(
      Layer.provideMerge(
        Recording.layer(
          StdioTransport.layer({ command: server.command, args: server.args, closeTimeout: "1 second" })
        )
      ),
      Layer.provide(NodeServices.layer)
    )

const textOf = (result: McpSchema.CallToolResult) =>
  result.content.flatMap((block) => (block.type === "text" && "text" in block ? [block.text] : [])).join("")

/** Every message sent validates against the schema of the revision it was sent under. */
const assertSentMessagesValid = (negotiated: string) =>
  Effect.gen(function*() {
    const recorder = yield* Recording.Recorder
    const sent = yield* recorder.sent
    assert.isAbove(sent.length, 0)
    for (const message of sent) {
      const params = "params" in message ? message.params : undefined
      const meta = typeof params === "object" && params !== null && "_meta" in params ? params._meta : undefined
      const modern = typeof meta === "object" && meta !== null
        ? (meta as Record<string, unknown>)["io.modelcontextprotocol/protocolVersion"]
        : undefined
      const revision = typeof modern === "string" ? modern : negotiated
      const verdict = validateClientMessage(revision, message)
      assert.isTrue(verdict.ok, `${JSON.stringify(message)} at ${revision}: ${verdict.ok ? "" : verdict.errors}`)
    }
  })

describe("server-everything (legacy only) over stdio", () => {
  it.layer(clientOver(RealServers.everything), { timeout: 60_000 })((it) => {
    it.effect("the probe falls back to legacy and the handshake completes", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const session = yield* client.session
        assert.strictEqual(session.era, "legacy")
        assert.strictEqual(session.protocolVersion, RealServers.everything.latestVersion)
        assert.strictEqual(session.serverInfo?.name, RealServers.everything.serverInfo.name)
        assert.strictEqual(session.transport.binding, "stdio")
        const recorder = yield* Recording.Recorder
        const methods = (yield* recorder.sent).flatMap((m) => ("method" in m ? [m.method] : []))
        assert.deepStrictEqual(methods.slice(0, 3), ["server/discover", "initialize", "notifications/initialized"])
      }))

    it.effect("tools are listed and called", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const tools = yield* client.listTools()
        const names = tools.map((t) => t.name)
        assert.include(names, RealServers.everything.tools.echo.name)
        assert.include(names, RealServers.everything.tools.longRunning.name)
        const result = yield* client.callTool({ name: "echo", arguments: { message: "hello conduit" } })
        assert.strictEqual(textOf(result), RealServers.everything.tools.echo.reply("hello conduit"))
      }))

    it.effect("a resource is read and a prompt fetched", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const resource = yield* client.readResource({ uri: RealServers.everything.resources.dynamicText(1) })
        assert.strictEqual(resource.contents[0].uri, RealServers.everything.resources.dynamicText(1))
        assert.isTrue("text" in resource.contents[0])
        const prompt = yield* client.getPrompt({
          name: RealServers.everything.prompts.withArguments.name,
          arguments: { city: "Lisbon" }
        })
        const first = prompt.messages[0].content
        assert.strictEqual(
          first.type === "text" && "text" in first ? first.text : undefined,
          RealServers.everything.prompts.withArguments.text("Lisbon")
        )
      }))

    it.effect("progress arrives from the long-running tool", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const progress: Array<McpSchema.Progress> = []
        yield* client.callTool(
          { name: RealServers.everything.tools.longRunning.name, arguments: { duration: 0.3, steps: 3 } },
          { onProgress: (p) => Effect.sync(() => progress.push(p)) }
        )
        assert.deepStrictEqual(progress.map((p) => [p.progress, p.total]), [[1, 3], [2, 3], [3, 3]])
      }))

    it.effect("every message sent validates against the official schema", () =>
      assertSentMessagesValid(RealServers.everything.latestVersion))
  })
})

describe("SDK v2 dual-era server over stdio", () => {
  it.layer(clientOver(RealServers.sdkV2), { timeout: 60_000 })((it) => {
    it.effect("is discovered as modern and every request carries the modern _meta", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const session = yield* client.session
        assert.strictEqual(session.era, "modern")
        assert.strictEqual(session.protocolVersion, "2026-07-28")
        assert.strictEqual(session.serverInfo?.name, RealServers.sdkV2.serverInfo.name)
        const result = yield* client.callTool({ name: "echo", arguments: { message: "modern" } })
        assert.strictEqual(textOf(result), RealServers.sdkV2.tools.echo.reply("modern"))
        const progress: Array<McpSchema.Progress> = []
        const done = yield* client.callTool(
          { name: "progress", arguments: { steps: 3, intervalMs: 10 } },
          { onProgress: (p) => Effect.sync(() => progress.push(p)) }
        )
        assert.strictEqual(textOf(done), RealServers.sdkV2.tools.progress.reply(3))
        assert.deepStrictEqual(progress.map((p) => p.progress), [1, 2, 3])
        yield* client.listTools()
        const recorder = yield* Recording.Recorder
        const requests = (yield* recorder.sent).filter((m): m is McpSchema.JsonRpcRequest => "method" in m && "id" in m)
        assert.isAbove(requests.length, 3)
        for (const request of requests) {
          const meta = (request.params as { _meta?: Record<string, unknown> })._meta
          assert.strictEqual(meta?.["io.modelcontextprotocol/protocolVersion"], "2026-07-28", request.method)
          assert.isObject(meta?.["io.modelcontextprotocol/clientCapabilities"])
          assert.deepStrictEqual(meta?.["io.modelcontextprotocol/clientInfo"], { name: "conduit-tests", version: "0.1.0" })
        }
      }))

    it.effect("every message sent validates against the official schema", () => assertSentMessagesValid("2026-07-28"))
  })

  it.layer(clientOver(RealServers.sdkV2, { era: "legacy" }), { timeout: 60_000 })((it) => {
    it.effect("pinned to legacy, it is served through the initialize handshake", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const session = yield* client.session
        assert.strictEqual(session.era, "legacy")
        assert.strictEqual(session.protocolVersion, "2025-11-25")
        const result = yield* client.callTool({ name: "echo", arguments: { message: "legacy" } })
        assert.strictEqual(textOf(result), RealServers.sdkV2.tools.echo.reply("legacy"))
        const recorder = yield* Recording.Recorder
        const methods = (yield* recorder.sent).flatMap((m) => ("method" in m ? [m.method] : []))
        assert.deepStrictEqual(methods.slice(0, 3), ["initialize", "notifications/initialized", "tools/call"])
      }))

    it.effect("every message sent validates against the official schema", () => assertSentMessagesValid("2025-11-25"))
  })
})
