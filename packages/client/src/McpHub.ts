/**
 * Many MCP servers at once: named clients behind one service, each connected on first use and released after an
 * idle time, with an aggregated, namespaced view of their tools, prompts and resources.
 *
 * Servers come from an `mcpServers` configuration (Claude Desktop, Cursor and Claude Code files; VS Code's
 * `servers`), from Effect `Config`, or from code (a name, a transport layer and client options). The clients are
 * kept in effect's `LayerMap`: reference-counted per name, built on first use, closed once unused for
 * `idleTimeToLive`. A server that fails, hangs or is misconfigured fails only what is asked of it, with an error
 * naming it; the others keep serving.
 *
 * Names: a tool `search` of server `docs` is `docs__search` (the separator is configurable). A server name may
 * not contain the separator (nor end with a piece of it), so the first separator in a namespaced name always ends
 * the server's name and two servers' names never collide, whatever their tool names contain.
 *
 * @example
 * ```ts
 * import { McpHub } from "@conduit-mcp/client"
 * import { NodeHttpClient, NodeServices } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 *
 * const Hub = McpHub.layerConfigFile("./mcp.json", { idleTimeToLive: "10 minutes" }).pipe(
 *   Layer.provide(NodeServices.layer),
 *   Layer.provide(NodeHttpClient.layerUndici)
 * )
 * const program = Effect.gen(function*() {
 *   const hub = yield* McpHub.McpHub
 *   const { items, errors } = yield* hub.listTools()
 *   return yield* hub.callTool({ name: items[0].name, arguments: {} })
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import type * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as HttpTransport from "./HttpTransport.js"
import * as internal from "./internal/hub.js"
import * as hubConfig from "./internal/hubConfig.js"
import { HubError, type ServerError, ServerState as serverStateConstructors } from "./internal/hubModel.js"
import type * as McpClient from "./McpClient.js"
import type * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"
import * as StdioTransport from "./StdioTransport.js"
import type * as Transport from "./Transport.js"
import type * as TypedTool from "./TypedTool.js"

// ---------------------------------------------------------------------------------------------------------------
// Errors, a server's state, the current server (defined in internal/hubModel.ts, which the implementation uses)

export {
  /**
   * Every error an `McpClient` may fail with, as a Schema.
   *
   * @since 0.1.0
   * @category errors
   */
  ClientError,
  /**
   * The hub name of the server whose request a handler is serving. The handlers given in the hub's `client`
   * options (`sampling`, `elicitation`, `roots`, `extensions`) serve every server; they read this to tell them
   * apart. Outside a hub it is `undefined`.
   *
   * @since 0.1.0
   * @category references
   */
  CurrentServer,
  /**
   * What the hub refuses before any server is asked: a name it does not know, a misconfigured entry, a tool a
   * filter hides. `server` names the entry concerned (absent for a configuration file that cannot be read at all).
   *
   * @since 0.1.0
   * @category errors
   */
  HubError,
  /**
   * A server failed what was asked of it (connecting, or a call): the client's own typed error, under the
   * server's name.
   *
   * @since 0.1.0
   * @category errors
   */
  ServerError
} from "./internal/hubModel.js"

/**
 * @since 0.1.0
 * @category errors
 */
export type McpHubError = HubError | ServerError

/**
 * The hub's `callTool`: with `isError: "fail"` a result that reports a failure fails with `McpError.ToolFailed`.
 *
 * @since 1.0.0
 * @category models
 */
export interface CallTool {
  (
    params: McpClient.CallToolParams,
    options: McpClient.CallToolOptions & { readonly isError: "fail" }
  ): Effect.Effect<McpSchema.CallToolResult, McpHubError | McpError.ToolFailed>
  (
    params: McpClient.CallToolParams,
    options?: McpClient.CallToolOptions & { readonly isError?: "result" | undefined }
  ): Effect.Effect<McpSchema.CallToolResult, McpHubError>
}

// ---------------------------------------------------------------------------------------------------------------
// Definitions

/**
 * Which tools of a server the hub shows and routes: names or `*` patterns. A tool is shown when `allow` is absent
 * or matches it, and `deny` does not.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolFilter {
  readonly allow?: ReadonlyArray<string> | undefined
  readonly deny?: ReadonlyArray<string> | undefined
}

/**
 * What a definition may add to its transport.
 *
 * @since 0.1.0
 * @category models
 */
export interface DefinitionExtras {
  /** Options of this server's client (merged over the hub's `client` options). */
  readonly client?: McpClient.McpClientOptions | undefined
  readonly tools?: ToolFilter | undefined
}

/**
 * One server: its name and the transport layer its client is built on, built again at each connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerDefinition<R = never> extends DefinitionExtras {
  readonly name: string
  readonly transport: Layer.Layer<Transport.Transport, McpError.InvalidOption, R>
}

/**
 * A configuration entry that cannot become a server; the hub keeps its name and reports `problem`.
 *
 * @since 0.1.0
 * @category models
 */
export interface InvalidServer {
  readonly name: string
  readonly problem: string
}

/**
 * @since 0.1.0
 * @category models
 */
export type ServerSpec<R = never> = ServerDefinition<R> | InvalidServer

/**
 * A server started as a child process, over stdio.
 *
 * @since 0.1.0
 * @category definitions
 */
export const stdio = (
  name: string,
  options: StdioTransport.StdioTransportOptions,
  extras?: DefinitionExtras
): ServerDefinition<ChildProcessSpawner.ChildProcessSpawner> => ({
  name,
  transport: StdioTransport.layer(options),
  ...extras
})

/**
 * A server over Streamable HTTP (or the legacy HTTP+SSE binding, detected).
 *
 * @since 0.1.0
 * @category definitions
 */
export const http = (
  name: string,
  options: HttpTransport.HttpTransportOptions,
  extras?: DefinitionExtras
): ServerDefinition<HttpClient.HttpClient> => ({ name, transport: HttpTransport.layer(options), ...extras })

/**
 * The servers of a parsed `mcpServers` document: each entry of its `mcpServers` object and of its `servers`
 * object (VS Code's key), with `command`/`args`/`env`/`cwd` (stdio) or `url`/`headers` (HTTP), an optional
 * `type` (`stdio`, `http`, `sse`) and `disabled: true` to skip one. Values are taken as written (no `${VAR}`
 * expansion). An entry that cannot be a server is an {@link InvalidServer}; a document without either object fails.
 *
 * @since 0.1.0
 * @category config
 */
export const fromConfig = (
  document: unknown,
  extras?: (name: string) => DefinitionExtras
): Result.Result<ReadonlyArray<ServerSpec<ChildProcessSpawner.ChildProcessSpawner | HttpClient.HttpClient>>, HubError> =>
  Result.mapError(hubConfig.parse(document, extras ?? noExtras), invalidConfig)

const invalidConfig = (detail: string): HubError => new HubError({ reason: "InvalidConfig", detail })

const noExtras = (): DefinitionExtras => ({})

/**
 * Reads an `mcpServers` JSON file (see {@link fromConfig}).
 *
 * @since 0.1.0
 * @category config
 */
export const readConfigFile = (
  path: string,
  extras?: (name: string) => DefinitionExtras
): Effect.Effect<
  ReadonlyArray<ServerSpec<ChildProcessSpawner.ChildProcessSpawner | HttpClient.HttpClient>>,
  HubError,
  FileSystem.FileSystem
> => Effect.mapError(hubConfig.read(path, extras ?? noExtras), invalidConfig)

/**
 * The servers under `key` (default `mcpServers`) of the current `ConfigProvider`: one nested table per server,
 * with the fields of {@link fromConfig} (e.g. `ConfigProvider.fromUnknown({ mcpServers: { … } })`); from a flat
 * source such as the environment, `args` is one comma-separated value.
 *
 * @since 0.1.0
 * @category config
 */
export const config = (
  key = "mcpServers",
  extras?: (name: string) => DefinitionExtras
): Config.Config<ReadonlyArray<ServerSpec<ChildProcessSpawner.ChildProcessSpawner | HttpClient.HttpClient>>> =>
  hubConfig.config(key, extras ?? noExtras)

// ---------------------------------------------------------------------------------------------------------------
// The service

/**
 * @since 0.1.0
 * @category models
 */
export interface McpHubOptions<S extends ServerSpec<unknown> = ServerSpec> {
  readonly servers: ReadonlyArray<S>
  /** How long an unused connection stays open (default 5 minutes; `Infinity` keeps it). */
  readonly idleTimeToLive?: Duration.Input | undefined
  /** Between a server's name and its tool's or prompt's name (default `__`). */
  readonly separator?: string | undefined
  /** Client options for every server; a definition's own `client` options win. */
  readonly client?: McpClient.McpClientOptions | undefined
  /** Tool filters by server name, applied with the definitions' own. */
  readonly filters?: Readonly<Record<string, ToolFilter>> | undefined
  /**
   * How long an aggregated listing waits for one server (connecting included) before reporting it as failed
   * (default 30 seconds); the connection attempt goes on in the background.
   */
  readonly listTimeout?: Duration.Input | undefined
  /**
   * The least time between two refreshes of one list of one server on its change notifications (default 1
   * second, `McpClient.defaultMinRefreshInterval`). Changes announced while a refresh waits or runs make at most
   * one more; a server that announces a change before every answer is listed at most once per interval. Each
   * refresh is one listing of the client, within its budget (`maxPages`, `maxListItems`, `maxListBytes` in the
   * `client` options): a list over budget is not taken, the last one is kept and the failure logged.
   */
  readonly minRefreshInterval?: Duration.Input | undefined
}

/**
 * The state of one server as the hub sees it.
 *
 * @since 0.1.0
 * @category models
 */
export type ServerState = Data.TaggedEnum<{
  /** Not connected: never used, or released after being idle. */
  Idle: {}
  Connecting: {}
  Connected: { readonly era: McpSchema.Era; readonly protocolVersion: McpSchema.ProtocolVersion }
  Reconnecting: { readonly attempt: number; readonly error: McpError.ConnectError }
  /** The last connection attempt failed; the next use tries again. */
  Failed: { readonly error: ServerError }
  /** The definition is unusable (configuration); every use fails with `error`. */
  Invalid: { readonly error: HubError }
}>

/**
 * @since 0.1.0
 * @category constructors
 */
export const ServerState: Data.TaggedEnum.Constructor<ServerState> = serverStateConstructors

/**
 * A tool in the aggregated view: `name` is the namespaced name, `tool` the server's definition.
 *
 * @since 0.1.0
 * @category models
 */
export interface HubTool {
  readonly name: string
  readonly server: string
  readonly tool: McpSchema.Tool
}

/**
 * @since 0.1.0
 * @category models
 */
export interface HubPrompt {
  readonly name: string
  readonly server: string
  readonly prompt: McpSchema.Prompt
}

/**
 * Resources keep their URIs; `server` says where to read them.
 *
 * @since 0.1.0
 * @category models
 */
export interface HubResource {
  readonly server: string
  readonly resource: McpSchema.Resource
}

/**
 * @since 0.1.0
 * @category models
 */
export interface HubResourceTemplate {
  readonly server: string
  readonly template: McpSchema.ResourceTemplate
}

/**
 * An aggregated listing: what the servers that answered offer, and why the others did not.
 *
 * @since 0.1.0
 * @category models
 */
export interface Listing<A> {
  readonly items: ReadonlyArray<A>
  readonly errors: ReadonlyArray<McpHubError>
}

/**
 * The lists the hub aggregates.
 *
 * @since 0.1.0
 * @category models
 */
export type ListKind = "tools" | "prompts" | "resources" | "resourceTemplates"

/**
 * A server's list changed in the aggregate (after its `list_changed`, a reconnection, or a first listing).
 *
 * @since 0.1.0
 * @category models
 */
export interface ListChange {
  readonly server: string
  readonly list: ListKind
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ListOptions {
  /** Ask every server again instead of using the lists already known (default false). */
  readonly refresh?: boolean | undefined
}

/**
 * A typed tool bound to one server of the hub; the declaration is checked again whenever the server's tool list
 * changes.
 *
 * @since 0.1.0
 * @category models
 */
export type BoundTool<A, R> = (
  params: A,
  options?: McpClient.RequestOptions
) => Effect.Effect<R, McpHubError | Schema.SchemaError | TypedTool.ToolFailed | TypedTool.ToolSchemaMismatch>

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Every configured name, the invalid ones included, in definition order. */
  readonly servers: ReadonlyArray<string>
  /** The client of `server`, connected if needed and held open for the Scope. */
  readonly client: (server: string) => Effect.Effect<McpClient.McpClientService, McpHubError, Scope.Scope>
  /** Runs `f` with the client of `server`; client errors come back as `ServerError`. */
  readonly use: <A, R>(
    server: string,
    f: (client: McpClient.McpClientService) => Effect.Effect<A, McpError.McpClientError, R>
  ) => Effect.Effect<A, McpHubError, R>
  readonly state: (server: string) => Effect.Effect<ServerState, HubError>
  /** The state of `server`: the current one, then every change. */
  readonly stateChanges: (server: string) => Stream.Stream<ServerState, HubError>
  /** Every server's state: all current states first, then each change. */
  readonly states: Stream.Stream<{ readonly server: string; readonly state: ServerState }>

  /** Every server's tools (filtered, namespaced); connects the servers whose list is not known yet. */
  readonly listTools: (options?: ListOptions) => Effect.Effect<Listing<HubTool>>
  readonly listPrompts: (options?: ListOptions) => Effect.Effect<Listing<HubPrompt>>
  readonly listResources: (options?: ListOptions) => Effect.Effect<Listing<HubResource>>
  readonly listResourceTemplates: (options?: ListOptions) => Effect.Effect<Listing<HubResourceTemplate>>
  /** The tools already known, without connecting anything. */
  readonly knownTools: Effect.Effect<ReadonlyArray<HubTool>>
  /**
   * Each change of a server's list in the aggregate. A reader that falls 1,000 changes behind loses the oldest (each
   * says only which list to read again).
   */
  readonly changes: Stream.Stream<ListChange>

  /** Splits a namespaced name into its server and the server's own name. */
  readonly resolve: (name: string) => Result.Result<{ readonly server: string; readonly name: string }, HubError>
  /**
   * `tools/call` of a namespaced tool (`server__tool`): the client's parameters and options; with `isError: "fail"`
   * a result that reports a failure fails with `McpError.ToolFailed` (naming the namespaced tool).
   */
  readonly callTool: CallTool
  /** `prompts/get` of a namespaced prompt. */
  readonly getPrompt: (
    params: McpClient.GetPromptParams,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<McpSchema.GetPromptResult, McpHubError>
  /** `resources/read` on one server (a URI is the server's own, not namespaced). */
  readonly readResource: (
    params: { readonly server: string; readonly uri: string },
    options?: McpClient.RequestOptions
  ) => Effect.Effect<McpSchema.ReadResourceResult, McpHubError>
  /** Binds a typed tool to `server`, checked against its tool list now and after every change of it. */
  readonly bindTool: <Name extends string, A, I extends Readonly<Record<string, unknown>>, R, RI>(
    server: string,
    tool: TypedTool.TypedTool<Name, A, I, R, RI>
  ) => Effect.Effect<BoundTool<A, R>, McpHubError | TypedTool.ToolSchemaMismatch>
  /** Closes the connection to `server` now (once no call holds it); the next use connects again. */
  readonly release: (server: string) => Effect.Effect<void, HubError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class McpHub extends Context.Service<McpHub, Service>()("@conduit-mcp/client/McpHub") {}

/**
 * What the servers' transports need (for example `ChildProcessSpawner` for stdio, `HttpClient` for HTTP).
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements<S> = S extends ServerDefinition<infer R> ? R : never

/**
 * Builds a hub. Nothing connects until a server is used.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <S extends ServerSpec<unknown>>(
  options: McpHubOptions<S>
): Effect.Effect<Service, never, Requirements<S> | Scope.Scope> =>
  // each server's requirements are its transport layer's: the union over the definitions, which TypeScript
  // cannot infer from a mixed array without this type parameter
  internal.make(options) as Effect.Effect<Service, never, Requirements<S> | Scope.Scope>

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = <S extends ServerSpec<unknown>>(
  options: McpHubOptions<S>
): Layer.Layer<McpHub, never, Requirements<S>> =>
  Layer.effect(McpHub, make(options))

/**
 * A hub over the servers of an `mcpServers` JSON file (see {@link fromConfig}); a file that cannot be read or has
 * no servers object fails the layer, a bad entry only its own server.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfigFile = (
  path: string,
  options?: Omit<McpHubOptions, "servers">
): Layer.Layer<
  McpHub,
  HubError,
  FileSystem.FileSystem | ChildProcessSpawner.ChildProcessSpawner | HttpClient.HttpClient
> =>
  Layer.effect(
    McpHub,
    Effect.flatMap(readConfigFile(path), (servers) => make({ ...options, servers }))
  )

/**
 * A hub over servers read from `Config` (for example {@link config}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = <S extends ServerSpec<unknown>>(
  servers: Config.Config<ReadonlyArray<S>>,
  options?: Omit<McpHubOptions<S>, "servers">
): Layer.Layer<McpHub, Config.ConfigError, Requirements<S>> =>
  Layer.effect(McpHub, Effect.flatMap(servers, (specs) => make({ ...options, servers: specs })))
