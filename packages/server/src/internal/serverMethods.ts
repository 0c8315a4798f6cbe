/**
 * The methods both eras share, dispatched by name: the list methods (paginated), `tools/call` (run as a task when
 * the tool and the client want one), `resources/read`, `prompts/get`, `completion/complete` and the `tasks/*`
 * methods, and the shape of their results (`finish` adds the modern result fields). Also what a server offers,
 * which follows from its definitions.
 *
 * @internal
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as McpError from "@conduit-mcp/client/McpError"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as McpServer from "../McpServer.js"
import type * as Definitions from "./serverDefinitions.js"
import * as model from "./serverModel.js"
import {
  invalidParams,
  methodNotFound,
  record,
  type RequestInfo,
  rpcError,
  textContent
} from "./serverRequest.js"
import * as ServerTasks from "./serverTasks.js"
import * as UriTemplate from "./serverUriTemplate.js"

type JsonObject = model.JsonObject

/**
 * What a server serves.
 *
 * @internal
 */
export interface Served {
  readonly tools: ReadonlyArray<Definitions.Tool<unknown>>
  readonly resources: ReadonlyArray<Definitions.Resource<unknown>>
  readonly resourceTemplates: ReadonlyArray<Definitions.ResourceTemplate<unknown>>
  readonly prompts: ReadonlyArray<Definitions.Prompt<unknown>>
}

/**
 * Which features a server offers, from what it serves.
 *
 * @internal
 */
export interface Offers {
  readonly tools: boolean
  readonly resources: boolean
  readonly prompts: boolean
  readonly completions: boolean
  readonly tasks: boolean
}

/** @internal */
export const offersOf = (served: Served): Offers => ({
  tools: served.tools.length > 0,
  resources: served.resources.length > 0 || served.resourceTemplates.length > 0,
  prompts: served.prompts.length > 0,
  completions: served.prompts.some((prompt) => Object.keys(prompt.complete).length > 0) ||
    served.resourceTemplates.some((template) => Object.keys(template.complete).length > 0),
  tasks: served.tools.some((tool) =>
    tool.definition.execution?.taskSupport === "optional" || tool.definition.execution?.taskSupport === "required"
  )
})

/**
 * The capabilities a server declares for what it offers.
 *
 * @internal
 */
export const capabilitiesOf = (offers: Offers): McpSchema.ServerCapabilities => ({
  ...(offers.tools ? { tools: { listChanged: true } } : {}),
  ...(offers.tasks ?
    {
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      extensions: { [ServerTasks.EXTENSION_ID]: {} }
    } :
    {}),
  ...(offers.resources ? { resources: { subscribe: true, listChanged: true } } : {}),
  ...(offers.prompts ? { prompts: { listChanged: true } } : {}),
  ...(offers.completions ? { completions: {} } : {}),
  logging: {}
})

/**
 * The methods of one server: its definitions, indexed, and what their results need.
 *
 * @internal
 */
export interface Methods {
  readonly served: Served
  readonly offers: Offers
  readonly info: McpSchema.Implementation
  readonly cacheHints: McpServer.CacheHints
  readonly pageSize: number | undefined
  readonly serverTasks: ServerTasks.ServerTasks
  readonly toolsByName: ReadonlyMap<string, Definitions.Tool<unknown>>
  readonly promptsByName: ReadonlyMap<string, Definitions.Prompt<unknown>>
  readonly templates: ReadonlyArray<{
    readonly template: Definitions.ResourceTemplate<unknown>
    readonly matcher: UriTemplate.UriTemplate
  }>
  /** Provides the services `make` captured; RequestContext is provided per request. */
  readonly withServices: <A, E>(effect: Effect.Effect<A, E, unknown>) => Effect.Effect<A, E, model.RequestContext>
}

/** @internal */
export const make = (options: {
  readonly served: Served
  readonly offers: Offers
  readonly info: McpSchema.Implementation
  readonly cacheHints: McpServer.CacheHints
  readonly pageSize: number | undefined
  readonly serverTasks: ServerTasks.ServerTasks
  /** The services the handlers need, captured by `make`. */
  readonly context: Context.Context<never>
}): Methods => ({
  served: options.served,
  offers: options.offers,
  info: options.info,
  cacheHints: options.cacheHints,
  pageSize: options.pageSize,
  serverTasks: options.serverTasks,
  toolsByName: new Map(options.served.tools.map((tool) => [tool.definition.name, tool])),
  promptsByName: new Map(options.served.prompts.map((prompt) => [prompt.definition.name, prompt])),
  templates: options.served.resourceTemplates.map((template) => ({
    template,
    matcher: UriTemplate.parse(template.definition.uriTemplate)
  })),
  // `make` captured every service the handlers need except RequestContext, which each request provides.
  withServices: <A, E>(effect: Effect.Effect<A, E, unknown>) =>
    Effect.provide(effect, options.context) as Effect.Effect<A, E, model.RequestContext>
})

// ---------------------------------------------------------------------------------------------------------------
// Results

/**
 * A result as the request's era wants it: modern results say they are complete, carry the server's info and,
 * when cacheable, the cache hints.
 *
 * @internal
 */
export const finish = (methods: Methods, request: RequestInfo, result: JsonObject, cacheable: boolean): JsonObject => {
  if (request.era === "legacy") return result
  return {
    ...result,
    resultType: "complete",
    ...(cacheable ? { ttlMs: methods.cacheHints.ttlMs, cacheScope: methods.cacheHints.cacheScope } : {}),
    _meta: { ...record(result._meta), [McpSchema.MetaKeys.serverInfo]: methods.info }
  }
}

const encodeCursor = (list: string, offset: number): string => btoa(`${list}#${offset}`)

const paginate = <A>(
  methods: Methods,
  list: string,
  items: ReadonlyArray<A>,
  cursor: unknown
): Effect.Effect<{ readonly page: ReadonlyArray<A>; readonly nextCursor: string | undefined }, McpError.McpError> =>
  Effect.suspend(() => {
    const { pageSize } = methods
    let offset = 0
    if (cursor !== undefined) {
      const decoded = typeof cursor === "string" ? Option.liftThrowable(atob)(cursor) : Option.none()
      const match = Option.flatMap(decoded, (text) => Option.fromNullishOr(/^(.+)#(\d+)$/.exec(text)))
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
  methods: Methods,
  request: RequestInfo,
  key: string,
  items: ReadonlyArray<A>
): Effect.Effect<JsonObject, McpError.McpError> =>
  Effect.map(
    paginate(methods, request.method, items, request.params.cursor),
    ({ nextCursor, page }) =>
      finish(methods, request, { [key]: page, ...(nextCursor !== undefined ? { nextCursor } : {}) }, true)
  )

const toolResult = (result: Definitions.ToolResult): JsonObject =>
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
  result: Definitions.ResourceResult
): ReadonlyArray<McpSchema.ResourceContents> =>
  typeof result === "string" ? [{ uri, text: result, ...(mimeType !== undefined ? { mimeType } : {}) }] : result

// ---------------------------------------------------------------------------------------------------------------
// Methods

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

const callTool = (methods: Methods, request: RequestInfo) =>
  Effect.gen(function*() {
    yield* requireCapability(methods.offers.tools, request.method)
    const name = request.params.name
    if (typeof name !== "string") return yield* invalidParams("Missing tool name")
    const tool = methods.toolsByName.get(name)
    if (tool === undefined) return yield* invalidParams(`Unknown tool: ${name}`)
    const result = yield* methods.withServices(tool.handler(request.params.arguments)).pipe(
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
      Effect.catchDefect((defect) =>
        Effect.as(
          Effect.logError("tool handler died", defect).pipe(Effect.annotateLogs({ tool: McpError.printable(name) })),
          { content: [textContent(`Tool ${name} failed: internal error`)], isError: true }
        )
      )
    )
    return finish(methods, request, result, false)
  })

/** A tool call, run as a task when the tool and the client want one (2025-11-25 or 2026-07-28). */
const taskOrCall = (methods: Methods, request: RequestInfo) =>
  Effect.suspend(() => {
    const { serverTasks } = methods
    const name = request.params.name
    const tool = typeof name === "string" ? methods.toolsByName.get(name) : undefined
    const verdict = serverTasks.decide(
      tool?.definition.execution?.taskSupport,
      request.era,
      request.params,
      request.clientCapabilities
    )
    if (verdict === "plain") return callTool(methods, request)
    if (verdict !== "task") return Effect.fail(verdict)
    return model.RequestContext.use((context) =>
      serverTasks.start(
        request.era,
        request.params,
        request.era === "legacy"
          ? { input: context.input, status: (task) => request.notify("notifications/tasks/status", task) }
          : undefined,
        // a task outlives its request, and may outlive its connection: what it can no longer send is dropped
        // (sending on a closed connection would interrupt the task)
        ({ input, progress }) =>
          Effect.provideService(callTool(methods, request), model.RequestContext, {
            ...context,
            input,
            progress: (value, details) =>
              Effect.catchCause((progress ?? context.progress)(value, details), () => Effect.void),
            log: (level, data, logger) => Effect.catchCause(context.log(level, data, logger), () => Effect.void)
          })
      ))
  })

const readResource = (methods: Methods, request: RequestInfo) =>
  Effect.gen(function*() {
    yield* requireCapability(methods.offers.resources, request.method)
    const uri = request.params.uri
    if (typeof uri !== "string") return yield* invalidParams("Missing resource uri")
    const fixed = methods.served.resources.find((resource) => resource.definition.uri === uri)
    if (fixed !== undefined) {
      const result = yield* methods.withServices(fixed.read).pipe(
        Effect.catchTag("InputError", (error) => Effect.fail(inputFailure(request, error)))
      )
      return finish(methods, request, { contents: resourceContents(uri, fixed.definition.mimeType, result) }, true)
    }
    for (const { matcher, template } of methods.templates) {
      const variables = matcher.match(uri)
      if (Option.isSome(variables)) {
        const result = yield* methods.withServices(template.read(uri, variables.value)).pipe(
          Effect.catchTag("InputError", (error) => Effect.fail(inputFailure(request, error)))
        )
        return finish(
          methods,
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
  if (!Predicate.isObject(value)) return Option.none()
  const out: Record<string, string> = {}
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== "string") return Option.none()
    out[key] = entry
  }
  return Option.some(out)
}

const getPrompt = (methods: Methods, request: RequestInfo) =>
  Effect.gen(function*() {
    yield* requireCapability(methods.offers.prompts, request.method)
    const name = request.params.name
    if (typeof name !== "string") return yield* invalidParams("Missing prompt name")
    const prompt = methods.promptsByName.get(name)
    if (prompt === undefined) return yield* invalidParams(`Unknown prompt: ${name}`)
    const args = stringRecord(request.params.arguments)
    if (Option.isNone(args)) return yield* invalidParams("Prompt arguments must be strings")
    const missing = (prompt.definition.arguments ?? [])
      .filter((argument) => argument.required === true && args.value[argument.name] === undefined)
      .map((argument) => argument.name)
    if (missing.length > 0) {
      return yield* invalidParams(`Missing required arguments for prompt ${name}: ${missing.join(", ")}`)
    }
    const result = yield* methods.withServices(prompt.handler(args.value)).pipe(
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
    return finish(methods, request, body, false)
  })

const complete = (methods: Methods, request: RequestInfo) =>
  Effect.gen(function*() {
    yield* requireCapability(methods.offers.completions, request.method)
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
    let completer: Definitions.Completer<unknown> | undefined
    if (ref.type === "ref/prompt" && typeof ref.name === "string") {
      const prompt = methods.promptsByName.get(ref.name)
      if (prompt === undefined) return yield* invalidParams(`Unknown prompt: ${ref.name}`)
      completer = prompt.complete[argumentName]
    } else if (ref.type === "ref/resource" && typeof ref.uri === "string") {
      const uri = ref.uri
      const found = methods.templates.find(({ template }) => template.definition.uriTemplate === uri)
      if (found === undefined) return yield* invalidParams(`Unknown resource template: ${uri}`)
      completer = found.template.complete[argumentName]
    } else {
      return yield* invalidParams("Invalid ref")
    }
    const values = completer === undefined ? [] : yield* methods.withServices(completer(value, context.value))
    return finish(methods, request, {
      completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 }
    }, false)
  })

/**
 * Answers a request of a method both eras share (the request context is provided by the caller).
 *
 * @internal
 */
export const common = (
  methods: Methods,
  request: RequestInfo
): Effect.Effect<JsonObject, McpError.McpError, model.RequestContext> => {
  const { offers, served } = methods
  switch (request.method) {
    case "tools/list":
      return Effect.andThen(
        requireCapability(offers.tools, request.method),
        listResult(methods, request, "tools", served.tools.map((tool) => tool.definition))
      )
    case "tools/call":
      return taskOrCall(methods, request)
    case "tasks/get":
    case "tasks/result":
    case "tasks/cancel":
    case "tasks/list":
    case "tasks/update":
      return methods.serverTasks.handle(request.era, request.method, request.params) ??
        Effect.fail(methodNotFound(request.method))
    case "resources/list":
      return Effect.andThen(
        requireCapability(offers.resources, request.method),
        listResult(methods, request, "resources", served.resources.map((resource) => resource.definition))
      )
    case "resources/templates/list":
      return Effect.andThen(
        requireCapability(offers.resources, request.method),
        listResult(
          methods,
          request,
          "resourceTemplates",
          served.resourceTemplates.map((template) => template.definition)
        )
      )
    case "resources/read":
      return readResource(methods, request)
    case "prompts/list":
      return Effect.andThen(
        requireCapability(offers.prompts, request.method),
        listResult(methods, request, "prompts", served.prompts.map((prompt) => prompt.definition))
      )
    case "prompts/get":
      return getPrompt(methods, request)
    case "completion/complete":
      return complete(methods, request)
    default:
      return Effect.fail(methodNotFound(request.method))
  }
}
