import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/testing/TestClock"
import * as Tracer from "effect/Tracer"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import { awaitSleep, withSleepLog } from "./utils/clock.js"
import * as Scripted from "./utils/scriptedTransport.js"

/** The error of a cause that is one failure and nothing else (Effect 3's `cause._tag === "Fail"`). */
const onlyFailure = <E>(cause: Cause.Cause<E>): E | undefined => {
  const [reason, ...rest] = cause.reasons
  return reason !== undefined && rest.length === 0 && Cause.isFailReason(reason) ? reason.error : undefined
}

const clientLayer = (script: Scripted.Script, options: McpClient.McpClientOptions = {}) =>
  McpClient.layer({ healthCheckInterval: false, ...options }).pipe(
    Layer.provideMerge(Scripted.layer(script))
  )

const requests = (sent: ReadonlyArray<Scripted.Sent>) =>
  sent.flatMap((s) => ("method" in s.message && "id" in s.message ? [s.message] : []))

const echoTool: Scripted.Script = (message, ctx) => {
  if ("method" in message && "id" in message && message.method === "tools/call") {
    return ctx.reply(message.id, { content: [{ type: "text", text: "ok" }] })
  }
  return Effect.void
}

describe("era negotiation", () => {
  it.effect("a DiscoverResult means modern, and every request carries the modern _meta", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const session = yield* client.session
      assert.strictEqual(session.era, "modern")
      assert.strictEqual(session.protocolVersion, "2026-07-28")
      assert.strictEqual(session.serverInfo?.name, "scripted")
      assert.strictEqual(session.instructions, "scripted modern server")
      const result = yield* client.callTool({ name: "echo", arguments: { text: "hi" } })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "ok" }])
      const log = yield* Scripted.ScriptLog
      const sent = requests(yield* Ref.get(log.sent))
      assert.deepStrictEqual(sent.map((m) => m.method), ["server/discover", "tools/call"])
      assert.strictEqual(sent[0].id, 1, "the probe has an integer id, the first")
      assert.isNumber(sent[1].id)
      const meta = (sent[1].params as { _meta: Record<string, unknown> })._meta
      assert.strictEqual(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28")
      assert.deepStrictEqual(meta["io.modelcontextprotocol/clientInfo"], { name: "conduit", version: "1.0.0" })
      assert.deepStrictEqual(meta["io.modelcontextprotocol/clientCapabilities"], {})
      assert.deepStrictEqual(yield* Ref.get(log.sessions), [{ era: "modern", protocolVersion: "2026-07-28" }])
    }).pipe(Effect.provide(clientLayer(Scripted.modernScript(echoTool)))))

  it.effect("any other error to the probe means legacy: initialize, then notifications/initialized", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const session = yield* client.session
      assert.strictEqual(session.era, "legacy")
      assert.strictEqual(session.protocolVersion, "2025-06-18")
      yield* client.callTool({ name: "echo" })
      const log = yield* Scripted.ScriptLog
      const sent = yield* Ref.get(log.sent)
      assert.deepStrictEqual(Scripted.sentMethods(sent), [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/call"
      ])
      const init = requests(sent)[1]
      assert.deepStrictEqual(init.params, {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "conduit", version: "1.0.0" }
      })
      const call = requests(sent)[2]
      assert.deepStrictEqual(call.params, { name: "echo" }, "no modern _meta in the legacy era")
    }).pipe(Effect.provide(clientLayer(Scripted.legacyScript(echoTool, "2025-06-18")))))

  it.effect("-32022 naming a modern version: one corrective retry", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      assert.strictEqual((yield* client.session).era, "modern")
      const log = yield* Scripted.ScriptLog
      const sent = requests(yield* Ref.get(log.sent))
      assert.deepStrictEqual(sent.map((m) => m.method), ["server/discover", "server/discover"])
      assert.notStrictEqual(sent[0].id, sent[1].id)
    }).pipe(Effect.provide(clientLayer((message, ctx) => {
      if (!("id" in message) || !("method" in message)) return Effect.void
      return message.id === 1
        ? ctx.fail(message.id, -32022, "Unsupported protocol version", {
          supported: ["2026-07-28"],
          requested: "2026-07-28"
        })
        : ctx.reply(message.id, Scripted.discoverResult())
    }))))

  it.effect("-32022 twice is fatal (loop guard)", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Layer.build(clientLayer((message, ctx) =>
        "id" in message && "method" in message
          ? ctx.fail(message.id, -32022, "Unsupported", { supported: ["2026-07-28"] })
          : Effect.void
      )))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const error = onlyFailure(exit.cause)
        assert.strictEqual(error?._tag, "ProtocolError")
      }
    }))

  it.effect("-32022 listing only legacy versions: initialize at the newest shared one", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const session = yield* client.session
      assert.strictEqual(session.era, "legacy")
      const log = yield* Scripted.ScriptLog
      const init = requests(yield* Ref.get(log.sent)).find((m) => m.method === "initialize")
      assert.strictEqual((init?.params as { protocolVersion: string }).protocolVersion, "2025-06-18")
    }).pipe(Effect.provide(clientLayer((message, ctx) => {
      if (!("id" in message) || !("method" in message)) return Effect.void
      if (message.method === "server/discover") {
        return ctx.fail(message.id, -32022, "Unsupported", { supported: ["2025-06-18", "2024-11-05"] })
      }
      if (message.method === "initialize") return ctx.reply(message.id, Scripted.initializeResult("2025-06-18"))
      return Effect.void
    }))))

  it.effect("-32021 to the probe is a negotiation error, not a fallback", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(clientLayer((message, ctx) =>
        "id" in message && "method" in message ? ctx.fail(message.id, -32021, "Missing capability") : Effect.void
      )))
      assert.strictEqual(error._tag, "ProtocolError")
      assert.strictEqual(error._tag === "ProtocolError" ? error.reason : "", "Negotiation")
    }))

  it.effect("silence to the probe means legacy after the probe timeout", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Layer.build(clientLayer((message, ctx) => {
        if (!("id" in message) || !("method" in message)) return Effect.void
        if (message.method === "initialize") return ctx.reply(message.id, Scripted.initializeResult())
        return Effect.void // server/discover: never answered
      })))
      yield* TestClock.adjust("2999 millis")
      assert.isNull(fiber.pollUnsafe() !== undefined ? "done" : null)
      yield* TestClock.adjust("1 millis")
      const context = yield* Fiber.join(fiber)
      const client = Context.get(context, McpClient.McpClient)
      assert.strictEqual((yield* client.session).era, "legacy")
    }))

  it.effect("pinned to modern, server/discover is the opening handshake: it waits initializeTimeout, not probeTimeout", () =>
    Effect.gen(function*() {
      const late = (delay: Duration.Input) =>
        clientLayer((message, ctx) =>
          "id" in message && "method" in message && message.method === "server/discover"
            ? Effect.forkDetach(Effect.andThen(Effect.sleep(delay), ctx.reply(message.id, Scripted.discoverResult())))
            : Effect.void, { era: "modern", initializeTimeout: "20 seconds" })
      // a child that takes 10 s to answer (a slow start) is waited for: the probe's 3 s do not apply
      const slow = yield* Effect.forkChild(Layer.build(late("10 seconds")))
      // (Effect 4's adjust does not wait for the build to reach its sleeps first)
      yield* awaitSleep("10 seconds")
      yield* TestClock.adjust("10 seconds")
      const context = yield* Fiber.join(slow)
      const client = Context.get(context, McpClient.McpClient)
      assert.strictEqual((yield* client.session).era, "modern")
      // past initializeTimeout it is a timeout
      const silent = yield* Effect.forkChild(Effect.flip(Layer.build(late("1 hour"))))
      yield* awaitSleep("20 seconds")
      yield* TestClock.adjust("20 seconds")
      const error = yield* Fiber.join(silent)
      assert.strictEqual(error._tag, "RequestTimeout", String(error))
    }).pipe(withSleepLog))

  it.effect("a server that quits on the probe is restarted and spoken to in legacy", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      assert.strictEqual((yield* client.session).era, "legacy")
      const log = yield* Scripted.ScriptLog
      assert.strictEqual(yield* Ref.get(log.connections), 2)
      const sent = yield* Ref.get(log.sent)
      assert.deepStrictEqual(sent.map((s) => [s.connection, "method" in s.message ? s.message.method : "response"]), [
        [1, "server/discover"],
        [2, "initialize"],
        [2, "notifications/initialized"]
      ])
    }).pipe(Effect.provide(clientLayer((message, ctx) => {
      if (!("id" in message) || !("method" in message)) return Effect.void
      if (message.method === "server/discover") return ctx.close("exited on an unknown method")
      if (message.method === "initialize") return ctx.reply(message.id, Scripted.initializeResult())
      return Effect.void
    }))))

  it.effect("a legacy answer with a version we do not support fails the connection", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(clientLayer(Scripted.legacyScript(undefined, "2023-01-01"))))
      assert.strictEqual(error._tag, "ProtocolError")
    }))

  it.effect("pinned to legacy: no probe at all", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      assert.strictEqual((yield* client.session).era, "legacy")
      const log = yield* Scripted.ScriptLog
      assert.deepStrictEqual(Scripted.sentMethods(yield* Ref.get(log.sent)), ["initialize", "notifications/initialized"])
    }).pipe(Effect.provide(clientLayer(Scripted.legacyScript(), { era: "legacy" }))))

  it.effect("pinned protocol version 2025-03-26 is offered in initialize", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      assert.strictEqual((yield* client.session).protocolVersion, "2025-03-26")
      const log = yield* Scripted.ScriptLog
      const init = requests(yield* Ref.get(log.sent))[0]
      assert.strictEqual((init.params as { protocolVersion: string }).protocolVersion, "2025-03-26")
    }).pipe(Effect.provide(clientLayer((message, ctx) =>
      "id" in message && "method" in message && message.method === "initialize"
        ? ctx.reply(message.id, Scripted.initializeResult("2025-03-26"))
        : Effect.void, { protocolVersion: "2025-03-26" }))))

  it.effect("invalid options fail before any connection", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(clientLayer(Scripted.modernScript(), { requestTimeout: -1 })))
      assert.strictEqual(error._tag, "InvalidOption")
      const log = yield* Effect.flip(Layer.build(clientLayer(Scripted.modernScript(), {
        era: "legacy",
        protocolVersion: "2026-07-28"
      })))
      assert.strictEqual(log._tag, "InvalidOption")
    }))
})

/**
 * A modern server whose `tools/call` reports `steps` progress notifications (of `steps` in all), `every` apart, then
 * answers "done" (`last` after the last one); with `strangers`, each report is followed by one for another token.
 */
const progressingTool = (options: {
  readonly steps: number
  readonly every: Duration.Input
  readonly strangers?: boolean
  readonly last?: Duration.Input
}) =>
  Scripted.modernScript((message, ctx) => {
    if (!("method" in message) || !("id" in message) || message.method !== "tools/call") return Effect.void
    const token = (message.params as { _meta: { progressToken: McpSchema.RequestId } })._meta.progressToken
    return Effect.gen(function*() {
      for (let i = 1; i <= options.steps; i++) {
        yield* Effect.sleep(options.every)
        yield* ctx.notify("notifications/progress", { progressToken: token, progress: i, total: options.steps })
        if (options.strangers === true) {
          yield* ctx.notify("notifications/progress", { progressToken: "someone-else", progress: i })
        }
      }
      if (options.last !== undefined) yield* Effect.sleep(options.last)
      yield* ctx.reply(message.id, { content: [{ type: "text", text: "done" }] })
    })
  })

describe("requests", () => {
  const hangingTools = Scripted.modernScript((message, ctx) => {
    if (!("method" in message) || !("id" in message)) return Effect.void
    if (message.method === "tools/call") {
      const name = (message.params as { name: string }).name
      if (name === "late") return Effect.andThen(Effect.sleep("10 seconds"), ctx.reply(message.id, { content: [] }))
      if (name === "weird") return ctx.reply(message.id, { resultType: "something-else", content: [] })
      if (name === "bad") return ctx.reply(message.id, { content: "not an array" })
      if (name === "error") return ctx.fail(message.id, -32602, "Unknown tool: error")
      return Effect.void
    }
    return Effect.void
  })

  it.effect("a timeout fails with RequestTimeout and cancels the request", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const fiber = yield* Effect.forkChild(client.callTool({ name: "hang" }, { timeout: "5 seconds" }))
      yield* TestClock.adjust("5 seconds")
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isFailure(exit))
      const failure = Exit.isFailure(exit) ? onlyFailure(exit.cause) : undefined
      if (failure !== undefined) assert.strictEqual(failure._tag, "RequestTimeout")
      const log = yield* Scripted.ScriptLog
      const call = requests(yield* Ref.get(log.sent)).find((m) => m.method === "tools/call")!
      assert.deepStrictEqual(yield* Ref.get(log.cancels), [{ id: call.id, reason: "timeout" }])
    }).pipe(Effect.provide(clientLayer(hangingTools))))

  it.effect("interrupting the caller cancels the request and the late response is dropped", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const fiber = yield* Effect.forkChild(client.callTool({ name: "late" }))
      yield* TestClock.adjust("1 seconds")
      yield* Fiber.interrupt(fiber)
      const log = yield* Scripted.ScriptLog
      const call = requests(yield* Ref.get(log.sent)).find((m) => m.method === "tools/call")!
      assert.deepStrictEqual(yield* Ref.get(log.cancels), [{ id: call.id, reason: "interrupted" }])
      yield* TestClock.adjust("10 seconds") // the late answer arrives and is dropped
      const next = yield* client.callTool({ name: "error" }).pipe(Effect.flip)
      assert.strictEqual(next._tag, "McpError")
    }).pipe(Effect.provide(clientLayer(hangingTools))))

  it.effect("server errors, unknown resultType and invalid results are typed errors", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* Effect.flip(client.callTool({ name: "error" }))
      assert.strictEqual(error._tag, "McpError")
      if (error._tag === "McpError") {
        assert.strictEqual(error.code, -32602)
        assert.strictEqual(error.method, "tools/call")
      }
      const weird = yield* Effect.flip(client.callTool({ name: "weird" }))
      assert.strictEqual(weird._tag === "ProtocolError" ? weird.reason : weird._tag, "InvalidResultType")
      const bad = yield* Effect.flip(client.callTool({ name: "bad" }))
      assert.strictEqual(bad._tag === "ProtocolError" ? bad.reason : bad._tag, "InvalidResult")
    }).pipe(Effect.provide(clientLayer(hangingTools))))

  it.effect("a response with an unknown id is ignored", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.reply(987654, { content: [] })
      yield* ctx.reply("nobody", { content: [] })
      const error = yield* Effect.flip(client.callTool({ name: "error" }))
      assert.strictEqual(error._tag, "McpError")
    }).pipe(Effect.provide(clientLayer(hangingTools))))

  it.effect("progress notifications reach the caller by progress token and restart the timeout", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const seen: Array<McpSchema.Progress> = []
      const fiber = yield* Effect.forkChild(client.callTool({ name: "slow" }, {
        timeout: "2 seconds",
        resetTimeoutOnProgress: true,
        onProgress: (p) => Effect.sync(() => seen.push(p))
      }))
      for (let i = 0; i < 4; i++) yield* TestClock.adjust("1500 millis")
      const result = yield* Fiber.join(fiber)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "done" }])
      assert.deepStrictEqual(seen.map((p) => p.progress), [1, 2, 3])
    }).pipe(Effect.provide(clientLayer(progressingTool({ steps: 3, every: "1500 millis", strangers: true, last: "1 second" })))))

  it.effect("a progress callback that throws is logged; the call still gets its result", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      let calls = 0
      const fiber = yield* Effect.forkChild(client.callTool({ name: "slow" }, {
        onProgress: () => {
          calls++
          throw new Error("a bug in the callback")
        }
      }))
      for (let i = 0; i < 3; i++) yield* TestClock.adjust("1 second")
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      const outcome = fiber.pollUnsafe()
      assert.isTrue(outcome !== undefined && Exit.isSuccess(outcome), "the call completed")
      assert.strictEqual(calls, 2)
    }).pipe(Effect.provide(clientLayer(progressingTool({ steps: 2, every: "1 second" })))))

  it.effect("lists are collected across pages, with a page cap", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const tools = yield* client.listTools()
      assert.deepStrictEqual(tools.map((t) => t.name), ["t0", "t1", "t2", "t3", "t4"])
    }).pipe(Effect.provide(clientLayer(Scripted.modernScript((message, ctx) => {
      if (!("method" in message) || !("id" in message) || message.method !== "tools/list") return Effect.void
      const cursor = (message.params as { cursor?: string }).cursor
      const page = cursor === undefined ? 0 : Number(cursor)
      return ctx.reply(message.id, {
        tools: [{ name: `t${page}`, inputSchema: { type: "object" } }],
        ...(page < 4 ? { nextCursor: String(page + 1) } : {})
      })
    }), { maxPages: 10 }))))

  it.effect("a server that never stops paginating hits the page cap", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* Effect.flip(client.listTools())
      assert.deepStrictEqual(
        error._tag === "ProtocolError" ? [error.reason, error.budget, error.limit] : error._tag,
        ["ListingBudgetExceeded", "maxPages", 3]
      )
      const log = yield* Scripted.ScriptLog
      assert.strictEqual(requests(yield* Ref.get(log.sent)).filter((m) => m.method === "tools/list").length, 3)
    }).pipe(Effect.provide(clientLayer(Scripted.modernScript((message, ctx) =>
      "method" in message && "id" in message && message.method === "tools/list"
        ? ctx.reply(message.id, { tools: [], nextCursor: `after-${JSON.stringify(message.params ?? null)}` })
        : Effect.void
    ), { maxPages: 3 }))))

  it.effect("a modern request carries the caller's trace context; every call is a span", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const spanIds = yield* Effect.gen(function*() {
        yield* client.callTool({ name: "error" }).pipe(Effect.ignore)
        const outer = yield* Effect.currentSpan
        return outer
      }).pipe(Effect.withSpan("caller"))
      const log = yield* Scripted.ScriptLog
      const call = requests(yield* Ref.get(log.sent)).find((m) => m.method === "tools/call")!
      const traceparent = (call.params as { _meta: Record<string, unknown> })._meta.traceparent
      assert.isString(traceparent)
      const [version, traceId, spanId, flags] = String(traceparent).split("-")
      assert.strictEqual(version, "00")
      assert.strictEqual(traceId, spanIds.traceId, "same trace as the caller")
      assert.notStrictEqual(spanId, spanIds.spanId, "the request's own span, a child of the caller's")
      assert.match(spanId, /^[0-9a-f]{16}$/)
      assert.strictEqual(flags, "01")
    }).pipe(Effect.provide(clientLayer(hangingTools))))

  for (const era of ["modern", "legacy"] as const) {
    it.effect(`${era}: a progress token a caller puts in _meta is not sent; with onProgress the client's own is`, () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const metaOf = (m: McpSchema.JsonRpcRequest) => (m.params as { _meta?: Record<string, unknown> })._meta
        yield* client.callTool({ name: "error" }, { meta: { progressToken: 1, note: "kept" } }).pipe(Effect.ignore)
        yield* client.callTool({ name: "error" }, { meta: { progressToken: 2 } }).pipe(Effect.ignore)
        yield* client.callTool({ name: "error" }, { meta: { progressToken: 3 }, onProgress: () => Effect.void }).pipe(
          Effect.ignore
        )
        const sent = yield* Ref.get((yield* Scripted.ScriptLog).sent)
        const calls = requests(sent).filter((m) => m.method === "tools/call")
        assert.strictEqual(calls.length, 3)
        assert.notProperty(metaOf(calls[0]!), "progressToken")
        assert.strictEqual(metaOf(calls[0]!)?.note, "kept")
        assert.notProperty(metaOf(calls[1]!) ?? {}, "progressToken")
        assert.strictEqual(metaOf(calls[2]!)?.progressToken, calls[2]!.id)
      }).pipe(Effect.provide(clientLayer(
        (era === "modern" ? Scripted.modernScript : Scripted.legacyScript)((message, ctx) =>
          "method" in message && "id" in message && message.method === "tools/call"
            ? ctx.fail(message.id, -32000, "no")
            : Effect.void
        ),
        { era }
      ))))
  }

  it.effect("a later page's cursor refused as invalid restarts the listing once from the first page", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const tools = yield* client.listTools()
      assert.deepStrictEqual(tools.map((tool) => tool.name), ["a", "b"])
      const sent = requests(yield* Ref.get((yield* Scripted.ScriptLog).sent)).filter((m) => m.method === "tools/list")
      assert.deepStrictEqual(sent.map((m) => (m.params as { cursor?: string } | undefined)?.cursor), [
        undefined,
        "c1",
        undefined,
        "c1"
      ])
    }).pipe(Effect.provide(clientLayer(Scripted.modernScript((() => {
      let refusals = 1
      return (message, ctx) => {
        if (!("method" in message) || !("id" in message) || message.method !== "tools/list") return Effect.void
        const cursor = (message.params as { cursor?: string } | undefined)?.cursor
        if (cursor === undefined) {
          return ctx.reply(message.id, { tools: [{ name: "a", inputSchema: { type: "object" } }], nextCursor: "c1" })
        }
        if (refusals-- > 0) return ctx.fail(message.id, -32602, "invalid cursor")
        return ctx.reply(message.id, { tools: [{ name: "b", inputSchema: { type: "object" } }] })
      }
    })())))))

  it.effect("a caller trace whose ids W3C calls invalid (all zeros) is not propagated", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const invalid = Tracer.externalSpan({ traceId: "0".repeat(32), spanId: "0".repeat(16) })
      yield* client.callTool({ name: "error" }).pipe(Effect.ignore, Effect.withParentSpan(invalid))
      const log = yield* Scripted.ScriptLog
      const call = requests(yield* Ref.get(log.sent)).find((m) => m.method === "tools/call")!
      assert.notProperty((call.params as { _meta: Record<string, unknown> })._meta, "traceparent")
    }).pipe(Effect.provide(clientLayer(hangingTools))))

  it.effect("with Effect's own tracer and no caller span, a modern request carries no trace context", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.callTool({ name: "error" }).pipe(Effect.ignore)
      const log = yield* Scripted.ScriptLog
      const call = requests(yield* Ref.get(log.sent)).find((m) => m.method === "tools/call")!
      const meta = (call.params as { _meta: Record<string, unknown> })._meta
      assert.strictEqual(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28")
      assert.notProperty(meta, "traceparent")
    }).pipe(Effect.provide(clientLayer(hangingTools))))
})

describe("telemetry", () => {
  it.effect("request latency and failures are metrics tagged by method, transport and error", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const counts = Effect.map(Metric.snapshot, (snapshot) => {
        const count = (name: string, tags: Record<string, string>) => {
          const pair = snapshot.find((p) =>
            p.id === name && Object.entries(tags).every(([k, v]) => p.attributes?.[k] === v)
          )
          return pair !== undefined && "count" in pair.state ? Number(pair.state.count) : 0
        }
        return {
          calls: count("mcp_client_request_duration", { method: "tools/call", transport: "in-process" }),
          failures: count("mcp_client_request_errors", { method: "tools/call", error: "McpError" }),
          invalid: count("mcp_client_request_errors", { method: "tools/call", error: "ProtocolError" })
        }
      })
      yield* client.listTools()
      const before = yield* counts
      yield* client.callTool({ name: "echo" })
      yield* Effect.ignore(client.callTool({ name: "error" }))
      // a result that breaks its tool's output schema is a failed call too
      const invalid = yield* Effect.flip(client.callTool({ name: "shaped" }))
      assert.strictEqual(invalid._tag, "ProtocolError")
      const after = yield* counts
      assert.deepStrictEqual({
        calls: after.calls - before.calls,
        failures: after.failures - before.failures,
        invalid: after.invalid - before.invalid
      }, { calls: 3, failures: 1, invalid: 1 })
    }).pipe(Effect.provide(clientLayer(Scripted.modernScript((message, ctx) => {
      if (!("method" in message) || !("id" in message)) return Effect.void
      if (message.method === "tools/list") {
        return ctx.reply(message.id, {
          tools: [{
            name: "shaped",
            inputSchema: { type: "object" },
            outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] }
          }]
        })
      }
      if (message.method !== "tools/call") return Effect.void
      const name = (message.params as { name: string }).name
      if (name === "shaped") return ctx.reply(message.id, { content: [], structuredContent: { n: "one" } })
      return name === "error"
        ? ctx.fail(message.id, -32602, "no")
        : ctx.reply(message.id, { content: [] })
    })))))
})
