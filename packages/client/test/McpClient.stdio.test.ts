/**
 * The client over real child processes: bad input, crashes and restarts. Every case ends in a typed error or a
 * dropped frame, never a crash or a hang, and no call is left waiting.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Module from "node:module"
import * as Url from "node:url"
import * as McpClient from "../src/McpClient.js"
import * as StdioTransport from "../src/StdioTransport.js"

const require = Module.createRequire(import.meta.url)
const tsx = Url.pathToFileURL(require.resolve("tsx")).href
const scripted = Url.fileURLToPath(new URL("./fixtures/stdio/legacy-scripted.mjs", import.meta.url))
const fixtureProgram = Url.fileURLToPath(new URL("./fixtures/server.ts", import.meta.url))

const client = (
  args: ReadonlyArray<string>,
  options: McpClient.McpClientOptions = {},
  transport: Partial<StdioTransport.StdioTransportOptions> = {}
) =>
  McpClient.layer({ healthCheckInterval: false, probeTimeout: "300 millis", ...options }).pipe(
    Layer.provide(StdioTransport.layer({ command: process.execPath, args, closeTimeout: "500 millis", ...transport })),
    Layer.provide(NodeServices.layer)
  )

const call = (text: string) =>
  Effect.flatMap(McpClient.McpClient, (c) => c.callTool({ name: "echo", arguments: { text } }, { timeout: "10 seconds" }))

describe("bad input from a stdio server", () => {
  it.live("garbage, malformed JSON, non-JSON-RPC values and unknown ids are dropped; calls still work", () =>
    Effect.gen(function*() {
      const first = yield* call("one")
      const second = yield* call("two")
      assert.deepStrictEqual([first.content, second.content], [
        [{ type: "text", text: "one" }],
        [{ type: "text", text: "two" }]
      ])
    }).pipe(Effect.provide(client([scripted, "noisy"]))))

  it.live("an oversize frame fails the pending call with a typed error, then the client reconnects", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(call("big"))
      assert.strictEqual(error._tag, "TransportError")
      assert.strictEqual(error._tag === "TransportError" ? error.reason : "", "FrameTooLarge")
    }).pipe(Effect.provide(client([scripted, "oversize"], {}, { maxFrameBytes: 64 * 1024 }))))

  it.live("arguments JSON cannot hold fail that call alone with a defect; the connection stays and the next call goes through", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      const { pid } = (yield* mcp.session).transport
      const exit = yield* Effect.exit(mcp.callTool({ name: "echo", arguments: { text: 1n } }, { timeout: "2 seconds" }))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause), "the encoding's failure is the call's defect")
      const echo = yield* call("after")
      assert.deepStrictEqual(echo.content, [{ type: "text", text: "after" }])
      assert.strictEqual((yield* mcp.session).transport.pid, pid, "the same connection")
    }).pipe(Effect.provide(client([scripted, "noisy"]))))

  it.live("a server that dies mid-response fails the call at once", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(call("half"))
      assert.strictEqual(error._tag, "TransportError")
    }).pipe(Effect.provide(client([scripted, "half-then-exit"], { reconnect: false }))))

  it.live("a server that exits at start fails the layer with its stderr tail", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(client([scripted, "exit-at-start"])))
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") {
        assert.strictEqual(error.exitCode, 3)
        assert.include(error.stderr ?? [], "fatal: missing configuration file ./server.toml")
        assert.include(error.message, "missing configuration file")
      }
    }).pipe(Effect.scoped))

  it.live("a server that never answers: the probe falls back, initialize times out, a typed error", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(client([scripted, "silent"], { initializeTimeout: "500 millis" })))
      assert.strictEqual(error._tag, "RequestTimeout")
      if (error._tag === "RequestTimeout") assert.strictEqual(error.method, "initialize")
    }).pipe(Effect.scoped))

  it.live("a command that does not exist is a typed spawn error", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(
        McpClient.layer().pipe(
          Layer.provide(StdioTransport.layer({ command: "/nonexistent/mcp-server" })),
          Layer.provide(NodeServices.layer)
        )
      ))
      assert.strictEqual(error._tag === "TransportError" ? error.reason : error._tag, "Spawn")
    }).pipe(Effect.scoped))
})

describe("restart", () => {
  it.live("killing the server mid-call fails that call; the client restarts it, renegotiates, and goes on", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      const before = yield* mcp.session
      assert.isNumber(before.transport.pid)
      // killed once the server reports progress on the call (so it is certainly running there)
      const running = yield* Deferred.make<void>()
      const hang = yield* Effect.forkChild(mcp.callTool(
        { name: "slow", arguments: { steps: 100, delayMs: 100 } },
        { onProgress: () => Deferred.succeed(running, undefined) }
      ))
      yield* Deferred.await(running)
      process.kill(before.transport.pid!, "SIGKILL")
      const error = yield* Effect.flip(Fiber.join(hang))
      assert.strictEqual(error._tag, "TransportError")
      const echo = yield* mcp.callTool({ name: "echo", arguments: { text: "back" } }, { timeout: "20 seconds" })
      assert.deepStrictEqual(echo.content, [{ type: "text", text: "back" }])
      const after = yield* mcp.session
      assert.notStrictEqual(after.transport.pid, before.transport.pid)
      assert.strictEqual(after.era, "modern")
    }).pipe(Effect.provide(client(["--import", tsx, fixtureProgram], {
      reconnect: Schedule.max([Schedule.exponential("100 millis"), Schedule.recurs(5)]),
      probeTimeout: "20 seconds"
    }))), 60_000)
})
