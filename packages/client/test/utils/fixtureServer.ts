/**
 * The standard fixture server of the tests, served in-process (InProcessTransport) and over stdio
 * (test/fixtures/server.ts), plus a scripted peer that talks to a server connection directly.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as McpSchema from "../../src/McpSchema.js"
import * as McpServer from "@conduit-mcp/server/McpServer"

export interface FixtureOptions {
  readonly eras?: McpServer.Eras | undefined
  readonly pageSize?: number | undefined
  readonly cacheHints?: McpServer.CacheHints | undefined
  /** Runs when the `hang` tool is interrupted (the stdio fixture writes `interrupted <id>` to stderr). */
  readonly onHangInterrupted?: ((id: McpSchema.RequestId) => Effect.Effect<void>) | undefined
}

export const SERVER_NAME = "conduit-fixture"
export const SERVER_VERSION = "1.0.0"
export const INSTRUCTIONS = "Fixture server for the Conduit tests."
export const TOOL_NAMES = ["echo", "add", "slow", "fail", "hang", "log", "confirm", "summarize"] as const
export const ITEM_IDS = ["1", "2", "3", "10", "20"] as const
export const NAMES = ["alice", "albert", "bob", "carol"] as const

const startingWith = (candidates: ReadonlyArray<string>) => (value: string) =>
  Effect.succeed(candidates.filter((candidate) => candidate.startsWith(value)))

export const tools = (options: FixtureOptions = {}) => [
  McpServer.tool({
    name: "echo",
    description: "Returns its text.",
    parameters: Schema.Struct({ text: Schema.String }),
    handler: ({ text }) => Effect.succeed(text)
  }),
  McpServer.tool({
    name: "add",
    description: "Adds two numbers.",
    parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
    handler: ({ a, b }) =>
      Effect.succeed({ content: [McpServer.text(String(a + b))], structuredContent: { sum: a + b } })
  }),
  McpServer.tool({
    name: "slow",
    description: "Reports progress `steps` times, waiting `delayMs` before each report, then answers.",
    parameters: Schema.Struct({
      steps: Schema.Int.pipe(Schema.withDecodingDefaultType(Effect.succeed(3))),
      delayMs: Schema.Number.pipe(Schema.withDecodingDefaultType(Effect.succeed(10)))
    }),
    handler: ({ delayMs, steps }) =>
      Effect.gen(function*() {
        for (let step = 1; step <= steps; step++) {
          yield* Effect.sleep(delayMs)
          yield* McpServer.progress(step, { total: steps, message: `step ${step} of ${steps}` })
        }
        return `done after ${steps} steps`
      })
  }),
  McpServer.tool({
    name: "fail",
    description: "Always fails (isError result).",
    parameters: Schema.Struct({ message: Schema.String.pipe(Schema.withDecodingDefaultType(Effect.succeed("requested failure"))) }),
    handler: ({ message }) => Effect.fail(new McpServer.ToolError({ message }))
  }),
  McpServer.tool({
    name: "hang",
    description: "Never answers; only interruption ends it. Reports progress 0 once it is running.",
    parameters: Schema.Struct({}),
    handler: () =>
      Effect.flatMap(McpServer.RequestContext, (request) =>
        Effect.andThen(request.progress(0, { message: "hanging" }), Effect.never).pipe(
          Effect.onInterrupt(() => options.onHangInterrupted?.(request.requestId) ?? Effect.void)
        ))
  }),
  McpServer.tool({
    name: "log",
    description: "Sends one log message at every level, then answers.",
    parameters: Schema.Struct({}),
    handler: () =>
      Effect.as(
        Effect.forEach(
          McpSchema.LoggingLevel.literals,
          (level) => McpServer.log(level, `${level} message`, "fixture"),
          { discard: true }
        ),
        "logged"
      )
  }),
  McpServer.tool({
    name: "confirm",
    description: "Asks the user to confirm an action (a form: a boolean and a choice of environment).",
    parameters: Schema.Struct({ action: Schema.String.pipe(Schema.withDecodingDefaultType(Effect.succeed("deploy"))) }),
    handler: ({ action }) =>
      Effect.map(McpServer.elicit({ message: `Confirm: ${action}?`, requestedSchema: CONFIRM_SCHEMA }), (answer) => {
        const approve = answer.content?.approve === true
        const environment = typeof answer.content?.environment === "string" ? answer.content.environment : undefined
        return {
          content: [McpServer.text(confirmText(action, answer.action, approve, environment))],
          structuredContent: { action: answer.action, approve, ...(environment !== undefined ? { environment } : {}) }
        }
      })
  }),
  McpServer.tool({
    name: "summarize",
    description: "Lists the client's roots, then asks the client's model to summarize them (sampling).",
    parameters: Schema.Struct({}),
    handler: () =>
      Effect.gen(function*() {
        const roots = yield* McpServer.listRoots
        const uris = roots.map((root) => root.uri)
        const reply = yield* McpServer.sample({
          messages: [{ role: "user", content: { type: "text", text: `Summarize these roots: ${uris.join(", ")}` } }],
          maxTokens: 100
        })
        const content = reply.content
        const summary = typeof content === "object" && content !== null && "text" in content ? String(content.text) : ""
        return { content: [McpServer.text(summary)], structuredContent: { roots: uris, model: reply.model, summary } }
      })
  })
]

/** The form the `confirm` tool asks for. */
export const CONFIRM_SCHEMA = {
  type: "object",
  properties: {
    approve: { type: "boolean", title: "Approve" },
    environment: { type: "string", title: "Environment", enum: ["staging", "production"], default: "staging" }
  },
  required: ["approve"]
} as const

/** The text the `confirm` tool answers with. */
export const confirmText = (
  action: string,
  answer: "accept" | "decline" | "cancel",
  approve: boolean,
  environment: string | undefined
): string =>
  answer !== "accept"
    ? `${action}: ${answer === "decline" ? "declined" : "cancelled"}`
    : `${action}: ${approve ? "approved" : "not approved"}${environment !== undefined ? ` for ${environment}` : ""}`

export const hello = McpServer.resource({
  uri: "fixture://hello",
  name: "hello",
  description: "A greeting.",
  mimeType: "text/plain",
  read: Effect.succeed("Hello, world!")
})

export const items = McpServer.resourceTemplate({
  uriTemplate: "fixture://items/{id}",
  name: "item",
  mimeType: "text/plain",
  read: (_uri, { id }) => Effect.succeed(`item ${id}`),
  complete: { id: startingWith(ITEM_IDS) }
})

export const greet = McpServer.prompt({
  name: "greet",
  description: "Greets someone.",
  arguments: [{ name: "name", description: "Who to greet", required: true, complete: startingWith(NAMES) }],
  handler: ({ name }) => Effect.succeed(`Hello, ${name}!`)
})

/** The standard fixture server. */
export const make = (options: FixtureOptions = {}) =>
  McpServer.make({
    name: SERVER_NAME,
    version: SERVER_VERSION,
    record: true,
    instructions: INSTRUCTIONS,
    eras: options.eras,
    pageSize: options.pageSize,
    cacheHints: options.cacheHints,
    tools: tools(options),
    resources: [hello],
    resourceTemplates: [items],
    prompts: [greet]
  })

// ---------------------------------------------------------------------------------------------------------------
// Modern envelope

export const MODERN = "2026-07-28"

export const modernMeta = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  [McpSchema.MetaKeys.protocolVersion]: MODERN,
  [McpSchema.MetaKeys.clientCapabilities]: {},
  [McpSchema.MetaKeys.clientInfo]: { name: "fixture-test", version: "0.0.0" },
  ...extra
})

/** Request params carrying the modern `_meta`. */
export const modern = (
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> = {}
): Record<string, unknown> => ({ ...params, _meta: modernMeta(meta) })

// ---------------------------------------------------------------------------------------------------------------
// Scripted peer

/** A client-side view of one server connection, for driving the server message by message. */
export interface Peer {
  readonly connection: McpServer.Connection
  /** Sends a request with a fresh integer id and returns the id without waiting. */
  readonly start: (method: string, params?: unknown) => Effect.Effect<number>
  /** Waits for the response to `id`. */
  readonly response: (id: McpSchema.RequestId) => Effect.Effect<McpSchema.JsonRpcResponse>
  /** Sends a request and waits for its response. */
  readonly request: (method: string, params?: unknown) => Effect.Effect<McpSchema.JsonRpcResponse>
  /** Sends a request and returns its result, dying on an error response. */
  readonly result: (method: string, params?: unknown) => Effect.Effect<Record<string, unknown>>
  /** Sends a request and returns its error object, dying on a success. */
  readonly error: (method: string, params?: unknown) => Effect.Effect<McpSchema.JsonRpcErrorObject>
  readonly notify: (method: string, params?: unknown) => Effect.Effect<void>
  /** Everything the server sent so far. */
  readonly sent: Effect.Effect<ReadonlyArray<McpSchema.JsonRpcMessage>>
  /** The notifications the server sent so far, optionally of one method. */
  readonly notifications: (method?: string) => Effect.Effect<ReadonlyArray<McpSchema.JsonRpcNotification>>
  /** Waits until the server sent at least `count` (default 1) notifications of a method. */
  readonly awaitNotifications: (
    method: string,
    count?: number
  ) => Effect.Effect<ReadonlyArray<McpSchema.JsonRpcNotification>>
}

export const open = (server: McpServer.Server): Effect.Effect<Peer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const outbound = yield* SubscriptionRef.make<ReadonlyArray<McpSchema.JsonRpcMessage>>([])
    const connection = yield* server.connect((message) => SubscriptionRef.update(outbound, (all) => [...all, message]))
    let nextId = 0
    const start = (method: string, params?: unknown) =>
      Effect.suspend(() => {
        const id = ++nextId
        const message: McpSchema.JsonRpcRequest = params === undefined
          ? { jsonrpc: "2.0", id, method }
          : { jsonrpc: "2.0", id, method, params }
        return Effect.as(connection.handle(message), id)
      })
    const response = (id: McpSchema.RequestId) =>
      SubscriptionRef.changes(outbound).pipe(
        Stream.filterMap((all) => {
          const found = all.find((message): message is McpSchema.JsonRpcResponse =>
            McpSchema.isResponse(message) && message.id === id
          )
          return found === undefined ? Result.failVoid : Result.succeed(found)
        }),
        Stream.runHead,
        Effect.flatMap(Option.match({ onNone: () => Effect.never, onSome: Effect.succeed }))
      )
    const request = (method: string, params?: unknown) => Effect.flatMap(start(method, params), response)
    const notificationsOf = (method: string | undefined) => (all: ReadonlyArray<McpSchema.JsonRpcMessage>) =>
      all.filter((message): message is McpSchema.JsonRpcNotification =>
        McpSchema.isNotification(message) && (method === undefined || message.method === method)
      )
    return {
      connection,
      start,
      response,
      request,
      result: (method, params) =>
        Effect.flatMap(request(method, params), (message) =>
          "result" in message && typeof message.result === "object" && message.result !== null
            ? Effect.succeed({ ...message.result })
            : Effect.die(new Error(`expected a result for ${method}, got ${JSON.stringify(message)}`))),
      error: (method, params) =>
        Effect.flatMap(request(method, params), (message) =>
          "error" in message
            ? Effect.succeed(message.error)
            : Effect.die(new Error(`expected an error for ${method}, got ${JSON.stringify(message)}`))),
      notify: (method, params) =>
        connection.handle(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }),
      sent: SubscriptionRef.get(outbound),
      notifications: (method) => Effect.map(SubscriptionRef.get(outbound), notificationsOf(method)),
      awaitNotifications: (method, count = 1) =>
        SubscriptionRef.changes(outbound).pipe(
          Stream.map(notificationsOf(method)),
          Stream.filter((found) => found.length >= count),
          Stream.runHead,
          Effect.map(Option.getOrElse((): ReadonlyArray<McpSchema.JsonRpcNotification> => []))
        )
    } satisfies Peer
  })

/** Opens a peer and runs the legacy handshake at `version`. */
export const openLegacy = (server: McpServer.Server, version: string = "2025-11-25") =>
  Effect.gen(function*() {
    const peer = yield* open(server)
    yield* peer.result("initialize", {
      protocolVersion: version,
      capabilities: {},
      clientInfo: { name: "fixture-test", version: "0.0.0" }
    })
    yield* peer.notify("notifications/initialized")
    return peer
  })
