/**
 * The MCP client: typed calls to one MCP server over any transport layer, in either protocol era.
 *
 * The connection is a fiber owned by the layer's Scope. It finds the server's era by itself (a
 * `server/discover` probe, then the legacy `initialize` handshake when the server is not modern), keeps the
 * pending-request table, routes responses, progress and notifications, checks the health of a quiet
 * connection, and reconnects on a `Schedule` when the transport closes, negotiating again each time.
 * Interrupting a call cancels it the way the era and binding require.
 *
 * @example
 * ```ts
 * import { McpClient } from "@conduit-mcp/client"
 * import { NodeServices } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 *
 * const Client = McpClient.layerStdio({ command: "npx", args: ["-y", "some-mcp-server"] }).pipe(
 *   Layer.provide(NodeServices.layer)
 * )
 * const program = Effect.gen(function*() {
 *   const client = yield* McpClient.McpClient
 *   const tools = yield* client.listTools()
 *   return yield* client.callTool({ name: tools[0].name, arguments: {} })
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import type * as Schedule from "effect/Schedule"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as HttpClient from "effect/http/HttpClient"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/client.js"
import * as coalesce from "./internal/client/coalesce.js"
import * as RequestDefaultsInternal from "./internal/client/requestDefaults.js"
import * as Pagination from "./internal/client/pagination.js"
import type * as ElicitationHandler from "./ElicitationHandler.js"
import type * as ExtensionHandler from "./ExtensionHandler.js"
import type * as HttpTransport from "./HttpTransport.js"
import type * as McpError from "./McpError.js"
import type * as McpMethod from "./McpMethod.js"
import type * as McpSchema from "./McpSchema.js"
import type * as McpTasks from "./McpTasks.js"
import { lazyImport } from "./internal/lazyImport.js"
import type * as ResultCache from "./ResultCache.js"
import type * as RootsProvider from "./RootsProvider.js"
import type * as SamplingHandler from "./SamplingHandler.js"
import type * as StdioTransport from "./StdioTransport.js"
import type * as TaskStore from "./TaskStore.js"
import type * as Transport from "./Transport.js"

/**
 * Which era the client may speak. `auto` (the default) probes and falls back.
 *
 * @since 0.1.0
 * @category models
 */
export type EraOption = "auto" | "legacy" | "modern"

/**
 * @since 0.1.0
 * @category models
 */
export interface McpClientOptions<R = never> extends Features<R> {
  /** Name and version this client reports to servers. */
  readonly clientInfo?: McpSchema.Implementation | undefined
  /** Pin an era; `auto` (default) detects it. */
  readonly era?: EraOption | undefined
  /** Pin one protocol version (and so its era). */
  readonly protocolVersion?: McpSchema.ProtocolVersion | undefined
  /** Capabilities declared to the server (`initialize`, or every modern request's `_meta`). */
  readonly capabilities?: McpSchema.ClientCapabilities | undefined
  /**
   * How long to wait for the era probe (`server/discover` while the era is unknown). Default: the transport's
   * `traits.probeTimeout` (the HTTP transport's: 5 s), else 3 s.
   */
  readonly probeTimeout?: Duration.Input | undefined
  /**
   * How long to wait for the opening handshake (default 30 s): the `initialize` answer, or `server/discover`'s once
   * the era is pinned to modern or known to be.
   */
  readonly initializeTimeout?: Duration.Input | undefined
  /** Default timeout of every request (default 60 s); each call may set its own. */
  readonly requestTimeout?: Duration.Input | undefined
  /** When to reconnect after the transport closes; `false` never reconnects. */
  readonly reconnect?: Schedule.Schedule<unknown, McpError.ConnectError> | false | undefined
  /**
   * Whether the first connection is retried when it fails. By default (`false`) it is not: a failed first attempt
   * fails the layer (or `make`) at once with its error, which is what a program with a wrong command or URL wants.
   * `true` retries it on the `reconnect` schedule, and a `Schedule` on that schedule: the layer is then ready once a
   * session is up, and fails with the last error when the schedule ends (a server started alongside the client).
   */
  readonly retryFirstConnection?: Schedule.Schedule<unknown, McpError.ConnectError> | boolean | undefined
  /** A connection quiet for this long is checked (legacy `ping`, modern `server/discover`); `false` disables. */
  readonly healthCheckInterval?: Duration.Input | false | undefined
  /** How long a health check may take before the connection counts as closed (default 10 s). */
  readonly healthCheckTimeout?: Duration.Input | undefined
  /**
   * Capability gating (default off). When on, a request for a feature the server did not declare is never sent:
   * listing tools, prompts, resources or resource templates of a server that declared nothing of that kind gives
   * an empty list at once, and any other such request (`callTool`, `getPrompt`, `readResource`, `complete`,
   * `setLoggingLevel`, `resources/subscribe` without `resources.subscribe`) fails with a `ProtocolError` whose
   * reason is `CapabilityMissing`, naming the capability and the method. Off by default because some servers
   * serve features they forgot to declare.
   */
  readonly strict?: boolean | undefined
  /**
   * How long a completion (`complete`) result is kept (default 5 s; `false` keeps none): completions are asked for
   * as the user types, so the same question is answered once, and identical questions asked at once share one
   * request. Kept results are dropped on a new session and when the server's prompts or resources change; a call
   * with its own `meta` always goes to the server.
   */
  readonly completionCacheTtl?: Duration.Input | false | undefined
  /** The most `input_required` rounds one modern call may take (default 10). */
  readonly maxInputRounds?: number | undefined
  /**
   * The most pages one listing fetches (default 100): `listTools`, `listPrompts`, `listResources`,
   * `listResourceTemplates` and their `stream…` forms. With `maxListItems` and `maxListBytes` it is the listing's
   * total budget; a listing that would pass one fails with a `ProtocolError` whose reason is
   * `ListingBudgetExceeded` and whose `budget` names the option. A collected listing that fails returns nothing
   * (a stream has emitted the pages before the one that passed); a server whose next cursor is one it gave before
   * in the same listing fails it with `RepeatedCursor`.
   */
  readonly maxPages?: number | undefined
  /** The most items one listing collects, over all its pages (default 50,000). */
  readonly maxListItems?: number | undefined
  /**
   * The most bytes one listing holds, over all its pages (default 32 MiB = 33,554,432): its items measured as
   * compact JSON (a character of a string counts one), plus the cursors it keeps to notice a repeated one.
   */
  readonly maxListBytes?: number | undefined
  /**
   * How many notifications each reader (a `notifications` or `subscribe` stream, a `listen` stream, a call's
   * progress stream) may have waiting (default 1,000). The connection never waits for a reader: when a reader's
   * buffer is full its oldest notification is dropped, and the reader then receives a {@link NotificationsDropped}
   * notice with the number lost before what it reads next (progress streams drop old reports silently: each report
   * carries the whole progress so far). Drops are logged at warning level and counted in the
   * `mcp_client_notifications_dropped` metric.
   */
  readonly notificationBufferSize?: number | undefined
  /**
   * How many legacy server-to-client requests (sampling, elicitation, roots, ping) may be handled at once (default
   * 32). Beyond that a request is refused at once with JSON-RPC error -32603, written before anything else the
   * server sent is read, so a server that does not read its answers is held back by the transport.
   */
  readonly maxServerRequests?: number | undefined
  /**
   * Where server log messages (`notifications/message`) go: always to the notification streams; with `"logger"`
   * also into Effect's logger at the matching level, annotated with the server's name.
   */
  readonly serverLogs?: "stream" | "logger" | undefined
  /**
   * Identifies the credential this connection uses (never the credential itself): private cached results are
   * kept per credential id. None: over HTTP the transport's own credentials key the partition (a fingerprint of a
   * static bearer or of custom headers; an id of the transport's own for OAuth, whose user is not known up front),
   * and without credentials it is the anonymous partition; over stdio the child's identity does (a digest of its
   * command, arguments, environment as the child gets it and working directory, keyed by a secret of this process);
   * over a transport that says nothing of who the server answers (in-process, or written outside this library) the
   * client keeps a partition of its own. Give one to share private results across clients or processes (an OAuth
   * user's, or a stdio server's beyond this process).
   */
  readonly credentialId?: string | undefined
  /** Attributes added to every span of this client. */
  readonly spanAttributes?: Readonly<Record<string, unknown>> | undefined
  /**
   * Tasks (see `McpTasks`): `true` or `{ enabled: true, … }` declares task support (the `tasks` capability to
   * 2025-11-25 servers, the `io.modelcontextprotocol/tasks` extension to 2026-07-28 ones) and sets the polling
   * bounds and the time to live asked for. A tool that requires a task is run as one in any case.
   */
  readonly tasks?: McpTasks.TasksOptions | boolean | undefined
}

/**
 * A feature of the client: its service, or an effect that gives it (a service's tag, for one provided by a
 * layer), whose requirements become the client's.
 *
 * @since 0.1.0
 * @category models
 */
export type Feature<S, R> = S | Effect.Effect<S, never, R>

/**
 * What the client does beyond calling the server. Only what is given here is used, and the capabilities the
 * client declares follow from it: a client given no `elicitation` handler declares no `elicitation` capability and
 * refuses the server's elicitation requests. Nothing is looked up in the context behind the caller's back: to use
 * a handler from a layer, pass its tag (`elicitation: ElicitationHandler.ElicitationHandler`) and provide the
 * layer; it then appears in the client's requirements.
 *
 * @since 0.1.0
 * @category models
 */
export interface Features<R = never> {
  /** Answers the server's elicitation requests; declares `elicitation` (with the handler's modes). */
  readonly elicitation?: Feature<ElicitationHandler.Service, R> | undefined
  /** Answers the server's sampling requests; declares `sampling`. */
  readonly sampling?: Feature<SamplingHandler.Service, R> | undefined
  /** Lists the client's roots; declares `roots` (with `listChanged`). */
  readonly roots?: Feature<RootsProvider.Service, R> | undefined
  /** Answers server requests of extension or experimental methods; others are refused with `-32601`. */
  readonly extensions?: Feature<ExtensionHandler.Service, R> | undefined
  /** Keeps the results the 2026-07-28 caching rules allow (see `ResultCache`). */
  readonly resultCache?: Feature<ResultCache.ResultCacheShape, R> | undefined
  /** Where the tasks this client starts are recorded, to resume them (see `TaskStore`; default: in memory). */
  readonly taskStore?: Feature<TaskStore.TaskStoreShape, R> | undefined
}

/**
 * What a client built with these options requires besides its `Transport`: the requirements of the features given
 * as effects (tags).
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements<O> = {
  readonly [K in keyof Features]-?: O extends { readonly [P in K]?: infer X } ?
    X extends Effect.Effect<infer _A, infer _E, infer R> ? R : never
    : never
}[keyof Features]

/**
 * Per-call options.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions {
  /** How long to wait for the answer (default: the client's `requestTimeout`). */
  readonly timeout?: Duration.Input | undefined
  /** Progress notifications restart the timeout, up to `maxTotalTimeout`. */
  readonly resetTimeoutOnProgress?: boolean | undefined
  /** The hard ceiling when progress restarts the timeout (default 10 × timeout). */
  readonly maxTotalTimeout?: Duration.Input | undefined
  /**
   * Receives every progress notification of this call (and asks the server for them). It runs where the
   * connection reads, so keep it short; a failure, a defect or a throw of it is logged and goes no further.
   */
  readonly onProgress?: ((progress: McpSchema.Progress) => Effect.Effect<void>) | undefined
  /**
   * Extra `_meta` entries for the request. A `progressToken` here (or in the params' `_meta`) is not sent: the
   * client sets its own when `onProgress` is given, and routes progress by it.
   */
  readonly meta?: Readonly<Record<string, unknown>> | undefined
  /**
   * With a `resultCache` given to the client: `use` (default: a fresh cached result, else fetch and store), `refresh`
   * (fetch and store), `bypass` (neither read nor write). Only cacheable methods are affected.
   */
  readonly cache?: "use" | "refresh" | "bypass" | undefined
  /** Serve a stale cached result when the fetch fails (default false). */
  readonly serveStale?: boolean | undefined
  /**
   * Takes a modern call's `input_required` rounds into the caller's own hands instead of the handler services:
   * given each round's input requests (key → `{ method, params }`), it returns the responses by key, one for
   * every key (a missing one fails the call with `InputFailed`). The client still retries with the untouched
   * `requestState`, a new id each round, under the round limit.
   */
  readonly answerInputs?:
    | ((
      inputRequests: Readonly<Record<string, { readonly method: string; readonly params?: unknown }>>,
      round: number
    ) => Effect.Effect<Record<string, unknown>, McpError.McpClientError>)
    | undefined
}

/**
 * Request options in force for every request made under them, each call's own options above them: a call that sets
 * `timeout` keeps it, one that does not takes the default's; `meta` entries are merged. Set with
 * {@link withRequestDefaults}, {@link withRequestTimeout} or {@link withMeta}; every method of the client honours
 * them (it reads them from the calling fiber when a request is made), those called through the hub and from
 * `McpPromiseClient.run` too.
 *
 * @since 1.0.0
 * @category models
 */
export interface RequestDefaults {
  readonly timeout?: Duration.Input | undefined
  readonly resetTimeoutOnProgress?: boolean | undefined
  readonly maxTotalTimeout?: Duration.Input | undefined
  readonly meta?: Readonly<Record<string, unknown>> | undefined
}

/**
 * The request defaults in force (none unless set).
 *
 * @since 1.0.0
 * @category references
 */
export const CurrentRequestDefaults: Context.Reference<RequestDefaults> = RequestDefaultsInternal.Current

/**
 * Runs an effect with request defaults for every request made inside it, over those already in force.
 *
 * @example
 * ```ts
 * import { McpClient } from "@conduit-mcp/client"
 * import { Effect } from "effect"
 *
 * const listed = Effect.gen(function*() {
 *   const client = yield* McpClient.McpClient
 *   return yield* client.listTools()
 * }).pipe(McpClient.withRequestDefaults({ timeout: "5 seconds", meta: { "example.com/tenant": "acme" } }))
 * ```
 *
 * @since 1.0.0
 * @category combinators
 */
export const withRequestDefaults: {
  (defaults: RequestDefaults): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, defaults: RequestDefaults): Effect.Effect<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, defaults: RequestDefaults): Effect.Effect<A, E, R> =>
    Effect.updateService(self, RequestDefaultsInternal.Current, (current) =>
      RequestDefaultsInternal.combine(current, defaults))
)

/**
 * Runs an effect with `timeout` as the timeout of every request made inside it that sets none of its own.
 *
 * @since 1.0.0
 * @category combinators
 */
export const withRequestTimeout: {
  (timeout: Duration.Input): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, timeout: Duration.Input): Effect.Effect<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, timeout: Duration.Input): Effect.Effect<A, E, R> =>
    withRequestDefaults(self, { timeout })
)

/**
 * Runs an effect with `meta` added to the `_meta` of every request made inside it (a call's own entries win).
 *
 * @since 1.0.0
 * @category combinators
 */
export const withMeta: {
  (meta: Readonly<Record<string, unknown>>): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, meta: Readonly<Record<string, unknown>>): Effect.Effect<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, meta: Readonly<Record<string, unknown>>): Effect.Effect<A, E, R> =>
    withRequestDefaults(self, { meta })
)

/**
 * `McpClient.request`: by a method's definition, or by name with the result's schema.
 *
 * @since 1.0.0
 * @category models
 */
export interface Request {
  <M extends McpMethod.Any>(
    method: M,
    ...args: [void] extends [McpMethod.Params<M>] ? [params?: McpMethod.Params<M>, options?: RequestOptions]
      : [params: McpMethod.Params<M>, options?: RequestOptions]
  ): Effect.Effect<McpMethod.Result<M>, McpError.McpClientError>
  <A, I>(
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    schema: Schema.Codec<A, I>,
    options?: RequestOptions
  ): Effect.Effect<A, McpError.McpClientError>
}

/**
 * Options of `callTool`: a request's, and what a result that reports a failure (`isError: true`) does: returned as
 * a value (`"result"`, the default) or failing the call with `McpError.ToolFailed` (`"fail"`).
 *
 * @since 1.0.0
 * @category models
 */
export interface CallToolOptions extends RequestOptions {
  readonly isError?: "result" | "fail" | undefined
}

/**
 * `callTool`: with `isError: "fail"` a result that reports a failure fails the call with `McpError.ToolFailed`.
 *
 * @since 1.0.0
 * @category models
 */
export interface CallTool {
  (
    params: CallToolParams,
    options: CallToolOptions & { readonly isError: "fail" }
  ): Effect.Effect<McpSchema.CallToolResult, McpError.McpClientError | McpError.TaskError | McpError.ToolFailed>
  (
    params: CallToolParams,
    options?: CallToolOptions & { readonly isError?: "result" | undefined }
  ): Effect.Effect<McpSchema.CallToolResult, McpError.McpClientError | McpError.TaskError>
}

/**
 * A round of `callToolRound`: the call's name and arguments, and what answers the previous round.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolRoundParams extends CallToolParams {
  /** The responses to the previous round's input requests, by their keys. */
  readonly inputResponses?: Readonly<Record<string, unknown>> | undefined
  /** The previous round's `requestState`, untouched. */
  readonly requestState?: string | undefined
}

/**
 * What one round of `callToolRound` ended with.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolRound =
  | { readonly _tag: "Complete"; readonly result: McpSchema.CallToolResult }
  | {
    readonly _tag: "InputRequired"
    readonly inputRequests: Readonly<Record<string, { readonly method: string; readonly params?: unknown }>>
    readonly requestState: string | undefined
  }

/**
 * What the client knows about the server once connected.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerSession {
  readonly era: McpSchema.Era
  readonly protocolVersion: McpSchema.ProtocolVersion
  readonly serverInfo: McpSchema.Implementation | undefined
  readonly capabilities: McpSchema.ServerCapabilities
  readonly instructions: string | undefined
  readonly transport: Transport.ConnectedInfo
}

/**
 * The observable state of the connection.
 *
 * @since 0.1.0
 * @category models
 */
export type ConnectionState = Data.TaggedEnum<{
  Connecting: {}
  Probing: {}
  Connected: { readonly era: McpSchema.Era; readonly protocolVersion: McpSchema.ProtocolVersion }
  Reconnecting: { readonly attempt: number; readonly error: McpError.ConnectError }
  Closed: { readonly error: McpError.ConnectError | undefined }
}>

/**
 * @since 0.1.0
 * @category constructors
 */
export const ConnectionState = Data.taggedEnum<ConnectionState>()

/**
 * One element of a call's progress stream: a progress notification, or the final result.
 *
 * @since 0.1.0
 * @category models
 */
export type CallEvent<A> =
  | { readonly _tag: "Progress"; readonly progress: McpSchema.Progress }
  | { readonly _tag: "Result"; readonly result: A }

/**
 * The method of the notice a notification reader receives when notifications were dropped for it (its buffer of
 * `notificationBufferSize` was full): `{ method: NotificationsDropped, params: { dropped: number } }`, where
 * `dropped` counts the notifications lost since its previous read. It comes before what the reader reads next.
 *
 * @since 0.1.0
 * @category constants
 */
export const NotificationsDropped: "conduit/notificationsDropped" = "conduit/notificationsDropped"

/**
 * What a subscription asks for.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListenFilter {
  readonly toolsListChanged?: boolean | undefined
  readonly promptsListChanged?: boolean | undefined
  readonly resourcesListChanged?: boolean | undefined
  /** Resources whose `notifications/resources/updated` to receive. */
  readonly resourceSubscriptions?: ReadonlyArray<string> | undefined
  /**
   * 2026-07-28 tasks extension: the tasks whose `notifications/tasks` to receive (needs the `tasks` option; the
   * server acknowledges those it will report on, and a legacy listen ignores them). Waiting on a task does this
   * by itself.
   */
  readonly taskIds?: ReadonlyArray<string> | undefined
}

/**
 * Parameters of `tools/call`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallToolParams {
  readonly name: string
  readonly arguments?: Readonly<Record<string, unknown>> | undefined
}

/**
 * Parameters of `prompts/get`.
 *
 * @since 0.1.0
 * @category models
 */
export interface GetPromptParams {
  readonly name: string
  readonly arguments?: Readonly<Record<string, string>> | undefined
}

/**
 * Parameters of `resources/read`.
 *
 * @since 1.0.0
 * @category models
 */
export interface ReadResourceParams {
  readonly uri: string
}

/**
 * Parameters of `completion/complete`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CompleteParams {
  readonly ref: McpSchema.CompleteReference
  readonly argument: { readonly name: string; readonly value: string }
  readonly context?: { readonly arguments?: Readonly<Record<string, string>> | undefined } | undefined
}

/**
 * The client service.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpClientService {
  /** The current server session; waits while the client (re)connects. */
  readonly session: Effect.Effect<ServerSession, McpError.McpClientError>
  readonly state: Effect.Effect<ConnectionState>
  /** Every state change, starting with the current state. */
  readonly stateChanges: Stream.Stream<ConnectionState>
  /**
   * Server notifications (all but progress, which goes to its request), from when the stream starts; a reader
   * slower than the server loses the oldest (see `notificationBufferSize` and {@link NotificationsDropped}).
   */
  readonly notifications: Stream.Stream<McpSchema.ServerNotification>
  /**
   * Subscribes now, for the life of the Scope: nothing published after this effect returns is missed, however
   * late the returned stream starts, as long as it reads before `notificationBufferSize` notifications wait
   * (then the oldest are dropped, with a {@link NotificationsDropped} notice).
   */
  readonly subscribe: Effect.Effect<Stream.Stream<McpSchema.ServerNotification>, never, Scope.Scope>

  /**
   * Any request: by its method's definition (`McpMethod`: its parameters encoded and its result decoded by the
   * definition's schemas, its facts honoured as the client's own methods' are), or by name, its result decoded
   * with `schema`.
   */
  readonly request: Request
  readonly notify: (
    method: string,
    params?: Readonly<Record<string, unknown>> | undefined
  ) => Effect.Effect<void, McpError.McpClientError>

  /**
   * Every tool, page after page (as the other `list…` methods: a cursor the server refuses as invalid on a later
   * page restarts the listing once from the first page, for a whole snapshot; the `stream…` methods fail instead).
   */
  readonly listTools: (options?: RequestOptions) => Effect.Effect<ReadonlyArray<McpSchema.Tool>, McpError.McpClientError>
  readonly listToolsPage: (
    cursor?: string | undefined,
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.ListToolsResult, McpError.McpClientError>
  readonly streamTools: (options?: RequestOptions) => Stream.Stream<McpSchema.Tool, McpError.McpClientError>
  /**
   * `tools/call`. A tool whose `execution.taskSupport` is `required` on a 2025-11-25 server that runs tool calls
   * as tasks is called as a task and driven to its end (polling `tasks/get`, then `tasks/result`); so is a call a
   * 2026-07-28 server answers with a task when the `tasks` option is enabled. Interrupting the call cancels the
   * task (`tasks/cancel`); a cancelled or expired task fails with `TaskError`. `client.tasks` gives the handle.
   * A result with `isError: true` is returned as a value, or fails with `ToolFailed` given `{ isError: "fail" }`.
   */
  readonly callTool: CallTool
  /**
   * `tools/call` whose `structuredContent` is decoded with the caller's Schema; a result without structured
   * content, or with content the Schema rejects, is a `ProtocolError`. An `isError` result is still a value.
   */
  readonly callToolStructured: <A, I>(
    params: CallToolParams,
    schema: Schema.Codec<A, I>,
    options?: RequestOptions
  ) => Effect.Effect<
    { readonly result: McpSchema.CallToolResult; readonly structured: A | undefined },
    McpError.McpClientError | McpError.TaskError
  >
  /**
   * One round of a modern `tools/call`, for a caller who runs `input_required` rounds itself (the automatic loop
   * and the handlers are not used): `InputRequired` with the server's input requests and its `requestState`, or
   * `Complete` with the result (checked like `callTool`'s). To go on, call again with the same name and arguments,
   * `inputResponses` (by the requests' keys) and the `requestState` as received. A legacy server never asks this
   * way (it sends requests on the connection): its answer is always `Complete`.
   */
  readonly callToolRound: (params: ToolRoundParams, options?: RequestOptions) => Effect.Effect<
    ToolRound,
    McpError.McpClientError
  >
  /**
   * `tools/call` as a Stream: every progress notification, then the result. Ending the stream early (a `take`, an
   * interrupted consumer) cancels the call.
   */
  readonly callToolStream: (
    params: CallToolParams,
    options?: Omit<RequestOptions, "onProgress">
  ) => Stream.Stream<CallEvent<McpSchema.CallToolResult>, McpError.McpClientError | McpError.TaskError>
  /** Tool calls as tasks, with handles (see `McpTasks`). */
  readonly tasks: McpTasks.Tasks

  readonly listResources: (
    options?: RequestOptions
  ) => Effect.Effect<ReadonlyArray<McpSchema.Resource>, McpError.McpClientError>
  readonly listResourcesPage: (
    cursor?: string | undefined,
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.ListResourcesResult, McpError.McpClientError>
  readonly streamResources: (options?: RequestOptions) => Stream.Stream<McpSchema.Resource, McpError.McpClientError>
  readonly listResourceTemplates: (
    options?: RequestOptions
  ) => Effect.Effect<ReadonlyArray<McpSchema.ResourceTemplate>, McpError.McpClientError>
  readonly streamResourceTemplates: (
    options?: RequestOptions
  ) => Stream.Stream<McpSchema.ResourceTemplate, McpError.McpClientError>
  readonly readResource: (
    params: ReadResourceParams,
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.ReadResourceResult, McpError.McpClientError>

  readonly listPrompts: (
    options?: RequestOptions
  ) => Effect.Effect<ReadonlyArray<McpSchema.Prompt>, McpError.McpClientError>
  readonly streamPrompts: (options?: RequestOptions) => Stream.Stream<McpSchema.Prompt, McpError.McpClientError>
  readonly getPrompt: (
    params: GetPromptParams,
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.GetPromptResult, McpError.McpClientError>

  readonly complete: (
    params: CompleteParams,
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.CompleteResult, McpError.McpClientError>
  /**
   * Notifications for list changes and resource updates, as one Stream in both eras: a modern
   * `subscriptions/listen` (the acknowledgement first, re-listened with backoff after a drop) or legacy
   * `resources/subscribe` plus the server's unsolicited `list_changed` notifications. Ending the stream ends the
   * subscription. Only what the server advertises is asked for.
   */
  readonly listen: (filter: ListenFilter) => Stream.Stream<McpSchema.ServerNotification, McpError.McpClientError>
  /** Legacy `ping`; on a modern server, `server/discover` serves as the liveness check. */
  readonly ping: (options?: RequestOptions) => Effect.Effect<void, McpError.McpClientError>
  /** Legacy `logging/setLevel`; on a modern server the level travels in every request's `_meta`. */
  readonly setLoggingLevel: (level: McpSchema.LoggingLevel) => Effect.Effect<void, McpError.McpClientError>
  /**
   * Swaps the credentials at runtime (HTTP): checks them first (`InvalidOption` keeps the current ones, and so
   * does a transport that takes none: stdio, in-process), then every request sent from now on carries the new
   * ones, including re-sends of requests already out (after an expired session or a refusal) and stream
   * reconnections; nothing is sent with the old bearer again. Private cached results are keyed by
   * `credentialId`; without one, a bearer keys its own partition by fingerprint and OAuth or no credentials
   * start a fresh partition, so the previous credential's private results are never served. Results of
   * requests already in flight are cached under the credential they started with: to serve several users at
   * once, give each its own client.
   */
  readonly setAuth: (
    auth: HttpTransport.Auth,
    options?: { readonly credentialId?: string | undefined }
  ) => Effect.Effect<void, McpError.InvalidOption>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class McpClient extends Context.Service<McpClient, McpClientService>()("@conduit-mcp/client/McpClient") {}

/**
 * Builds a client on the `Transport` in context. Succeeds once the first connection is negotiated; a first
 * connection that fails fails this effect (later failures reconnect on the `reconnect` schedule).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: <const O extends McpClientOptions<unknown> = {}>(
  options?: O
) => Effect.Effect<
  McpClientService,
  McpError.ConnectError | McpError.InvalidOption,
  Transport.Transport | Scope.Scope | Requirements<O>
> = internal.make

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = <const O extends McpClientOptions<unknown> = {}>(
  options?: O
): Layer.Layer<McpClient, McpError.ConnectError | McpError.InvalidOption, Transport.Transport | Requirements<O>> =>
  Layer.effect(McpClient, make(options))

// the transports' modules load when a shortcut layer is built: a client over one never loads the other
const loadStdio = lazyImport(() => import("./StdioTransport.js"))
const loadHttp = lazyImport(() => import("./HttpTransport.js"))

/**
 * A client of a server spawned as a child process and spoken to over its stdin and stdout: {@link layer} over
 * `StdioTransport.layer`, in one layer. On Node.js, `NodeServices.layer` of `@effect/platform-node` gives the
 * process spawner.
 *
 * @example
 * ```ts
 * import { McpClient } from "@conduit-mcp/client"
 * import { NodeServices } from "@effect/platform-node"
 * import { Layer } from "effect"
 *
 * const Everything = McpClient.layerStdio(
 *   { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] },
 *   { clientInfo: { name: "my-app", version: "1.0.0" } }
 * ).pipe(Layer.provide(NodeServices.layer))
 * ```
 *
 * @since 1.0.0
 * @category layers
 */
export const layerStdio = <const O extends McpClientOptions<unknown> = {}>(
  stdio: StdioTransport.StdioTransportOptions,
  options?: O
): Layer.Layer<
  McpClient,
  McpError.ConnectError | McpError.InvalidOption,
  ChildProcessSpawner.ChildProcessSpawner | Requirements<O>
> => Layer.unwrap(Effect.map(loadStdio, (Stdio) => layer(options).pipe(Layer.provide(Stdio.layer(stdio)))))

/**
 * A client of a server at a URL (Streamable HTTP in either era, or HTTP+SSE): {@link layer} over
 * `HttpTransport.layer`, in one layer. It needs an `HttpClient`: `NodeHttpClient.layerUndici` of
 * `@effect/platform-node` on Node.js, `FetchHttpClient.layer` of `effect` anywhere `fetch` is.
 *
 * @example
 * ```ts
 * import { McpClient } from "@conduit-mcp/client"
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Layer } from "effect"
 *
 * const Remote = McpClient.layerHttp({ url: "https://example.com/mcp" }).pipe(
 *   Layer.provide(NodeHttpClient.layerUndici)
 * )
 * ```
 *
 * @since 1.0.0
 * @category layers
 */
export const layerHttp = <
  const T extends HttpTransport.HttpTransportOptions<unknown>,
  const O extends McpClientOptions<unknown> = {}
>(
  http: T,
  options?: O
): Layer.Layer<
  McpClient,
  McpError.ConnectError | McpError.InvalidOption,
  HttpClient.HttpClient | HttpTransport.Requirements<T> | Requirements<O>
> => Layer.unwrap(Effect.map(loadHttp, (Http) => layer(options).pipe(Layer.provide(Http.layer(http)))))

/**
 * The default minimum interval between two refreshes of {@link coalescedRefresh} (1 second): also the default of
 * `McpHub`'s `minRefreshInterval`, of `McpToolkit.live` and the interval of the CLI shell's catalog.
 *
 * @since 0.2.0
 * @category refreshing
 */
export const defaultMinRefreshInterval: Duration.Duration = coalesce.defaultMinInterval

/**
 * Runs `refresh` when asked, coalesced, for the life of the Scope: gives the effect to run on each change
 * notification (it never waits). Changes that arrive while a refresh waits or runs make at most one more refresh,
 * and a refresh starts no sooner than `minInterval` (default 1 second) after the previous one started. A server
 * that announces a change before every answer to the listing that change makes us send (a change storm) is then
 * listed at most once per interval, not as fast as it answers; a change after a quiet interval is read at once.
 *
 * @since 0.2.0
 * @category refreshing
 */
export const coalescedRefresh: (
  refresh: Effect.Effect<void>,
  minInterval?: Duration.Input
) => Effect.Effect<Effect.Effect<void>, never, Scope.Scope> = coalesce.make

/**
 * The budget of a listing collected with {@link collectPages}; each defaults to the client option of the same name
 * (100 pages, 50,000 items, 32 MiB).
 *
 * @since 0.2.0
 * @category models
 */
export interface ListingBudget {
  readonly maxPages?: number | undefined
  readonly maxListItems?: number | undefined
  readonly maxListBytes?: number | undefined
}

/**
 * Every page of a paginated method the client has no listing of its own for (`tasks/list`, `skills/list`, an
 * extension's), following `nextCursor` from the first page, within a total budget as the client's own listings
 * are: a listing that would pass it fails with `ProtocolError` `ListingBudgetExceeded` naming the budget, one whose
 * server gives a cursor again with `RepeatedCursor`, and a failed listing returns nothing.
 *
 * @since 0.2.0
 * @category operations
 */
export const collectPages: <T, E>(
  method: string,
  fetchPage: (cursor: string | undefined) => Effect.Effect<
    { readonly items: ReadonlyArray<T>; readonly nextCursor: string | undefined },
    E
  >,
  budget?: ListingBudget
) => Effect.Effect<ReadonlyArray<T>, E | McpError.ProtocolError> = (method, fetchPage, budget) => {
  // (a budget that is not a positive integer counts as 1)
  const count = (given: number | undefined, fallback: number) =>
    given === undefined ? fallback : Math.max(1, Math.floor(given))
  const pagination = Pagination.make({
    maxPages: count(budget?.maxPages, Pagination.defaultBudget.maxPages),
    maxItems: count(budget?.maxListItems, Pagination.defaultBudget.maxItems),
    maxBytes: count(budget?.maxListBytes, Pagination.defaultBudget.maxBytes)
  }, {})
  return pagination.collect((refused) => pagination.paginate(method, fetchPage, refused), method)
}
