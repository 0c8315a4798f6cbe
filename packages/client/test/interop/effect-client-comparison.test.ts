/**
 * Effect's own MCP client (`effect/ai/McpClient`, Effect 4.1.5) and Conduit's `McpClient`, side by side: each test
 * is one row of the feature table in docs/effect4/readme-effect-client.md and asserts what both clients do in the
 * same scenario, against the same server.
 *
 * Real servers throughout: server-everything, the SDK v1 fixture (`fixtures/interop/sdk-v1.mjs`) and its task
 * fixture (`sdk-v1-tasks.mjs`), the Conduit fixture server (`utils/fixtureServer.ts`) over stdio, over Streamable
 * HTTP and in-process, and Effect's own server restricted to 2025-06-18 (`fixtures/interop/effect-ai-2025-06-18.mjs`:
 * the SDK v1 server answers 2025-11-25, so it cannot play a 2025-06-18-only server). Effect's client is connected
 * through its public constructors (`layerStdio`, `layerHttp`, `make` over a `Transport`); where a scenario needs to
 * see what it sent, its `Transport` service is wrapped, and for the deadline row it is a `Transport` over the
 * Conduit server's in-process connection (its `Transport` is a public service any transport may supply).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as McpServer from "@conduit-mcp/server/McpServer"
import * as McpServerHttp from "@conduit-mcp/server/McpServerHttp"
import * as EffectMcpClient from "effect/ai/McpClient"
import type * as EffectMcpClientError from "effect/ai/McpClientError"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as EffectMcpSchema from "effect/ai/McpSchema"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ChildProcess from "effect/process/ChildProcess"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Http from "node:http"
import * as Module from "node:module"
import * as Url from "node:url"
import * as ElicitationHandler from "../../src/ElicitationHandler.js"
import * as HttpTransport from "../../src/HttpTransport.js"
import * as InProcessTransport from "../../src/InProcessTransport.js"
import * as McpClient from "../../src/McpClient.js"
import * as McpSchema from "../../src/McpSchema.js"
import * as RootsProvider from "../../src/RootsProvider.js"
import * as SamplingHandler from "../../src/SamplingHandler.js"
import * as StdioTransport from "../../src/StdioTransport.js"
import * as ConduitExample from "../examples/migrateFromEffectClient.conduit.js"
import * as EffectExample from "../examples/migrateFromEffectClient.effect.js"
import * as Everything from "../fixtures/http/everything.js"
import * as FixtureServer from "../utils/fixtureServer.js"
import * as Interop from "../utils/interop.js"
import * as RealServers from "../utils/realServers.js"

const require = Module.createRequire(import.meta.url)
const tsx = Url.pathToFileURL(require.resolve("tsx")).href
const conduitFixture = ["--import", tsx, Url.fileURLToPath(new URL("../fixtures/server.ts", import.meta.url))]
const only20250618 = [Interop.fixture("effect-ai-2025-06-18.mjs")]
const sdkV1 = [Interop.fixture("sdk-v1.mjs"), "stdio"]
const sdkV1Tasks = [Interop.fixture("sdk-v1-tasks.mjs"), "stdio"]
const serverRequests = [Url.fileURLToPath(new URL("../fixtures/stdio/server-requests.mjs", import.meta.url))]

type EffectProtocol = EffectMcpClient.Transport["protocol"]

// ---------------------------------------------------------------------------------------------------------------
// The two clients

const effectIdentity = { name: "effect-comparison", version: "0.1.0", timeout: "30 seconds" } as const

/** Effect's client over stdio (`node <args>`), built in the current scope. */
const effectStdio = (args: ReadonlyArray<string>, protocol: EffectProtocol) =>
  Effect.map(
    Layer.build(
      EffectMcpClient.layerStdio({
        ...effectIdentity,
        protocol,
        command: ChildProcess.make(process.execPath, args)
      }).pipe(Layer.provide(NodeServices.layer))
    ),
    Context.get(EffectMcpClient.McpClient)
  )

/** Effect's client over Streamable HTTP. */
const effectHttp = (url: string, protocol: EffectProtocol) =>
  Effect.map(
    Layer.build(
      EffectMcpClient.layerHttp({ ...effectIdentity, protocol, url }).pipe(Layer.provide(NodeHttpClient.layerUndici))
    ),
    Context.get(EffectMcpClient.McpClient)
  )

/** Effect's client over its own stdio transport, recording every request it hands the transport. */
const effectStdioRecorded = (args: ReadonlyArray<string>, protocol: EffectProtocol) =>
  Effect.gen(function*() {
    const sent = yield* Ref.make<ReadonlyArray<EffectMcpSchema.JsonRpcRequest>>([])
    const transport = Layer.effect(EffectMcpClient.Transport)(
      Effect.map(
        EffectMcpClient.stdio({ command: ChildProcess.make(process.execPath, args), protocol }),
        (inner): EffectMcpClient.Transport => ({
          ...inner,
          request: (message, tool) =>
            Effect.andThen(Ref.update(sent, (all) => [...all, message]), inner.request(message, tool))
        })
      )
    )
    const context = yield* Layer.build(
      Layer.effect(EffectMcpClient.McpClient)(EffectMcpClient.make(effectIdentity)).pipe(
        Layer.provide(transport),
        Layer.provide(NodeServices.layer)
      )
    )
    return { client: Context.get(context, EffectMcpClient.McpClient), sent: Ref.get(sent) }
  })

const conduitOptions: McpClient.McpClientOptions = {
  healthCheckInterval: false,
  reconnect: false,
  probeTimeout: "20 seconds",
  clientInfo: { name: "conduit-comparison", version: "0.1.0" }
}

/** Conduit's client over stdio (`node <args>`), built in the current scope. */
const conduitStdio = (args: ReadonlyArray<string>, options: McpClient.McpClientOptions = {}) =>
  conduitStdioWith(args, { ...conduitOptions, ...options })

/** The same, with options that name handler services (the caller provides them). */
const conduitStdioWith = <const O extends McpClient.McpClientOptions<unknown>>(args: ReadonlyArray<string>, options: O) =>
  Effect.map(
    Layer.build(
      McpClient.layer(options).pipe(
        Layer.provide(StdioTransport.layer({ command: process.execPath, args, closeTimeout: "1 second" })),
        Layer.provide(NodeServices.layer)
      )
    ),
    Context.get(McpClient.McpClient)
  )

/** Conduit's client over HTTP (the transport finds Streamable HTTP or HTTP+SSE by itself). */
const conduitHttp = (url: string, options: McpClient.McpClientOptions = {}) =>
  Effect.map(
    Layer.build(
      McpClient.layer({ ...conduitOptions, ...options }).pipe(
        Layer.provide(HttpTransport.layer({ url })),
        Layer.provide(NodeHttpClient.layerUndici)
      )
    ),
    Context.get(McpClient.McpClient)
  )

// ---------------------------------------------------------------------------------------------------------------
// Helpers

type Content = ReadonlyArray<{ readonly type: unknown; readonly text?: unknown }>
const textOf = (content: Content) =>
  content.flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : [])).join("")

const toolNamed = (tools: ReadonlyArray<EffectMcpSchema.Tool>, name: string) => {
  const tool = tools.find((tool) => tool.name === name)
  return tool === undefined ? assert.fail(`no tool ${name} in ${tools.map((tool) => tool.name).join(", ")}`) : tool
}

/** Effect's `callTool` by name, as an application does it: from the listing. */
const effectCall = (client: EffectMcpClient.McpClient, name: string, args: Record<string, unknown>) =>
  Effect.flatMap(client.listTools(), (tools) => client.callTool({ tool: toolNamed(tools, name), arguments: args }))

/** The reason of the error Effect's client fails with. */
const reasonOf = <A, R>(effect: Effect.Effect<A, EffectMcpClientError.McpClientError, R>) =>
  Effect.map(Effect.flip(effect), (error) => error.reason)

const live = { timeout: 120_000 }

/** Conduit's handlers for the server's requests (the same answers in every row). */
const handlers = Layer.mergeAll(
  ElicitationHandler.layer({
    modes: ["form"],
    elicit: () => Effect.succeed({ action: "accept", content: { approve: true, environment: "production" } })
  }),
  SamplingHandler.layer({
    createMessage: () =>
      Effect.succeed({ role: "assistant", content: { type: "text", text: "one root" }, model: "test-model" })
  }),
  RootsProvider.layer([{ uri: "file:///srv/checkout", name: "checkout" }])
)

// ---------------------------------------------------------------------------------------------------------------
// Rows

describe("Effect's McpClient and Conduit's McpClient, side by side", () => {
  it.live("version negotiation: a server that speaks only 2025-06-18", () =>
    Effect.gen(function*() {
      // Effect: the revision is chosen by the protocol adapter, and the server must speak exactly that one
      const legacy = yield* reasonOf(effectStdio(only20250618, McpProtocol.v2025_11_25))
      assert.strictEqual(legacy._tag, "UnsupportedError")
      assert.include(legacy.message, "explicitly selected protocol version")
      const modern = yield* reasonOf(effectStdio(only20250618, McpProtocol.v2026_07_28))
      assert.strictEqual(modern._tag, "ProtocolError")
      assert.strictEqual(modern._tag === "ProtocolError" ? modern.code : undefined, -32601)
      // Conduit: probes, falls back to initialize, and accepts the older revision the server answers with
      const conduit = yield* conduitStdio(only20250618)
      const session = yield* conduit.session
      assert.strictEqual(session.era, "legacy")
      assert.strictEqual(session.protocolVersion, "2025-06-18")
      const result = yield* conduit.callTool({ name: "echo", arguments: { text: "hi" } })
      assert.strictEqual(textOf(result.content), "echo: hi")
    }).pipe(Effect.scoped), live)

  it.live("version negotiation: the SDK v1 server (1.32) answers 2025-11-25, which both clients speak", () =>
    Effect.gen(function*() {
      const effect = yield* effectStdio(sdkV1, McpProtocol.v2025_11_25)
      assert.strictEqual(effect.protocolVersion, "2025-11-25")
      assert.strictEqual(textOf((yield* effectCall(effect, "echo", { text: "hi" })).content), "echo: hi")
      const modern = yield* reasonOf(effectStdio(sdkV1, McpProtocol.v2026_07_28))
      assert.strictEqual(modern._tag === "ProtocolError" ? modern.code : undefined, -32601)
      const conduit = yield* conduitStdio(sdkV1)
      assert.strictEqual((yield* conduit.session).protocolVersion, "2025-11-25")
    }).pipe(Effect.scoped), live)

  it.live("version negotiation: server-everything (legacy only, 2025-11-25)", () =>
    Effect.gen(function*() {
      const effect = yield* effectStdio(RealServers.everything.args, McpProtocol.v2025_11_25)
      assert.strictEqual(effect.protocolVersion, "2025-11-25")
      assert.strictEqual(effect.serverInfo?.name, RealServers.everything.serverInfo.name)
      assert.strictEqual(textOf((yield* effectCall(effect, "echo", { message: "hi" })).content), "Echo: hi")
      // pinned to 2026-07-28, Effect's client asks server/discover and stops at the server's -32601
      const modern = yield* reasonOf(effectStdio(RealServers.everything.args, McpProtocol.v2026_07_28))
      assert.strictEqual(modern._tag === "ProtocolError" ? modern.code : undefined, RealServers.everything.discoverErrorCode)
      // Conduit takes the same -32601 as the answer "legacy" and initializes on the same process
      const conduit = yield* conduitStdio(RealServers.everything.args)
      const session = yield* conduit.session
      assert.strictEqual(session.era, "legacy")
      assert.strictEqual(session.protocolVersion, "2025-11-25")
      const echoed = yield* conduit.callTool({ name: "echo", arguments: { message: "hi" } })
      assert.strictEqual(textOf(echoed.content), "Echo: hi")
    }).pipe(Effect.scoped), live)

  it.live("sampling, elicitation and roots: requests from the server", () =>
    Effect.gen(function*() {
      // Effect, 2025-11-25: it declares no client capability (and would answer any server request but ping with
      // -32601); the Conduit server sends no request the client did not declare: the tools report it as an error
      const legacy = yield* effectStdio(conduitFixture, McpProtocol.v2025_11_25)
      const confirm = yield* effectCall(legacy, "confirm", {})
      assert.strictEqual(confirm.isError, true)
      assert.strictEqual(textOf(confirm.content), "elicitation/create: the client did not declare the elicitation capability")
      const summarize = yield* effectCall(legacy, "summarize", {})
      assert.strictEqual(summarize.isError, true)
      assert.strictEqual(textOf(summarize.content), "roots/list: the client did not declare the roots capability")
      // Effect, 2026-07-28: the server refuses the call with -32021 (a required client capability is missing)
      const modern = yield* effectStdio(conduitFixture, McpProtocol.v2026_07_28)
      const confirmModern = yield* reasonOf(effectCall(modern, "confirm", {}))
      assert.strictEqual(confirmModern._tag, "ProtocolError")
      if (confirmModern._tag === "ProtocolError") {
        assert.strictEqual(confirmModern.code, -32021)
        assert.deepStrictEqual(confirmModern.data, { requiredCapabilities: { elicitation: { form: {} } } })
      }
      // Conduit: handlers answer them, in either era
      for (const era of ["legacy", "modern"] as const) {
        const conduit = yield* conduitStdioWith(conduitFixture, {
          ...conduitOptions,
          era,
          elicitation: ElicitationHandler.ElicitationHandler,
          sampling: SamplingHandler.SamplingHandler,
          roots: RootsProvider.RootsProvider
        }).pipe(Effect.provide(handlers))
        const confirmed = yield* conduit.callTool({ name: "confirm", arguments: {} })
        assert.strictEqual(textOf(confirmed.content), FixtureServer.confirmText("deploy", "accept", true, "production"))
        const summarized = yield* conduit.callTool({ name: "summarize", arguments: {} })
        assert.deepStrictEqual(summarized.structuredContent, {
          roots: ["file:///srv/checkout"],
          model: "test-model",
          summary: "one root"
        })
      }
    }).pipe(Effect.scoped), live)

  it.live("sampling, elicitation and roots: a scripted server that asks regardless of the capabilities", () =>
    Effect.gen(function*() {
      // no real server sends requests the client did not declare, so a scripted one does (see its header)
      const replies = (text: string) => JSON.parse(text) as Record<string, unknown>
      // Effect: answers ping, and every other server request with -32601 (it has no handler to offer)
      const effect = yield* effectStdio(serverRequests, McpProtocol.v2025_11_25)
      assert.deepStrictEqual(replies(textOf((yield* effectCall(effect, "ask", {})).content)), {
        "ping": { result: {} },
        "sampling/createMessage": { error: { code: -32601 } },
        "elicitation/create": { error: { code: -32601 } },
        "roots/list": { error: { code: -32601 } }
      })
      // Conduit, given handlers: each request reaches its handler
      const conduit = yield* conduitStdioWith(serverRequests, {
        ...conduitOptions,
        elicitation: ElicitationHandler.ElicitationHandler,
        sampling: SamplingHandler.SamplingHandler,
        roots: RootsProvider.RootsProvider
      }).pipe(Effect.provide(handlers))
      const answered = replies(textOf((yield* conduit.callTool({ name: "ask", arguments: {} })).content))
      assert.deepStrictEqual(answered["ping"], { result: {} })
      assert.deepStrictEqual(answered["sampling/createMessage"], {
        result: { role: "assistant", content: { type: "text", text: "one root" }, model: "test-model" }
      })
      assert.deepStrictEqual(answered["elicitation/create"], {
        result: { action: "accept", content: { approve: true, environment: "production" } }
      })
      assert.deepStrictEqual(answered["roots/list"], {
        result: { roots: [{ uri: "file:///srv/checkout", name: "checkout" }] }
      })
    }).pipe(Effect.scoped), live)

  it.live("notifications and progress", () =>
    Effect.gen(function*() {
      // Effect: callTool has no progress option, so no progress token is sent (and the server reports none);
      // the client has no notification stream: notifications (here, log messages) are dropped
      const effect = yield* effectStdioRecorded(conduitFixture, McpProtocol.v2025_11_25)
      const slow = yield* effectCall(effect.client, "slow", { steps: 3, delayMs: 1 })
      assert.strictEqual(textOf(slow.content), "done after 3 steps")
      assert.strictEqual(textOf((yield* effectCall(effect.client, "log", {})).content), "logged")
      const calls = (yield* effect.sent).filter((message) => message.method === "tools/call")
      assert.strictEqual(calls.length, 2)
      for (const call of calls) {
        const meta = call.params?._meta
        assert.isFalse(typeof meta === "object" && meta !== null && "progressToken" in meta, JSON.stringify(call))
      }
      for (const member of ["notifications", "subscribe", "listen"]) assert.notProperty(effect.client, member)
      // Conduit: onProgress receives each report of its call; the notification stream carries the log messages
      const conduit = yield* conduitStdio(conduitFixture, { era: "legacy" })
      const reports = yield* Ref.make<ReadonlyArray<number>>([])
      const slowConduit = yield* conduit.callTool(
        { name: "slow", arguments: { steps: 3, delayMs: 1 } },
        { onProgress: (progress) => Ref.update(reports, (all) => [...all, progress.progress]) }
      )
      assert.strictEqual(textOf(slowConduit.content), "done after 3 steps")
      assert.deepStrictEqual(yield* Ref.get(reports), [1, 2, 3])
      const notifications = yield* conduit.subscribe
      yield* conduit.callTool({ name: "log", arguments: {} })
      const logs = yield* notifications.pipe(
        Stream.filter((notification) => notification.method === "notifications/message"),
        Stream.take(McpSchema.LoggingLevel.literals.length),
        Stream.runCollect
      )
      assert.strictEqual(logs.length, McpSchema.LoggingLevel.literals.length)
    }).pipe(Effect.scoped), live)

  it.live("reconnection after a legacy HTTP 404 (the server lost the session)", () =>
    Effect.gen(function*() {
      // the Conduit fixture server over Streamable HTTP; `forgetSessions` puts a new app with a new server behind
      // the same listener (the connections stay open), so the next request with an old session id gets 404
      const { forgetSessions, url } = yield* serveSwappable
      const effect = yield* effectHttp(url, McpProtocol.v2025_11_25)
      const conduit = yield* conduitHttp(url, { era: "legacy", reconnect: undefined })
      assert.strictEqual(textOf((yield* effectCall(effect, "echo", { text: "one" })).content), "one")
      assert.strictEqual(textOf((yield* conduit.callTool({ name: "echo", arguments: { text: "one" } })).content), "one")
      const next = yield* forgetSessions

      // Effect: the session is over for good, every later call fails with the same ClosedError
      for (const attempt of [1, 2]) {
        const reason = yield* reasonOf(effectCall(effect, "echo", { text: `after ${attempt}` }))
        assert.strictEqual(reason._tag, "ClosedError")
        assert.strictEqual(reason._tag === "ClosedError" ? reason.sessionExpired : undefined, true)
      }
      // Conduit: initializes a new session and the call goes through
      const again = yield* conduit.callTool({ name: "echo", arguments: { text: "two" } })
      assert.strictEqual(textOf(again.content), "two")
      assert.strictEqual((yield* conduit.session).era, "legacy")
      // the new server saw one initialize: Conduit's
      const initializes = yield* next.received("initialize")
      assert.deepStrictEqual(
        initializes.map((received) => (received.params as { clientInfo?: { name?: string } }).clientInfo?.name),
        [conduitOptions.clientInfo?.name]
      )
    }).pipe(Effect.scoped), live)

  it.live("HTTP+SSE (2024-11-05): server-everything in sse mode", () =>
    Effect.gen(function*() {
      const everything = yield* Everything.start("sse")
      // Effect speaks Streamable HTTP only: its POST to the SSE endpoint is refused
      const reason = yield* reasonOf(effectHttp(everything.url, McpProtocol.v2025_11_25))
      assert.strictEqual(reason._tag, "HttpError")
      assert.isTrue(reason._tag === "HttpError" && reason.status >= 400 && reason.status < 500, String(reason))
      // Conduit: falls back to the GET stream and its POST endpoint
      const conduit = yield* conduitHttp(everything.url)
      assert.strictEqual((yield* conduit.session).era, "legacy")
      const echoed = yield* conduit.callTool({ name: "echo", arguments: { message: "hi" } })
      assert.strictEqual(textOf(echoed.content), "Echo: hi")
    }).pipe(Effect.scoped), live)

  it.live("tools with taskSupport \"required\" (the SDK v1's task API)", () =>
    Effect.gen(function*() {
      // Effect: leaves such tools out of the listing (it cannot call them without the tasks extension)
      const effect = yield* effectStdio(sdkV1Tasks, McpProtocol.v2025_11_25)
      assert.isDefined(effect.capabilities.tools)
      assert.deepStrictEqual((yield* effect.listTools()).map((tool) => tool.name), [])
      // Conduit: lists them, and callTool runs the call as a task to its result
      const conduit = yield* conduitStdio(sdkV1Tasks)
      const tools = yield* conduit.listTools()
      assert.strictEqual(tools.find((tool) => tool.name === "countdown")?.execution?.taskSupport, "required")
      const result = yield* conduit.callTool({ name: "countdown", arguments: { steps: 2 } })
      assert.strictEqual(textOf(result.content), "counted to 2")
    }).pipe(Effect.scoped), live)

  it.live("the migration guide's program, written with each client, gives the same result", () =>
    Effect.gen(function*() {
      const { args, command } = RealServers.everything
      const withEffect = yield* EffectExample.program.pipe(Effect.provide(EffectExample.layer(command, args)))
      const withConduit = yield* ConduitExample.program.pipe(Effect.provide(ConduitExample.layer(command, args)))
      assert.strictEqual(textOf(withEffect.content), "Echo: hi")
      assert.strictEqual(textOf(withConduit.content), "Echo: hi")
    }), live)

  it.effect("a default deadline on callTool (TestClock, in-process)", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make({ eras: "both" })
      const effect = yield* effectInProcess(server, McpProtocol.v2025_11_25)
      const conduit = Context.get(
        yield* Layer.build(McpClient.layer(conduitOptions).pipe(Layer.provide(InProcessTransport.layer(server)))),
        McpClient.McpClient
      )
      const hang = toolNamed(yield* effect.listTools(), "hang")
      const effectCallFiber = yield* Effect.forkChild(effect.callTool({ tool: hang, arguments: {} }))
      const conduitCallFiber = yield* Effect.forkChild(conduit.callTool({ name: "hang", arguments: {} }))
      yield* server.awaitReceived("tools/call", 2)
      // Conduit: the default requestTimeout (60 s) ends the call with a RequestTimeout
      yield* TestClock.adjust("61 seconds")
      const conduitExit = yield* Fiber.await(conduitCallFiber)
      assert.isTrue(Exit.isFailure(conduitExit))
      const conduitError = Exit.isFailure(conduitExit) ? Exit.findErrorOption(conduitExit) : undefined
      assert.strictEqual(conduitError?._tag === "Some" ? conduitError.value._tag : undefined, "RequestTimeout")
      // Effect: no deadline unless the call asks for one; a day later the call still waits
      yield* TestClock.adjust("1 day")
      assert.isUndefined(effectCallFiber.pollUnsafe())
      // with a timeout of its own it ends with a TimeoutError
      const timed = yield* Effect.forkChild(
        Effect.flip(effect.callTool({ tool: hang, arguments: {} }, { timeout: "5 seconds" }))
      )
      yield* server.awaitReceived("tools/call", 3)
      yield* TestClock.adjust("5 seconds")
      assert.strictEqual((yield* Fiber.join(timed)).reason._tag, "TimeoutError")
      yield* Fiber.interrupt(effectCallFiber)
    }).pipe(Effect.scoped))
})

// ---------------------------------------------------------------------------------------------------------------
// Servers and transports for the rows above

/**
 * The Conduit fixture server over Streamable HTTP on Node's HTTP server, behind an app that can be replaced: each
 * app is `McpServerHttp.makeApp` of a new fixture server, in a scope of its own (closed with the test's scope).
 */
const serveSwappable = Effect.gen(function*() {
  const node = Http.createServer()
  const http = yield* NodeHttpServer.make(() => node, { port: 0, host: "127.0.0.1" })
  // open event streams would hold the server's close: end every connection first
  yield* Effect.addFinalizer(() => Effect.sync(() => node.closeAllConnections()))
  const build = Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const server = yield* FixtureServer.make({ eras: "both" })
    return { server, app: yield* McpServerHttp.makeApp(server).pipe(Scope.provide(scope)) }
  })
  let current = yield* build
  yield* http.serve(Effect.suspend(() => current.app))
  const address = http.address
  return {
    url: `http://127.0.0.1:${address._tag !== "UnixPathAddress" ? address.port : 0}/mcp`,
    /** Replaces the app; succeeds with the new server. */
    forgetSessions: Effect.map(build, (next) => {
      current = next
      return next.server
    })
  }
}).pipe(Effect.orDie)

const decodeForEffect = Schema.decodeUnknownSync(EffectMcpSchema.JsonRpcMessage)

/**
 * Effect's client over a `Transport` to a Conduit server's in-process connection: requests are handed to the
 * connection and answered by id; the server's other messages are decoded with Effect's schema and dropped, as
 * Effect's transports do with notifications.
 */
const effectInProcess = (server: McpServer.Server, protocol: EffectProtocol) =>
  Effect.gen(function*() {
    const pending = new Map<EffectMcpSchema.RequestId, Deferred.Deferred<EffectMcpSchema.JsonRpcResponse>>()
    const connection = yield* server.connect((message) =>
      Effect.suspend(() => {
        const decoded = decodeForEffect(message)
        if ("method" in decoded) return Effect.void
        const waiting = decoded.id === null || decoded.id === undefined ? undefined : pending.get(decoded.id)
        return waiting === undefined ? Effect.void : Effect.asVoid(Deferred.succeed(waiting, decoded))
      })
    )
    const handOver = (message: EffectMcpSchema.JsonRpcRequest | EffectMcpSchema.JsonRpcNotification) =>
      Effect.suspend(() => {
        const decoded = McpSchema.decodeMessage(message)
        return Result.isSuccess(decoded) ? connection.handle(decoded.success) : Effect.die(decoded.failure)
      })
    const transport: EffectMcpClient.Transport = {
      ...(yield* recordingBase(protocol)),
      notify: handOver,
      request: (message) =>
        Effect.gen(function*() {
          const response = yield* Deferred.make<EffectMcpSchema.JsonRpcResponse>()
          pending.set(message.id, response)
          yield* handOver(message)
          return yield* Deferred.await(response)
        }).pipe(
          Effect.onInterrupt(() => connection.cancel(message.id)),
          Effect.ensuring(Effect.sync(() => pending.delete(message.id)))
        )
    }
    return yield* EffectMcpClient.make(effectIdentity).pipe(Effect.provideService(EffectMcpClient.Transport, transport))
  })

/**
 * The members of a `Transport` that are not its exchange (its brand, the protocol, `isCallable`), taken from a
 * transport Effect builds itself (an HTTP transport, which makes no request until asked), so that no brand is
 * forged.
 */
const recordingBase = (protocol: EffectProtocol) =>
  EffectMcpClient.http({ url: "http://127.0.0.1:9/unused", protocol }).pipe(
    Effect.provide(NodeHttpClient.layerUndici),
    Effect.orDie
  )
