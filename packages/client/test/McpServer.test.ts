import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Path from "node:path"
import * as McpError from "../src/McpError.js"
import * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "@conduit-mcp/server/McpServer"
import { awaitSleep, withSleepLog } from "./utils/clock.js"
import * as FixtureServer from "./utils/fixtureServer.js"
import { type Revision, repositoryRoot, validateDefinition } from "./utils/schemaValidator.js"

const { modern } = FixtureServer

const assertValid = (revision: Revision, name: string, value: unknown) =>
  assert.deepStrictEqual(validateDefinition(revision, name, value), { ok: true }, `${name} (${revision})`)

const textOf = (result: Record<string, unknown>): string => {
  const content = result.content
  assert.isTrue(Array.isArray(content))
  const first: unknown = Array.isArray(content) ? content[0] : undefined
  return typeof first === "object" && first !== null && "text" in first ? String(first.text) : ""
}

describe("McpServer modern era", () => {
  it.effect("server/discover describes the server", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make())
      const result = yield* peer.result("server/discover", modern())
      assertValid("2026-07-28", "DiscoverResult", result)
      assert.deepStrictEqual(result.supportedVersions, [
        "2026-07-28",
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2024-11-05"
      ])
      assert.deepStrictEqual(result.capabilities, {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        completions: {},
        logging: {}
      })
      assert.strictEqual(result.instructions, FixtureServer.INSTRUCTIONS)
      assert.strictEqual(result.resultType, "complete")
      assert.deepStrictEqual(result._meta, {
        [McpSchema.MetaKeys.serverInfo]: { name: FixtureServer.SERVER_NAME, version: FixtureServer.SERVER_VERSION }
      })
    }))

  it.effect("a request without the _meta envelope is refused with -32602", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make())
      const noMeta = yield* peer.error("server/discover", {})
      assert.strictEqual(noMeta.code, -32602)
      const noCapabilities = yield* peer.error("tools/list", {
        _meta: { [McpSchema.MetaKeys.protocolVersion]: FixtureServer.MODERN }
      })
      assert.strictEqual(noCapabilities.code, -32602)
      const badLogLevel = yield* peer.error("tools/list", modern({}, { [McpSchema.MetaKeys.logLevel]: "loud" }))
      assert.strictEqual(badLogLevel.code, -32602)
    }))

  it.effect("an unsupported version is refused with -32022 listing the supported ones", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make({ eras: "modern" }))
      for (const requested of ["2099-01-01", "2025-11-25"]) {
        const error = yield* peer.error(
          "server/discover",
          modern({}, { [McpSchema.MetaKeys.protocolVersion]: requested })
        )
        assertValid("2026-07-28", "UnsupportedProtocolVersionError", { jsonrpc: "2.0", id: 1, error })
        assert.deepStrictEqual(error.data, { supported: ["2026-07-28"], requested })
      }
    }))

  it.effect("lists paginate with opaque cursors", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make({ pageSize: 4 }))
      const first = yield* peer.result("tools/list", modern())
      assertValid("2026-07-28", "ListToolsResult", first)
      assert.isString(first.nextCursor)
      const second = yield* peer.result("tools/list", modern({ cursor: first.nextCursor }))
      assertValid("2026-07-28", "ListToolsResult", second)
      assert.isUndefined(second.nextCursor)
      const names = [first, second].flatMap((page) =>
        Array.isArray(page.tools) ? page.tools.map((tool: { readonly name: string }) => tool.name) : []
      )
      assert.deepStrictEqual(names, [...FixtureServer.TOOL_NAMES])

      assert.strictEqual((yield* peer.error("tools/list", modern({ cursor: "nonsense" }))).code, -32602)
      // A cursor belongs to the list that issued it.
      assert.strictEqual((yield* peer.error("prompts/list", modern({ cursor: first.nextCursor }))).code, -32602)
    }))

  it.effect("tools/call runs the handler; failures are results with isError", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make())
      const echo = yield* peer.result("tools/call", modern({ name: "echo", arguments: { text: "hi" } }))
      assertValid("2026-07-28", "CallToolResult", echo)
      assert.deepStrictEqual(echo.content, [{ type: "text", text: "hi" }])
      assert.strictEqual(echo.resultType, "complete")

      const add = yield* peer.result("tools/call", modern({ name: "add", arguments: { a: 2, b: 3 } }))
      assert.deepStrictEqual(add.structuredContent, { sum: 5 })

      const fail = yield* peer.result("tools/call", modern({ name: "fail", arguments: {} }))
      assertValid("2026-07-28", "CallToolResult", fail)
      assert.strictEqual(fail.isError, true)
      assert.strictEqual(textOf(fail), "requested failure")

      const invalid = yield* peer.result("tools/call", modern({ name: "echo", arguments: { text: 42 } }))
      assert.strictEqual(invalid.isError, true)
      assert.include(textOf(invalid), "Invalid arguments for tool echo")

      const unknown = yield* peer.error("tools/call", modern({ name: "nope", arguments: {} }))
      assert.strictEqual(unknown.code, -32602)
    }))

  it.effect("progress is reported when the request carries a progress token", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make())
      const id = yield* peer.start(
        "tools/call",
        modern({ name: "slow", arguments: { steps: 3, delayMs: 100 } }, { progressToken: "tok" })
      )
      for (let step = 0; step < 3; step++) {
        yield* awaitSleep("100 millis")
        yield* TestClock.adjust("100 millis")
      }
      const response = yield* peer.response(id)
      assert.isTrue("result" in response)
      const progress = yield* peer.notifications("notifications/progress")
      assert.deepStrictEqual(progress.map((n) => n.params), [1, 2, 3].map((step) => ({
        progressToken: "tok",
        progress: step,
        total: 3,
        message: `step ${step} of 3`
      })))
      for (const notification of progress) assertValid("2026-07-28", "ProgressNotification", notification)
      // Progress arrives before the response.
      const sent = yield* peer.sent
      assert.strictEqual(sent.findIndex((message) => McpSchema.isResponse(message)), sent.length - 1)

      const quiet = yield* peer.start("tools/call", modern({ name: "slow", arguments: { steps: 1, delayMs: 100 } }))
      yield* awaitSleep("100 millis")
      yield* TestClock.adjust("100 millis")
      yield* peer.response(quiet)
      assert.strictEqual((yield* peer.notifications("notifications/progress")).length, 3)
    }).pipe(withSleepLog))

  it.effect("log messages are sent only at or above the request's log level", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make())
      yield* peer.result("tools/call", modern({ name: "log", arguments: {} }))
      assert.strictEqual((yield* peer.notifications("notifications/message")).length, 0)
      yield* peer.result(
        "tools/call",
        modern({ name: "log", arguments: {} }, { [McpSchema.MetaKeys.logLevel]: "error" })
      )
      const messages = yield* peer.notifications("notifications/message")
      assert.deepStrictEqual(
        messages.map((n) => n.params),
        ["error", "critical", "alert", "emergency"].map((level) => ({
          level,
          data: `${level} message`,
          logger: "fixture"
        }))
      )
      for (const message of messages) assertValid("2026-07-28", "LoggingMessageNotification", message)
    }))

  it.effect("resources, templates and their completions", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make())
      const list = yield* peer.result("resources/list", modern())
      assertValid("2026-07-28", "ListResourcesResult", list)
      assert.deepStrictEqual(list.resources, [{
        uri: "fixture://hello",
        name: "hello",
        description: "A greeting.",
        mimeType: "text/plain"
      }])
      const templates = yield* peer.result("resources/templates/list", modern())
      assertValid("2026-07-28", "ListResourceTemplatesResult", templates)
      assert.deepStrictEqual(templates.resourceTemplates, [{
        uriTemplate: "fixture://items/{id}",
        name: "item",
        mimeType: "text/plain"
      }])

      const hello = yield* peer.result("resources/read", modern({ uri: "fixture://hello" }))
      assertValid("2026-07-28", "ReadResourceResult", hello)
      assert.deepStrictEqual(hello.contents, [
        { uri: "fixture://hello", mimeType: "text/plain", text: "Hello, world!" }
      ])
      const item = yield* peer.result("resources/read", modern({ uri: "fixture://items/7" }))
      assert.deepStrictEqual(item.contents, [{ uri: "fixture://items/7", mimeType: "text/plain", text: "item 7" }])
      const missing = yield* peer.error("resources/read", modern({ uri: "fixture://nothing" }))
      assert.strictEqual(missing.code, -32602)

      const completion = yield* peer.result(
        "completion/complete",
        modern({ ref: { type: "ref/resource", uri: "fixture://items/{id}" }, argument: { name: "id", value: "1" } })
      )
      assertValid("2026-07-28", "CompleteResult", completion)
      assert.deepStrictEqual(completion.completion, { values: ["1", "10"], total: 2, hasMore: false })
    }))

  it.effect("prompts and prompt argument completion", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make())
      const list = yield* peer.result("prompts/list", modern())
      assertValid("2026-07-28", "ListPromptsResult", list)
      const greet = yield* peer.result("prompts/get", modern({ name: "greet", arguments: { name: "Ada" } }))
      assertValid("2026-07-28", "GetPromptResult", greet)
      assert.deepStrictEqual(greet.messages, [{ role: "user", content: { type: "text", text: "Hello, Ada!" } }])
      assert.strictEqual((yield* peer.error("prompts/get", modern({ name: "greet" }))).code, -32602)
      assert.strictEqual((yield* peer.error("prompts/get", modern({ name: "nope" }))).code, -32602)
      const completion = yield* peer.result(
        "completion/complete",
        modern({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "al" } })
      )
      assert.deepStrictEqual(completion.completion, { values: ["alice", "albert"], total: 2, hasMore: false })
    }))

  it.effect("notifications/cancelled interrupts the handler and no response is sent", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      const peer = yield* FixtureServer.open(server)
      const id = yield* peer.start("tools/call", modern({ name: "hang", arguments: {} }, { progressToken: "h" }))
      yield* peer.awaitNotifications("notifications/progress")
      yield* peer.notify("notifications/cancelled", { requestId: id, reason: "test" })
      const interrupted = yield* server.awaitInterrupted(id)
      assert.deepStrictEqual(interrupted, { connection: 1, id, method: "tools/call" })
      // The connection still answers, and nothing was sent for the cancelled request.
      yield* peer.result("server/discover", modern())
      const sent = yield* peer.sent
      assert.isFalse(sent.some((message) => McpSchema.isResponse(message) && message.id === id))
    }))

  it.effect("a cancellation that arrives before the handler started still interrupts it", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      const peer = yield* FixtureServer.open(server)
      const id = yield* peer.start("tools/call", modern({ name: "echo", arguments: { text: "late" } }))
      yield* peer.notify("notifications/cancelled", { requestId: id })
      assert.deepStrictEqual(yield* server.interrupted, [{ connection: 1, id, method: "tools/call" }])
      yield* peer.result("server/discover", modern())
      assert.isFalse((yield* peer.sent).some((message) => McpSchema.isResponse(message) && message.id === id))
    }))

  it.effect("records what it received", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      const peer = yield* FixtureServer.open(server)
      yield* peer.result("tools/call", modern({ name: "echo", arguments: { text: "x" } }))
      yield* peer.notify("notifications/initialized")
      const calls = yield* server.received("tools/call")
      assert.strictEqual(calls.length, 1)
      assert.strictEqual(calls[0].id, 1)
      assert.deepStrictEqual(calls[0].params, modern({ name: "echo", arguments: { text: "x" } }))
      assert.deepStrictEqual(
        (yield* server.received()).map((r) => r.method),
        ["tools/call", "notifications/initialized"]
      )
    }))

  it.effect("a handler failing with McpError answers with that JSON-RPC error", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "errors",
        version: "0",
        record: true,
        tools: [McpServer.tool({
          name: "refuse",
          inputSchema: { type: "object" },
          handler: () => Effect.fail(new McpError.McpError({ code: -32001, message: "nope", data: { why: 1 } }))
        })]
      })
      const peer = yield* FixtureServer.open(server)
      const error = yield* peer.error("tools/call", modern({ name: "refuse" }))
      assert.deepStrictEqual(error, { code: -32001, message: "nope", data: { why: 1 } })
    }))

  it.effect("capabilities follow the definitions; undefined features are -32601", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "tools-only",
        version: "0",
        record: true,
        tools: [McpServer.tool({
          name: "id",
          parameters: Schema.Struct({ value: Schema.Number }),
          handler: ({ value }) => Effect.succeed(String(value))
        })]
      })
      const peer = yield* FixtureServer.open(server)
      const discover = yield* peer.result("server/discover", modern())
      assert.deepStrictEqual(discover.capabilities, { tools: { listChanged: true }, logging: {} })
      const tools = yield* peer.result("tools/list", modern())
      assert.deepStrictEqual(tools.tools, [{
        name: "id",
        inputSchema: {
          type: "object",
          required: ["value"],
          properties: { value: { type: "number" } },
          additionalProperties: false
        }
      }])
      for (const method of ["prompts/list", "resources/read", "completion/complete", "ping", "nope/nope"]) {
        assert.strictEqual((yield* peer.error(method, modern({ uri: "x" }))).code, -32601, method)
      }
    }))

  it.effect("a request id already in flight is refused", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make())
      const request = { jsonrpc: "2.0", id: 9, method: "tools/call", params: modern({ name: "hang" }) } as const
      yield* peer.connection.handle(request)
      yield* peer.connection.handle(request)
      const response = yield* peer.response(9)
      assert.isTrue("error" in response && response.error.code === -32600)
    }))
})

describe("McpServer legacy era", () => {
  it.effect("nothing but ping before initialize", () =>
    Effect.gen(function*() {
      const both = yield* FixtureServer.open(yield* FixtureServer.make())
      assert.deepStrictEqual(yield* both.result("ping"), {})
      assert.strictEqual((yield* both.error("tools/list", {})).code, -32602)
      const legacy = yield* FixtureServer.open(yield* FixtureServer.make({ eras: "legacy" }))
      assert.strictEqual((yield* legacy.error("tools/list")).code, -32600)
    }))

  it.effect("initialize answers the client's version when supported, else the newest", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      for (
        const [requested, expected, revision] of [
          ["2025-06-18", "2025-06-18", "2025-06-18"],
          ["2024-11-05", "2024-11-05", "2024-11-05"],
          ["2030-01-01", "2025-11-25", "2025-11-25"]
        ] as const
      ) {
        const peer = yield* FixtureServer.open(server)
        const result = yield* peer.result("initialize", {
          protocolVersion: requested,
          capabilities: {},
          clientInfo: { name: "t", version: "0" }
        })
        assertValid(revision, "InitializeResult", result)
        assert.strictEqual(result.protocolVersion, expected)
        assert.deepStrictEqual(result.serverInfo, { name: FixtureServer.SERVER_NAME, version: "1.0.0" })
        assert.strictEqual(result.instructions, FixtureServer.INSTRUCTIONS)
      }
    }))

  it.effect("results have no resultType; the session is per connection", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      const peer = yield* FixtureServer.openLegacy(server)
      const tools = yield* peer.result("tools/list", {})
      assertValid("2025-11-25", "ListToolsResult", tools)
      assert.isUndefined(tools.resultType)
      const echo = yield* peer.result("tools/call", { name: "echo", arguments: { text: "old" } })
      assertValid("2025-11-25", "CallToolResult", echo)
      assert.deepStrictEqual(echo, { content: [{ type: "text", text: "old" }] })
      assert.strictEqual((yield* peer.error("resources/read", { uri: "fixture://nothing" })).code, -32002)

      const other = yield* FixtureServer.open(server)
      assert.strictEqual((yield* other.error("tools/list", {})).code, -32602)
    }))

  it.effect("logging/setLevel filters log messages", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.openLegacy(yield* FixtureServer.make())
      yield* peer.result("tools/call", { name: "log", arguments: {} })
      assert.strictEqual((yield* peer.notifications("notifications/message")).length, 8)
      assert.deepStrictEqual(yield* peer.result("logging/setLevel", { level: "alert" }), {})
      yield* peer.result("tools/call", { name: "log", arguments: {} })
      const levels = (yield* peer.notifications("notifications/message")).slice(8).map((n) =>
        typeof n.params === "object" && n.params !== null && "level" in n.params ? n.params.level : undefined
      )
      assert.deepStrictEqual(levels, ["alert", "emergency"])
      assert.strictEqual((yield* peer.error("logging/setLevel", { level: "loud" })).code, -32602)
    }))

  it.effect("progress and cancellation work in the legacy era too", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      const peer = yield* FixtureServer.openLegacy(server)
      const id = yield* peer.start("tools/call", { name: "hang", arguments: {}, _meta: { progressToken: 5 } })
      const [progress] = yield* peer.awaitNotifications("notifications/progress")
      assertValid("2025-11-25", "ProgressNotification", progress)
      yield* peer.notify("notifications/cancelled", { requestId: id })
      assert.strictEqual((yield* server.awaitInterrupted(id)).id, id)
    }))
})

describe("McpServer eras option", () => {
  it.effect("a modern-only server refuses initialize naming only modern versions", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make({ eras: "modern" }))
      const error = yield* peer.error("initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "0" }
      })
      assert.strictEqual(error.code, -32602)
      assert.deepStrictEqual(error.data, { supported: ["2026-07-28"], requested: "2025-11-25" })
      assert.strictEqual((yield* peer.error("ping")).code, -32602)
      const discover = yield* peer.result("server/discover", modern())
      assert.deepStrictEqual(discover.supportedVersions, ["2026-07-28"])
    }))

  it.effect("a legacy-only server does not know server/discover", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make({ eras: "legacy" })
      const peer = yield* FixtureServer.open(server)
      assert.strictEqual((yield* peer.error("server/discover", modern())).code, -32601)
      yield* peer.result("initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "0" }
      })
      assert.strictEqual((yield* peer.error("server/discover", modern())).code, -32601)
      const tools = yield* peer.result("tools/list", modern())
      assert.isUndefined(tools.resultType)
      assert.deepStrictEqual(server.supportedVersions, ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
    }))
})

const encoder = new TextEncoder()
const decoder = new TextDecoder()

describe("McpServer.serve", () => {
  const collect = (input: ReadonlyArray<string>, server: McpServer.Server) =>
    Effect.gen(function*() {
      const output: Array<string> = []
      yield* McpServer.serve(server, {
        input: Stream.fromIterable(input.map((chunk) => encoder.encode(chunk))),
        output: Sink.forEach((bytes: Uint8Array) => Effect.sync(() => output.push(decoder.decode(bytes))))
      })
      return output.join("").split("\n").filter((line) => line !== "").map((line): unknown => JSON.parse(line))
    })

  it.effect("frames newline-delimited JSON-RPC and answers garbage with id null", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      const discover = JSON.stringify({ jsonrpc: "2.0", id: "d", method: "server/discover", params: modern() })
      const lines = yield* collect([
        discover.slice(0, 10),
        `${discover.slice(10)}\r\n\n{"not json\n`,
        "{\"jsonrpc\":\"1.0\"}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"
      ], server)
      assert.strictEqual(lines.length, 4)
      assert.deepStrictEqual(lines.slice(1), [
        { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error", data: "{\"not json" } },
        {
          jsonrpc: "2.0",
          id: null,
          error: { code: -32600, message: "Invalid Request", data: "not a JSON-RPC message: {\"jsonrpc\":\"1.0\"}" }
        },
        { jsonrpc: "2.0", id: 1, result: {} }
      ])
      const first = lines[0]
      assert.isTrue(typeof first === "object" && first !== null && "id" in first && first.id === "d")
    }))

  it.effect("when the input ends, running requests get the drain timeout, then are interrupted", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      const output: Array<string> = []
      const hang = { jsonrpc: "2.0", id: 1, method: "tools/call", params: modern({ name: "hang" }) }
      const fiber = yield* McpServer.serve(server, {
        input: Stream.make(encoder.encode(`${JSON.stringify(hang)}\n`)),
        output: Sink.forEach((bytes: Uint8Array) => Effect.sync(() => output.push(decoder.decode(bytes)))),
        drainTimeout: "1 second"
      }).pipe(Effect.forkChild)
      yield* awaitSleep("1 second")
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(yield* server.interrupted, [{ connection: 1, id: 1, method: "tools/call" }])
      assert.deepStrictEqual(output, [])
    }).pipe(withSleepLog))
})

describe("fixture program", () => {
  const fixture = Path.join(repositoryRoot, "packages/client/test/fixtures/server.ts")

  const lines = <E>(stream: Stream.Stream<Uint8Array, E>) => stream.pipe(Stream.decodeText(), Stream.splitLines)

  it.live("answers server/discover and initialize on stdio, logs to stderr", () =>
    Effect.gen(function*() {
      const process = yield* ChildProcessSpawner.ChildProcessSpawner.use((spawner) =>
        spawner.spawn(ChildProcess.make("node", ["--import", "tsx", fixture, "--eras", "both"], { cwd: repositoryRoot }))
      )
      const input = yield* Queue.unbounded<string>()
      yield* Stream.fromQueue(input).pipe(
        Stream.map((line) => encoder.encode(`${line}\n`)),
        Stream.run(process.stdin),
        Effect.forkScoped
      )
      const stdout = yield* Queue.unbounded<string>()
      yield* lines(process.stdout).pipe(Stream.runForEach((line) => Queue.offer(stdout, line)), Effect.forkScoped)
      const stderr = yield* Queue.unbounded<string>()
      yield* lines(process.stderr).pipe(Stream.runForEach((line) => Queue.offer(stderr, line)), Effect.forkScoped)
      const next = Effect.map(Queue.take(stdout), (line): Record<string, unknown> => JSON.parse(line))
      const send = (message: unknown) => Queue.offer(input, JSON.stringify(message))

      yield* send({ jsonrpc: "2.0", id: "probe", method: "server/discover", params: modern() })
      const discover = yield* next
      assert.strictEqual(discover.id, "probe")
      assertValid("2026-07-28", "DiscoverResultResponse", discover)

      yield* send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } }
      })
      const initialize = yield* next
      assert.deepStrictEqual(initialize.id, 1)
      assertValid("2025-06-18", "JSONRPCResponse", initialize)

      yield* send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "hang", _meta: { progressToken: 2 } }
      })
      const progress = yield* next
      assert.strictEqual(progress.method, "notifications/progress")
      yield* send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } })
      assert.strictEqual(yield* Queue.take(stderr), "interrupted 2")
      yield* send({ jsonrpc: "2.0", id: 3, method: "ping" })
      assert.deepStrictEqual(yield* next, { jsonrpc: "2.0", id: 3, result: {} })

      yield* Queue.shutdown(input)
      assert.strictEqual(Number(yield* process.exitCode), 0)
      assert.strictEqual((yield* Queue.clear(stdout)).length, 0)
    }).pipe(Effect.provide(NodeServices.layer)), 20_000)
})
