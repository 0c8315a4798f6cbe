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
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Sink from "effect/Sink"
import type * as Stream from "effect/Stream"
import * as McpError from "@conduit-mcp/client/McpError"
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import type { DefinitionContext, Prompt, Resource, ResourceTemplate, Tool } from "./internal/serverDefinitions.js"
import * as engine from "./internal/serverEngine.js"
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
export class McpServer extends Context.Service<McpServer, Server>()("@conduit-mcp/server/McpServer") {}

// ---------------------------------------------------------------------------------------------------------------
// Handlers and definitions
//
// What a handler calls while it runs (progress, logs, changes, input from the client) and the definitions a server
// serves (tools, resources, resource templates, prompts, with their constructors) live in internal modules of
// their own, re-exported here as they are.

/**
 * @since 0.1.0
 */
export {
  /** @since 0.1.0 */
  type CreateMessageParams,
  /** @since 0.1.0 */
  type CreateMessageResult,
  /** @since 0.1.0 */
  elicit,
  /** @since 0.1.0 */
  type ElicitParams,
  /** @since 0.1.0 */
  type ElicitResult,
  /** @since 0.1.0 */
  elicitUrl,
  /** @since 0.1.0 */
  type ElicitUrlParams,
  /** @since 0.1.0 */
  listRoots,
  /** @since 0.1.0 */
  log,
  /** @since 0.1.0 */
  progress,
  /** @since 0.1.0 */
  publish,
  /** @since 0.1.0 */
  type Root,
  /** @since 0.1.0 */
  sample
} from "./internal/serverAccessors.js"

/**
 * @since 0.1.0
 */
export {
  /** @since 0.1.0 */
  type Completer,
  /** @since 0.1.0 */
  type DefinitionContext,
  /** @since 0.1.0 */
  prompt,
  /** @since 0.1.0 */
  type Prompt,
  /** @since 0.1.0 */
  type PromptArgument,
  /** @since 0.1.0 */
  type PromptMessage,
  /** @since 0.1.0 */
  type PromptResult,
  /** @since 0.1.0 */
  resource,
  /** @since 0.1.0 */
  type Resource,
  /** @since 0.1.0 */
  type ResourceInfo,
  /** @since 0.1.0 */
  type ResourceResult,
  /** @since 0.1.0 */
  resourceTemplate,
  /** @since 0.1.0 */
  type ResourceTemplate,
  /** @since 0.1.0 */
  text,
  /** @since 0.1.0 */
  tool,
  /** @since 0.1.0 */
  type Tool,
  /** @since 0.1.0 */
  type ToolInfo,
  /** @since 0.1.0 */
  type ToolResult
} from "./internal/serverDefinitions.js"

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
  Effect.flatMap(
    Effect.context<
      Exclude<
        DefinitionContext<T> | DefinitionContext<RS> | DefinitionContext<RT> | DefinitionContext<P>,
        RequestContext
      >
    >(),
    (context) => engine.makeServer(options, context)
  )

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
 * import * as NodeServices from "@effect/platform-node/NodeServices"
 * import * as Effect from "effect/Effect"
 * import * as Stdio from "effect/Stdio"
 * import * as McpServer from "@conduit-mcp/server/McpServer"
 *
 * // serves until stdin closes
 * export const main = Effect.gen(function*() {
 *   const server = yield* McpServer.make({ name: "demo", version: "1.0.0" })
 *   const stdio = yield* Stdio.Stdio
 *   yield* McpServer.serve(server, { input: stdio.stdin, output: stdio.stdout() })
 * }).pipe(Effect.provide(NodeServices.layer))
 *
 * // in the program's entry point:
 * if (process.argv[1]?.endsWith("server.js")) NodeRuntime.runMain(main)
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
    readonly drainTimeout?: Duration.Input | undefined
  }
): Effect.Effect<void, EI | EO, RI | RO> => stdio.serve(server, options)

/**
 * The stdio binding as a layer: serves one connection over `input` and `output` (on Node,
 * `stdio.stdin` and `stdio.stdout()` of the `Stdio` service) for the life of the layer, as {@link serve} does. When the
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
    readonly drainTimeout?: Duration.Input | undefined
  }
): Layer.Layer<never, never, RI | RO> =>
  Layer.effectDiscard(
    Effect.forkScoped(
      serve(server, options).pipe(
        Effect.catchCause((cause) => Effect.logWarning("the stdio binding stopped", cause)),
        Effect.annotateLogs({ module: "McpServer", server: McpError.printable(server.info.name) })
      )
    )
  )

