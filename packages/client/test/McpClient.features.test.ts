import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import * as ElicitationHandler from "../src/ElicitationHandler.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as RootsProvider from "../src/RootsProvider.js"
import * as SamplingHandler from "../src/SamplingHandler.js"
import { awaitSleep, withSleepLog } from "./utils/clock.js"
import * as Scripted from "./utils/scriptedTransport.js"

const seen: Array<ElicitationHandler.ElicitationRequest> = []

const Handlers = Layer.mergeAll(
  ElicitationHandler.layer({
    modes: ["form", "url"],
    elicit: (request) =>
      Effect.sync(() => {
        seen.push(request)
        return request.mode === "form"
          ? { action: "accept", content: { approve: true } }
          : { action: "accept" }
      })
  }),
  SamplingHandler.layer({
    createMessage: (params) =>
      params.systemPrompt === "refuse"
        ? Effect.fail(new SamplingHandler.SamplingRefused({ reason: "the user said no" }))
        : Effect.succeed({ role: "assistant", content: { type: "text", text: "sampled" }, model: "test-model" })
  }),
  RootsProvider.layer([{ uri: "file:///srv/checkout", name: "checkout" }])
)

const handlerTags = {
  elicitation: ElicitationHandler.ElicitationHandler,
  sampling: SamplingHandler.SamplingHandler,
  roots: RootsProvider.RootsProvider
} as const

const clientLayer = (script: Scripted.Script, options: McpClient.McpClientOptions = {}, handlers = true) =>
  handlers
    ? McpClient.layer({ healthCheckInterval: false, ...options, ...handlerTags }).pipe(
      Layer.provideMerge(Scripted.layer(script)),
      Layer.provide(Handlers)
    )
    : McpClient.layer({ healthCheckInterval: false, ...options }).pipe(
      Layer.provideMerge(Scripted.layer(script))
  )

const toolCalls = (sent: ReadonlyArray<Scripted.Sent>) =>
  sent.flatMap((s) =>
    "method" in s.message && "id" in s.message && s.message.method === "tools/call" ? [s.message] : []
  )

const formRequest = {
  method: "elicitation/create",
  params: {
    mode: "form",
    message: "Deploy?",
    requestedSchema: {
      type: "object",
      properties: {
        approve: { type: "boolean", title: "Approve" },
        env: { type: "string", enum: ["prod", "staging"], default: "staging" }
      },
      required: ["approve"]
    }
  }
}

const mrtrServer = (rounds: number, inputRequests: Record<string, unknown> | undefined = {
  confirm: formRequest,
  sample: { method: "sampling/createMessage", params: { messages: [], maxTokens: 10 } },
  workspace: { method: "roots/list", params: {} }
}): Scripted.Script =>
  Scripted.modernScript((message, ctx) => {
    if (!("method" in message) || !("id" in message) || message.method !== "tools/call") return Effect.void
    const params = message.params as { requestState?: string }
    const round = params.requestState === undefined ? 0 : Number(params.requestState.split("-")[1])
    if (round >= rounds) return ctx.reply(message.id, { resultType: "complete", content: [{ type: "text", text: "done" }] })
    return ctx.reply(message.id, {
      resultType: "input_required",
      ...(inputRequests !== undefined ? { inputRequests } : {}),
      requestState: `state-${round + 1}`
    })
  })

describe("MRTR (modern input_required)", () => {
  it.effect("inputs are fulfilled through the handlers and the call is retried with a new id", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const result = yield* client.callTool({ name: "deploy", arguments: { env: "prod" } })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "done" }])
      const log = yield* Scripted.ScriptLog
      const calls = toolCalls(yield* Ref.get(log.sent))
      assert.strictEqual(calls.length, 2)
      assert.notStrictEqual(calls[0].id, calls[1].id)
      const retry = calls[1].params as Record<string, unknown>
      assert.strictEqual(retry.name, "deploy")
      assert.deepStrictEqual(retry.arguments, { env: "prod" })
      assert.strictEqual(retry.requestState, "state-1")
      assert.deepStrictEqual(retry.inputResponses, {
        confirm: { action: "accept", content: { approve: true, env: "staging" } },
        sample: { role: "assistant", content: { type: "text", text: "sampled" }, model: "test-model" },
        workspace: { roots: [{ uri: "file:///srv/checkout", name: "checkout" }] }
      })
      const caps = (calls[1].params as { _meta: Record<string, unknown> })._meta[
        "io.modelcontextprotocol/clientCapabilities"
      ]
      assert.deepStrictEqual(caps, { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} })
    }).pipe(Effect.provide(clientLayer(mrtrServer(1)))))

  it.effect("only the latest round's responses are sent", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.callTool({ name: "deploy" })
      const log = yield* Scripted.ScriptLog
      const calls = toolCalls(yield* Ref.get(log.sent))
      assert.strictEqual(calls.length, 4)
      assert.deepStrictEqual(calls.map((c) => (c.params as { requestState?: string }).requestState), [
        undefined,
        "state-1",
        "state-2",
        "state-3"
      ])
    }).pipe(Effect.provide(clientLayer(mrtrServer(3)))))

  it.effect("callToolRound hands each input_required round to the caller, who sends the next one", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const first = yield* client.callToolRound({ name: "deploy", arguments: { env: "prod" } })
      assert.strictEqual(first._tag, "InputRequired")
      if (first._tag !== "InputRequired") return
      assert.deepStrictEqual(Object.keys(first.inputRequests).sort(), ["confirm", "sample", "workspace"])
      assert.strictEqual(first.requestState, "state-1")
      const answers = { confirm: { action: "decline" }, sample: { mine: true }, workspace: { roots: [] } }
      const second = yield* client.callToolRound({
        name: "deploy",
        arguments: { env: "prod" },
        inputResponses: answers,
        requestState: first.requestState
      })
      assert.strictEqual(second._tag, "Complete")
      if (second._tag === "Complete") assert.deepStrictEqual(second.result.content, [{ type: "text", text: "done" }])
      const log = yield* Scripted.ScriptLog
      const calls = toolCalls(yield* Ref.get(log.sent))
      // the handlers were not asked: the caller's own answers went out as given
      assert.strictEqual(calls.length, 2)
      assert.deepStrictEqual((calls[1].params as Record<string, unknown>).inputResponses, answers)
      assert.strictEqual((calls[1].params as Record<string, unknown>).requestState, "state-1")
    }).pipe(Effect.provide(clientLayer(mrtrServer(1), {}, false))))

  it.effect("a caller can answer the rounds itself", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const rounds: Array<ReadonlyArray<string>> = []
      const result = yield* client.callTool({ name: "deploy" }, {
        answerInputs: (requests, round) =>
          Effect.sync(() => {
            rounds.push(Object.keys(requests).map((key) => `${round}:${key}:${requests[key].method}`))
            return Object.fromEntries(Object.keys(requests).map((key) => [key, { answered: round }]))
          })
      })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "done" }])
      assert.deepStrictEqual(rounds, [
        ["1:confirm:elicitation/create", "1:sample:sampling/createMessage", "1:workspace:roots/list"],
        ["2:confirm:elicitation/create", "2:sample:sampling/createMessage", "2:workspace:roots/list"]
      ])
      const log = yield* Scripted.ScriptLog
      const retry = toolCalls(yield* Ref.get(log.sent))[2].params as Record<string, unknown>
      assert.deepStrictEqual(retry.inputResponses, { confirm: { answered: 2 }, sample: { answered: 2 }, workspace: { answered: 2 } })
      assert.strictEqual(retry.requestState, "state-2")
    }).pipe(Effect.provide(clientLayer(mrtrServer(2), {}, false))))

  it.effect("a caller's answers that leave an input out fail the call; no retry is sent", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* Effect.flip(client.callTool({ name: "deploy" }, {
        answerInputs: () => Effect.succeed({ confirm: { action: "decline" } })
      }))
      assert.strictEqual(error._tag === "ProtocolError" ? error.reason : error._tag, "InputFailed")
      assert.include(error.message, "sample, workspace")
      const log = yield* Scripted.ScriptLog
      assert.strictEqual(toolCalls(yield* Ref.get(log.sent)).length, 1)
    }).pipe(Effect.provide(clientLayer(mrtrServer(1), {}, false))))

  it.effect("the round limit ends in a typed error", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* Effect.flip(client.callTool({ name: "deploy" }))
      assert.strictEqual(error._tag === "ProtocolError" ? error.reason : error._tag, "InputRoundsExceeded")
      const log = yield* Scripted.ScriptLog
      assert.strictEqual(toolCalls(yield* Ref.get(log.sent)).length, 4)
      // the last interim result comes with the error, as the server sent it
      const last = error._tag === "ProtocolError" ? error.lastResult : undefined
      assert.deepInclude(last, { resultType: "input_required", requestState: "state-4" })
    }).pipe(Effect.provide(clientLayer(mrtrServer(100), { maxInputRounds: 3 }))))

  it.effect("a state-only result is retried after a pause, never in a tight loop", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const fiber = yield* Effect.forkChild(client.callTool({ name: "deploy" }))
      yield* awaitSleep("250 millis")
      const log = yield* Scripted.ScriptLog
      assert.strictEqual(toolCalls(yield* Ref.get(log.sent)).length, 1)
      yield* TestClock.adjust("250 millis")
      yield* Fiber.join(fiber)
      const calls = toolCalls(yield* Ref.get(log.sent))
      assert.strictEqual(calls.length, 2)
      assert.isUndefined((calls[1].params as Record<string, unknown>).inputResponses)
    }).pipe(Effect.provide(clientLayer(mrtrServer(1, {}))), withSleepLog))

  it.effect("an unknown input method is a protocol error, not retried", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* Effect.flip(client.callTool({ name: "deploy" }))
      assert.strictEqual(error._tag === "ProtocolError" ? error.reason : error._tag, "InvalidResult")
      const log = yield* Scripted.ScriptLog
      assert.strictEqual(toolCalls(yield* Ref.get(log.sent)).length, 1)
    }).pipe(Effect.provide(clientLayer(mrtrServer(1, { x: { method: "tools/list", params: {} } })))))

  it.effect("an input for a capability the client did not declare is a protocol error", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* Effect.flip(client.callTool({ name: "deploy" }))
      assert.strictEqual(error._tag, "ProtocolError")
      assert.match(error.message, /did not declare/)
    }).pipe(Effect.provide(clientLayer(mrtrServer(1), {}, false))))

  it.effect("a malformed InputRequiredResult and input_required on tools/list are typed errors", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const malformed = yield* Effect.flip(client.callTool({ name: "deploy" }))
      assert.strictEqual(malformed._tag === "ProtocolError" ? malformed.reason : malformed._tag, "InvalidResult")
      const onList = yield* Effect.flip(client.listTools())
      assert.strictEqual(onList._tag === "ProtocolError" ? onList.reason : onList._tag, "InvalidResultType")
    }).pipe(Effect.provide(clientLayer(Scripted.modernScript((message, ctx) => {
      if (!("method" in message) || !("id" in message)) return Effect.void
      if (message.method === "tools/call") {
        return ctx.reply(message.id, { resultType: "input_required", inputRequests: "not a map" })
      }
      if (message.method === "tools/list") {
        return ctx.reply(message.id, { resultType: "input_required", requestState: "s" })
      }
      return Effect.void
    })))))
})

describe("legacy server requests", () => {
  const responses = (sent: ReadonlyArray<Scripted.Sent>) =>
    sent.flatMap((s) => ("method" in s.message ? [] : [s.message as McpSchema.JsonRpcResponse]))

  const awaitResponses = (n: number) =>
    Effect.gen(function*() {
      const log = yield* Scripted.ScriptLog
      for (let i = 0; i < 1000; i++) {
        const all = responses(yield* Ref.get(log.sent))
        if (all.length >= n) return all
        yield* Effect.yieldNow
      }
      return responses(yield* Ref.get(log.sent))
    })

  it.effect("the handlers answer elicitation, sampling and roots; capabilities are declared", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.session
      const log = yield* Scripted.ScriptLog
      const init = (yield* Ref.get(log.sent)).find((s) => "method" in s.message && s.message.method === "initialize")!
      assert.deepStrictEqual((init.message as McpSchema.JsonRpcRequest).params, {
        protocolVersion: "2025-11-25",
        capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: { listChanged: true } },
        clientInfo: { name: "conduit", version: "1.0.0" }
      })
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.serverRequest(1, "elicitation/create", formRequest.params)
      yield* ctx.serverRequest(2, "sampling/createMessage", { messages: [], maxTokens: 5, systemPrompt: "refuse" })
      yield* ctx.serverRequest(3, "roots/list", {})
      yield* ctx.serverRequest(4, "elicitation/create", {
        mode: "url",
        message: "Link your account",
        url: "https://pay.example.com/connect?e=1",
        elicitationId: "e-1"
      })
      yield* ctx.serverRequest(5, "elicitation/create", { mode: "url", message: "x", url: "javascript:alert(1)" })
      yield* ctx.serverRequest(6, "elicitation/create", { mode: "url", message: "x", url: "file:///etc/passwd" })
      const all = yield* awaitResponses(6)
      const byId = new Map(all.map((r) => [r.id, r]))
      assert.deepStrictEqual(byId.get(1), {
        jsonrpc: "2.0",
        id: 1,
        result: { action: "accept", content: { approve: true, env: "staging" } }
      })
      assert.deepStrictEqual(byId.get(2), { jsonrpc: "2.0", id: 2, error: { code: -1, message: "the user said no" } })
      assert.deepStrictEqual(byId.get(3), {
        jsonrpc: "2.0",
        id: 3,
        result: { roots: [{ uri: "file:///srv/checkout", name: "checkout" }] }
      })
      assert.deepStrictEqual(byId.get(4), { jsonrpc: "2.0", id: 4, result: { action: "accept" } })
      assert.deepStrictEqual(byId.get(5), { jsonrpc: "2.0", id: 5, result: { action: "decline" } })
      assert.deepStrictEqual(byId.get(6), { jsonrpc: "2.0", id: 6, result: { action: "decline" } })
      const url = seen.find((r): r is ElicitationHandler.UrlRequest => r.mode === "url")!
      assert.strictEqual(url.urlOrigin, "https://pay.example.com")
      assert.include(url.warnings, "no-server-origin")
      assert.strictEqual(url.elicitationId, "e-1")
      assert.isFalse(seen.some((r) => r.mode === "url" && !r.url.startsWith("https:")), "refused URLs never reach the handler")
      const form = seen.find((r): r is ElicitationHandler.FormRequest => r.mode === "form")!
      assert.deepStrictEqual(form.defaults, { env: "staging" })
    }).pipe(Effect.provide(clientLayer(Scripted.legacyScript()))))

  it.effect("an answer that does not match the requested schema is refused", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.session
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.serverRequest(1, "elicitation/create", {
        message: "Your age?",
        requestedSchema: { type: "object", properties: { age: { type: "integer", minimum: 0 } }, required: ["age"] }
      })
      const [response] = yield* awaitResponses(1)
      assert.isTrue("error" in response && response.error.code === -32602)
    }).pipe(Effect.provide(clientLayer(Scripted.legacyScript()))))

  it.effect("without handlers nothing is declared and the requests get method-not-found", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.session
      const log = yield* Scripted.ScriptLog
      const init = (yield* Ref.get(log.sent)).find((s) => "method" in s.message && s.message.method === "initialize")!
      assert.deepStrictEqual(((init.message as McpSchema.JsonRpcRequest).params as { capabilities: unknown }).capabilities, {})
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.serverRequest(1, "roots/list", {})
      const [response] = yield* awaitResponses(1)
      assert.isTrue("error" in response && response.error.code === -32601)
    }).pipe(Effect.provide(clientLayer(Scripted.legacyScript(), {}, false))))

  it.effect("a handler that dies still answers the server, with an internal error", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.session
      const ctx = (yield* Ref.get((yield* Scripted.ScriptLog).current))!
      yield* ctx.serverRequest(7, "sampling/createMessage", {
        messages: [{ role: "user", content: { type: "text", text: "hi" } }],
        maxTokens: 10
      })
      const [response] = yield* awaitResponses(1)
      assert.strictEqual(response?.id, 7)
      assert.isTrue(response !== undefined && "error" in response && response.error.code === -32603)
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, sampling: SamplingHandler.SamplingHandler }).pipe(
        Layer.provideMerge(Scripted.layer(Scripted.legacyScript())),
        Layer.provide(SamplingHandler.layer({ createMessage: () => Effect.die(new Error("handler bug")) }))
      )
    )))

  it.effect("roots/list exposes only file:// roots that do not climb with ..", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.session
      const ctx = (yield* Ref.get((yield* Scripted.ScriptLog).current))!
      yield* ctx.serverRequest(3, "roots/list", {})
      const [response] = yield* awaitResponses(1)
      assert.deepStrictEqual(response !== undefined && "result" in response ? response.result : undefined, {
        roots: [
          { uri: "file:///srv/checkout", name: "checkout" },
          { uri: "file:///home/dev/a..b" },
          { uri: "file:///srv/with%20space" }
        ]
      })
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, roots: RootsProvider.RootsProvider }).pipe(
        Layer.provideMerge(Scripted.layer(Scripted.legacyScript())),
        Layer.provide(RootsProvider.layer([
          { uri: "file:///srv/checkout", name: "checkout" },
          { uri: "https://example.com/repo" },
          { uri: "file:///srv/checkout/../../etc" },
          { uri: "file:///srv/%2E%2E/etc" },
          { uri: "file:///home/dev/a..b" },
          { uri: "not a uri" },
          // climbing in the spellings a raw-URI check missed: backslashes, before a query or a fragment, twice
          // percent-encoded, dots and spaces Windows reads as ..
          { uri: "file:///home/u\\..\\etc" },
          { uri: "file:///srv/checkout/..?x" },
          { uri: "file:///srv/checkout/..#f" },
          { uri: "file:///srv/%252e%252e/etc" },
          { uri: "file:///srv/checkout/.. /etc" },
          { uri: "file:///srv/checkout/.../etc" },
          { uri: "file:///srv/checkout?query" },
          // sent normalised
          { uri: "file:///srv/with space" }
        ]))
      )
    )))

  for (const [modes, version] of [[[], "2025-11-25"]] as const) {
    it.effect(`an elicitation handler of modes [${modes.join(", ")}] declares nothing at ${version}`, () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        yield* client.session
        const log = yield* Scripted.ScriptLog
        const init = (yield* Ref.get(log.sent)).find((s) => "method" in s.message && s.message.method === "initialize")!
        const params = (init.message as McpSchema.JsonRpcRequest).params as { capabilities: Record<string, unknown> }
        assert.notProperty(params.capabilities, "elicitation")
      }).pipe(Effect.provide(
        McpClient.layer({ healthCheckInterval: false, elicitation: ElicitationHandler.ElicitationHandler }).pipe(
          Layer.provideMerge(Scripted.layer(Scripted.legacyScript(undefined, version))),
          Layer.provide(ElicitationHandler.layer({ modes, elicit: () => Effect.succeed({ action: "decline" }) }))
        )
      )))
  }

  /** Connects, then has the server ask for a URL elicitation (accepted); the script's context is returned. */
  const showUrlElicitation = (elicitationId: string) =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.session
      const ctx = (yield* Ref.get((yield* Scripted.ScriptLog).current))!
      yield* ctx.serverRequest(1, "elicitation/create", {
        mode: "url",
        message: "Link",
        url: "https://pay.example.com/x",
        elicitationId
      })
      yield* awaitResponses(1)
      return { client, ctx }
    })

  it.effect("notifications/elicitation/complete reaches the handler for URL elicitations it was shown, once", () =>
    Effect.gen(function*() {
      const { ctx } = yield* showUrlElicitation("known-1")
      yield* ctx.notify("notifications/elicitation/complete", { elicitationId: "unknown-9" })
      yield* ctx.notify("notifications/elicitation/complete", { elicitationId: "known-1" })
      yield* ctx.notify("notifications/elicitation/complete", { elicitationId: "known-1" })
      assert.deepStrictEqual(completed, ["known-1"])
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, elicitation: ElicitationHandler.ElicitationHandler }).pipe(
        Layer.provideMerge(Scripted.layer(Scripted.legacyScript())),
        Layer.provide(ElicitationHandler.layer({
          modes: ["url"],
          elicit: () => Effect.succeed({ action: "accept" }),
          completed: (id) => Effect.sync(() => completed.push(id))
        }))
      )
    )))

  it.effect("a URL elicitation the user declined expects no completion: a later one is ignored", () =>
    Effect.gen(function*() {
      const { ctx } = yield* showUrlElicitation("declined-1")
      yield* ctx.notify("notifications/elicitation/complete", { elicitationId: "declined-1" })
      assert.deepStrictEqual(declinedCompleted, [])
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, elicitation: ElicitationHandler.ElicitationHandler }).pipe(
        Layer.provideMerge(Scripted.layer(Scripted.legacyScript())),
        Layer.provide(ElicitationHandler.layer({
          modes: ["url"],
          elicit: () => Effect.succeed({ action: "decline" }),
          completed: (id) => Effect.sync(() => declinedCompleted.push(id))
        }))
      )
    )))

  it.effect("a completion callback that throws is logged; the connection goes on", () =>
    Effect.gen(function*() {
      const { client, ctx } = yield* showUrlElicitation("throws-1")
      // the handler runs where the transport delivers the message: a throw there must stay there
      const delivered = yield* Effect.exit(
        ctx.notify("notifications/elicitation/complete", { elicitationId: "throws-1" })
      )
      assert.isTrue(Exit.isSuccess(delivered))
      const tools = yield* client.listTools()
      assert.deepStrictEqual(tools.map((tool) => tool.name), ["after"])
    }).pipe(Effect.provide(
      McpClient.layer({ healthCheckInterval: false, elicitation: ElicitationHandler.ElicitationHandler }).pipe(
        Layer.provideMerge(Scripted.layer(Scripted.legacyScript((message, ctx) =>
          "method" in message && "id" in message && message.method === "tools/list"
            ? ctx.reply(message.id, { tools: [{ name: "after", inputSchema: { type: "object" } }] })
            : Effect.void
        ))),
        Layer.provide(ElicitationHandler.layer({
          modes: ["url"],
          elicit: () => Effect.succeed({ action: "accept" }),
          completed: () => {
            throw new Error("a bug in the callback")
          }
        }))
      )
    )))

  it.effect("server log messages can also go into Effect's logger", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      yield* client.session
      const log = yield* Scripted.ScriptLog
      const ctx = (yield* Ref.get(log.current))!
      yield* ctx.notify("notifications/message", { level: "warning", logger: "db", data: "disk almost full" })
      yield* ctx.notify("notifications/message", { level: "debug", data: { rows: 3 } })
      assert.deepStrictEqual(logged.filter((l) => l.startsWith("WARN") || l.startsWith("DEBUG")), [
        "WARN disk almost full",
        "DEBUG {\"rows\":3}"
      ])
    }).pipe(
      Effect.provide(
        McpClient.layer({ healthCheckInterval: false, serverLogs: "logger" }).pipe(
          Layer.provideMerge(Scripted.layer(Scripted.legacyScript()))
        )
      ),
      Effect.provide(Logger.layer([
        Logger.make(({ fiber, logLevel, message }) => {
          if (fiber.getRef(References.CurrentLogAnnotations)["module"] === "McpServer") {
            // (Effect 4's levels are "Warn", "Debug", …: upper-cased, Effect 3's labels)
            logged.push(`${logLevel.toUpperCase()} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
          }
        })
      ])),
      Effect.provideService(References.MinimumLogLevel, "All")
    ))
})

const completed: Array<string> = []
const declinedCompleted: Array<string> = []
const logged: Array<string> = []

describe("structured tool results", () => {
  const structuredServer = Scripted.modernScript((message, ctx) => {
    if (!("method" in message) || !("id" in message)) return Effect.void
    // none of its tools declares an output schema (the client lists them before checking a first result)
    if (message.method === "tools/list") return ctx.reply(message.id, { tools: [] })
    if (message.method !== "tools/call") return Effect.void
    const name = (message.params as { name: string }).name
    if (name === "sum") return ctx.reply(message.id, { content: [], structuredContent: { sum: 42 } })
    if (name === "wrong") return ctx.reply(message.id, { content: [], structuredContent: { sum: "42" } })
    if (name === "failed") return ctx.reply(message.id, { content: [{ type: "text", text: "no" }], isError: true })
    return ctx.reply(message.id, { content: [] })
  })
  const Sum = Schema.Struct({ sum: Schema.Number })

  it.effect("structuredContent decoded with the caller's Schema; mismatches and absences are typed errors", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const ok = yield* client.callToolStructured({ name: "sum" }, Sum)
      assert.deepStrictEqual(ok.structured, { sum: 42 })
      const wrong = yield* Effect.flip(client.callToolStructured({ name: "wrong" }, Sum))
      assert.strictEqual(wrong._tag === "ProtocolError" ? wrong.reason : wrong._tag, "InvalidResult")
      const none = yield* Effect.flip(client.callToolStructured({ name: "plain" }, Sum))
      assert.strictEqual(none._tag, "ProtocolError")
      const failed = yield* client.callToolStructured({ name: "failed" }, Sum)
      assert.isTrue(failed.result.isError)
      assert.isUndefined(failed.structured)
    }).pipe(Effect.provide(clientLayer(structuredServer, {}, false))))
})

describe("output schemas", () => {
  const server = Scripted.modernScript((message, ctx) => {
    if (!("method" in message) || !("id" in message)) return Effect.void
    if (message.method === "tools/list") {
      return ctx.reply(message.id, {
        tools: [
          {
            name: "sum",
            inputSchema: { type: "object" },
            outputSchema: {
              type: "object",
              properties: { sum: { type: "number" } },
              required: ["sum"],
              additionalProperties: false
            }
          },
          { name: "free", inputSchema: { type: "object" } }
        ]
      })
    }
    if (message.method !== "tools/call") return Effect.void
    const args = (message.params as { arguments?: { out?: unknown; isError?: boolean } }).arguments ?? {}
    return ctx.reply(message.id, {
      content: [],
      ...(args.out !== undefined ? { structuredContent: args.out } : {}),
      ...(args.isError === true ? { isError: true } : {})
    })
  })

  const toolLists = Effect.flatMap(Scripted.ScriptLog, (log) =>
    Effect.map(Ref.get(log.sent), (sent) =>
      sent.filter((s) => "method" in s.message && s.message.method === "tools/list").length))

  it.effect("a call made before any listing lists the tools once, then checks its result", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const calls = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) =>
          Effect.result(client.callTool({ name: "sum", arguments: { out: { sum: i % 2 === 0 ? i : "x" } } }))),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(calls.map((call) => call._tag), [
        "Success",
        "Failure",
        "Success",
        "Failure",
        "Success",
        "Failure",
        "Success",
        "Failure"
      ])
      assert.strictEqual(yield* toolLists, 1, "one listing for every call that waited on it")
      // a tool the listing did not show has no schema: no listing again
      yield* client.callTool({ name: "unlisted", arguments: { out: "anything" } })
      assert.strictEqual(yield* toolLists, 1)
    }).pipe(Effect.provide(clientLayer(server, {}, false))))

  it.effect("structuredContent is checked against the tool's outputSchema once the tool was listed", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      // before any listing, the first call lists, and its result is checked
      const first = yield* Effect.flip(client.callTool({ name: "sum", arguments: { out: { sum: "x" } } }))
      assert.strictEqual(first._tag, "ProtocolError")
      yield* client.listTools()
      const ok = yield* client.callTool({ name: "sum", arguments: { out: { sum: 3 } } })
      assert.deepStrictEqual(ok.structuredContent, { sum: 3 })
      const wrong = yield* Effect.flip(client.callTool({ name: "sum", arguments: { out: { sum: "x" } } }))
      assert.strictEqual(wrong._tag === "ProtocolError" ? wrong.reason : wrong._tag, "InvalidResult")
      assert.match(wrong.message, /\/sum/)
      const extra = yield* Effect.flip(client.callTool({ name: "sum", arguments: { out: { sum: 1, more: 2 } } }))
      assert.strictEqual(extra._tag, "ProtocolError")
      const missing = yield* Effect.flip(client.callTool({ name: "sum", arguments: {} }))
      assert.strictEqual(missing._tag, "ProtocolError")
      const failed = yield* client.callTool({ name: "sum", arguments: { isError: true } })
      assert.isTrue(failed.isError, "an isError result is a value, unchecked")
      yield* client.callTool({ name: "free", arguments: { out: [1, "two"] } })
    }).pipe(Effect.provide(clientLayer(server, {}, false))))
})
