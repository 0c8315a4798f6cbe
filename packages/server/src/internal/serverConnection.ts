/** @internal */
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import type * as Scope from "effect/Scope"
import * as McpError from "@conduit-mcp/client/McpError"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as McpServer from "../McpServer.js"
import * as model from "./serverModel.js"
import * as Input from "./serverInput.js"
import * as Listen from "./serverListen.js"
import * as ServerTasks from "./serverTasks.js"
import * as UriTemplate from "./serverUriTemplate.js"

type JsonObject = model.JsonObject

/**
 * Everything `McpServer.make` hands to the engine.
 *
 * @internal
 */
export interface EngineConfig {
  readonly options: McpServer.Options
  /** The services the handlers need, captured by `make`; RequestContext is provided per request. */
  readonly context: Context.Context<never>
  readonly tools: ReadonlyArray<McpServer.Tool<unknown>>
  readonly resources: ReadonlyArray<McpServer.Resource<unknown>>
  readonly resourceTemplates: ReadonlyArray<McpServer.ResourceTemplate<unknown>>
  readonly prompts: ReadonlyArray<McpServer.Prompt<unknown>>
  readonly onReceived: (received: McpServer.Received) => Effect.Effect<void>
  readonly onInterrupted: (interrupted: McpServer.Interrupted) => Effect.Effect<void>
}

/** @internal */
export interface Engine {
  readonly info: McpSchema.Implementation
  readonly eras: McpServer.Eras
  readonly supportedVersions: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly capabilities: McpSchema.ServerCapabilities
  readonly connect: (send: McpServer.Send) => Effect.Effect<McpServer.Connection, never, Scope.Scope>
  readonly publish: (change: model.Change) => Effect.Effect<void>
}

/**
 * The JSON Schema advertised for a tool whose arguments are described by an Effect Schema.
 *
 * @internal
 */
export const jsonSchemaOf = <A, I>(schema: Schema.Schema<A, I>): JsonObject => {
  const ast = SchemaAST.encodedAST(schema.ast)
  // `Schema.Struct({})` means "any object" to Effect (`{}`), but a tool's inputSchema must be an object schema.
  if (SchemaAST.isTypeLiteral(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
    return { type: "object", properties: {} }
  }
  const root: JsonObject = { ...JSONSchema.make(schema, { target: "jsonSchema2020-12" }) }
  const body = Object.fromEntries(Object.entries(root).filter(([key]) => key !== "$schema"))
  return body.type === undefined ? { type: "object", ...body } : body
}

const LEVELS: ReadonlyArray<McpSchema.LoggingLevel> = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency"
]

const isLoggingLevel = Schema.is(McpSchema.LoggingLevel)
const isProgressToken = Schema.is(McpSchema.ProgressToken)
const isRequestId = Schema.is(McpSchema.RequestId)
const decodeImplementation = Schema.decodeUnknownOption(McpSchema.Implementation)

/** A log threshold: a minimum level, every level (legacy default) or none (modern default). */
type LogThreshold = McpSchema.LoggingLevel | "all" | "none"

const passes = (threshold: LogThreshold, level: McpSchema.LoggingLevel): boolean =>
  threshold === "all" || (threshold !== "none" && LEVELS.indexOf(level) >= LEVELS.indexOf(threshold))

const rpcError = (code: number, message: string, data?: unknown): McpError.McpError =>
  new McpError.McpError(data === undefined ? { code, message } : { code, message, data })

const invalidParams = (message: string, data?: unknown) => rpcError(McpSchema.ErrorCode.InvalidParams, message, data)

const methodNotFound = (method: string) => rpcError(McpSchema.ErrorCode.MethodNotFound, `Method not found: ${method}`)

const record = (value: unknown): JsonObject | undefined => Predicate.isRecord(value) ? value : undefined

const textContent = (value: string): McpSchema.ContentBlock => ({ type: "text", text: value })

/** What the handlers of one request see of it. */
interface RequestInfo {
  readonly id: McpSchema.RequestId
  readonly method: string
  readonly params: JsonObject
  readonly meta: JsonObject
  readonly era: McpSchema.Era
  readonly version: McpSchema.ProtocolVersion
  readonly clientCapabilities: JsonObject
  readonly clientInfo: McpSchema.Implementation | undefined
  readonly logThreshold: LogThreshold
  /** Sends a notification on the request's connection. */
  readonly notify: (method: string, params: JsonObject) => Effect.Effect<void>
}

/** The legacy handshake of one connection. */
interface LegacySession {
  readonly version: McpSchema.LegacyVersion
  readonly clientCapabilities: JsonObject
  readonly clientInfo: McpSchema.Implementation | undefined
}

const LEGACY_METHODS: ReadonlySet<string> = new Set([
  "ping",
  "logging/setLevel",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "resources/subscribe",
  "resources/unsubscribe",
  "tasks/get",
  "tasks/result",
  "tasks/cancel",
  "tasks/list"
])

const STATEFUL_METHODS: ReadonlySet<string> = new Set([
  "initialize",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe"
])

/** @internal */
export const makeEngine = (config: EngineConfig): Effect.Effect<Engine> =>
  Effect.gen(function*() {
    const { options } = config
    const eras = options.eras ?? "both"
    const modernVersions: ReadonlyArray<McpSchema.ModernVersion> = eras === "legacy"
      ? []
      : [...McpSchema.MODERN_VERSIONS].reverse()
    const legacyVersions: ReadonlyArray<McpSchema.LegacyVersion> = eras === "modern"
      ? []
      : [...McpSchema.LEGACY_VERSIONS].reverse()
    const supportedVersions: ReadonlyArray<McpSchema.ProtocolVersion> = [...modernVersions, ...legacyVersions]
    const info: McpSchema.Implementation = {
      name: options.name,
      version: options.version,
      ...(options.title !== undefined ? { title: options.title } : {})
    }
    const cacheHints = options.cacheHints ?? { ttlMs: 0, cacheScope: "public" }
    const pageSize = options.pageSize !== undefined && options.pageSize > 0 ? Math.floor(options.pageSize) : undefined

    const toolsByName = new Map(config.tools.map((tool) => [tool.definition.name, tool]))
    const promptsByName = new Map(config.prompts.map((prompt) => [prompt.definition.name, prompt]))
    const templates = config.resourceTemplates.map((template) => ({
      template,
      matcher: UriTemplate.parse(template.definition.uriTemplate)
    }))
    const hasTools = config.tools.length > 0
    const hasResources = config.resources.length > 0 || config.resourceTemplates.length > 0
    const hasPrompts = config.prompts.length > 0
    const hasCompletions = config.prompts.some((prompt) => Object.keys(prompt.complete).length > 0) ||
      config.resourceTemplates.some((template) => Object.keys(template.complete).length > 0)
    const hasTasks = config.tools.some((tool) =>
      tool.definition.execution?.taskSupport === "optional" || tool.definition.execution?.taskSupport === "required"
    )
    const serverTasks = ServerTasks.make(options.tasks)
    const capabilities: McpSchema.ServerCapabilities = {
      ...(hasTools ? { tools: { listChanged: true } } : {}),
      ...(hasTasks ?
        {
          tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
          extensions: { [ServerTasks.EXTENSION_ID]: {} }
        } :
        {}),
      ...(hasResources ? { resources: { subscribe: true, listChanged: true } } : {}),
      ...(hasPrompts ? { prompts: { listChanged: true } } : {}),
      ...(hasCompletions ? { completions: {} } : {}),
      logging: {}
    }

    // `make` captured every service the handlers need except RequestContext, which each request provides.
    const withServices = <A, E>(effect: Effect.Effect<A, E, unknown>) =>
      Effect.provide(effect, config.context) as Effect.Effect<A, E, model.RequestContext>

    const connectionIds = yield* Ref.make(0)
    // every live connection's way of passing a change on to its client (legacy session or modern listens)
    const audiences = new Set<(change: model.Change) => Effect.Effect<void>>()
    const publish = (change: model.Change): Effect.Effect<void> =>
      Effect.forEach([...audiences], (deliver) => deliver(change), { discard: true })

    // -------------------------------------------------------------------------------------------------------
    // Results

    const finish = (request: RequestInfo, result: JsonObject, cacheable: boolean): JsonObject => {
      if (request.era === "legacy") return result
      return {
        ...result,
        resultType: "complete",
        ...(cacheable ? { ttlMs: cacheHints.ttlMs, cacheScope: cacheHints.cacheScope } : {}),
        _meta: { ...record(result._meta), [McpSchema.MetaKeys.serverInfo]: info }
      }
    }

    const encodeCursor = (list: string, offset: number): string => btoa(`${list}#${offset}`)

    const paginate = <A>(
      list: string,
      items: ReadonlyArray<A>,
      cursor: unknown
    ): Effect.Effect<{ readonly page: ReadonlyArray<A>; readonly nextCursor: string | undefined }, McpError.McpError> =>
      Effect.suspend(() => {
        let offset = 0
        if (cursor !== undefined) {
          const decoded = typeof cursor === "string" ? Option.liftThrowable(atob)(cursor) : Option.none()
          const match = Option.flatMap(decoded, (text) => Option.fromNullable(/^(.+)#(\d+)$/.exec(text)))
          if (Option.isNone(match) || match.value[1] !== list) return Effect.fail(invalidParams("Invalid cursor"))
          offset = Number(match.value[2])
          if (offset <= 0 || offset >= items.length) return Effect.fail(invalidParams("Invalid cursor"))
        }
        const end = pageSize === undefined ? items.length : Math.min(items.length, offset + pageSize)
        return Effect.succeed({
          page: items.slice(offset, end),
          nextCursor: end < items.length ? encodeCursor(list, end) : undefined
        })
      })

    const listResult = <A>(
      request: RequestInfo,
      key: string,
      items: ReadonlyArray<A>
    ): Effect.Effect<JsonObject, McpError.McpError> =>
      Effect.map(
        paginate(request.method, items, request.params.cursor),
        ({ nextCursor, page }) =>
          finish(request, { [key]: page, ...(nextCursor !== undefined ? { nextCursor } : {}) }, true)
      )

    const toolResult = (result: McpServer.ToolResult): JsonObject =>
      typeof result === "string" ?
        { content: [textContent(result)] } :
        {
          content: result.content,
          ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
          ...(result.isError !== undefined ? { isError: result.isError } : {}),
          ...(result._meta !== undefined ? { _meta: result._meta } : {})
        }

    const resourceContents = (
      uri: string,
      mimeType: string | undefined,
      result: McpServer.ResourceResult
    ): ReadonlyArray<McpSchema.ResourceContents> =>
      typeof result === "string" ? [{ uri, text: result, ...(mimeType !== undefined ? { mimeType } : {}) }] : result

    // -------------------------------------------------------------------------------------------------------
    // Methods both eras share

    const requireCapability = (present: boolean, method: string) =>
      present ? Effect.void : Effect.fail(methodNotFound(method))

    /** A handler could not get the input it asked for and did not handle it: the JSON-RPC error to answer. */
    const inputFailure = (request: RequestInfo, error: model.InputError): McpError.McpError => {
      if (request.era === "modern" && error.reason === "CapabilityMissing") {
        return rpcError(McpSchema.ErrorCode.MissingRequiredClientCapability, error.message, {
          requiredCapabilities: error.requiredCapabilities ?? {}
        })
      }
      return rpcError(
        request.era === "modern" && error.reason === "InvalidResponse"
          ? McpSchema.ErrorCode.InvalidParams
          : McpSchema.ErrorCode.InternalError,
        error.message
      )
    }

    const callTool = (request: RequestInfo) =>
      Effect.gen(function*() {
        yield* requireCapability(hasTools, request.method)
        const name = request.params.name
        if (typeof name !== "string") return yield* invalidParams("Missing tool name")
        const tool = toolsByName.get(name)
        if (tool === undefined) return yield* invalidParams(`Unknown tool: ${name}`)
        const result = yield* withServices(tool.handler(request.params.arguments)).pipe(
          Effect.map(toolResult),
          Effect.catchTags({
            ToolError: (error) =>
              Effect.succeed<JsonObject>({
                content: [textContent(error.message)],
                isError: true,
                ...(error.structuredContent !== undefined ? { structuredContent: error.structuredContent } : {})
              }),
            // The model sees why the tool could not ask; a modern client lacking a capability gets -32021.
            InputError: (error) =>
              request.era === "modern" && error.reason === "CapabilityMissing"
                ? Effect.fail(inputFailure(request, error))
                : Effect.succeed<JsonObject>({ content: [textContent(error.message)], isError: true })
          }),
          Effect.catchAllDefect((defect) =>
            Effect.as(
              Effect.logError("tool handler died", defect).pipe(Effect.annotateLogs({ tool: name })),
              { content: [textContent(`Tool ${name} failed: internal error`)], isError: true }
            )
          )
        )
        return finish(request, result, false)
      })

    /** A tool call, run as a task when the tool and the client want one (2025-11-25 or 2026-07-28). */
    const taskOrCall = (request: RequestInfo) =>
      Effect.suspend(() => {
        const name = request.params.name
        const tool = typeof name === "string" ? toolsByName.get(name) : undefined
        const verdict = serverTasks.decide(
          tool?.definition.execution?.taskSupport,
          request.era,
          request.params,
          request.clientCapabilities
        )
        if (verdict === "plain") return callTool(request)
        if (verdict !== "task") return Effect.fail(verdict)
        return Effect.flatMap(model.RequestContext, (context) =>
          serverTasks.start(
            request.era,
            request.params,
            request.era === "legacy"
              ? { input: context.input, status: (task) => request.notify("notifications/tasks/status", task) }
              : undefined,
            // a task outlives its request, and may outlive its connection: what it can no longer send is dropped
            // (sending on a closed connection would interrupt the task)
            ({ input, progress }) =>
              Effect.provideService(callTool(request), model.RequestContext, {
                ...context,
                input,
                progress: (value, details) =>
                  Effect.catchAllCause((progress ?? context.progress)(value, details), () => Effect.void),
                log: (level, data, logger) => Effect.catchAllCause(context.log(level, data, logger), () => Effect.void)
              })
          ))
      })

    const readResource = (request: RequestInfo) =>
      Effect.gen(function*() {
        yield* requireCapability(hasResources, request.method)
        const uri = request.params.uri
        if (typeof uri !== "string") return yield* invalidParams("Missing resource uri")
        const fixed = config.resources.find((resource) => resource.definition.uri === uri)
        if (fixed !== undefined) {
          const result = yield* withServices(fixed.read).pipe(
            Effect.catchTag("InputError", (error) => Effect.fail(inputFailure(request, error)))
          )
          return finish(request, { contents: resourceContents(uri, fixed.definition.mimeType, result) }, true)
        }
        for (const { matcher, template } of templates) {
          const variables = matcher.match(uri)
          if (Option.isSome(variables)) {
            const result = yield* withServices(template.read(uri, variables.value)).pipe(
              Effect.catchTag("InputError", (error) => Effect.fail(inputFailure(request, error)))
            )
            return finish(
              request,
              { contents: resourceContents(uri, template.definition.mimeType, result) },
              true
            )
          }
        }
        // 2025-11-25 names -32002 for an unknown resource; 2026-07-28 folds it into -32602.
        return yield* rpcError(
          request.era === "legacy" ? McpSchema.ErrorCode.ResourceNotFound : McpSchema.ErrorCode.InvalidParams,
          "Resource not found",
          { uri }
        )
      })

    const stringRecord = (value: unknown): Option.Option<Record<string, string>> => {
      if (value === undefined) return Option.some({})
      if (!Predicate.isRecord(value)) return Option.none()
      const out: Record<string, string> = {}
      for (const [key, entry] of Object.entries(value)) {
        if (typeof entry !== "string") return Option.none()
        out[key] = entry
      }
      return Option.some(out)
    }

    const getPrompt = (request: RequestInfo) =>
      Effect.gen(function*() {
        yield* requireCapability(hasPrompts, request.method)
        const name = request.params.name
        if (typeof name !== "string") return yield* invalidParams("Missing prompt name")
        const prompt = promptsByName.get(name)
        if (prompt === undefined) return yield* invalidParams(`Unknown prompt: ${name}`)
        const args = stringRecord(request.params.arguments)
        if (Option.isNone(args)) return yield* invalidParams("Prompt arguments must be strings")
        const missing = (prompt.definition.arguments ?? [])
          .filter((argument) => argument.required === true && args.value[argument.name] === undefined)
          .map((argument) => argument.name)
        if (missing.length > 0) {
          return yield* invalidParams(`Missing required arguments for prompt ${name}: ${missing.join(", ")}`)
        }
        const result = yield* withServices(prompt.handler(args.value)).pipe(
          Effect.catchTag("InputError", (error) => Effect.fail(inputFailure(request, error)))
        )
        const body: JsonObject = typeof result === "string" ?
          {
            ...(prompt.definition.description !== undefined ? { description: prompt.definition.description } : {}),
            messages: [{ role: "user", content: textContent(result) }]
          } :
          {
            ...(result.description !== undefined ? { description: result.description } : {}),
            messages: result.messages
          }
        return finish(request, body, false)
      })

    const complete = (request: RequestInfo) =>
      Effect.gen(function*() {
        yield* requireCapability(hasCompletions, request.method)
        const ref = record(request.params.ref)
        const argument = record(request.params.argument)
        if (ref === undefined || argument === undefined) return yield* invalidParams("Missing ref or argument")
        const argumentName = argument.name
        const value = argument.value
        if (typeof argumentName !== "string" || typeof value !== "string") {
          return yield* invalidParams("Invalid argument")
        }
        const context = stringRecord(record(request.params.context)?.arguments)
        if (Option.isNone(context)) return yield* invalidParams("Invalid context arguments")
        let completer: McpServer.Completer<unknown> | undefined
        if (ref.type === "ref/prompt" && typeof ref.name === "string") {
          const prompt = promptsByName.get(ref.name)
          if (prompt === undefined) return yield* invalidParams(`Unknown prompt: ${ref.name}`)
          completer = prompt.complete[argumentName]
        } else if (ref.type === "ref/resource" && typeof ref.uri === "string") {
          const uri = ref.uri
          const found = templates.find(({ template }) => template.definition.uriTemplate === uri)
          if (found === undefined) return yield* invalidParams(`Unknown resource template: ${uri}`)
          completer = found.template.complete[argumentName]
        } else {
          return yield* invalidParams("Invalid ref")
        }
        const values = completer === undefined ? [] : yield* withServices(completer(value, context.value))
        return finish(request, {
          completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 }
        }, false)
      })

    const common = (request: RequestInfo): Effect.Effect<JsonObject, McpError.McpError, model.RequestContext> => {
      switch (request.method) {
        case "tools/list":
          return Effect.zipRight(
            requireCapability(hasTools, request.method),
            listResult(request, "tools", config.tools.map((tool) => tool.definition))
          )
        case "tools/call":
          return taskOrCall(request)
        case "tasks/get":
        case "tasks/result":
        case "tasks/cancel":
        case "tasks/list":
        case "tasks/update":
          return serverTasks.handle(request.era, request.method, request.params) ??
            Effect.fail(methodNotFound(request.method))
        case "resources/list":
          return Effect.zipRight(
            requireCapability(hasResources, request.method),
            listResult(request, "resources", config.resources.map((resource) => resource.definition))
          )
        case "resources/templates/list":
          return Effect.zipRight(
            requireCapability(hasResources, request.method),
            listResult(
              request,
              "resourceTemplates",
              config.resourceTemplates.map((template) => template.definition)
            )
          )
        case "resources/read":
          return readResource(request)
        case "prompts/list":
          return Effect.zipRight(
            requireCapability(hasPrompts, request.method),
            listResult(request, "prompts", config.prompts.map((prompt) => prompt.definition))
          )
        case "prompts/get":
          return getPrompt(request)
        case "completion/complete":
          return complete(request)
        default:
          return Effect.fail(methodNotFound(request.method))
      }
    }

    // -------------------------------------------------------------------------------------------------------
    // Connections

    const connect = (send: McpServer.Send) =>
      Effect.gen(function*() {
        const connection = yield* Ref.updateAndGet(connectionIds, (n) => n + 1)
        const inflight = yield* FiberMap.make<McpSchema.RequestId>()
        let legacy: LegacySession | undefined
        let legacyLevel: LogThreshold = "all"
        // Legacy requests this connection sent the client, awaiting its answer.
        const outgoing = new Map<McpSchema.RequestId, {
          readonly method: model.InputMethod
          readonly answer: Deferred.Deferred<JsonObject, model.InputError>
        }>()
        let outgoingIds = 0

        const notify = (method: string, params: JsonObject) => send({ jsonrpc: "2.0", method, params })

        // what this connection's client asked to hear about: its legacy resource subscriptions, its modern listens
        const subscribed = new Set<string>()
        const listens = new Map<McpSchema.RequestId, Listen.ListenFilter>()
        const deliver = (change: model.Change): Effect.Effect<void> =>
          Effect.suspend(() => {
            const { method, params } = Listen.changeNotification(change)
            const tagged = [...listens].filter(([, filter]) => Listen.wants(filter, change)).map(([id]) =>
              notify(method, { ...params, _meta: { [McpSchema.MetaKeys.subscriptionId]: id } })
            )
            const plain = legacy !== undefined &&
                (change._tag === "ListChanged" || subscribed.has(change.uri))
              ? [notify(method, params)]
              : []
            return Effect.all([...plain, ...tagged], { discard: true })
          })
        yield* Effect.acquireRelease(
          Effect.sync(() => audiences.add(deliver)),
          () => Effect.sync(() => audiences.delete(deliver))
        )

        const listen = Listen.makeListen({
          offers: { tools: hasTools, prompts: hasPrompts, resources: hasResources },
          tasks: serverTasks,
          extensionId: ServerTasks.EXTENSION_ID,
          notify,
          listens
        })

        /** Legacy: a request to the client, awaited; interrupting the handler cancels it. */
        const askClient = (request: RequestInfo) => (method: model.InputMethod, params: JsonObject) =>
          Effect.suspend(() => {
            const problem = Input.inputProblem(method, params, request.version, request.clientCapabilities)
            if (problem !== undefined) return Effect.fail(problem)
            return Effect.acquireUseRelease(
              Effect.map(Deferred.make<JsonObject, model.InputError>(), (answer) => {
                const id = ++outgoingIds
                outgoing.set(id, { method, answer })
                return { id, answer }
              }),
              ({ answer, id }) =>
                Effect.zipRight(
                  send({
                    jsonrpc: "2.0",
                    id,
                    method,
                    params: Input.inputParams(method, params, request.version, () => `${info.name}-${connection}-${id}`)
                  }),
                  Deferred.await(answer)
                ),
              ({ id }, exit) =>
                Effect.suspend(() => {
                  outgoing.delete(id)
                  return Exit.isInterrupted(exit)
                    ? notify("notifications/cancelled", { requestId: id, reason: "The request was cancelled" })
                    : Effect.void
                })
            )
          })

        const answerFromClient = (message: McpSchema.JsonRpcResponse): Effect.Effect<void> => {
          if (message.id === null) return Effect.void
          const waiting = outgoing.get(message.id)
          if (waiting === undefined) return Effect.void
          outgoing.delete(message.id)
          const { answer, method } = waiting
          if ("error" in message) {
            return Deferred.fail(
              answer,
              new model.InputError({
                method,
                reason: "Refused",
                detail: `the client answered with error ${message.error.code}: ${message.error.message}`,
                code: message.error.code
              })
            )
          }
          const result = record(message.result)
          return result !== undefined ? Deferred.succeed(answer, result) : Deferred.fail(
            answer,
            new model.InputError({
              method,
              reason: "InvalidResponse",
              detail: "the client's answer is not an object"
            })
          )
        }

        /** Modern: the answer from this round or an earlier one, or stop the handler and ask (MRTR). */
        const askInRound = (request: RequestInfo, round: Input.InputRound | undefined) =>
        (
          method: model.InputMethod,
          params: JsonObject
        ): Effect.Effect<JsonObject, model.InputError> =>
          Effect.suspend(() => {
            if (round === undefined) {
              return Effect.fail(
                new model.InputError({
                  method,
                  reason: "Unsupported",
                  detail: `a modern ${request.method} request cannot ask the client for input (only tools/call, ` +
                    "prompts/get and resources/read can)"
                })
              )
            }
            // Keys follow the order of the handler's calls, which is the same on every run.
            const key = `${Input.INPUT_KEYS[method]}_${++round.calls}`
            const known = round.known.get(key)
            if (known !== undefined) {
              round.used[key] = known
              return Effect.succeed(known)
            }
            const problem = Input.inputProblem(method, params, request.version, request.clientCapabilities)
            if (problem !== undefined) return Effect.fail(problem)
            round.needed[key] = { method, params: Input.inputParams(method, params, request.version, () => key) }
            return Effect.zipRight(Deferred.succeed(round.blocked, undefined), Effect.never)
          })

        /** The round of a modern request that may need input: what the client answered so far. */
        const startRound = (request: RequestInfo): Effect.Effect<Input.InputRound | undefined, McpError.McpError> =>
          Effect.gen(function*() {
            if (request.era !== "modern" || !Input.INPUT_REQUESTS.has(request.method)) return undefined
            const known = new Map<string, JsonObject>()
            const target = Input.targetOf(request.params)
            if (request.params.requestState !== undefined) {
              const state = Input.decodeRequestState(request.params.requestState)
              if (Either.isLeft(state)) return yield* invalidParams("Invalid requestState")
              if (state.right.method !== request.method || state.right.target !== target) {
                return yield* invalidParams("The requestState belongs to another request")
              }
              for (const [key, answer] of Object.entries(state.right.answers)) known.set(key, answer)
            }
            if (request.params.inputResponses !== undefined) {
              const responses = Input.decodeAnswers(request.params.inputResponses)
              if (Either.isLeft(responses)) return yield* invalidParams("Invalid inputResponses")
              for (const [key, answer] of Object.entries(responses.right)) known.set(key, answer)
            }
            return { known, used: {}, needed: {}, blocked: yield* Deferred.make<void>(), calls: 0 }
          })

        const inputRequired = (request: RequestInfo, round: Input.InputRound): JsonObject => ({
          resultType: "input_required",
          inputRequests: { ...round.needed },
          requestState: Input.encodeRequestState({
            v: 1,
            method: request.method,
            target: Input.targetOf(request.params),
            answers: { ...round.used }
          }),
          _meta: { [McpSchema.MetaKeys.serverInfo]: info }
        })

        const requestContext = (
          request: RequestInfo,
          input: model.RequestContext["Type"]["input"]
        ): model.RequestContext["Type"] => {
          const progressToken = isProgressToken(request.meta.progressToken) ? request.meta.progressToken : undefined
          return {
            connection,
            requestId: request.id,
            method: request.method,
            era: request.era,
            protocolVersion: request.version,
            clientCapabilities: request.clientCapabilities,
            clientInfo: request.clientInfo,
            progressToken,
            meta: request.meta,
            publish,
            progress: (value, details) =>
              progressToken === undefined ? Effect.void : notify("notifications/progress", {
                progressToken,
                progress: value,
                ...(details?.total !== undefined ? { total: details.total } : {}),
                ...(details?.message !== undefined ? { message: details.message } : {})
              }),
            log: (level, data, logger) =>
              passes(request.era === "legacy" ? legacyLevel : request.logThreshold, level) ?
                notify("notifications/message", { level, data, ...(logger !== undefined ? { logger } : {}) }) :
                Effect.void,
            input
          }
        }

        const run = (request: RequestInfo): Effect.Effect<JsonObject, McpError.McpError> => {
          if (request.era === "legacy") {
            return Effect.provideService(
              common(request),
              model.RequestContext,
              requestContext(request, askClient(request))
            )
          }
          return Effect.flatMap(startRound(request), (round) => {
            const handled = Effect.provideService(
              common(request),
              model.RequestContext,
              requestContext(request, askInRound(request, round))
            )
            if (round === undefined) return handled
            // Once the handler waits for an answer it does not have, the request answers input_required and the
            // handler is interrupted; the yield lets inputs asked for concurrently join the same round.
            const blocked = Deferred.await(round.blocked).pipe(
              Effect.zipRight(Effect.yieldNow()),
              Effect.map(() => inputRequired(request, round))
            )
            return Effect.raceFirst(handled, blocked)
          })
        }

        const initialize = (params: JsonObject): Effect.Effect<JsonObject, McpError.McpError> => {
          const requested = params.protocolVersion
          if (legacyVersions.length === 0) {
            return Effect.fail(
              invalidParams("Unsupported protocol version", { supported: modernVersions, requested })
            )
          }
          if (typeof requested !== "string") return Effect.fail(invalidParams("Missing protocolVersion"))
          const version = legacyVersions.find((candidate) => candidate === requested) ?? legacyVersions[0]
          legacy = {
            version,
            clientCapabilities: record(params.capabilities) ?? {},
            clientInfo: Option.getOrUndefined(decodeImplementation(params.clientInfo))
          }
          return Effect.succeed({
            protocolVersion: version,
            capabilities,
            serverInfo: info,
            ...(options.instructions !== undefined ? { instructions: options.instructions } : {})
          })
        }

        const modern = (
          request: McpSchema.JsonRpcRequest,
          params: JsonObject,
          meta: JsonObject | undefined
        ): Effect.Effect<JsonObject, McpError.McpError> => {
          const version = meta?.[McpSchema.MetaKeys.protocolVersion]
          const clientCapabilities = record(meta?.[McpSchema.MetaKeys.clientCapabilities])
          if (meta === undefined || typeof version !== "string" || clientCapabilities === undefined) {
            return Effect.fail(invalidParams(
              `Missing required _meta fields: ${McpSchema.MetaKeys.protocolVersion} and ` +
                `${McpSchema.MetaKeys.clientCapabilities}`
            ))
          }
          const supported = modernVersions.find((candidate) => candidate === version)
          if (supported === undefined) {
            return Effect.fail(
              rpcError(McpSchema.ErrorCode.UnsupportedProtocolVersion, "Unsupported protocol version", {
                supported: supportedVersions,
                requested: version
              })
            )
          }
          const logLevel = meta[McpSchema.MetaKeys.logLevel]
          if (logLevel !== undefined && !isLoggingLevel(logLevel)) {
            return Effect.fail(invalidParams(`Invalid log level: ${String(logLevel)}`))
          }
          const requestInfo: RequestInfo = {
            id: request.id,
            method: request.method,
            params,
            meta,
            era: "modern",
            version: supported,
            clientCapabilities,
            clientInfo: Option.getOrUndefined(decodeImplementation(meta[McpSchema.MetaKeys.clientInfo])),
            logThreshold: logLevel ?? "none",
            notify
          }
          if (request.method === "server/discover") {
            return Effect.succeed(finish(requestInfo, {
              supportedVersions,
              capabilities,
              ...(options.instructions !== undefined ? { instructions: options.instructions } : {})
            }, true))
          }
          if (request.method === "subscriptions/listen") return listen(request.id, params, clientCapabilities)
          return run(requestInfo)
        }

        const legacyRequest = (
          request: McpSchema.JsonRpcRequest,
          params: JsonObject,
          meta: JsonObject | undefined
        ): Effect.Effect<JsonObject, McpError.McpError> => {
          if (request.method === "ping") return Effect.succeed({})
          if (!LEGACY_METHODS.has(request.method)) return Effect.fail(methodNotFound(request.method))
          if (legacy === undefined) {
            return Effect.fail(
              eras === "legacy" ?
                rpcError(McpSchema.ErrorCode.InvalidRequest, "Server not initialized") :
                invalidParams(
                  `Missing required _meta field ${McpSchema.MetaKeys.protocolVersion} ` +
                    "(clients of the 2025 revisions must send initialize first)"
                )
            )
          }
          if (request.method === "logging/setLevel") {
            const level = params.level
            if (!isLoggingLevel(level)) return Effect.fail(invalidParams("Invalid log level"))
            legacyLevel = level
            return Effect.succeed({})
          }
          if (request.method === "resources/subscribe" || request.method === "resources/unsubscribe") {
            if (!hasResources) return Effect.fail(methodNotFound(request.method))
            const uri = params.uri
            if (typeof uri !== "string") return Effect.fail(invalidParams("Missing uri"))
            if (request.method === "resources/subscribe") subscribed.add(uri)
            else subscribed.delete(uri)
            return Effect.succeed({})
          }
          return run({
            id: request.id,
            method: request.method,
            params,
            meta: meta ?? {},
            era: "legacy",
            version: legacy.version,
            clientCapabilities: legacy.clientCapabilities,
            clientInfo: legacy.clientInfo,
            logThreshold: legacyLevel,
            notify
          })
        }

        const route = (request: McpSchema.JsonRpcRequest) => {
          const params = record(request.params) ?? {}
          const meta = record(params._meta)
          if (request.method === "initialize") return initialize(params)
          const isModern = eras === "modern" ||
            (eras === "both" &&
              (request.method === "server/discover" ||
                (meta !== undefined && McpSchema.MetaKeys.protocolVersion in meta)))
          return isModern ? modern(request, params, meta) : legacyRequest(request, params, meta)
        }

        const answer = (request: McpSchema.JsonRpcRequest): Effect.Effect<void> =>
          Effect.suspend(() => route(request)).pipe(
            Effect.map((result): McpSchema.JsonRpcMessage => ({ jsonrpc: "2.0", id: request.id, result })),
            Effect.catchAll((error) =>
              Effect.succeed<McpSchema.JsonRpcMessage>({
                jsonrpc: "2.0",
                id: request.id,
                error: {
                  code: error.code,
                  message: error.message,
                  ...(error.data !== undefined ? { data: error.data } : {})
                }
              })
            ),
            Effect.catchAllDefect((defect) =>
              Effect.as(
                Effect.logError("request handler died", defect).pipe(Effect.annotateLogs({ method: request.method })),
                {
                  jsonrpc: "2.0",
                  id: request.id,
                  error: { code: McpSchema.ErrorCode.InternalError, message: "Internal error" }
                } satisfies McpSchema.JsonRpcMessage
              )
            ),
            Effect.flatMap(send),
            Effect.onInterrupt(() => config.onInterrupted({ connection, id: request.id, method: request.method })),
            Effect.withSpan(`McpServer ${request.method}`, {
              kind: "server",
              attributes: { "rpc.system": "jsonrpc", "rpc.method": request.method, "mcp.connection": connection }
            })
          )

        const handle = (message: McpSchema.JsonRpcMessage): Effect.Effect<void> =>
          Effect.gen(function*() {
            const method = "method" in message ? message.method : undefined
            const id = "id" in message && message.id !== null ? message.id : undefined
            yield* config.onReceived({
              connection,
              message,
              method,
              id,
              params: "params" in message ? message.params : undefined
            })
            if (McpSchema.isRequest(message)) {
              if (yield* FiberMap.has(inflight, message.id)) {
                return yield* send({
                  jsonrpc: "2.0",
                  id: message.id,
                  error: { code: McpSchema.ErrorCode.InvalidRequest, message: "Duplicate request id" }
                })
              }
              // Requests that change the connection's state are answered in arrival order, before the next
              // message is looked at; every other request runs in its own fiber and can be cancelled.
              if (STATEFUL_METHODS.has(message.method)) return yield* answer(message)
              yield* FiberMap.run(inflight, message.id, answer(message))
              return
            }
            if (McpSchema.isResponse(message)) return yield* answerFromClient(message)
            if (McpSchema.isNotification(message) && message.method === "notifications/cancelled") {
              const requestId = record(message.params)?.requestId
              if (isRequestId(requestId)) yield* FiberMap.remove(inflight, requestId)
            }
            // Other notifications (initialized, roots/list_changed) need no action.
          })

        return {
          id: connection,
          handle,
          cancel: (id) => FiberMap.remove(inflight, id),
          awaitIdle: FiberMap.awaitEmpty(inflight).pipe(Effect.catchAllCause(() => Effect.void))
        } satisfies McpServer.Connection
      })

    return { info, eras, supportedVersions, capabilities, connect, publish }
  })
