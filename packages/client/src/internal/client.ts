/**
 * The client, composed from its components (internal/client/*):
 *
 * - `options`: the options checked and resolved before any I/O;
 * - `requestTable`: pending requests, their ids, deadlines and outcomes;
 * - `envelope` and `requester`: the `_meta` envelope and the core send every feature sends through;
 * - `negotiation` (internal/negotiation.ts): the era negotiator;
 * - `connection`: attempts, reconnection, health checks, legacy re-initialization, the session's phase;
 * - `inbound`, `notificationHub`, `serverRequests`: what the server sends, to where it belongs, through bounded
 *   buffers;
 * - `cache` (the result cache and credential partition), `calls`, `inputRounds`, `telemetry`, `fastPath`,
 *   `pagination`, `toolOutput`, `subscriptions`: the features, around the core send.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as McpClient from "../McpClient.js"
import type * as McpError from "../McpError.js"
import * as McpSchema from "../McpSchema.js"
import * as Transport from "../Transport.js"
import * as Cache from "./client/cache.js"
import * as Calls from "./client/calls.js"
import * as Connection from "./client/connection.js"
import * as Envelope from "./client/envelope.js"
import * as Direct from "./client/direct.js"
import * as FastPath from "./client/fastPath.js"
import * as InputRounds from "./client/inputRounds.js"
import * as Inbound from "./client/inbound.js"
import * as NotificationHub from "./client/notificationHub.js"
import * as Options from "./client/options.js"
import * as Pagination from "./client/pagination.js"
import * as Requester from "./client/requester.js"
import * as McpMethods from "./mcpMethods.js"
import * as RequestTable from "./client/requestTable.js"
import * as ServerRequests from "./client/serverRequests.js"
import { publicSession, type Session } from "./client/session.js"
import * as Subscriptions from "./client/subscriptions.js"
import * as TaskSupport from "./client/taskSupport.js"
import * as Telemetry from "./client/telemetry.js"
import * as ToolOutput from "./client/toolOutput.js"
import * as Completions from "./client/completions.js"
import * as codec from "./codec.js"
import * as Negotiation from "./negotiation.js"
import * as ToolResultInternal from "./toolResult.js"

/** @internal */
export const droppedMethod = NotificationHub.droppedMethod

/**
 * A feature given to the client: its service, or the effect (a tag) that gives it; the client's requirements
 * carry the effect's (see `McpClient.Requirements`).
 */
const feature = <S extends object, R>(
  given: McpClient.Feature<S, R> | undefined
): Effect.Effect<Option.Option<S>, never, R> =>
  given === undefined
    ? Effect.succeedNone
    : Effect.isEffect(given)
    ? Effect.asSome(given)
    : Effect.succeed(Option.some(given))

/** @internal */
export const make = <const O extends McpClient.McpClientOptions<unknown> = {}>(
  options: O = {} as O
): Effect.Effect<
  McpClient.McpClientService,
  McpError.ConnectError | McpError.InvalidOption,
  Transport.Transport | Scope.Scope | McpClient.Requirements<O>
> =>
  Effect.gen(function*() {
    const transport = yield* Transport.Transport
    const resolved = yield* Options.resolve(options, transport)
    const tasksResolved = yield* TaskSupport.resolveOptions(options.tasks)
    const envelope = yield* makeEnvelope(options, transport, resolved, tasksResolved)
    const taskStore = yield* feature(options.taskStore)
    const resultCache = yield* feature(options.resultCache)
    const cache = yield* Cache.make(resultCache, transport, options.credentialId)
    const requests = yield* RequestTable.make
    const requester = Requester.make(requests, envelope, McpMethods.registry())
    const notifications = NotificationHub.makeHub(resolved.notificationBufferSize)
    const serverRequests = yield* ServerRequests.make({
      envelope,
      supportedLegacy: resolved.supportedLegacy,
      maxServerRequests: resolved.maxServerRequests
    })
    const status = yield* Connection.makeStatus
    const toolOutput = ToolOutput.make()
    const completions = Completions.make(resolved.completionCacheTtl)
    const core: Core = {
      transport,
      resolved,
      status,
      requests,
      requester,
      envelope,
      cache,
      notifications,
      serverRequests,
      toolOutput,
      completions
    }
    let forgetTaskSupport = (): void => {}
    // (the task calls are made below; a change announced before then has nothing of theirs)
    const features = wireFeatures(core, options.reconnect !== false, () => forgetTaskSupport())
    const { calls, subscriptions, telemetry } = features
    yield* connect(core, features)
    const pagination = Pagination.make(resolved.listing, resolved.spanAttributes)
    const { learnTools, taskCalls } = wireTasks(core, features, { tasksResolved, taskStore, pagination })
    forgetTaskSupport = taskCalls.forget
    yield* taskCalls.prepare
    return service({
      completions,
      resolved,
      status,
      calls,
      taskCalls,
      learnTools,
      fastPath: FastPath.make({ untracedSend: resolved.untracedSend, status, requester, calls, cache, telemetry }),
      pagination,
      toolOutput,
      subscriptions,
      notifications,
      envelope,
      cache
    })
  }) as Effect.Effect<
    McpClient.McpClientService,
    McpError.ConnectError | McpError.InvalidOption,
    // the features' requirements, which the body reads as `unknown`
    Transport.Transport | Scope.Scope | McpClient.Requirements<O>
  >

/** The `_meta` envelope, with the handlers given and the capabilities to declare in each protocol version. */
const makeEnvelope = (
  options: McpClient.McpClientOptions<unknown>,
  transport: Transport.Transport["Service"],
  resolved: Options.Resolved,
  tasksResolved: TaskSupport.Resolved
) =>
  Effect.gen(function*() {
    // The extensions the transport's credentials bring (the OAuth client credentials grant) are declared with the
    // configured ones (which win), and only where the spec has a place for them: `capabilities.extensions` exists
    // from 2026-07-28 on (the extension's guide declares it in the per-request capabilities); a 2025 `initialize`
    // has no such field, so a legacy session does not get them.
    const brought = transport.credentials?.extensions
    const withBrought = (capabilities: McpSchema.ClientCapabilities, version: McpSchema.ProtocolVersion) =>
      brought === undefined || Object.keys(brought).length === 0 || !McpSchema.isModernVersion(version)
        ? capabilities
        : { ...capabilities, extensions: { ...brought, ...capabilities.extensions } }
    return Envelope.make(resolved.clientInfo, resolved.capabilities, {
      elicitation: yield* feature(options.elicitation),
      sampling: yield* feature(options.sampling),
      roots: yield* feature(options.roots),
      extensions: yield* feature(options.extensions)
    }, (capabilities, version) => TaskSupport.declare(withBrought(capabilities, version), version, tasksResolved))
  })

/** The components every part of the wiring below reads. */
interface Core {
  readonly transport: Transport.Transport["Service"]
  readonly resolved: Options.Resolved
  /** (the connection's own handle: the rest of the client reads it as a `Status`) */
  readonly status: Connection.Control
  readonly requests: RequestTable.RequestTable
  readonly requester: Requester.Requester
  readonly envelope: Envelope.Envelope
  readonly cache: Cache.Cache
  readonly notifications: NotificationHub.NotificationHub
  readonly serverRequests: ServerRequests.ServerRequests
  readonly toolOutput: ToolOutput.ToolOutput
  readonly completions: Completions.Completions
}

/** The features around the core send: what the server sends routed, the calls, the subscriptions. */
const wireFeatures = (core: Core, reconnects: boolean, forgetTaskSupport: () => void) => {
  const { cache, envelope, notifications, requester, resolved, serverRequests, status } = core
  const inbound = Inbound.make({
    requests: core.requests,
    notifications,
    serverRequests,
    cache,
    published: status.published,
    serverLogs: resolved.serverLogs,
    onChanged: (method) => {
      if (method === "notifications/tools/list_changed") {
        // output schemas and task support learnt from the old list are stale: the next tools/list teaches the
        // new ones
        core.toolOutput.forget()
        forgetTaskSupport()
      } else if (method !== "notifications/resources/updated") {
        // completions of changed prompts or resources may be stale
        core.completions.forget()
      }
    }
  })
  const telemetry = Telemetry.make(resolved.kind, resolved.spanAttributes)
  const calls = Calls.make({
    status,
    requester,
    envelope,
    cache,
    telemetry,
    requestTimeout: resolved.requestTimeout,
    maxInputRounds: resolved.maxInputRounds,
    supported: resolved.supported,
    kind: resolved.kind,
    strict: resolved.strict,
    reconnects,
    serverRequests
  })
  const subscriptions = Subscriptions.make({
    status,
    requester,
    calls,
    inbound,
    notifications,
    cache,
    envelope,
    requestTimeout: resolved.requestTimeout,
    bufferSize: resolved.notificationBufferSize
  })
  return { inbound, telemetry, calls, subscriptions }
}

type Features = ReturnType<typeof wireFeatures>

/** The connection: the negotiator, and what each session and attempt starts and ends. */
const connect = (core: Core, { inbound, subscriptions }: Features) => {
  const { cache, envelope, resolved, status } = core
  const negotiator = Negotiation.makeNegotiator({
    ...resolved,
    capabilitiesFor: envelope.capabilitiesFor,
    onProbe: status.state.set({ _tag: "Probing" })
  })
  return Connection.run(status, {
    transport: core.transport,
    options: resolved,
    negotiator,
    requester: core.requester,
    requests: core.requests,
    hooks: {
      route: inbound.route,
      onSession: (session, renewed) =>
        Effect.andThen(
          Effect.sync(() => core.completions.forget()),
          sessionStarted(session, renewed, { cache, subscriptions, envelope })
        ),
      onReinitialized: (session) =>
        // the new session starts from nothing: what was cached of the server is stale, and the log level and
        // resource subscriptions are sent again
        Effect.andThen(
          cache.forgetServer(session.transport.target),
          Effect.asVoid(Effect.forkScoped(subscriptions.restoreLegacy(session)))
        ),
      onAttemptEnd: core.serverRequests.clear
    }
  })
}

/** Tasks: their calls and `client.tasks`, whose own requests and lookups go through the client's calls. */
const wireTasks = (core: Core, { calls, inbound, subscriptions }: Features, parts: {
  readonly tasksResolved: TaskSupport.Resolved
  readonly taskStore: TaskSupport.Deps["store"]
  readonly pagination: Pagination.Pagination
}) => {
  const { pagination } = parts
  const { toolOutput } = core
  // (put together when first run: most clients never look their tools up this way)
  const lookupTools = Effect.suspend(() =>
    pagination.collect((refused) =>
      pagination.paginate("tools/list", (cursor) =>
        Effect.map(
          Effect.tap(
            calls.send("tools/list", Pagination.cursorParams(cursor)),
            (page) => learnTools(page.tools)
          ),
          (r) => ({ items: r.tools, nextCursor: r.nextCursor })
        ), refused), "tools/list")
  )
  const taskCalls = TaskSupport.make({
    resolved: parts.tasksResolved,
    status: core.status,
    calls,
    envelope: core.envelope,
    subscribe: core.notifications.subscribe,
    listen: subscriptions.listen,
    keepProgress: inbound.keepProgress,
    store: parts.taskStore,
    toolResult: (tool, raw) =>
      Result.flatMap(
        decodeCallToolResult("tools/call", raw),
        (result) => tool === undefined ? Result.succeed(result) : toolOutput.check(tool, result)
      ),
    lookupTools,
    requestTimeout: core.resolved.requestTimeout
  })
  const learnTools = (tools: ReadonlyArray<McpSchema.Tool>) =>
    Effect.tap(toolOutput.learn(tools), Effect.sync(() => taskCalls.learn(tools)))
  return { taskCalls, learnTools }
}

/** What a new session starts: a renewed one forgets what was cached and restores legacy state. */
const sessionStarted = (
  session: Session,
  renewed: boolean,
  parts: {
    readonly cache: Cache.Cache
    readonly subscriptions: Subscriptions.Subscriptions
    readonly envelope: Envelope.Envelope
  }
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Whatever changed while no session was up is unknown: cached results of this server are stale.
    if (renewed) yield* parts.cache.forgetServer(session.transport.target)
    if (session.era === "legacy" && renewed) yield* Effect.forkScoped(parts.subscriptions.restoreLegacy(session))
    const roots = parts.envelope.handlers.roots
    if (session.era === "legacy" && Option.isSome(roots)) {
      // legacy roots are declared with listChanged: each change of the roots is announced to the server
      yield* Effect.forkScoped(Stream.runForEach(roots.value.changes, () =>
        Effect.ignore(session.connection.notify({ jsonrpc: "2.0", method: "notifications/roots/list_changed" }))))
    }
  })

// the fast path's decoders, of the schemas the methods' entries name (a text result read by hand when it can be)
const { methods } = McpMethods
const decodeCallToolResult = Calls.resultDecoder(methods["tools/call"].result, codec.decodeTextToolResult)
const decodeReadResourceResult = Calls.resultDecoder(methods["resources/read"].result)
const decodeGetPromptResult = Calls.resultDecoder(methods["prompts/get"].result)
const decodeCompleteResult = Calls.resultDecoder(methods["completion/complete"].result)

const nameAndArguments = <A>(params: { readonly name: string; readonly arguments?: A | undefined }) =>
  params.arguments === undefined ? { name: params.name } : { name: params.name, arguments: params.arguments }

/** What the public service is made of. */
interface Parts {
  readonly completions: Completions.Completions
  readonly resolved: Options.Resolved
  readonly status: Connection.Status
  readonly calls: Calls.Calls
  readonly taskCalls: TaskSupport.TaskCalls
  readonly learnTools: (tools: ReadonlyArray<McpSchema.Tool>) => Effect.Effect<void>
  readonly fastPath: FastPath.FastPath
  readonly pagination: Pagination.Pagination
  readonly toolOutput: ToolOutput.ToolOutput
  readonly subscriptions: Subscriptions.Subscriptions
  readonly notifications: NotificationHub.NotificationHub
  readonly envelope: Envelope.Envelope
  readonly cache: Cache.Cache
}

type Service = McpClient.McpClientService

/** The public service over the components: each feature group's part, merged. */
const service = (parts: Parts): Service => {
  const tools = toolsPart(parts)
  return Direct.attach({
    ...sessionPart(parts),
    ...tools.service,
    ...resourcesPart(parts),
    ...promptsPart(parts)
  }, directPart(parts, tools.unlisted))
}

// a result that breaks its tool's output schema fails the call (in its span and metrics, as a bad result does)
const checkedDecoderOf = (toolOutput: ToolOutput.ToolOutput, name: string): Calls.SyncDecoder<McpSchema.CallToolResult> =>
(method, raw) => Result.flatMap(decodeCallToolResult(method, raw), (result) => toolOutput.check(name, result))

/**
 * The calls of a promise client that need no fiber of their own: the usual `callTool` (no task possible; the
 * listing a tool not listed yet may need runs after its answer, as in the effect), `readResource` and `getPrompt`,
 * through the fast path. Anything else runs the effect.
 */
const directPart = (parts: Parts, unlisted: Unlisted): Direct.DirectCalls => {
  const { direct } = parts.fastPath
  return {
    kind: parts.resolved.kind,
    callTool: (runtime, params, options, onExit) =>
      parts.taskCalls.plainOnly()
        ? direct(
          runtime,
          "tools/call",
          nameAndArguments(params),
          checkedDecoderOf(parts.toolOutput, params.name),
          options,
          params.name,
          onExit,
          parts.toolOutput.known(params.name) ? undefined : unlisted(params.name)
        )
        : undefined,
    readResource: (runtime, uri, options, onExit) =>
      direct(runtime, "resources/read", { uri }, decodeReadResourceResult, options, undefined, onExit),
    getPrompt: (runtime, params, options, onExit) =>
      direct(runtime, "prompts/get", nameAndArguments(params), decodeGetPromptResult, options, undefined, onExit)
  }
}

/** The session, its state, notifications, raw requests, ping, the log level, credentials and tasks. */
const sessionPart = (parts: Parts): Pick<
  Service,
  "session" | "state" | "stateChanges" | "notifications" | "subscribe" | "request" | "notify" | "listen" | "ping"
  | "setLoggingLevel" | "setAuth" | "tasks"
> => {
  const { calls, status } = parts
  const requestTimeout = parts.resolved.requestTimeout
  return {
    session: Effect.map(status.awaitSession(requestTimeout, "session"), publicSession),
    state: status.state.get,
    stateChanges: status.state.changes,
    notifications: parts.notifications.stream,
    subscribe: parts.notifications.subscribe,
    request: calls.requestAny,
    notify: calls.notify,
    listen: parts.subscriptions.listen,
    ping: (options) =>
      Effect.flatMap(status.awaitSession(requestTimeout, "ping"), (session) =>
        session.era === "legacy"
          ? Effect.asVoid(calls.send("ping", undefined, options))
          : Effect.asVoid(calls.send("server/discover", undefined, options))),
    setLoggingLevel: (level) =>
      Effect.flatMap(status.awaitSession(requestTimeout, "logging/setLevel"), (session) => {
        parts.envelope.setLogLevel(level)
        return session.era === "legacy"
          ? Effect.asVoid(calls.send("logging/setLevel", { level }))
          : Effect.void
      }),
    setAuth: parts.cache.setAuth,
    tasks: parts.taskCalls.api
  }
}

/**
 * What the result of a tool no listing has shown still needs, before any listing: a structured one lists the tools
 * once, then is checked (see toolOutput).
 */
type Unlisted = (name: string) => FastPath.After<McpSchema.CallToolResult>

/** Tools: their listings (which teach output schemas and task support) and the calls. */
const toolsPart = (parts: Parts): {
  readonly service: Pick<
    Service,
    "listTools" | "listToolsPage" | "streamTools" | "callTool" | "callToolRound" | "callToolStructured" | "callToolStream"
  >
  readonly unlisted: Unlisted
} => {
  const { calls, pagination, resolved, toolOutput } = parts
  const callSync = parts.fastPath.call
  const { collect, paginate } = pagination

  const listToolsPage = (cursor?: string, options?: McpClient.RequestOptions) =>
    Effect.tap(
      calls.send("tools/list", Pagination.cursorParams(cursor), options),
      (page) => parts.learnTools(page.tools)
    )
  const streamTools = (options?: McpClient.RequestOptions, refused?: Pagination.CursorRefused) =>
    paginate("tools/list", (cursor) =>
      Effect.map(listToolsPage(cursor, options), (r) => ({ items: r.tools, nextCursor: r.nextCursor })), refused)

  const checkedDecoder = (name: string) => checkedDecoderOf(toolOutput, name)
  const callChecked = (params: McpClient.CallToolParams, options?: McpClient.RequestOptions) => {
    const plain = callSync("tools/call", nameAndArguments(params), checkedDecoder(params.name), options, params.name)
    return parts.taskCalls.callTool(
      params,
      options,
      plain,
      // (built only when a task may come back)
      Effect.suspend(() =>
        callSync(
          "tools/call",
          nameAndArguments(params),
          TaskSupport.taskAwareDecoder(checkedDecoder(params.name)),
          options,
          params.name
        )
      )
    )
  }
  // a tool not seen in a listing, before any listing: list once, then check (see toolOutput)
  const listAllTools = Effect.suspend(() => Effect.asVoid(collect((r) => streamTools(undefined, r), "tools/list")))
  const unlisted: Unlisted = (name) => (result) =>
    result.structuredContent === undefined || result.isError === true ? undefined : Effect.andThen(
      toolOutput.listOnce(listAllTools),
      Effect.suspend(() => Effect.fromResult(toolOutput.check(name, result)))
    )
  const callTool = (params: McpClient.CallToolParams, options?: McpClient.RequestOptions) =>
    toolOutput.known(params.name) ? callChecked(params, options) :
      Effect.flatMap(callChecked(params, options), (result) => unlisted(params.name)(result) ?? Effect.succeed(result))

  return {
    unlisted,
    service: {
      listTools: (options) => collect((refused) => streamTools(options, refused), "tools/list"),
      listToolsPage,
      streamTools: (options) => streamTools(options),
      callTool: ((params: McpClient.CallToolParams, options?: McpClient.CallToolOptions) =>
        options?.isError === "fail"
          ? Effect.flatMap(callTool(params, options), ToolResultInternal.failOnError(params.name))
          : callTool(params, options)) as McpClient.CallTool,
      callToolRound: (params, options) =>
        calls.call(
          "tools/call",
          {
            ...nameAndArguments(params),
            ...(params.inputResponses !== undefined ? { inputResponses: params.inputResponses } : {}),
            ...(params.requestState !== undefined ? { requestState: params.requestState } : {})
          },
          (method, raw): Result.Result<McpClient.ToolRound, McpError.ProtocolError> =>
            InputRounds.isInputRequired(raw)
              ? Result.map(InputRounds.inputRequiredOf(method, raw), (round) => ({ _tag: "InputRequired", ...round }))
              : Result.map(
                Result.flatMap(decodeCallToolResult(method, raw), (result) => toolOutput.check(params.name, result)),
                (result) => ({ _tag: "Complete", result })
              ),
          options,
          params.name,
          "return"
        ),
      callToolStructured: <A, I>(
        params: McpClient.CallToolParams,
        schema: Schema.Codec<A, I>,
        options?: McpClient.RequestOptions
      ) => Effect.flatMap(callTool(params, options), (result) => ToolOutput.structured(params, schema, result)),
      callToolStream: (params, options) =>
        Calls.progressEvents(
          resolved.notificationBufferSize,
          (onProgress) => callTool(params, { ...options, onProgress })
        )
    }
  }
}

/** Resources and resource templates: their listings, and reads. */
const resourcesPart = (parts: Parts): Pick<
  Service,
  "listResources" | "listResourcesPage" | "streamResources" | "listResourceTemplates" | "streamResourceTemplates"
  | "readResource"
> => {
  const { calls, pagination } = parts
  const callSync = parts.fastPath.call
  const { collect, paginate } = pagination
  const cursorParams = Pagination.cursorParams

  const listResourcesPage = (cursor?: string, options?: McpClient.RequestOptions) =>
    calls.send("resources/list", cursorParams(cursor), options)
  const streamResources = (options?: McpClient.RequestOptions, refused?: Pagination.CursorRefused) =>
    paginate("resources/list", (cursor) =>
      Effect.map(
        listResourcesPage(cursor, options),
        (r) => ({ items: r.resources, nextCursor: r.nextCursor })
      ), refused)
  const streamResourceTemplates = (options?: McpClient.RequestOptions, refused?: Pagination.CursorRefused) =>
    paginate("resources/templates/list", (cursor) =>
      Effect.map(
        calls.send("resources/templates/list", cursorParams(cursor), options),
        (r) => ({ items: r.resourceTemplates, nextCursor: r.nextCursor })
      ), refused)

  return {
    listResources: (options) => collect((refused) => streamResources(options, refused), "resources/list"),
    listResourcesPage,
    streamResources: (options) => streamResources(options),
    listResourceTemplates: (options) =>
      collect((refused) => streamResourceTemplates(options, refused), "resources/templates/list"),
    streamResourceTemplates: (options) => streamResourceTemplates(options),
    readResource: ({ uri }, options) => callSync("resources/read", { uri }, decodeReadResourceResult, options)
  }
}

/** Prompts: their listings, getting one, and completions of their (and resource templates') arguments. */
const promptsPart = (parts: Parts): Pick<Service, "listPrompts" | "streamPrompts" | "getPrompt" | "complete"> => {
  const { calls, pagination } = parts
  const callSync = parts.fastPath.call
  const { collect, paginate } = pagination

  const streamPrompts = (options?: McpClient.RequestOptions, refused?: Pagination.CursorRefused) =>
    paginate("prompts/list", (cursor) =>
      Effect.map(
        calls.send("prompts/list", Pagination.cursorParams(cursor), options),
        (r) => ({ items: r.prompts, nextCursor: r.nextCursor })
      ), refused)

  return {
    listPrompts: (options) => collect((refused) => streamPrompts(options, refused), "prompts/list"),
    streamPrompts: (options) => streamPrompts(options),
    getPrompt: (params, options) => callSync("prompts/get", nameAndArguments(params), decodeGetPromptResult, options),
    complete: (params, options) => {
      const wire = params.context === undefined
        ? { ref: params.ref, argument: params.argument }
        : { ref: params.ref, argument: params.argument, context: params.context }
      const run = callSync("completion/complete", wire, decodeCompleteResult, options)
      // a caller's own _meta makes the request its own
      return options?.meta === undefined ? parts.completions.complete(wire, run) : run
    }
  }
}
