/**
 * A small MCP server: tools, resources, resource templates and prompts defined as Effect handlers, served in
 * both protocol eras (the 2025 `initialize` handshake and 2026-07-28 discovery). It backs the in-process
 * transport, the stdio fixture servers of the tests and the demos.
 *
 * The core is transport-agnostic: `server.connect(send)` opens one connection with its own state (the legacy
 * handshake, the log level) and `connection.handle(message)` processes one inbound message. Each request runs
 * in its own fiber, owned by the connection's Scope; `notifications/cancelled` or `connection.cancel(id)`
 * interrupts it and no response is sent. `serve` runs a connection over newline-delimited JSON-RPC byte
 * streams (stdio).
 *
 * A handler can ask the client for input with `elicit`, `elicitUrl`, `sample` and `listRoots`. In the legacy era
 * that is a request to the client on the same connection, awaited (interrupting the handler cancels it). In the
 * modern era (2026-07-28) servers send no requests: the call answers `input_required`, the client retries it
 * with the answers, and the handler runs again from the start, getting the answers it already has at once.
 * The client's capabilities are checked first (legacy: those of `initialize`; modern: those of the request).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 * import * as McpServer from "@conduit-mcp/server/McpServer"
 *
 * const echo = McpServer.tool({
 *   name: "echo",
 *   parameters: Schema.Struct({ text: Schema.String }),
 *   handler: ({ text }) => Effect.succeed(text)
 * })
 * const server = McpServer.make({ name: "demo", version: "1.0.0", tools: [echo] })
 * ```
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as ParseResult from "effect/ParseResult"
import type * as ElicitationHandler from "@conduit-mcp/client/ElicitationHandler"
import type * as McpError from "@conduit-mcp/client/McpError"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as RootsProvider from "@conduit-mcp/client/RootsProvider"
import * as internal from "./internal/serverConnection.js"
import * as model from "./internal/serverModel.js"
import * as stdio from "./internal/serverStdio.js"

// ---------------------------------------------------------------------------------------------------------------
// Models

/**
 * A JSON object (a JSON Schema, annotations, `_meta`).
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = model.JsonObject

/**
 * A change a server tells its clients about (see the constructors {@link Change}).
 *
 * @since 0.1.0
 * @category models
 */
export type Change = model.Change

/**
 * Constructors for {@link Change}: `ListChanged({ list })`, `ResourceUpdated({ uri })`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Change = model.Change

/**
 * The requests a handler can send the client.
 *
 * @since 0.1.0
 * @category models
 */
export type InputMethod = model.InputMethod

/**
 * A tool failed in a way the model should see: the call answers with `isError: true` and this message as
 * text content (not a JSON-RPC error). Fail with `McpError.McpError` instead for a JSON-RPC error.
 *
 * @since 0.1.0
 * @category errors
 */
export const ToolError = model.ToolError

/**
 * @since 0.1.0
 * @category errors
 */
export type ToolError = model.ToolError

/**
 * A handler asked the client for input (elicitation, sampling, roots) and could not get it (`reason`:
 * `CapabilityMissing`, `Unsupported`, `Refused`, `InvalidResponse`).
 *
 * @since 0.1.0
 * @category errors
 */
export const InputError = model.InputError

/**
 * @since 0.1.0
 * @category errors
 */
export type InputError = model.InputError

/**
 * What a handler knows about the request it serves, and how it reports progress and logs.
 *
 * @since 0.1.0
 * @category tags
 */
export const RequestContext = model.RequestContext

/**
 * @since 0.1.0
 * @category tags
 */
export type RequestContext = model.RequestContext

/**
 * Which protocol eras the server speaks.
 *
 * @since 0.1.0
 * @category models
 */
export type Eras = "both" | "legacy" | "modern"


/**
 * Cache hints put on cacheable modern results (`server/discover`, the lists, `resources/read`).
 *
 * @since 0.1.0
 * @category models
 */
export interface CacheHints {
  readonly ttlMs: number
  readonly cacheScope: "public" | "private"
}

/**
 * Server options.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly name: string
  readonly version: string
  readonly title?: string | undefined
  readonly instructions?: string | undefined
  /** Default `"both"`. */
  readonly eras?: Eras | undefined
  /** Items per page of the list methods; unset means one page holding everything. */
  readonly pageSize?: number | undefined
  /** Default `{ ttlMs: 0, cacheScope: "public" }`. */
  readonly cacheHints?: CacheHints | undefined
  /**
   * Keep a record of every inbound message (`received`) and interrupted handler (`interrupted`), for tests.
   * Default false: a server that serves for long keeps nothing (the record grows with every message).
   */
  readonly record?: boolean | undefined
  /** How tools that run as tasks (`execution.taskSupport`) are kept; see {@link TaskOptions}. */
  readonly tasks?: TaskOptions | undefined
}

/**
 * Tasks: a tool whose `execution.taskSupport` is `optional` or `required` runs in the background when the client
 * asks for it (2025-11-25 `params.task`) or declares the `io.modelcontextprotocol/tasks` extension (2026-07-28),
 * and its result is kept for the task's time to live. The server then declares both (`tasks` with
 * `requests.tools.call`, `list`, `cancel`; the extension).
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskOptions {
  /** The polling interval suggested to clients (default 1,000 ms). */
  readonly pollIntervalMs?: number | undefined
  /** The time to live of a task when the client asks for none (default 300,000 ms). */
  readonly ttlMs?: number | undefined
  /** The longest time to live a client may ask for (default 3,600,000 ms). */
  readonly maxTtlMs?: number | undefined
}

/**
 * What a tool handler returns: a string is one text content block.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolResult = string | {
  readonly content: ReadonlyArray<McpSchema.ContentBlock>
  readonly structuredContent?: unknown
  readonly isError?: boolean | undefined
  readonly _meta?: JsonObject | undefined
}

/**
 * What reading a resource returns: a string is one text content for the resource's URI.
 *
 * @since 0.1.0
 * @category models
 */
export type ResourceResult = string | ReadonlyArray<McpSchema.ResourceContents>

/**
 * One message of a prompt.
 *
 * @since 0.1.0
 * @category models
 */
export type PromptMessage = typeof McpSchema.PromptMessage.Type

/**
 * What a prompt handler returns: a string is one user text message.
 *
 * @since 0.1.0
 * @category models
 */
export type PromptResult = string | {
  readonly description?: string | undefined
  readonly messages: ReadonlyArray<PromptMessage>
}

/**
 * Suggests values for a prompt argument or a template variable. `context` holds the arguments the client
 * already resolved. At most 100 values are sent.
 *
 * @since 0.1.0
 * @category models
 */
export type Completer<R> = (
  value: string,
  context: Readonly<Record<string, string>>
) => Effect.Effect<ReadonlyArray<string>, McpError.McpError, R>

/**
 * A tool ready to be served.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool<out R> {
  readonly _tag: "Tool"
  readonly definition: McpSchema.Tool
  /** Decodes the raw `arguments` and runs the handler. */
  readonly handler: (args: unknown) => Effect.Effect<ToolResult, ToolError | InputError | McpError.McpError, R>
}

/**
 * A resource with a fixed URI.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resource<out R> {
  readonly _tag: "Resource"
  readonly definition: McpSchema.Resource
  readonly read: Effect.Effect<ResourceResult, InputError | McpError.McpError, R>
}

/**
 * A family of resources whose URIs match a URI template.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceTemplate<out R> {
  readonly _tag: "ResourceTemplate"
  readonly definition: McpSchema.ResourceTemplate
  readonly read: (
    uri: string,
    variables: Readonly<Record<string, string>>
  ) => Effect.Effect<ResourceResult, InputError | McpError.McpError, R>
  readonly complete: Readonly<Record<string, Completer<R>>>
}

/**
 * A prompt.
 *
 * @since 0.1.0
 * @category models
 */
export interface Prompt<out R> {
  readonly _tag: "Prompt"
  readonly definition: McpSchema.Prompt
  readonly handler: (
    args: Readonly<Record<string, string>>
  ) => Effect.Effect<PromptResult, InputError | McpError.McpError, R>
  readonly complete: Readonly<Record<string, Completer<R>>>
}

/**
 * The services a definition's handlers need.
 *
 * @since 0.1.0
 * @category models
 */
export type DefinitionContext<D> = D extends Tool<infer R> ? R
  : D extends Resource<infer R> ? R
  : D extends ResourceTemplate<infer R> ? R
  : D extends Prompt<infer R> ? R
  : never

/**
 * An inbound message, as recorded for tests.
 *
 * @since 0.1.0
 * @category models
 */
export interface Received {
  /** The connection it arrived on (1 for the first connection of the server). */
  readonly connection: number
  readonly message: McpSchema.JsonRpcMessage
  readonly method: string | undefined
  readonly id: McpSchema.RequestId | undefined
  readonly params: unknown
}

/**
 * A request whose handler was interrupted (cancelled, or its connection closed) before it answered.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interrupted {
  readonly connection: number
  readonly id: McpSchema.RequestId
  readonly method: string
}

/**
 * Where a connection writes what it sends to the client.
 *
 * @since 0.1.0
 * @category models
 */
export type Send = (message: McpSchema.JsonRpcMessage) => Effect.Effect<void>

/**
 * One client connection: its own handshake state and log level, and its in-flight requests.
 *
 * @since 0.1.0
 * @category models
 */
export interface Connection {
  readonly id: number
  /**
   * Processes one inbound message. A request is started in its own fiber and answered through `send` when
   * its handler completes; this returns once the request is started.
   */
  readonly handle: (message: McpSchema.JsonRpcMessage) => Effect.Effect<void>
  /** Interrupts the handler of a request; no response is sent. Unknown ids are ignored. */
  readonly cancel: (id: McpSchema.RequestId) => Effect.Effect<void>
  /** Completes when no request is in flight. */
  readonly awaitIdle: Effect.Effect<void>
}


/**
 * A server, ready to accept connections.
 *
 * @since 0.1.0
 * @category models
 */
export interface Server {
  readonly info: McpSchema.Implementation
  readonly eras: Eras
  /** Newest first. */
  readonly supportedVersions: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly capabilities: McpSchema.ServerCapabilities
  /** Opens a connection; closing the Scope interrupts its in-flight requests. */
  readonly connect: (send: Send) => Effect.Effect<Connection, never, Scope.Scope>
  /** Tells every connected client that asked about it (see {@link Change}). */
  readonly publish: (change: Change) => Effect.Effect<void>
  /** Inbound messages so far, in arrival order, optionally only those of one method. */
  readonly received: (method?: string) => Effect.Effect<ReadonlyArray<Received>>
  /** Waits until at least `count` (default 1) messages of a method were received and returns them. */
  readonly awaitReceived: (method: string, count?: number) => Effect.Effect<ReadonlyArray<Received>>
  /** Requests whose handlers were interrupted so far. */
  readonly interrupted: Effect.Effect<ReadonlyArray<Interrupted>>
  /** Waits until the handler of request `id` was interrupted. */
  readonly awaitInterrupted: (id: McpSchema.RequestId) => Effect.Effect<Interrupted>
}

/**
 * The server as a service, for tests and applications that share one server.
 *
 * @since 0.1.0
 * @category tags
 */
export class McpServer extends Context.Tag("@conduit-mcp/server/McpServer")<McpServer, Server>() {}


/**
 * Reports progress on the current request.
 *
 * @since 0.1.0
 * @category accessors
 */
export const progress = (
  value: number,
  options?: { readonly total?: number | undefined; readonly message?: string | undefined }
): Effect.Effect<void, never, RequestContext> =>
  Effect.flatMap(RequestContext, (context) => context.progress(value, options))

/**
 * Tells every connected client that asked about it that a list changed or a resource was updated.
 *
 * @since 0.1.0
 * @category accessors
 */
export const publish = (change: Change): Effect.Effect<void, never, RequestContext> =>
  Effect.flatMap(RequestContext, (context) => context.publish(change))

/**
 * Sends a log message to the client of the current request.
 *
 * @since 0.1.0
 * @category accessors
 */
export const log = (
  level: McpSchema.LoggingLevel,
  data: unknown,
  logger?: string
): Effect.Effect<void, never, RequestContext> =>
  Effect.flatMap(RequestContext, (context) => context.log(level, data, logger))

// ---------------------------------------------------------------------------------------------------------------
// Input from the client

/**
 * A form to show the user: a flat object schema of primitive fields.
 *
 * @since 0.1.0
 * @category models
 */
export interface ElicitParams {
  readonly message: string
  readonly requestedSchema: ElicitationHandler.FormSchema
}

/**
 * A page the user is asked to open (2025-11-25 and later).
 *
 * @since 0.1.0
 * @category models
 */
export interface ElicitUrlParams {
  readonly message: string
  readonly url: string
  /** Legacy (2025-11-25) only: the id a later `notifications/elicitation/complete` names; generated if unset. */
  readonly elicitationId?: string | undefined
}

/**
 * The user's answer: `accept` (with `content` for a form), `decline` or `cancel`.
 *
 * @since 0.1.0
 * @category models
 */
export type ElicitResult = McpSchema.ElicitResult

/**
 * What `sampling/createMessage` sends: `messages`, `maxTokens`, and any other field of the revision.
 *
 * @since 0.1.0
 * @category models
 */
export type CreateMessageParams = McpSchema.CreateMessageParams

/**
 * @since 0.1.0
 * @category models
 */
export type CreateMessageResult = McpSchema.CreateMessageResult

/**
 * @since 0.1.0
 * @category models
 */
export type Root = RootsProvider.Root

const ListRootsResult = Schema.Struct({
  roots: Schema.Array(Schema.Struct({ uri: Schema.String, name: Schema.optional(Schema.String) }))
})

const decodeAnswer = <A, I>(method: InputMethod, schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(schema)
  return (answer: JsonObject): Effect.Effect<A, InputError> =>
    decode(answer).pipe(
      Effect.mapError((error) =>
        new InputError({
          method,
          reason: "InvalidResponse",
          detail: `the client's answer is not valid: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
        })
      )
    )
}

const decodeElicitResult = decodeAnswer("elicitation/create", McpSchema.ElicitResult)
const decodeCreateMessageResult = decodeAnswer("sampling/createMessage", McpSchema.CreateMessageResult)
const decodeListRootsResult = decodeAnswer("roots/list", ListRootsResult)

/**
 * Asks the user to fill in a form (`elicitation/create`, form mode) and returns the answer. Needs the client's
 * `elicitation` capability (form mode). In the modern era the handler runs again once the client answers: keep
 * the work before this call free of side effects, or make it idempotent.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 * import * as McpServer from "@conduit-mcp/server/McpServer"
 *
 * const deploy = McpServer.tool({
 *   name: "deploy",
 *   parameters: Schema.Struct({ service: Schema.String }),
 *   handler: ({ service }) =>
 *     Effect.gen(function*() {
 *       const answer = yield* McpServer.elicit({
 *         message: `Deploy ${service} to production?`,
 *         requestedSchema: { type: "object", properties: { approve: { type: "boolean" } }, required: ["approve"] }
 *       })
 *       return answer.action === "accept" && answer.content?.approve === true ? "deployed" : "not deployed"
 *     })
 * })
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const elicit = (params: ElicitParams): Effect.Effect<ElicitResult, InputError, RequestContext> =>
  Effect.flatMap(
    RequestContext,
    (context) =>
      Effect.flatMap(
        context.input("elicitation/create", {
          mode: "form",
          message: params.message,
          requestedSchema: params.requestedSchema
        }),
        decodeElicitResult
      )
  )

/**
 * Asks the user to open a page (`elicitation/create`, URL mode; 2025-11-25 and later) and returns whether they
 * agreed. `accept` only means the user agreed to open it, not that the out-of-band step finished.
 *
 * @since 0.1.0
 * @category accessors
 */
export const elicitUrl = (params: ElicitUrlParams): Effect.Effect<ElicitResult, InputError, RequestContext> =>
  Effect.flatMap(
    RequestContext,
    (context) =>
      Effect.flatMap(
        context.input("elicitation/create", {
          mode: "url",
          message: params.message,
          url: params.url,
          ...(params.elicitationId !== undefined ? { elicitationId: params.elicitationId } : {})
        }),
        decodeElicitResult
      )
  )

/**
 * Asks the client to run an LLM completion (`sampling/createMessage`). Needs the `sampling` capability
 * (`sampling.tools` when `params` carries `tools`).
 *
 * @since 0.1.0
 * @category accessors
 */
export const sample = (
  params: CreateMessageParams
): Effect.Effect<CreateMessageResult, InputError, RequestContext> =>
  Effect.flatMap(
    RequestContext,
    (context) => Effect.flatMap(context.input("sampling/createMessage", params), decodeCreateMessageResult)
  )

/**
 * Asks the client for its roots (`roots/list`). Needs the `roots` capability.
 *
 * @since 0.1.0
 * @category accessors
 */
export const listRoots: Effect.Effect<ReadonlyArray<Root>, InputError, RequestContext> = Effect.flatMap(
  RequestContext,
  (context) =>
    Effect.flatMap(context.input("roots/list", {}), decodeListRootsResult).pipe(
      Effect.map(({ roots }) =>
        roots.map((root): Root => root.name === undefined ? { uri: root.uri } : { uri: root.uri, name: root.name })
      )
    )
)

// ---------------------------------------------------------------------------------------------------------------
// Definitions

/**
 * Metadata shared by both ways of declaring a tool.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolInfo {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly outputSchema?: JsonObject | undefined
  readonly annotations?: JsonObject | undefined
  /** `taskSupport`: `forbidden` (default), `optional` or `required` (see {@link TaskOptions}). */
  readonly execution?: { readonly taskSupport?: "forbidden" | "optional" | "required" | undefined } | undefined
  readonly _meta?: JsonObject | undefined
}

const AnyArguments = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const toolDefinition = (info: ToolInfo, inputSchema: JsonObject): McpSchema.Tool => ({
  name: info.name,
  inputSchema,
  ...(info.title !== undefined ? { title: info.title } : {}),
  ...(info.description !== undefined ? { description: info.description } : {}),
  ...(info.outputSchema !== undefined ? { outputSchema: info.outputSchema } : {}),
  ...(info.annotations !== undefined ? { annotations: info.annotations } : {}),
  ...(info.execution?.taskSupport !== undefined ? { execution: { taskSupport: info.execution.taskSupport } } : {}),
  ...(info._meta !== undefined ? { _meta: info._meta } : {})
})

const decodeArguments = <A, I>(name: string, schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(schema)
  return (args: unknown): Effect.Effect<A, ToolError> =>
    decode(args ?? {}).pipe(
      Effect.mapError((error) =>
        new ToolError({
          message: `Invalid arguments for tool ${name}: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
        })
      )
    )
}

/**
 * Declares a tool. With `parameters` the arguments are decoded with the Schema (its JSON Schema is the
 * advertised `inputSchema` unless one is given); with only `inputSchema` the handler gets the raw arguments.
 * Arguments that do not decode answer with `isError: true`, so the model can correct itself.
 *
 * @since 0.1.0
 * @category constructors
 */
export function tool<A, I, R = never>(options: ToolInfo & {
  readonly parameters: Schema.Schema<A, I>
  readonly inputSchema?: JsonObject | undefined
  readonly handler: (args: A) => Effect.Effect<ToolResult, ToolError | InputError | McpError.McpError, R>
}): Tool<R>
export function tool<R = never>(options: ToolInfo & {
  readonly inputSchema: JsonObject
  readonly handler: (args: JsonObject) => Effect.Effect<ToolResult, ToolError | InputError | McpError.McpError, R>
}): Tool<R>
export function tool<A, I, R>(
  options:
    & ToolInfo
    & (
      | {
        readonly parameters: Schema.Schema<A, I>
        readonly inputSchema?: JsonObject | undefined
        readonly handler: (args: A) => Effect.Effect<ToolResult, ToolError | InputError | McpError.McpError, R>
      }
      | {
        readonly parameters?: undefined
        readonly inputSchema: JsonObject
        readonly handler: (args: JsonObject) => Effect.Effect<ToolResult, ToolError | InputError | McpError.McpError, R>
      }
    )
): Tool<R> {
  if (options.parameters !== undefined) {
    const decode = decodeArguments(options.name, options.parameters)
    const handler = options.handler
    return {
      _tag: "Tool",
      definition: toolDefinition(options, options.inputSchema ?? internal.jsonSchemaOf(options.parameters)),
      handler: (args) => Effect.flatMap(decode(args), handler)
    }
  }
  const decode = decodeArguments(options.name, AnyArguments)
  const handler = options.handler
  return {
    _tag: "Tool",
    definition: toolDefinition(options, options.inputSchema),
    handler: (args) => Effect.flatMap(decode(args), handler)
  }
}

/**
 * Metadata of a resource or resource template.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceInfo {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
  readonly _meta?: JsonObject | undefined
}

const resourceInfo = (info: ResourceInfo) => ({
  name: info.name,
  ...(info.title !== undefined ? { title: info.title } : {}),
  ...(info.description !== undefined ? { description: info.description } : {}),
  ...(info.mimeType !== undefined ? { mimeType: info.mimeType } : {}),
  ...(info._meta !== undefined ? { _meta: info._meta } : {})
})

/**
 * Declares a resource with a fixed URI.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resource = <R = never>(options: ResourceInfo & {
  readonly uri: string
  readonly size?: number | undefined
  readonly read: Effect.Effect<ResourceResult, InputError | McpError.McpError, R>
}): Resource<R> => ({
  _tag: "Resource",
  definition: {
    uri: options.uri,
    ...resourceInfo(options),
    ...(options.size !== undefined ? { size: options.size } : {})
  },
  read: options.read
})

/**
 * Declares resources whose URIs match a URI template (`{name}` stops at `/`, `{+name}` takes the rest).
 * `complete` suggests values for the template's variables (`completion/complete` with `ref/resource`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const resourceTemplate = <R = never>(options: ResourceInfo & {
  readonly uriTemplate: string
  readonly read: (
    uri: string,
    variables: Readonly<Record<string, string>>
  ) => Effect.Effect<ResourceResult, InputError | McpError.McpError, R>
  readonly complete?: Readonly<Record<string, Completer<R>>> | undefined
}): ResourceTemplate<R> => ({
  _tag: "ResourceTemplate",
  definition: { uriTemplate: options.uriTemplate, ...resourceInfo(options) },
  read: options.read,
  complete: options.complete ?? {}
})

/**
 * One argument of a prompt, with an optional completer.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptArgument<R> {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly required?: boolean | undefined
  readonly complete?: Completer<R> | undefined
}

/**
 * Declares a prompt. Missing required arguments are refused with `-32602` before the handler runs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const prompt = <R = never>(options: {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly arguments?: ReadonlyArray<PromptArgument<R>> | undefined
  readonly _meta?: JsonObject | undefined
  readonly handler: (
    args: Readonly<Record<string, string>>
  ) => Effect.Effect<PromptResult, InputError | McpError.McpError, R>
}): Prompt<R> => {
  const args = options.arguments ?? []
  const complete: Record<string, Completer<R>> = {}
  for (const argument of args) {
    if (argument.complete !== undefined) complete[argument.name] = argument.complete
  }
  return {
    _tag: "Prompt",
    definition: {
      name: options.name,
      ...(options.title !== undefined ? { title: options.title } : {}),
      ...(options.description !== undefined ? { description: options.description } : {}),
      ...(options._meta !== undefined ? { _meta: options._meta } : {}),
      ...(args.length > 0 ?
        {
          arguments: args.map((argument) => ({
            name: argument.name,
            ...(argument.title !== undefined ? { title: argument.title } : {}),
            ...(argument.description !== undefined ? { description: argument.description } : {}),
            ...(argument.required !== undefined ? { required: argument.required } : {})
          }))
        } :
        {})
    },
    handler: options.handler,
    complete
  }
}

/**
 * One text content block.
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (value: string): McpSchema.ContentBlock => ({ type: "text", text: value })

// ---------------------------------------------------------------------------------------------------------------
// Constructors

/**
 * Everything `make` takes: the options and the definitions.
 *
 * @since 0.1.0
 * @category models
 */
export interface MakeOptions<
  T extends Tool<unknown>,
  RS extends Resource<unknown>,
  RT extends ResourceTemplate<unknown>,
  P extends Prompt<unknown>
> extends Options {
  readonly tools?: ReadonlyArray<T> | undefined
  readonly resources?: ReadonlyArray<RS> | undefined
  readonly resourceTemplates?: ReadonlyArray<RT> | undefined
  readonly prompts?: ReadonlyArray<P> | undefined
}

/**
 * Builds a server. The services the handlers need (other than `RequestContext`) are taken from the context
 * here, once. Capabilities follow from what is defined: `tools`, `resources`, `prompts` when there are any,
 * `completions` when a completer exists, and always `logging`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <
  T extends Tool<unknown> = never,
  RS extends Resource<unknown> = never,
  RT extends ResourceTemplate<unknown> = never,
  P extends Prompt<unknown> = never
>(
  options: MakeOptions<T, RS, RT, P>
): Effect.Effect<
  Server,
  never,
  Exclude<DefinitionContext<T> | DefinitionContext<RS> | DefinitionContext<RT> | DefinitionContext<P>, RequestContext>
> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<
      Exclude<
        DefinitionContext<T> | DefinitionContext<RS> | DefinitionContext<RT> | DefinitionContext<P>,
        RequestContext
      >
    >()
    const record = options.record ?? false
    const receivedRef = yield* SubscriptionRef.make(Chunk.empty<Received>())
    const interruptedRef = yield* SubscriptionRef.make(Chunk.empty<Interrupted>())
    const engine = yield* internal.makeEngine({
      options,
      context,
      tools: options.tools ?? [],
      resources: options.resources ?? [],
      resourceTemplates: options.resourceTemplates ?? [],
      prompts: options.prompts ?? [],
      onReceived: (received) => record ? SubscriptionRef.update(receivedRef, Chunk.append(received)) : Effect.void,
      onInterrupted: (interrupted) =>
        record ? SubscriptionRef.update(interruptedRef, Chunk.append(interrupted)) : Effect.void
    })
    const byMethod = (method: string | undefined) => (all: Chunk.Chunk<Received>): ReadonlyArray<Received> =>
      Chunk.toReadonlyArray(method === undefined ? all : Chunk.filter(all, (r) => r.method === method))
    return {
      info: engine.info,
      eras: engine.eras,
      supportedVersions: engine.supportedVersions,
      capabilities: engine.capabilities,
      connect: engine.connect,
      publish: engine.publish,
      received: (method) => Effect.map(SubscriptionRef.get(receivedRef), byMethod(method)),
      awaitReceived: (method, count = 1) =>
        receivedRef.changes.pipe(
          Stream.map(byMethod(method)),
          Stream.filter((found) => found.length >= count),
          Stream.runHead,
          Effect.map(Option.getOrElse((): ReadonlyArray<Received> => []))
        ),
      interrupted: Effect.map(SubscriptionRef.get(interruptedRef), Chunk.toReadonlyArray),
      awaitInterrupted: (id) =>
        interruptedRef.changes.pipe(
          Stream.filterMap(Chunk.findFirst((i) => i.id === id)),
          Stream.runHead,
          Effect.flatMap(Option.match({ onNone: () => Effect.never, onSome: Effect.succeed }))
        )
    } satisfies Server
  })

/**
 * A layer providing the server as the `McpServer` service.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <
  T extends Tool<unknown> = never,
  RS extends Resource<unknown> = never,
  RT extends ResourceTemplate<unknown> = never,
  P extends Prompt<unknown> = never
>(
  options: MakeOptions<T, RS, RT, P>
): Layer.Layer<
  McpServer,
  never,
  Exclude<DefinitionContext<T> | DefinitionContext<RS> | DefinitionContext<RT> | DefinitionContext<P>, RequestContext>
> => Layer.effect(McpServer, make(options))

// ---------------------------------------------------------------------------------------------------------------
// Byte-stream runner

/**
 * Serves one connection over newline-delimited JSON-RPC (the stdio framing): reads messages from `input`,
 * writes every message the server sends as one line to `output`. Lines that are not JSON-RPC are answered
 * with `-32700` / `-32600` (id null). When `input` ends, requests still running get `drainTimeout` (default
 * 5 seconds) to finish, then they are interrupted and `output` is completed.
 *
 * @example
 * ```ts
 * import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
 * import * as NodeSink from "@effect/platform-node/NodeSink"
 * import * as NodeStream from "@effect/platform-node/NodeStream"
 * import * as Effect from "effect/Effect"
 * import * as McpServer from "@conduit-mcp/server/McpServer"
 *
 * McpServer.make({ name: "demo", version: "1.0.0" }).pipe(
 *   Effect.flatMap((server) => McpServer.serve(server, { input: NodeStream.stdin, output: NodeSink.stdout })),
 *   NodeRuntime.runMain
 * )
 * ```
 *
 * @since 0.1.0
 * @category runners
 */
export const serve = <EI, EO, RI = never, RO = never>(
  server: Server,
  options: {
    readonly input: Stream.Stream<Uint8Array, EI, RI>
    readonly output: Sink.Sink<unknown, Uint8Array, unknown, EO, RO>
    readonly drainTimeout?: Duration.DurationInput | undefined
  }
): Effect.Effect<void, EI | EO, RI | RO> => stdio.serve(server, options)

/**
 * The stdio binding as a layer: serves one connection over `input` and `output` (on Node,
 * `NodeStream.stdin` and `NodeSink.stdout`) for the life of the layer, as {@link serve} does. When the
 * streams end or fail, the binding stops and says so in the log; the rest of the program goes on.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStdio = <EI, EO, RI = never, RO = never>(
  server: Server,
  options: {
    readonly input: Stream.Stream<Uint8Array, EI, RI>
    readonly output: Sink.Sink<unknown, Uint8Array, unknown, EO, RO>
    readonly drainTimeout?: Duration.DurationInput | undefined
  }
): Layer.Layer<never, never, RI | RO> =>
  Layer.scopedDiscard(
    Effect.forkScoped(
      serve(server, options).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("the stdio binding stopped", cause)),
        Effect.annotateLogs({ module: "McpServer", server: server.info.name })
      )
    )
  )

