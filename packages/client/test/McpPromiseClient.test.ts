/**
 * The promise client: the same client, each call a promise. Over a real child process the usual calls take the
 * fast path (no fiber started per call) and everything else runs as an effect; against a scripted server, under
 * the TestClock, a timeout, an aborted signal and a JSON-RPC error settle the promise the way the effect's outcome
 * would, and a call given up is cancelled on the wire.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Metric from "effect/Metric"
import * as TestClock from "effect/testing/TestClock"
import * as Module from "node:module"
import * as Url from "node:url"
import * as ElicitationHandler from "../src/ElicitationHandler.js"
import * as McpClient from "../src/McpClient.js"
import * as McpError from "../src/McpError.js"
import * as McpPromiseClient from "../src/McpPromiseClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as StdioTransport from "../src/StdioTransport.js"
import * as Transport from "../src/Transport.js"
import { makeCapture } from "./utils/capture.js"
import * as Scripted from "./utils/scriptedTransport.js"

const require = Module.createRequire(import.meta.url)
const tsx = Url.pathToFileURL(require.resolve("tsx")).href
const fixtureProgram = Url.fileURLToPath(new URL("./fixtures/server.ts", import.meta.url))
const scriptedProgram = Url.fileURLToPath(new URL("./fixtures/stdio/legacy-scripted.mjs", import.meta.url))

/** Counts the fibers started in the context it is added to (as `Metric.FiberRuntimeMetrics`, told of each start). */
class StartedFibers {
  started = 0
  readonly service: Metric.FiberRuntimeMetricsService = {
    recordFiberStart: () => {
      this.started++
    },
    recordFiberEnd: () => {}
  }
}

const stdioClient = (era: "legacy" | "modern", supervisor: StartedFibers) =>
  McpClient.layer({ era, healthCheckInterval: false }).pipe(
    Layer.provide(StdioTransport.layer({ command: process.execPath, args: ["--import", tsx, fixtureProgram] })),
    Layer.provide(NodeServices.layer),
    Layer.provideMerge(Layer.succeed(Metric.FiberRuntimeMetrics, supervisor.service))
  )

const textOf = (result: McpSchema.CallToolResult) => {
  const first = result.content[0]
  return first !== undefined && "text" in first ? first.text : undefined
}

/** How a promise settles (observed from now on, so that its rejection is never unhandled). */
const rejectionOf = (promise: Promise<unknown>) => {
  const outcome = promise.then(
    () => ({ rejected: false as const }),
    (error: unknown) => ({ rejected: true as const, error })
  )
  return Effect.promise(() => outcome)
}

const tagOf = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : undefined

describe("McpPromiseClient over a real stdio server", () => {
  for (const era of ["legacy", "modern"] as const) {
    it.live(`${era}: every operation as a promise; the usual calls start no fiber of their own`, () =>
      Effect.gen(function*() {
        const supervisor = new StartedFibers()
        const client = yield* Effect.promise(() => McpPromiseClient.make(stdioClient(era, supervisor)))
        yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))

        const tools = yield* Effect.promise(() => client.listTools())
        assert.include(tools.map((t) => t.name), "echo")
        const echoed = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "hi" } }))
        assert.strictEqual(textOf(echoed), "hi")
        const read = yield* Effect.promise(() => client.readResource({ uri: "fixture://hello" }))
        assert.isAbove(read.contents.length, 0)
        const prompt = yield* Effect.promise(() => client.getPrompt({ name: "greet", arguments: { name: "ada" } }))
        assert.isAbove(prompt.messages.length, 0)
        yield* Effect.promise(() => client.ping())
        const session = yield* Effect.promise(() => client.run((c) => c.session))
        assert.strictEqual(session.era, era)

        // 200 calls in flight: the fast path starts no fiber per call
        const before = supervisor.started
        const results = yield* Effect.promise(() =>
          Promise.all(
            Array.from({ length: 200 }, (_, i) => client.callTool({ name: "echo", arguments: { text: `${i}` } }))
          )
        )
        assert.deepStrictEqual(results.map(textOf), Array.from({ length: 200 }, (_, i) => `${i}`))
        const direct = supervisor.started - before
        assert.isBelow(direct, 20)

        // the same calls as effects: a fiber each
        const again = supervisor.started
        yield* Effect.promise(() =>
          Promise.all(
            Array.from({ length: 200 }, (_, i) => client.run((c) => c.callTool({ name: "echo", arguments: { text: `${i}` } })))
          )
        )
        assert.isAtLeast(supervisor.started - again, 200)
      }))
  }

  it.live("progress reaches onProgress, with a fixed timeout and with one that restarts on progress", () =>
    Effect.gen(function*() {
      const client = yield* Effect.promise(() => McpPromiseClient.make(stdioClient("legacy", new StartedFibers())))
      yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
      yield* Effect.promise(() => client.listTools())
      for (const resetTimeoutOnProgress of [false, true]) {
        const seen: Array<number> = []
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "slow", arguments: { steps: 3, delayMs: 1 } }, {
            timeout: "10 seconds",
            resetTimeoutOnProgress,
            onProgress: (progress) => seen.push(progress.progress)
          })
        )
        assert.isFalse(result.isError === true)
        assert.deepStrictEqual(seen, [1, 2, 3])
      }
    }))

  it.live("an aborted call rejects with the signal's reason at once; the client goes on", () =>
    Effect.gen(function*() {
      const client = yield* Effect.promise(() => McpPromiseClient.make(stdioClient("legacy", new StartedFibers())))
      yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
      const controller = new AbortController()
      const hanging = rejectionOf(client.callTool({ name: "hang" }, { signal: controller.signal }))
      controller.abort(new Error("no longer needed"))
      const outcome = yield* hanging
      assert.isTrue(outcome.rejected)
      assert.strictEqual(outcome.rejected ? (outcome.error as Error).message : "", "no longer needed")
      const echoed = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "after" } }))
      assert.strictEqual(textOf(echoed), "after")
      // a signal aborted before the call: rejected without sending anything
      const before = yield* rejectionOf(client.callTool({ name: "echo" }, { signal: controller.signal }))
      assert.isTrue(before.rejected)
    }))

  it.live("a connection that cannot be made rejects make with its typed error", () =>
    Effect.gen(function*() {
      const layer = McpClient.layer({ healthCheckInterval: false }).pipe(
        Layer.provide(StdioTransport.layer({ command: "conduit-no-such-binary" })),
        Layer.provide(NodeServices.layer)
      )
      const outcome = yield* rejectionOf(McpPromiseClient.make(layer))
      assert.isTrue(outcome.rejected)
      assert.strictEqual(tagOf(outcome.rejected ? outcome.error : undefined), "TransportError")
    }))

  it.live("after close, a call rejects", () =>
    Effect.gen(function*() {
      const client = yield* Effect.promise(() => McpPromiseClient.make(stdioClient("legacy", new StartedFibers())))
      yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "x" } }))
      yield* Effect.promise(() => client.close())
      const outcome = yield* rejectionOf(client.callTool({ name: "echo", arguments: { text: "y" } }))
      assert.isTrue(outcome.rejected)
    }))
})

describe("McpPromiseClient against a hostile stdio server", () => {
  const hostile = (mode: string) =>
    McpPromiseClient.make(
      McpClient.layer({ healthCheckInterval: false, reconnect: false }).pipe(
        Layer.provide(
          StdioTransport.layer({
            command: process.execPath,
            args: [scriptedProgram, mode],
            closeTimeout: "500 millis",
            maxFrameBytes: 64 * 1024
          })
        ),
        Layer.provide(NodeServices.layer)
      )
    )

  it.live("garbage, malformed JSON and answers to unknown ids are dropped; the calls resolve", () =>
    Effect.gen(function*() {
      const client = yield* Effect.promise(() => hostile("noisy"))
      yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
      yield* Effect.promise(() => client.listTools())
      const results = yield* Effect.promise(() =>
        Promise.all(["a", "b", "c"].map((text) => client.callTool({ name: "echo", arguments: { text } })))
      )
      assert.deepStrictEqual(results.map(textOf), ["a", "b", "c"])
    }))

  for (
    const [mode, reason] of [
      ["oversize", "FrameTooLarge"],
      ["half-then-exit", undefined],
      ["exit-on-call", undefined]
    ] as const
  ) {
    it.live(`${mode}: the waiting call rejects with a TransportError, nothing hangs`, () =>
      Effect.gen(function*() {
        const client = yield* Effect.promise(() => hostile(mode))
        yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
        yield* Effect.promise(() => client.listTools())
        const outcome = yield* rejectionOf(client.callTool({ name: "echo", arguments: { text: "x" } }))
        const error = outcome.rejected ? outcome.error : undefined
        assert.strictEqual(tagOf(error), "TransportError")
        if (reason !== undefined) assert.strictEqual((error as { readonly reason?: string }).reason, reason)
      }))
  }
})

const confirm = {
  method: "elicitation/create",
  params: { mode: "form", message: "ok?", requestedSchema: { type: "object", properties: {} } }
}

/**
 * A scripted server: `echo` answers, `shaped` answers structured content its output schema refuses, `ask` asks for
 * input (modern) and answers the round that brings it, a read is a -32002, anything else never answers.
 */
const script = (era: "legacy" | "modern", listing: "answered" | "never" = "answered"): Scripted.Script => {
  const handle: Scripted.Script = (message, ctx) => {
    if (!("method" in message) || !("id" in message)) return Effect.void
    if (message.method === "tools/list" && listing === "never") return Effect.void
    if (message.method === "tools/list") {
      return ctx.reply(message.id, {
        tools: [
          ...["echo", "silent", "ask", "progress"].map((name) => ({ name, inputSchema: { type: "object" } })),
          {
            name: "shaped",
            inputSchema: { type: "object" },
            outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] }
          }
        ]
      })
    }
    if (message.method === "resources/read") return ctx.fail(message.id, -32002, "Resource not found")
    if (message.method === "tools/call") {
      const params = message.params as { readonly name?: string; readonly requestState?: string } | undefined
      if (params?.name === "echo") return ctx.reply(message.id, { content: [{ type: "text", text: "ok" }] })
      // (against its output schema)
      if (params?.name === "shaped") {
        return ctx.reply(message.id, { content: [{ type: "text", text: "{}" }], structuredContent: { n: "one" } })
      }
      if (params?.name === "progress") {
        const token = (message.params as { readonly _meta?: { readonly progressToken?: unknown } })._meta?.progressToken
        return Effect.andThen(
          ctx.notify("notifications/progress", { progressToken: token, progress: 1 }),
          ctx.reply(message.id, { content: [{ type: "text", text: "done" }] })
        )
      }
      if (params?.name === "ask") {
        return params.requestState === undefined
          ? ctx.reply(message.id, { resultType: "input_required", inputRequests: { confirm }, requestState: "s1" })
          : ctx.reply(message.id, { resultType: "complete", content: [{ type: "text", text: "confirmed" }] })
      }
    }
    return Effect.void
  }
  return era === "legacy" ? Scripted.legacyScript(handle) : Scripted.modernScript(handle)
}

/**
 * The promise client of a client built in this test's scope (over a scripted transport that takes requests
 * without an effect, as the library's own do), whose runtime has the TestClock and counts the fibers it starts.
 */
const scriptedClient = (
  era: "legacy" | "modern",
  elicit: ElicitationHandler.Service["elicit"] = () => Effect.succeed({ action: "accept", content: {} }),
  options: { readonly listFirst?: boolean; readonly listing?: "answered" | "never" } = {}
) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      McpClient.layer({ era, healthCheckInterval: false, elicitation: ElicitationHandler.ElicitationHandler }).pipe(
        Layer.provideMerge(Scripted.layer(script(era, options.listing), { fastRequest: true })),
        Layer.provide(ElicitationHandler.layer({ modes: ["form"], elicit }))
      )
    )
    const supervisor = new StartedFibers()
    const runtime = yield* Effect.context<McpClient.McpClient>().pipe(
      Effect.provideService(Metric.FiberRuntimeMetrics, supervisor.service),
      Effect.provide(context)
    )
    const client = McpPromiseClient.fromRuntime(runtime)
    // (the tools' output schemas are known once listed)
    if (options.listFirst !== false) yield* Effect.promise(() => client.listTools())
    return { client, log: Context.get(context, Scripted.ScriptLog), supervisor }
  })

/** A promise client over the scripted server whose runtime is `runtime` run through `configure` (its fiber refs). */
const configuredClient = (
  era: "legacy" | "modern",
  configure: (
    runtime: Effect.Effect<Context.Context<McpClient.McpClient>, never, McpClient.McpClient>
  ) => Effect.Effect<Context.Context<McpClient.McpClient>, never, McpClient.McpClient>
) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      McpClient.layer({ era, healthCheckInterval: false }).pipe(
        Layer.provideMerge(Scripted.layer(script(era), { fastRequest: true }))
      )
    )
    const supervisor = new StartedFibers()
    const runtime = yield* configure(Effect.context<McpClient.McpClient>()).pipe(
      Effect.provideService(Metric.FiberRuntimeMetrics, supervisor.service),
      Effect.provide(context)
    )
    const client = McpPromiseClient.fromRuntime(runtime)
    yield* Effect.promise(() => client.listTools())
    return { client, supervisor }
  })

/** The `tools/list` requests sent. */
const toolLists = (sent: ReadonlyArray<Scripted.Sent>) =>
  sent.flatMap((s) =>
    "method" in s.message && "id" in s.message && s.message.method === "tools/list" ? [s.message] : []
  )

const toolCalls = (sent: ReadonlyArray<Scripted.Sent>, name: string) =>
  sent.filter((s) =>
    "method" in s.message && s.message.method === "tools/call" &&
    (s.message.params as { readonly name?: string } | undefined)?.name === name
  )

describe("McpPromiseClient against a scripted server", () => {
  for (const era of ["legacy", "modern"] as const) {
    it.effect(`${era}: answers settle from the fast path, no fiber per call; a JSON-RPC error is the typed error`, () =>
      Effect.gen(function*() {
        const { client, supervisor } = yield* scriptedClient(era)
        const before = supervisor.started
        const results = yield* Effect.promise(() =>
          Promise.all(Array.from({ length: 20 }, () => client.callTool({ name: "echo" })))
        )
        assert.deepStrictEqual(results.map(textOf), Array.from({ length: 20 }, () => "ok"))
        // (at most the deadline timer's start)
        assert.isBelow(supervisor.started - before, 3)
        const missing = yield* rejectionOf(client.readResource({ uri: "file:///nowhere" }))
        assert.strictEqual(tagOf(missing.rejected ? missing.error : undefined), "ResourceNotFound")
        assert.isTrue(McpError.isMcpClientError(missing.rejected ? missing.error : undefined))
        // the same calls as effects: a fiber each
        const again = supervisor.started
        yield* Effect.promise(() =>
          Promise.all(Array.from({ length: 20 }, () => client.run((c) => c.callTool({ name: "echo" }))))
        )
        assert.isAtLeast(supervisor.started - again, 20)
      }))

    it.effect(`${era}: before any listing, calls take the fast path; a structured result lists once, is checked`, () =>
      Effect.gen(function*() {
        const { client, log, supervisor } = yield* scriptedClient(era, undefined, { listFirst: false })
        const listings = Effect.map(Ref.get(log.sent), (sent) => toolLists(sent).length)
        const before = supervisor.started
        const results = yield* Effect.promise(() =>
          Promise.all(Array.from({ length: 20 }, () => client.callTool({ name: "echo" })))
        )
        assert.deepStrictEqual(results.map(textOf), Array.from({ length: 20 }, () => "ok"))
        // no fiber per call, and a result without structured content lists nothing
        assert.isBelow(supervisor.started - before, 3)
        assert.strictEqual(yield* listings, 0)
        // structured content from a tool not listed yet: the tools are listed once, then each result is checked
        const shaped = yield* Effect.all(
          [0, 1, 2].map(() => rejectionOf(client.callTool({ name: "shaped" }))),
          { concurrency: "unbounded" }
        )
        for (const outcome of shaped) {
          const error = outcome.rejected ? outcome.error : undefined
          assert.strictEqual(tagOf(error), "ProtocolError")
          assert.strictEqual((error as McpError.ProtocolError).reason, "InvalidResult")
        }
        assert.strictEqual(yield* listings, 1)
        // listed now: the check needs no effect, and the echo calls still take the fast path
        const invalid = yield* rejectionOf(client.callTool({ name: "shaped" }))
        assert.strictEqual(tagOf(invalid.rejected ? invalid.error : undefined), "ProtocolError")
        const again = supervisor.started
        yield* Effect.promise(() => Promise.all(Array.from({ length: 20 }, () => client.callTool({ name: "echo" }))))
        assert.isBelow(supervisor.started - again, 3)
        assert.strictEqual(yield* listings, 1)
      }))

    it.effect(`${era}: aborted while the tools are listed for its result, it rejects; the listing is cancelled`, () =>
      Effect.gen(function*() {
        const { client, log } = yield* scriptedClient(era, undefined, { listFirst: false, listing: "never" })
        const controller = new AbortController()
        const shaped = rejectionOf(client.callTool({ name: "shaped" }, { signal: controller.signal }))
        for (let i = 0; i < 20 && toolLists(yield* Ref.get(log.sent)).length === 0; i++) yield* Effect.yieldNow
        const [listing] = toolLists(yield* Ref.get(log.sent))
        assert.isDefined(listing)
        controller.abort()
        const outcome = yield* shaped
        assert.strictEqual((outcome.rejected ? outcome.error : undefined) as unknown, controller.signal.reason)
        for (let i = 0; i < 20 && (yield* Ref.get(log.cancels)).length === 0; i++) yield* Effect.yieldNow
        assert.deepStrictEqual(yield* Ref.get(log.cancels), [{ id: listing!.id, reason: "interrupted" }])
        yield* Effect.promise(() => client.close())
      }))

    it.effect(`${era}: each call reads its own runtime's tracer, span annotations and tracing switch`, () =>
      Effect.gen(function*() {
        const capture = makeCapture()
        const traced = yield* configuredClient(era, (runtime) =>
          runtime.pipe(Effect.annotateSpans("app.tenant", "tenant-7"), capture.observe))
        for (let i = 0; i < 3; i++) yield* Effect.promise(() => traced.client.callTool({ name: "echo" }))
        const calls = capture.spans.filter((line) => line === "McpClient tools/call")
        assert.strictEqual(calls.length, 3)
        const attributes = capture.spans.filter((_, i) => capture.spans[i - 1] === "McpClient tools/call")
        assert.strictEqual(attributes.length, 3)
        for (const line of attributes) assert.include(line, "tenant-7")
        // the same tracer in a runtime with tracing switched off: nothing reaches it
        const untraced = yield* configuredClient(
          era,
          (runtime) => runtime.pipe(Effect.withTracerEnabled(false), capture.observe)
        )
        for (let i = 0; i < 3; i++) yield* Effect.promise(() => untraced.client.callTool({ name: "echo" }))
        assert.strictEqual(capture.spans.filter((line) => line === "McpClient tools/call").length, 3)
      }))

    it.effect(`${era}: a call past its timeout rejects with RequestTimeout and is cancelled on the wire`, () =>
      Effect.gen(function*() {
        const { client, log } = yield* scriptedClient(era)
        const silent = rejectionOf(client.callTool({ name: "silent" }, { timeout: "2 seconds" }))
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual(yield* Ref.get(log.cancels), [])
        yield* TestClock.adjust("1 second")
        const outcome = yield* silent
        assert.strictEqual(tagOf(outcome.rejected ? outcome.error : undefined), "RequestTimeout")
        const cancels = yield* Ref.get(log.cancels)
        assert.deepStrictEqual(cancels.map((c) => c.reason), ["timeout"])
      }))

    it.effect(`${era}: an aborted call is cancelled on the wire as interrupted; an aborted signal sends nothing`, () =>
      Effect.gen(function*() {
        const { client, log } = yield* scriptedClient(era)
        const controller = new AbortController()
        const silent = rejectionOf(client.callTool({ name: "silent" }, { signal: controller.signal }))
        yield* Effect.yieldNow
        controller.abort()
        const outcome = yield* silent
        assert.isTrue(outcome.rejected)
        assert.strictEqual((outcome.rejected ? outcome.error : undefined) as unknown, controller.signal.reason)
        yield* Effect.yieldNow
        const cancels = yield* Ref.get(log.cancels)
        assert.deepStrictEqual(cancels.map((c) => c.reason), ["interrupted"])
        const before = yield* rejectionOf(client.callTool({ name: "echo" }, { signal: controller.signal }))
        assert.isTrue(before.rejected)
        assert.deepStrictEqual(toolCalls(yield* Ref.get(log.sent), "echo"), [])
      }))

    it.effect(`${era}: close rejects what waits (fast path and effects), cancels it, and every later call`, () =>
      Effect.gen(function*() {
        const { client, log } = yield* scriptedClient(era)
        const silent = rejectionOf(client.callTool({ name: "silent" }))
        let interrupted = false
        const forever = rejectionOf(
          client.run(() => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))))
        )
        yield* Effect.yieldNow
        yield* Effect.promise(() => client.close())
        for (const outcome of [yield* silent, yield* forever]) {
          const error = outcome.rejected ? outcome.error : undefined
          assert.strictEqual(tagOf(error), "TransportError")
          assert.strictEqual((error as McpError.TransportError).reason, "Closed")
        }
        assert.isTrue(interrupted)
        yield* Effect.yieldNow
        assert.deepStrictEqual((yield* Ref.get(log.cancels)).map((c) => c.reason), ["interrupted"])
        const later = yield* rejectionOf(client.callTool({ name: "echo" }))
        assert.strictEqual(tagOf(later.rejected ? later.error : undefined), "TransportError")
      }))
  }

  it.effect("a send still under way when the call is aborted is interrupted, as the caller's fiber would be", () =>
    Effect.gen(function*() {
      let interrupted = 0
      // a modern server whose transport never finishes sending tools/call
      const stuck = Layer.succeed(
        Transport.Transport,
        Transport.Transport.of({
          kind: "in-process",
          connect: (emit) =>
            Effect.succeed({
              info: { binding: "in-process", target: "stuck" },
              request: (message: McpSchema.JsonRpcRequest) =>
                message.method === "server/discover"
                  ? emit(Transport.TransportEvent.Response({
                    message: { jsonrpc: "2.0", id: message.id, result: Scripted.discoverResult() }
                  }))
                  : message.method === "tools/list"
                  ? emit(Transport.TransportEvent.Response({
                    message: { jsonrpc: "2.0", id: message.id, result: { tools: [] } }
                  }))
                  : Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => interrupted++))),
              notify: () => Effect.void,
              respond: () => Effect.void,
              cancel: () => Effect.void,
              setSession: () => Effect.void
            } satisfies Transport.TransportConnection)
        })
      )
      const context = yield* Layer.build(McpClient.layer({ healthCheckInterval: false }).pipe(Layer.provide(stuck)))
      const runtime = yield* Effect.context<McpClient.McpClient>().pipe(Effect.provide(context))
      const client = McpPromiseClient.fromRuntime(runtime)
      yield* Effect.promise(() => client.listTools())
      const controller = new AbortController()
      const call = rejectionOf(client.readResource({ uri: "file:///a" }, { signal: controller.signal }))
      yield* Effect.yieldNow
      controller.abort()
      assert.isTrue((yield* call).rejected)
      for (let i = 0; i < 10 && interrupted === 0; i++) yield* Effect.yieldNow
      assert.strictEqual(interrupted, 1)
    }))

  it.effect("an abort or a close from the call's own progress handler, while the call starts, gives it up", () =>
    Effect.gen(function*() {
      const { client } = yield* scriptedClient("legacy")
      const controller = new AbortController()
      const aborted = yield* rejectionOf(
        client.callTool({ name: "progress" }, {
          signal: controller.signal,
          onProgress: () => controller.abort(new Error("enough"))
        })
      )
      assert.strictEqual(aborted.rejected ? (aborted.error as Error).message : "resolved", "enough")
      const closed = yield* rejectionOf(client.callTool({ name: "progress" }, { onProgress: () => void client.close() }))
      const error = closed.rejected ? closed.error : undefined
      assert.strictEqual(tagOf(error), "TransportError")
      assert.strictEqual((error as McpError.TransportError).reason, "Closed")
    }))

  it.effect("close() called twice: both promises settle once everything is released", () =>
    Effect.gen(function*() {
      const { client } = yield* scriptedClient("legacy")
      let interrupted = false
      const forever = rejectionOf(
        client.run(() => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))))
      )
      const first = client.close()
      const second = client.close()
      assert.strictEqual(first, second)
      yield* Effect.promise(() => second)
      assert.isTrue(interrupted)
      assert.isTrue((yield* forever).rejected)
    }))

  it.effect("modern: an input_required answer's rounds run, and settle the promise", () =>
    Effect.gen(function*() {
      const { client, log } = yield* scriptedClient("modern")
      const result = yield* Effect.promise(() => client.callTool({ name: "ask" }))
      assert.strictEqual(textOf(result), "confirmed")
      assert.strictEqual(toolCalls(yield* Ref.get(log.sent), "ask").length, 2)
    }))

  it.effect("modern: aborting while the user is asked interrupts the rounds; no round more is sent", () =>
    Effect.gen(function*() {
      let asked = 0
      let interrupted = false
      const { client, log } = yield* scriptedClient("modern", () =>
        Effect.suspend(() => {
          asked++
          return Effect.never
        }).pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))))
      const controller = new AbortController()
      const ask = rejectionOf(client.callTool({ name: "ask" }, { signal: controller.signal }))
      yield* Effect.yieldNow
      for (let i = 0; i < 10 && asked === 0; i++) yield* Effect.yieldNow
      assert.strictEqual(asked, 1)
      controller.abort()
      const outcome = yield* ask
      assert.isTrue(outcome.rejected)
      for (let i = 0; i < 10 && !interrupted; i++) yield* Effect.yieldNow
      assert.isTrue(interrupted)
      assert.strictEqual(toolCalls(yield* Ref.get(log.sent), "ask").length, 1)
    }))
})
