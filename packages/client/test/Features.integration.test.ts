/**
 * Client features against real servers: elicitation, sampling and roots answered by the application's handlers
 * (modern `input_required` rounds and legacy server requests), resource subscriptions and list changes on
 * `listen`, URL elicitations checked before a handler sees them. Every message the client sent is checked against
 * the official schema of its revision.
 *
 * - the SDK v2 dual-era fixture (`fixtures/sdk-v2-server.ts`) over stdio, once discovered as modern and once
 *   pinned to legacy: the same tools ask for input with the SDK's `inputRequired` builder, which the SDK sends as an
 *   `input_required` result on 2026-07-28 and turns into server requests on the 2025 era;
 * - `@modelcontextprotocol/server-everything` over stdio (legacy): its sampling, elicitation and roots features,
 *   its simulated resource updates and the resource list change of a new session resource;
 * - server-everything over Streamable HTTP for URL elicitation, where the server has an origin to compare with.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as ElicitationHandler from "../src/ElicitationHandler.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as RootsProvider from "../src/RootsProvider.js"
import * as SamplingHandler from "../src/SamplingHandler.js"
import * as StdioTransport from "../src/StdioTransport.js"
import * as HttpCommon from "./fixtures/http/common.js"
import * as Everything from "./fixtures/http/everything.js"
import * as RealServers from "./utils/realServers.js"
import * as Recording from "./utils/recordingTransport.js"
import { validateClientMessage } from "./utils/schemaValidator.js"

// ---------------------------------------------------------------------------------------------------------------
// The application's handlers, recording what they were asked

/** What the handlers were asked, and the roots they serve. */
class Asked extends Context.Service<Asked, {
  readonly elicitations: Ref.Ref<ReadonlyArray<ElicitationHandler.ElicitationRequest>>
  readonly samplings: Ref.Ref<ReadonlyArray<SamplingHandler.CreateMessageParams>>
  readonly roots: SubscriptionRef.SubscriptionRef<ReadonlyArray<RootsProvider.Root>>
}>()("@conduit-mcp/client/test/Asked") {}

const initialRoots: ReadonlyArray<RootsProvider.Root> = [{ uri: "file:///srv/checkout", name: "checkout" }]

/** The user's answers to any form field these servers ask for; the rest is left to the schema's defaults. */
const formAnswers: Readonly<Record<string, string | boolean>> = {
  confirm: true,
  name: "Ada Lovelace",
  check: true,
  email: "ada@example.com"
}

const sampled: SamplingHandler.CreateMessageResult = {
  role: "assistant",
  content: { type: "text", text: "tides follow the moon" },
  model: "conduit-test-model",
  stopReason: "endTurn"
}

const Handlers = Layer.unwrap(Effect.gen(function*() {
  const asked = {
    elicitations: yield* Ref.make<ReadonlyArray<ElicitationHandler.ElicitationRequest>>([]),
    samplings: yield* Ref.make<ReadonlyArray<SamplingHandler.CreateMessageParams>>([]),
    roots: yield* SubscriptionRef.make(initialRoots)
  }
  return Layer.mergeAll(
    Layer.succeed(Asked, asked),
    ElicitationHandler.layer({
      modes: ["form", "url"],
      elicit: (request) =>
        Effect.as(
          Ref.update(asked.elicitations, (all) => [...all, request]),
          request.mode === "url" ? { action: "accept" } : {
            action: "accept",
            content: Object.fromEntries(
              Object.entries(formAnswers).filter(([field]) => field in request.requestedSchema.properties)
            )
          }
        )
    }),
    SamplingHandler.layer({
      createMessage: (params) => Effect.as(Ref.update(asked.samplings, (all) => [...all, params]), sampled)
    }),
    Layer.succeed(RootsProvider.RootsProvider, RootsProvider.fromRef(asked.roots))
  )
}))

/** The clients take their handlers from the `Handlers` layer. */
const handlerTags = {
  elicitation: ElicitationHandler.ElicitationHandler,
  sampling: SamplingHandler.SamplingHandler,
  roots: RootsProvider.RootsProvider
} as const

// ---------------------------------------------------------------------------------------------------------------
// Clients and record helpers

/** Per test: generous, for a loaded machine (the servers start before the tests, under the layer's own timeout). */
const timeout = 30_000

const clientOptions: McpClient.McpClientOptions = {
  healthCheckInterval: false,
  // a slow tsx start on a loaded machine must not read as "legacy"
  probeTimeout: "20 seconds",
  clientInfo: { name: "conduit-feature-tests", version: "0.1.0" }
}

const stdioClient = (server: RealServers.ServerCommand, options: McpClient.McpClientOptions = {}) =>
  McpClient.layer({ ...clientOptions, ...options, ...handlerTags }).pipe(
    Layer.provideMerge(
      Recording.layer(StdioTransport.layer({ command: server.command, args: server.args, closeTimeout: "1 second" }))
    ),
    Layer.provideMerge(Handlers),
    Layer.provide(NodeServices.layer)
  )

const textOf = (result: McpSchema.CallToolResult) =>
  result.content.flatMap((block) => (block.type === "text" && "text" in block ? [block.text] : [])).join("")

type Json = Readonly<Record<string, unknown>>
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const paramsOf = (message: { readonly params?: unknown }): Json => (isObject(message.params) ? message.params : {})

/** The `tools/call` requests the client sent for one tool, in order. */
const toolCalls = (name: string) =>
  Effect.flatMap(Recording.Recorder, (recorder) => recorder.sentWithMethod("tools/call")).pipe(
    Effect.map((sent) => sent.filter((message) => "id" in message && paramsOf(message).name === name))
  )

/** The result a response carries (undefined for an error or no response). */
const resultOf = (response: McpSchema.JsonRpcResponse | undefined): unknown =>
  response !== undefined && "result" in response ? response.result : undefined

/** The legacy server requests received, with the response the client sent to each (if any yet). */
const serverExchanges = Effect.gen(function*() {
  const recorder = yield* Recording.Recorder
  const entries = yield* recorder.entries
  const requests = entries.flatMap((entry) =>
    entry._tag === "Received" && entry.event._tag === "ServerRequest" ? [entry.event.message] : []
  )
  const responses = entries.flatMap((entry) => entry._tag === "Respond" ? [entry.message] : [])
  return requests.map((request) => ({
    request,
    response: responses.find((response) => response.id === request.id)
  }))
})

const exchangesFor = (method: string) =>
  Effect.map(serverExchanges, (all) => all.filter((exchange) => exchange.request.method === method))

/** Waits until the client has answered `count` server requests of `method`. */
const awaitAnswered = (method: string, count: number) =>
  Effect.flatMap(Recording.Recorder, (recorder) =>
    recorder.waitFor((entries) => {
      const ids = new Set<unknown>(entries.flatMap((entry) =>
        entry._tag === "Received" && entry.event._tag === "ServerRequest" && entry.event.message.method === method
          ? [entry.event.message.id]
          : []
      ))
      const answered = entries.filter((entry) => entry._tag === "Respond" && ids.has(entry.message.id))
      return answered.length >= count ? Option.some(answered.length) : Option.none()
    })
  ).pipe(
    Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.fail(`${count} answered ${method} requests`) }),
    Effect.orDie
  )

/** Waits until the server answered the client's first request of `method`. */
const awaitAnswerTo = (method: string) =>
  Effect.flatMap(Recording.Recorder, (recorder) =>
    recorder.waitFor((entries) => {
      const ids = new Set<unknown>(entries.flatMap((entry) =>
        entry._tag === "Request" && entry.message.method === method ? [entry.message.id] : []
      ))
      return Option.fromNullishOr(entries.find((entry) =>
        entry._tag === "Received" && entry.event._tag === "Response" && ids.has(entry.event.message.id)
      ))
    })
  ).pipe(
    Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.fail(`an answer to ${method}`) }),
    Effect.orDie
  )

/**
 * Every message sent validates against the schema of the revision it was sent under; a response is checked
 * against the result type of the server request it answers.
 */
const assertSentMessagesValid = (negotiated: string) =>
  Effect.gen(function*() {
    const recorder = yield* Recording.Recorder
    const sent = yield* recorder.sent
    const exchanges = yield* serverExchanges
    const answered = new Map<unknown, string>(exchanges.map(({ request }) => [request.id, request.method]))
    assert.isAbove(sent.length, 0)
    for (const message of sent) {
      const meta = "params" in message ? paramsOf(message)._meta : undefined
      const claimed = isObject(meta) ? meta["io.modelcontextprotocol/protocolVersion"] : undefined
      const revision = typeof claimed === "string" ? claimed : negotiated
      const respondingTo = "method" in message ? undefined : answered.get(message.id)
      const verdict = validateClientMessage(revision, wholeNumbersInElicitResult(message, respondingTo), { respondingTo })
      assert.isTrue(verdict.ok, `${JSON.stringify(message)} at ${revision}: ${verdict.ok ? "" : verdict.errors}`)
    }
  })

/**
 * The generated JSON schemas narrow ElicitResult's `number` values to integers, unlike the normative TypeScript
 * schema; a fractional answer is valid, so it is rounded before the JSON schema check only.
 */
const wholeNumbersInElicitResult = (message: unknown, respondingTo: string | undefined): unknown => {
  if (respondingTo !== "elicitation/create" || !isObject(message) || !isObject(message.result)) return message
  const content = message.result.content
  if (!isObject(content)) return message
  const rounded = Object.fromEntries(
    Object.entries(content).map(([key, value]) => [key, typeof value === "number" ? Math.round(value) : value])
  )
  return { ...message, result: { ...message.result, content: rounded } }
}

const elicitationsOf = <M extends ElicitationHandler.ElicitationRequest["mode"]>(mode: M) =>
  Effect.map(
    Effect.flatMap(Asked, (asked) => Ref.get(asked.elicitations)),
    (all) => all.filter((request): request is Extract<ElicitationHandler.ElicitationRequest, { mode: M }> =>
      request.mode === mode
    )
  )

const samplingTexts = Effect.map(
  Effect.flatMap(Asked, (asked) => Ref.get(asked.samplings)),
  (all) =>
    all.map((params) => {
      const content = params.messages[0]?.content
      return isObject(content) && typeof content.text === "string" ? content.text : undefined
    })
)

// ---------------------------------------------------------------------------------------------------------------
// The SDK v2 dual-era fixture: the same tools in both eras

const deployed = (service: string) => `deploy ${service}: confirm=true region=eu-west (state deploy:${service})`
const summary = `summary by ${sampled.model}: tides follow the moon (state summarize:1)`
const listedRoots = "roots: checkout=file:///srv/checkout (state roots:1)"

layer(stdioClient(RealServers.sdkV2), { timeout: "60 seconds", excludeTestServices: true })(
  "SDK v2 fixture, modern: input_required rounds answered by the handlers",
  (it) => {
    it.effect("the era is modern", () =>
      Effect.gen(function*() {
        const session = yield* (yield* McpClient.McpClient).session
        assert.strictEqual(session.era, "modern")
        assert.strictEqual(session.protocolVersion, "2026-07-28")
      }), timeout)

    it.effect("a form elicitation completes; the retry carries the answer (defaults applied) and the state", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const result = yield* client.callTool({ name: "confirm-deploy", arguments: { service: "api" } })
        assert.strictEqual(textOf(result), deployed("api"))
        const [first, retry, ...rest] = yield* toolCalls("confirm-deploy")
        assert.strictEqual(rest.length, 0)
        assert.notStrictEqual("id" in first ? first.id : undefined, "id" in retry ? retry.id : undefined)
        assert.isUndefined(paramsOf(first).inputResponses)
        assert.deepStrictEqual(paramsOf(retry).inputResponses, {
          confirm: { action: "accept", content: { confirm: true, region: "eu-west" } }
        })
        assert.strictEqual(paramsOf(retry).requestState, "deploy:api")
        assert.deepStrictEqual(paramsOf(retry).arguments, { service: "api" })
        const [form] = yield* elicitationsOf("form")
        assert.strictEqual(form.message, "Deploy api?")
        assert.deepStrictEqual(form.defaults, { region: "eu-west" })
        // nothing went the legacy way
        assert.deepStrictEqual(yield* serverExchanges, [])
      }), timeout)

    it.effect("a sampling request completes through the sampling handler", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const result = yield* client.callTool({ name: "summarize", arguments: { text: "the tides" } })
        assert.strictEqual(textOf(result), summary)
        const [, retry] = yield* toolCalls("summarize")
        assert.deepStrictEqual(paramsOf(retry).inputResponses, { summary: sampled })
        assert.strictEqual(paramsOf(retry).requestState, "summarize:1")
        assert.deepStrictEqual(yield* samplingTexts, ["Summarize: the tides"])
      }), timeout)

    it.effect("a roots request completes through the roots provider", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const result = yield* client.callTool({ name: "list-workspace", arguments: {} })
        assert.strictEqual(textOf(result), listedRoots)
        const [, retry] = yield* toolCalls("list-workspace")
        assert.deepStrictEqual(paramsOf(retry).inputResponses, { roots: { roots: initialRoots } })
        assert.strictEqual(paramsOf(retry).requestState, "roots:1")
      }), timeout)

    it.effect("URL elicitation: https reaches the handler with a warning, javascript: and file: never do", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const opened = yield* client.callTool({ name: "open-link", arguments: { url: "https://example.com/connect" } })
        assert.strictEqual(textOf(opened), "link https://example.com/connect: accept")
        for (const url of ["javascript:alert(1)", "file:///etc/passwd"]) {
          const refused = yield* client.callTool({ name: "open-link", arguments: { url } })
          assert.strictEqual(textOf(refused), `link ${url}: decline`)
        }
        const urls = yield* elicitationsOf("url")
        assert.deepStrictEqual(urls.map((request) => request.url), ["https://example.com/connect"])
        // stdio has no origin to compare with: the handler is told so
        assert.deepStrictEqual(urls[0].warnings, ["no-server-origin"])
        assert.strictEqual(urls[0].urlOrigin, "https://example.com")
      }), timeout)

    it.effect("every message sent validates against the 2026-07-28 schema", () =>
      assertSentMessagesValid("2026-07-28"), timeout)
  }
)

layer(stdioClient(RealServers.sdkV2, { era: "legacy" }), { timeout: "60 seconds", excludeTestServices: true })(
  "SDK v2 fixture, pinned legacy: the same tools complete through server requests",
  (it) => {
    it.effect("the era is legacy", () =>
      Effect.gen(function*() {
        const session = yield* (yield* McpClient.McpClient).session
        assert.strictEqual(session.era, "legacy")
        assert.strictEqual(session.protocolVersion, "2025-11-25")
      }), timeout)

    it.effect("a form elicitation is answered as elicitation/create", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const result = yield* client.callTool({ name: "confirm-deploy", arguments: { service: "web" } })
        assert.strictEqual(textOf(result), deployed("web"))
        const calls = yield* toolCalls("confirm-deploy")
        assert.strictEqual(calls.length, 1)
        assert.isUndefined(paramsOf(calls[0]).inputResponses)
        const [exchange] = yield* exchangesFor("elicitation/create")
        assert.strictEqual(paramsOf(exchange.request).message, "Deploy web?")
        assert.deepStrictEqual(exchange.response, {
          jsonrpc: "2.0",
          id: exchange.request.id,
          result: { action: "accept", content: { confirm: true, region: "eu-west" } }
        })
      }), timeout)

    it.effect("a sampling request is answered as sampling/createMessage", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const result = yield* client.callTool({ name: "summarize", arguments: { text: "the tides" } })
        assert.strictEqual(textOf(result), summary)
        const [exchange] = yield* exchangesFor("sampling/createMessage")
        assert.deepStrictEqual(exchange.response, { jsonrpc: "2.0", id: exchange.request.id, result: sampled })
        assert.deepStrictEqual(yield* samplingTexts, ["Summarize: the tides"])
      }), timeout)

    it.effect("a roots request is answered as roots/list", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const result = yield* client.callTool({ name: "list-workspace", arguments: {} })
        assert.strictEqual(textOf(result), listedRoots)
        const [exchange] = yield* exchangesFor("roots/list")
        assert.deepStrictEqual(exchange.response, {
          jsonrpc: "2.0",
          id: exchange.request.id,
          result: { roots: initialRoots }
        })
      }), timeout)

    it.effect("URL elicitation: javascript: and file: are declined without reaching the handler", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const opened = yield* client.callTool({ name: "open-link", arguments: { url: "https://example.com/connect" } })
        assert.strictEqual(textOf(opened), "link https://example.com/connect: accept")
        for (const url of ["javascript:alert(1)", "file:///etc/passwd"]) {
          const refused = yield* client.callTool({ name: "open-link", arguments: { url } })
          assert.strictEqual(textOf(refused), `link ${url}: decline`)
        }
        const urls = yield* elicitationsOf("url")
        assert.deepStrictEqual(urls.map((request) => request.url), ["https://example.com/connect"])
        // the SDK's legacy shim mints the 2025-11-25 elicitationId
        assert.isString(urls[0].elicitationId)
        const answers = (yield* exchangesFor("elicitation/create")).filter((exchange) =>
          paramsOf(exchange.request).mode === "url"
        )
        assert.deepStrictEqual(answers.map((exchange) => resultOf(exchange.response)), [
          { action: "accept" },
          { action: "decline" },
          { action: "decline" }
        ])
      }), timeout)

    it.effect("every message sent validates against the 2025-11-25 schema", () =>
      assertSentMessagesValid("2025-11-25"), timeout)
  }
)

// ---------------------------------------------------------------------------------------------------------------
// server-everything (legacy) over stdio

const staticDocument = RealServers.everything.resources.staticDocument.uri

/** Waits for the first notification `f` accepts on a subscription taken before the action that causes it. */
const firstOf = (
  notifications: Stream.Stream<McpSchema.ServerNotification>,
  what: string,
  f: (notification: McpSchema.ServerNotification) => boolean
) =>
  notifications.pipe(
    Stream.filter(f),
    Stream.runHead,
    Effect.flatMap((found) => Effect.fromOption(found)),
    Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.fail(`no ${what} arrived`) }),
    Effect.orDie
  )

const logText = (notification: McpSchema.ServerNotification) =>
  notification.method === "notifications/message" && isObject(notification.params) &&
    typeof notification.params.data === "string"
    ? notification.params.data
    : ""

layer(stdioClient(RealServers.everything), { timeout: "60 seconds", excludeTestServices: true })(
  "server-everything (legacy) over stdio: features answered by the handlers",
  (it) => {
    it.effect("capabilities are declared from the handlers; the capability-gated tools appear", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const session = yield* client.session
        assert.strictEqual(session.era, "legacy")
        const recorder = yield* Recording.Recorder
        const [initialize] = yield* recorder.sentWithMethod("initialize")
        assert.deepStrictEqual(paramsOf(initialize).capabilities, {
          elicitation: { form: {}, url: {} },
          sampling: {},
          roots: { listChanged: true }
        })
        const names = (yield* client.listTools()).map((tool) => tool.name)
        for (const name of ["trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"]) {
          assert.include(names, name)
        }
      }), timeout)

    it.effect("sampling: the server's request reaches the handler and the tool returns the handler's answer", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const result = yield* client.callTool({
          name: "trigger-sampling-request",
          arguments: { prompt: "the tides", maxTokens: 32 }
        })
        assert.include(textOf(result), `"model": "${sampled.model}"`)
        assert.include(textOf(result), "tides follow the moon")
        const asked = yield* Asked
        const [params] = yield* Ref.get(asked.samplings)
        assert.strictEqual(params.maxTokens, 32)
        assert.strictEqual(params.systemPrompt, "You are a helpful test server.")
        assert.strictEqual(params.temperature, 0.7, "unknown fields reach the handler as sent")
        assert.deepStrictEqual(yield* samplingTexts, ["Resource trigger-sampling-request context: the tides"])
        const [exchange] = yield* exchangesFor("sampling/createMessage")
        assert.deepStrictEqual(exchange.response, { jsonrpc: "2.0", id: exchange.request.id, result: sampled })
      }), timeout)

    it.effect("elicitation: the form is answered, the schema's defaults fill the fields the user left", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const result = yield* client.callTool({ name: "trigger-elicitation-request", arguments: {} })
        const text = textOf(result)
        assert.include(text, "User provided the requested information")
        for (
          const line of [
            "- Name: Ada Lovelace",
            "- Agreed to terms: true",
            "- Email: ada@example.com",
            "- Favorite Integer: 42"
          ]
        ) assert.include(text, line)
        assert.include(text, "- Favorite Number: 3.14")
        const [form] = yield* elicitationsOf("form")
        assert.deepStrictEqual(form.requestedSchema.required, ["name"])
        assert.strictEqual(form.defaults.untitledSingleSelectEnum, "Monica")
        assert.strictEqual(form.defaults.number, 3.14)
        const [exchange] = yield* exchangesFor("elicitation/create")
        const answer = resultOf(exchange.response)
        const content = isObject(answer) ? answer.content : undefined
        assert.deepStrictEqual(content, {
          firstLine: "It was a dark and stormy night.",
          integer: 42,
          untitledSingleSelectEnum: "Monica",
          untitledMultipleSelectEnum: ["Guitar"],
          titledSingleSelectEnum: "hero-1",
          titledMultipleSelectEnum: ["fish-1"],
          legacyTitledEnum: "pet-1",
          name: "Ada Lovelace",
          check: true,
          number: 3.14,
          email: "ada@example.com"
        })
      }), timeout)

    it.effect("roots: listed after initialize, listed again after the roots change, shown by get-roots-list", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const asked = yield* Asked
        // the server asks for the roots by itself, shortly after initialization
        yield* awaitAnswered("roots/list", 1)
        const [first] = yield* exchangesFor("roots/list")
        assert.deepStrictEqual(resultOf(first.response), { roots: initialRoots })

        const notifications = yield* client.subscribe
        const moved = [
          { uri: "file:///srv/api", name: "api" },
          { uri: "file:///srv/web", name: "web" }
        ]
        yield* SubscriptionRef.set(asked.roots, moved)
        // the server hears of the change, asks again, and says so in a log message once it has the new list
        yield* firstOf(notifications, "log of the new roots", (n) => logText(n).includes("2 root(s) received"))
        const recorder = yield* Recording.Recorder
        assert.strictEqual((yield* recorder.sentWithMethod("notifications/roots/list_changed")).length, 1)
        const exchanges = yield* exchangesFor("roots/list")
        assert.deepStrictEqual(resultOf(exchanges[exchanges.length - 1].response), { roots: moved })

        const listed = textOf(yield* client.callTool({ name: "get-roots-list", arguments: {} }))
        assert.include(listed, "Current MCP Roots (2 total)")
        assert.include(listed, "URI: file:///srv/api")
        assert.include(listed, "URI: file:///srv/web")
      }), timeout)

    it.effect("resource updates and list changes arrive on listen; ending it unsubscribes", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const recorder = yield* Recording.Recorder
        const received = yield* Queue.unbounded<McpSchema.ServerNotification>()
        const listening = yield* client.listen({ resourceSubscriptions: [staticDocument], resourcesListChanged: true })
          .pipe(Stream.runForEach((notification) => Queue.offer(received, notification)), (effect) => Effect.forkChild(effect))
        const next = (method: string) =>
          Queue.take(received).pipe(
            Effect.repeat({ until: (notification) => notification.method === method }),
            Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.fail(`no ${method} arrived`) }),
            Effect.orDie
          )
        // the listen subscribes to the client's notifications before it sends resources/subscribe
        yield* awaitAnswerTo("resources/subscribe")
        const [subscribe] = yield* recorder.sentWithMethod("resources/subscribe")
        assert.deepStrictEqual(paramsOf(subscribe), { uri: staticDocument })

        const started = yield* client.callTool({ name: "toggle-subscriber-updates", arguments: {} })
        assert.include(textOf(started), "Started simulated resource updated notifications")
        const update = yield* next("notifications/resources/updated")
        assert.deepStrictEqual(update.params, { uri: staticDocument })

        // a new session resource: the server announces the change of its resource list
        const created = yield* client.callTool({
          name: "gzip-file-as-resource",
          arguments: { name: "hello.txt.gz", data: "data:text/plain;base64,aGVsbG8gY29uZHVpdA==" }
        })
        assert.isFalse(created.isError === true, textOf(created))
        yield* next("notifications/resources/list_changed")
        const resources = yield* client.listResources()
        assert.include(resources.map((resource) => resource.uri), "demo://resource/session/hello.txt.gz")

        yield* Fiber.interrupt(listening)
        const [unsubscribe] = yield* recorder.sentWithMethod("resources/unsubscribe")
        assert.deepStrictEqual(paramsOf(unsubscribe), { uri: staticDocument })
        const stopped = yield* client.callTool({ name: "toggle-subscriber-updates", arguments: {} })
        assert.include(textOf(stopped), "Stopped simulated resource updates")
      }), timeout)

    it.effect("every message sent validates against the 2025-11-25 schema", () =>
      assertSentMessagesValid(RealServers.everything.latestVersion), timeout)
  }
)

// ---------------------------------------------------------------------------------------------------------------
// server-everything over Streamable HTTP: URL elicitation against a server that has an origin

/** The URL the HTTP server-everything listens on. */
class EverythingUrl extends Context.Service<EverythingUrl, string>()("@conduit-mcp/client/test/EverythingUrl") {}

const httpClient = Layer.unwrap(
  Effect.map(Everything.start("streamableHttp"), (server) =>
    HttpCommon.client({ url: server.url }, handlerTags).pipe(
      Layer.provideMerge(Layer.succeed(EverythingUrl, server.url)),
      Layer.provideMerge(Handlers)
    ))
)

layer(httpClient, { timeout: "60 seconds", excludeTestServices: true })(
  "server-everything over Streamable HTTP: URL elicitation",
  (it) => {
    it.effect("a URL on another origin reaches the handler flagged cross-origin", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const serverUrl = new URL(yield* EverythingUrl)
        const result = yield* client.callTool({
          name: "trigger-url-elicitation",
          arguments: { url: "https://example.com/connect?step=1", elicitationId: "e-cross" }
        })
        assert.include(textOf(result), "User completed the URL elicitation flow")
        const [request] = yield* elicitationsOf("url")
        assert.strictEqual(request.url, "https://example.com/connect?step=1")
        assert.strictEqual(request.urlOrigin, "https://example.com")
        assert.strictEqual(request.serverOrigin, serverUrl.origin)
        assert.deepStrictEqual(request.warnings, ["cross-origin"])
        assert.strictEqual(request.elicitationId, "e-cross")
      }), timeout)

    it.effect("javascript: and file: URLs are declined and never reach the handler", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        for (const url of ["javascript:alert(document.cookie)", "file:///etc/passwd"]) {
          const result = yield* client.callTool({ name: "trigger-url-elicitation", arguments: { url } })
          assert.include(textOf(result), "User declined to open the URL")
        }
        const urls = (yield* elicitationsOf("url")).map((request) => request.url)
        assert.deepStrictEqual(urls, ["https://example.com/connect?step=1"])
        const answers = (yield* exchangesFor("elicitation/create")).map((exchange) => resultOf(exchange.response))
        assert.deepStrictEqual(answers, [{ action: "accept" }, { action: "decline" }, { action: "decline" }])
      }), timeout)

    it.effect("every message sent validates against the 2025-11-25 schema", () =>
      assertSentMessagesValid("2025-11-25"), timeout)
  }
)
