/**
 * A server handler asking the client for input (elicitation, sampling, roots), end to end: the library's client
 * with its handlers, talking to the library's server in both eras. Legacy sends requests to the client on the
 * connection; modern answers `input_required` and runs the handler again on the client's retry (MRTR).
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Result from "effect/Result"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Module from "node:module"
import * as Url from "node:url"
import * as ElicitationHandler from "../src/ElicitationHandler.js"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as McpClient from "../src/McpClient.js"
import * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "@conduit-mcp/server/McpServer"
import * as RootsProvider from "../src/RootsProvider.js"
import * as SamplingHandler from "../src/SamplingHandler.js"
import * as StdioTransport from "../src/StdioTransport.js"
import type * as Transport from "../src/Transport.js"
import * as FixtureServer from "./utils/fixtureServer.js"
import * as Recording from "./utils/recordingTransport.js"
import { type Revision, validateDefinition } from "./utils/schemaValidator.js"

const { modern } = FixtureServer

// ---------------------------------------------------------------------------------------------------------------
// Client side: handlers that record what they were asked

interface Asked {
  readonly elicitations: Ref.Ref<ReadonlyArray<ElicitationHandler.ElicitationRequest>>
  readonly samplings: Ref.Ref<ReadonlyArray<SamplingHandler.CreateMessageParams>>
  readonly roots: Ref.Ref<number>
  /** Completed when an elicitation handler was interrupted. */
  readonly elicitationInterrupted: Deferred.Deferred<void>
}

class AskedLog extends Context.Service<AskedLog, Asked>()("test/McpServer.input/Asked") {}

type Answer = (request: ElicitationHandler.ElicitationRequest) => Effect.Effect<ElicitationHandler.ElicitResult>

/** What the user "types" into a form, by field name. */
const FORM_VALUES: Readonly<Record<string, string | boolean>> = { approve: true, environment: "production", name: "Ada" }

const approve: Answer = (request) =>
  Effect.succeed(
    request.mode === "form"
      ? {
        action: "accept",
        content: Object.fromEntries(
          Object.keys(request.requestedSchema.properties).flatMap((key) =>
            FORM_VALUES[key] !== undefined ? [[key, FORM_VALUES[key]]] : []
          )
        )
      }
      : { action: "accept" }
  )

const ROOTS: ReadonlyArray<RootsProvider.Root> = [
  { uri: "file:///srv/checkout", name: "checkout" },
  { uri: "file:///srv/data" }
]

const handlers = (answer: Answer = approve) =>
  Layer.effectContext(Effect.gen(function*() {
    const asked: Asked = {
      elicitations: yield* Ref.make<ReadonlyArray<ElicitationHandler.ElicitationRequest>>([]),
      samplings: yield* Ref.make<ReadonlyArray<SamplingHandler.CreateMessageParams>>([]),
      roots: yield* Ref.make(0),
      elicitationInterrupted: yield* Deferred.make<void>()
    }
    return Context.make(AskedLog, asked).pipe(
      Context.add(
        ElicitationHandler.ElicitationHandler,
        ElicitationHandler.ElicitationHandler.of({
          modes: ["form", "url"],
          elicit: (request) =>
            Effect.andThen(Ref.update(asked.elicitations, (all) => [...all, request]), answer(request)).pipe(
              Effect.onInterrupt(() => Deferred.succeed(asked.elicitationInterrupted, undefined))
            )
        })
      ),
      Context.add(
        SamplingHandler.SamplingHandler,
        SamplingHandler.SamplingHandler.of({
          createMessage: (params) =>
            Effect.as(Ref.update(asked.samplings, (all) => [...all, params]), {
              role: "assistant",
              content: { type: "text", text: "two roots" },
              model: "test-model"
            })
        })
      ),
      Context.add(
        RootsProvider.RootsProvider,
        RootsProvider.RootsProvider.of({
          roots: Effect.as(Ref.update(asked.roots, (n) => n + 1), ROOTS),
          changes: Stream.empty
        })
      )
    )
  }))

// ---------------------------------------------------------------------------------------------------------------
// Wiring

type Era = "legacy" | "modern"

const clientOptions = (era: Era): McpClient.McpClientOptions => ({
  era: era === "legacy" ? "legacy" : "auto",
  healthCheckInterval: false,
  reconnect: false
})

/** The clients take their handlers from the context `handlers` builds. */
const handlerTags = {
  elicitation: ElicitationHandler.ElicitationHandler,
  sampling: SamplingHandler.SamplingHandler,
  roots: RootsProvider.RootsProvider
} as const

/** The client over the in-process transport (recorded) and the server it talks to. */
const clientOf = (era: Era, server: Effect.Effect<McpServer.Server>, features: McpClient.McpClientOptions = {}) =>
  Layer.unwrap(Effect.map(server, (server) =>
    McpClient.layer({ ...clientOptions(era), ...features }).pipe(
      Layer.provideMerge(Recording.layer(InProcessTransport.layer(server))),
      Layer.provideMerge(Layer.succeed(McpServer.McpServer, server))
    )))

/** The client with the recording handlers (answering with `answer`). */
const inProcess = (era: Era, options: {
  readonly server?: Effect.Effect<McpServer.Server> | undefined
  readonly answer?: Answer | undefined
} = {}) =>
  Layer.unwrap(Effect.map(
    Effect.all({
      elicitation: ElicitationHandler.ElicitationHandler,
      sampling: SamplingHandler.SamplingHandler,
      roots: RootsProvider.RootsProvider
    }),
    (features) => clientOf(era, options.server ?? FixtureServer.make(), features)
  )).pipe(Layer.provideMerge(handlers(options.answer)))

/** The client without any handler: it declares no elicitation, sampling or roots capability. */
const withoutHandlers = (era: Era, server: Effect.Effect<McpServer.Server> = FixtureServer.make()) =>
  clientOf(era, server)

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string => {
  const first = result.content[0]
  return typeof first === "object" && first !== null && "text" in first ? String(first.text) : ""
}

const paramsOf = (message: { readonly params?: unknown }): Record<string, unknown> =>
  typeof message.params === "object" && message.params !== null ? { ...message.params } : {}

const toolCalls = Effect.flatMap(Recording.Recorder, (recorder) => recorder.sentWithMethod("tools/call"))

type EventOf<Tag extends Transport.TransportEvent["_tag"]> = Extract<Transport.TransportEvent, { _tag: Tag }>

const serverRequests = Effect.flatMap(Recording.Recorder, (recorder) =>
  Effect.map(
    recorder.received,
    (events) => events.filter((event): event is EventOf<"ServerRequest"> => event._tag === "ServerRequest")
  ))

const responsesSent = Effect.flatMap(Recording.Recorder, (recorder) =>
  Effect.map(
    recorder.entries,
    (entries) =>
      entries.flatMap((entry) => entry._tag === "Respond" ? [entry.message] : [])
  ))

const resultsReceived = Effect.flatMap(Recording.Recorder, (recorder) =>
  Effect.map(recorder.received, (events) =>
    events.flatMap((event) =>
      event._tag === "Response" && "result" in event.message ? [paramsOf({ params: event.message.result })] : []
    )))

const decodeState = (state: unknown): unknown =>
  typeof state === "string"
    ? Result.getOrUndefined(Result.map(Base64Url.decodeString(state), (text): unknown => JSON.parse(text)))
    : undefined

const assertValid = (revision: Revision, name: string, value: unknown) =>
  assert.deepStrictEqual(validateDefinition(revision, name, value), { ok: true }, `${name} (${revision})`)

// ---------------------------------------------------------------------------------------------------------------
// A server whose prompt, resource and tools ask in other ways

const INTRODUCE_SCHEMA = {
  type: "object",
  properties: { name: { type: "string", title: "Name" } },
  required: ["name"]
} as const

const askingServer = McpServer.make({
  name: "asking",
  version: "1.0.0",
  record: true,
  tools: [
    McpServer.tool({
      name: "both",
      description: "Asks for a confirmation and the roots at the same time.",
      parameters: Schema.Struct({}),
      handler: () =>
        Effect.map(
          Effect.all([
            McpServer.elicit({ message: "Go?", requestedSchema: FixtureServer.CONFIRM_SCHEMA }),
            McpServer.listRoots
          ], { concurrency: "unbounded" }),
          ([answer, roots]) => `${answer.action} with ${roots.length} roots`
        )
    }),
    McpServer.tool({
      name: "link",
      description: "Asks the user to open a page.",
      parameters: Schema.Struct({}),
      handler: () =>
        Effect.map(
          McpServer.elicitUrl({ message: "Connect your account", url: "https://example.com/connect" }),
          (answer) => `link: ${answer.action}`
        )
    }),
    McpServer.tool({
      name: "careful",
      description: "Asks, and handles a client that cannot answer.",
      parameters: Schema.Struct({}),
      handler: () =>
        McpServer.elicit({ message: "Go?", requestedSchema: FixtureServer.CONFIRM_SCHEMA }).pipe(
          Effect.map((answer) => `asked: ${answer.action}`),
          Effect.catchTag("InputError", (error) => Effect.succeed(`could not ask (${error.reason})`))
        )
    })
  ],
  prompts: [
    McpServer.prompt({
      name: "introduce",
      description: "Asks whom to introduce.",
      handler: () =>
        Effect.map(
          McpServer.elicit({ message: "Whom shall I introduce?", requestedSchema: INTRODUCE_SCHEMA }),
          (answer) => `Introduce ${String(answer.content?.name)}.`
        )
    })
  ],
  resources: [
    McpServer.resource({
      uri: "asking://roots",
      name: "roots",
      mimeType: "text/plain",
      read: Effect.map(McpServer.listRoots, (roots) => roots.map((root) => root.uri).join("\n"))
    })
  ]
})

// ---------------------------------------------------------------------------------------------------------------
// End to end over the in-process transport, both eras

const ERAS: ReadonlyArray<Era> = ["legacy", "modern"]

describe.each(ERAS)("McpServer input, %s era, in-process", (era) => {
  it.effect("a form elicitation completes the confirm tool through the client's handler", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const session = yield* client.session
      assert.strictEqual(session.era, era)
      const result = yield* client.callTool({ name: "confirm", arguments: { action: "deploy" } })
      assert.strictEqual(textOf(result), "deploy: approved for production")
      assert.deepStrictEqual(result.structuredContent, { action: "accept", approve: true, environment: "production" })

      const asked = yield* AskedLog
      const elicitations = yield* Ref.get(asked.elicitations)
      assert.strictEqual(elicitations.length, 1)
      const form = elicitations[0]
      assert.strictEqual(form.mode, "form")
      if (form.mode === "form") {
        assert.strictEqual(form.message, "Confirm: deploy?")
        assert.deepStrictEqual(form.requestedSchema.properties, FixtureServer.CONFIRM_SCHEMA.properties)
        assert.deepStrictEqual(form.defaults, { environment: "staging" })
      }

      const calls = yield* toolCalls
      const server = yield* McpServer.McpServer
      const requestsToClient = yield* serverRequests
      const answers = yield* responsesSent
      const expectedAnswer = { action: "accept", content: { approve: true, environment: "production" } }
      if (era === "modern") {
        // The call went twice: the retry carries the answer and the state, and the server saw both legs.
        assert.strictEqual(calls.length, 2)
        const [first, retry] = calls.map(paramsOf)
        assert.isUndefined(first.inputResponses)
        assert.isUndefined(first.requestState)
        assert.strictEqual(retry.name, "confirm")
        assert.deepStrictEqual(retry.arguments, { action: "deploy" })
        assert.deepStrictEqual(retry.inputResponses, { elicit_1: expectedAnswer })
        const interim = (yield* resultsReceived).find((result) => result.resultType === "input_required")
        assert.isDefined(interim)
        assertValid("2026-07-28", "InputRequiredResult", interim)
        assert.deepStrictEqual(interim?.inputRequests, {
          elicit_1: {
            method: "elicitation/create",
            params: { mode: "form", message: "Confirm: deploy?", requestedSchema: FixtureServer.CONFIRM_SCHEMA }
          }
        })
        assert.isString(retry.requestState)
        assert.strictEqual(retry.requestState, interim?.requestState)
        assert.strictEqual((yield* server.received("tools/call")).length, 2)
        // Modern servers send no requests, and the client writes no responses.
        assert.deepStrictEqual([requestsToClient.length, answers.length], [0, 0])
      } else {
        assert.strictEqual(calls.length, 1)
        assert.strictEqual(requestsToClient.length, 1)
        const request = requestsToClient[0].message
        assert.strictEqual(request.method, "elicitation/create")
        assert.deepStrictEqual(request.params, {
          mode: "form",
          message: "Confirm: deploy?",
          requestedSchema: FixtureServer.CONFIRM_SCHEMA
        })
        assertValid("2025-11-25", "ElicitRequest", request)
        assert.deepStrictEqual(answers, [{ jsonrpc: "2.0", id: request.id, result: expectedAnswer }])
        // The server received our answer on the same connection.
        const received = yield* server.received()
        assert.isTrue(received.some((r) => r.method === undefined && r.id === request.id))
      }
    }).pipe(Effect.provide(inProcess(era))))

  it.effect("roots then sampling: one answer per round, earlier answers kept by the server", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const result = yield* client.callTool({ name: "summarize" })
      assert.deepStrictEqual(result.structuredContent, {
        roots: ROOTS.map((root) => root.uri),
        model: "test-model",
        summary: "two roots"
      })
      const asked = yield* AskedLog
      const samplings = yield* Ref.get(asked.samplings)
      assert.strictEqual(samplings.length, 1)
      assert.deepStrictEqual(samplings[0].messages, [
        { role: "user", content: { type: "text", text: "Summarize these roots: file:///srv/checkout, file:///srv/data" } }
      ])
      assert.strictEqual(samplings[0].maxTokens, 100)
      assert.strictEqual(yield* Ref.get(asked.roots), 1)

      const calls = (yield* toolCalls).map(paramsOf)
      if (era === "modern") {
        assert.strictEqual(calls.length, 3)
        assert.deepStrictEqual(calls.map((call) => Object.keys(paramsOf({ params: call.inputResponses }))), [
          [],
          ["roots_1"],
          ["sample_2"]
        ])
        const state = decodeState(calls[2].requestState)
        assert.isTrue(
          typeof state === "object" && state !== null && "answers" in state &&
            typeof state.answers === "object" && state.answers !== null && "roots_1" in state.answers
        )
      } else {
        assert.strictEqual(calls.length, 1)
        assert.deepStrictEqual((yield* serverRequests).map((event) => event.message.method), [
          "roots/list",
          "sampling/createMessage"
        ])
        assert.strictEqual((yield* responsesSent).length, 2)
      }
    }).pipe(Effect.provide(inProcess(era))))

  it.effect("a declined form is the tool's answer", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const result = yield* client.callTool({ name: "confirm", arguments: { action: "drop the table" } })
      assert.strictEqual(textOf(result), "drop the table: declined")
      assert.deepStrictEqual(result.structuredContent, { action: "decline", approve: false })
    }).pipe(Effect.provide(inProcess(era, { answer: () => Effect.succeed({ action: "decline" }) }))))

  it.effect("inputs asked for concurrently, a URL elicitation, a prompt and a resource", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const both = yield* client.callTool({ name: "both" })
      assert.strictEqual(textOf(both), "accept with 2 roots")
      const link = yield* client.callTool({ name: "link" })
      assert.strictEqual(textOf(link), "link: accept")
      const prompt = yield* client.getPrompt({ name: "introduce" })
      assert.deepStrictEqual(prompt.messages, [{ role: "user", content: { type: "text", text: "Introduce Ada." } }])
      const resource = yield* client.readResource({ uri: "asking://roots" })
      assert.deepStrictEqual(resource.contents, [{
        uri: "asking://roots",
        mimeType: "text/plain",
        text: "file:///srv/checkout\nfile:///srv/data"
      }])

      const asked = yield* AskedLog
      const url = (yield* Ref.get(asked.elicitations)).find((request) => request.mode === "url")
      assert.strictEqual(url?.mode === "url" ? url.url : undefined, "https://example.com/connect")

      const calls = (yield* toolCalls).map(paramsOf)
      if (era === "modern") {
        // Both inputs of `both` were asked for in one round.
        assert.deepStrictEqual(calls.map((call) => [call.name, Object.keys(paramsOf({ params: call.inputResponses }))]), [
          ["both", []],
          ["both", ["elicit_1", "roots_2"]],
          ["link", []],
          ["link", ["elicit_1"]]
        ])
        const recorder = yield* Recording.Recorder
        assert.strictEqual((yield* recorder.sentWithMethod("prompts/get")).length, 2)
        assert.strictEqual((yield* recorder.sentWithMethod("resources/read")).length, 2)
        const interim = (yield* resultsReceived).filter((result) => result.resultType === "input_required")
        const linkRequest = interim.map((result) => paramsOf({ params: result.inputRequests }).elicit_1).find((
          request
        ) => paramsOf({ params: paramsOf({ params: request }).params }).mode === "url")
        // Modern URL elicitation has no elicitationId.
        assert.deepStrictEqual(linkRequest, {
          method: "elicitation/create",
          params: { mode: "url", message: "Connect your account", url: "https://example.com/connect" }
        })
      } else {
        assert.deepStrictEqual(calls.map((call) => call.name), ["both", "link"])
        const requests = (yield* serverRequests).map((event) => event.message)
        assert.deepStrictEqual(requests.map((request) => request.method), [
          "elicitation/create",
          "roots/list",
          "elicitation/create",
          "elicitation/create",
          "roots/list"
        ])
        // Each request to the client has its own id; the legacy URL elicitation names itself.
        assert.strictEqual(new Set(requests.map((request) => request.id)).size, requests.length)
        const urlParams = paramsOf(requests[2])
        assert.strictEqual(urlParams.mode, "url")
        assert.isString(urlParams.elicitationId)
        assertValid("2025-11-25", "ElicitRequest", requests[2])
      }
    }).pipe(Effect.provide(inProcess(era, { server: askingServer }))))

  it.effect("a client without the capability: the handler sees a typed error", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const careful = yield* client.callTool({ name: "careful" })
      assert.strictEqual(textOf(careful), "could not ask (CapabilityMissing)")
      assert.strictEqual((yield* serverRequests).length, 0)
    }).pipe(Effect.provide(withoutHandlers(era, askingServer))))
})

describe("McpServer input, unhandled missing capability", () => {
  it.effect("modern: the call fails with -32021 naming the capability", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* Effect.flip(client.callTool({ name: "confirm" }))
      assert.strictEqual(error._tag, "MissingClientCapability")
      if (error._tag === "MissingClientCapability") {
        assert.deepStrictEqual(error.requiredCapabilities, { elicitation: { form: {} } })
        assert.strictEqual(error.cause.code, McpSchema.ErrorCode.MissingRequiredClientCapability)
      }
      // Nothing was asked, so there was no second round.
      assert.strictEqual((yield* toolCalls).length, 1)
    }).pipe(Effect.provide(withoutHandlers("modern"))))

  it.effect("legacy: the tool answers with isError and no request reaches the client", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const result = yield* client.callTool({ name: "summarize" })
      assert.isTrue(result.isError)
      assert.include(textOf(result), "did not declare the roots capability")
      assert.strictEqual((yield* serverRequests).length, 0)
    }).pipe(Effect.provide(withoutHandlers("legacy"))))
})

describe("McpServer input, legacy cancellation", () => {
  it.effect("interrupting the call cancels the server's pending request and the client's handler", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const recorder = yield* Recording.Recorder
      const server = yield* McpServer.McpServer
      const asked = yield* AskedLog
      const fiber = yield* Effect.forkChild(client.callTool({ name: "confirm" }))
      const request = yield* recorder.waitFor((entries) =>
        Option.fromNullishOr(
          entries.flatMap((entry) =>
            entry._tag === "Received" && entry.event._tag === "ServerRequest" ? [entry.event.message] : []
          )[0]
        )
      )
      assert.strictEqual(request.method, "elicitation/create")
      yield* Fiber.interrupt(fiber)

      const call = (yield* toolCalls)[0]
      assert.strictEqual((yield* server.awaitInterrupted("id" in call ? call.id : -1)).method, "tools/call")
      const cancelled = yield* recorder.waitFor((entries) =>
        Option.fromNullishOr(
          entries.flatMap((entry) =>
            entry._tag === "Received" && entry.event._tag === "Notification" &&
              entry.event.message.method === "notifications/cancelled"
              ? [paramsOf(entry.event.message)]
              : []
          )[0]
        )
      )
      assert.strictEqual(cancelled.requestId, request.id)
      // The client stopped its handler and never answered the cancelled request.
      yield* Deferred.await(asked.elicitationInterrupted)
      assert.deepStrictEqual(yield* responsesSent, [])
    }).pipe(Effect.provide(inProcess("legacy", { answer: () => Effect.never }))))
})

// ---------------------------------------------------------------------------------------------------------------
// The server alone, message by message

describe("McpServer input, wire details", () => {
  it.effect("modern: capabilities are read per request; a retry with the answer completes", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make())
      const refused = yield* peer.error("tools/call", modern({ name: "confirm" }))
      assert.strictEqual(refused.code, -32021)
      assertValid("2026-07-28", "MissingRequiredClientCapabilityError", { jsonrpc: "2.0", id: 1, error: refused })

      const capable = { [McpSchema.MetaKeys.clientCapabilities]: { elicitation: {} } }
      const first = yield* peer.result("tools/call", modern({ name: "confirm" }, capable))
      assertValid("2026-07-28", "InputRequiredResult", first)
      assert.strictEqual(first.resultType, "input_required")
      assert.deepStrictEqual(first._meta, {
        [McpSchema.MetaKeys.serverInfo]: { name: FixtureServer.SERVER_NAME, version: FixtureServer.SERVER_VERSION }
      })
      const retryParams = modern({
        name: "confirm",
        inputResponses: { elicit_1: { action: "accept", content: { approve: false } } },
        requestState: first.requestState
      }, capable)
      assertValid("2026-07-28", "CallToolRequest", { jsonrpc: "2.0", id: 3, method: "tools/call", params: retryParams })
      const done = yield* peer.result("tools/call", retryParams)
      assert.strictEqual(done.resultType, "complete")
      assert.deepStrictEqual(done.structuredContent, { action: "accept", approve: false })
    }))

  it.effect("modern: a requestState that is garbage or belongs to another call is refused with -32602", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make())
      const capable = { [McpSchema.MetaKeys.clientCapabilities]: { elicitation: {} } }
      const first = yield* peer.result("tools/call", modern({ name: "confirm", arguments: { action: "a" } }, capable))
      const garbage = yield* peer.error("tools/call", modern({ name: "confirm", requestState: "%%%" }, capable))
      assert.strictEqual(garbage.code, -32602)
      const other = yield* peer.error(
        "tools/call",
        modern({ name: "confirm", arguments: { action: "b" }, requestState: first.requestState }, capable)
      )
      assert.strictEqual(other.code, -32602)
      const badResponses = yield* peer.error(
        "tools/call",
        modern({ name: "confirm", arguments: { action: "a" }, inputResponses: { elicit_1: "yes" } }, capable)
      )
      assert.strictEqual(badResponses.code, -32602)
    }))

  it.effect("modern: an answer of the wrong shape fails the handler with InvalidResponse", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make())
      const capable = { [McpSchema.MetaKeys.clientCapabilities]: { elicitation: {} } }
      const result = yield* peer.result(
        "tools/call",
        modern({ name: "confirm", inputResponses: { elicit_1: { action: "maybe" } } }, capable)
      )
      assert.strictEqual(result.isError, true)
      assert.include(textOf({ content: Array.isArray(result.content) ? result.content : [] }), "not valid")
    }))

  it.effect("legacy 2025-06-18: form elicitation without mode; a client error is a Refused InputError", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.open(yield* FixtureServer.make())
      yield* peer.result("initialize", {
        protocolVersion: "2025-06-18",
        capabilities: { elicitation: {} },
        clientInfo: { name: "fixture-test", version: "0.0.0" }
      })
      const id = yield* peer.start("tools/call", { name: "confirm" })
      const request = yield* peer.connection.handle({ jsonrpc: "2.0", method: "notifications/initialized" }).pipe(
        Effect.andThen(waitForServerRequest(peer))
      )
      assert.deepStrictEqual(request.params, {
        message: "Confirm: deploy?",
        requestedSchema: FixtureServer.CONFIRM_SCHEMA
      })
      assertValid("2025-06-18", "ElicitRequest", request)
      yield* peer.connection.handle({ jsonrpc: "2.0", id: request.id, error: { code: -1, message: "no thanks" } })
      const response = yield* peer.response(id)
      const result = "result" in response ? paramsOf({ params: response.result }) : {}
      assert.strictEqual(result.isError, true)
      assert.include(textOf({ content: Array.isArray(result.content) ? result.content : [] }), "no thanks")
    }))

  it.effect("legacy 2025-03-26: elicitation is not in the revision", () =>
    Effect.gen(function*() {
      const peer = yield* FixtureServer.openLegacy(yield* FixtureServer.make(), "2025-03-26")
      const result = yield* peer.result("tools/call", { name: "confirm" })
      assert.strictEqual(result.isError, true)
      assert.include(textOf({ content: Array.isArray(result.content) ? result.content : [] }), "2025-06-18")
    }))
})

const waitForServerRequest = (peer: FixtureServer.Peer) =>
  Effect.gen(function*() {
    for (;;) {
      const found = (yield* peer.sent).find(McpSchema.isRequest)
      if (found !== undefined) return found
      yield* Effect.yieldNow
    }
  })

// ---------------------------------------------------------------------------------------------------------------
// Over stdio: a real child process

const require = Module.createRequire(import.meta.url)
const tsx = Url.pathToFileURL(require.resolve("tsx")).href
const fixtureProgram = Url.fileURLToPath(new URL("./fixtures/server.ts", import.meta.url))

const overStdio = (era: Era) =>
  McpClient.layer({ ...clientOptions(era), ...handlerTags, probeTimeout: "20 seconds" }).pipe(
    Layer.provideMerge(
      Recording.layer(StdioTransport.layer({
        command: process.execPath,
        args: ["--import", tsx, fixtureProgram],
        closeTimeout: "1 second"
      }))
    ),
    Layer.provideMerge(handlers()),
    Layer.provide(NodeServices.layer)
  )

describe.each(ERAS)("McpServer input, %s era, over stdio", (era) => {
  it.live("the confirm tool elicits through the client's handler", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const result = yield* client.callTool({ name: "confirm", arguments: { action: "ship" } }, {
        timeout: "20 seconds"
      })
      assert.strictEqual(textOf(result), "ship: approved for production")
      const asked = yield* AskedLog
      assert.strictEqual((yield* Ref.get(asked.elicitations)).length, 1)
      const calls = yield* toolCalls
      assert.strictEqual(calls.length, era === "modern" ? 2 : 1)
      assert.deepStrictEqual((yield* serverRequests).map((event) => event.message.method), [
        ...(era === "legacy" ? ["elicitation/create"] : [])
      ])
    }).pipe(Effect.provide(overStdio(era))), 60_000)
})
