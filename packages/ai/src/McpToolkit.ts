/**
 * MCP tools as an `effect/ai` `Toolkit`: every tool of one client, or of every server of a hub, offered to a
 * `LanguageModel`, which can then call any of them.
 *
 * Each MCP tool becomes a `Tool` whose parameters' JSON Schema is the server's `inputSchema` as advertised
 * (the model sees exactly what the server asks for; the server validates the arguments), whose description is the
 * tool's, and whose annotations carry `title`, `readOnlyHint`, `destructiveHint`, `idempotentHint` and
 * `openWorldHint` over to `Tool.Title`, `Tool.Readonly`, `Tool.Destructive`, `Tool.Idempotent` and
 * `Tool.OpenWorld` (and the MCP definition itself to {@link Origin}); `Tool.Strict` is `false` (a server's schema
 * is not written for a provider's strict mode). Tools fail in `"return"` mode: a result with `isError`, a
 * transport failure or a server error comes back to the model as `{ error: "…" }` rather than ending the
 * generation. Each tool passes through the `transformTool` option before it is offered (e.g.
 * `Tool.setNeedsApproval`, so that Effect's approval protocol asks before the call).
 *
 * Names: model providers accept `[A-Za-z0-9_-]{1,64}`; any other character becomes `_`, and a name too long,
 * taken by another tool, or one every JavaScript object already answers (`__proto__`, `constructor`, `toString`, …)
 * is cut and given a short hash of the original, so every tool stays reachable. A call of a name the toolkit does
 * not have fails with an `AiError` whose reason is a `ToolNotFoundError`.
 *
 * Bounds: a provider serializes every tool's JSON Schema into each request, so a schema nested deeper than
 * `maxSchemaDepth` levels ({@link defaultMaxSchemaDepth}) or longer than `maxSchemaLength` characters of JSON
 * ({@link defaultMaxSchemaLength}) is not offered: its tool is left out of the toolkit, logged as a warning and
 * listed in {@link McpToolkit.leftOut} as a {@link ToolLeftOut}; the other tools are offered.
 *
 * A toolkit is a snapshot of the tool lists. {@link live} keeps one current: it is rebuilt, on next use, after a
 * server's tool list changes (changes coalesced, see `minRefreshInterval`). Each listing is the client's, within
 * its budget (`maxPages`, `maxListItems`, `maxListBytes`): a list over budget fails {@link make} and {@link live}'s
 * `toolkit` with the client's `ProtocolError` (`ListingBudgetExceeded`) from `fromClient`, and leaves that server
 * out (logged) from `fromHub`.
 *
 * @example
 * ```ts
 * import { McpToolkit } from "@conduit-mcp/ai"
 * import { McpHub } from "@conduit-mcp/client"
 * import { Effect } from "effect"
 * import { LanguageModel } from "effect/ai"
 *
 * const program = Effect.gen(function*() {
 *   const hub = yield* McpHub.McpHub
 *   const tools = yield* McpToolkit.live(McpToolkit.fromHub(hub))
 *   return yield* LanguageModel.generateText({ prompt: "What is 2 + 3?", toolkit: tools.toolkit })
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as McpClient from "@conduit-mcp/client/McpClient"
import type * as McpError from "@conduit-mcp/client/McpError"
import type * as McpHub from "@conduit-mcp/client/McpHub"
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import * as internal from "./internal/toolkit.js"
import type { Failure, Success, ToolLeftOut } from "./internal/toolkitModel.js"

// ---------------------------------------------------------------------------------------------------------------
// Sources

/**
 * One MCP tool offered by a source: `name` is how the source calls it (a hub's namespaced name, or the tool's own
 * name on a single client).
 *
 * @since 0.1.0
 * @category models
 */
export interface SourceTool {
  readonly name: string
  readonly server?: string | undefined
  readonly tool: McpSchema.Tool
}

/**
 * Where the tools come from and how they are called.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source<E> {
  readonly tools: Effect.Effect<ReadonlyArray<SourceTool>, E>
  readonly call: (
    name: string,
    args: Readonly<Record<string, unknown>>,
    options: McpClient.RequestOptions
  ) => Effect.Effect<McpSchema.CallToolResult, { readonly message: string }>
  /** Emits after the tool list changed. */
  readonly changes: Stream.Stream<unknown>
}

/**
 * The tools of one client, under their own names; a `notifications/tools/list_changed` is a change.
 *
 * @since 0.1.0
 * @category sources
 */
export const fromClient: (client: McpClient.McpClientService) => Source<McpError.McpClientError> =
  internal.fromClient

/**
 * The tools of every server of a hub (after its filters), under their namespaced names. A server that cannot
 * list its tools is left out of the toolkit (and logged); the others are offered.
 *
 * @since 0.1.0
 * @category sources
 */
export const fromHub: (hub: McpHub.Service) => Source<never> = internal.fromHub

// ---------------------------------------------------------------------------------------------------------------
// Tools

export {
  /**
   * The deepest nesting of a tool's `inputSchema` offered to a model: 64 levels (the schema is level 1, each object
   * or array inside it one more). `JSON.stringify`, which every provider runs on it, recurses.
   *
   * @since 0.2.0
   * @category bounds
   */
  defaultMaxSchemaDepth,
  /**
   * The longest `inputSchema` offered to a model: 65,536 characters of compact JSON (sent with every request).
   *
   * @since 0.2.0
   * @category bounds
   */
  defaultMaxSchemaLength,
  /**
   * What the model gets back from a failed call: the tool's error text (`isError`), or the client's or hub's error
   * message.
   *
   * @since 0.1.0
   * @category schemas
   */
  Failure,
  /**
   * The MCP origin of a tool, as an annotation: the source's name for it, its server (from a hub) and its
   * definition.
   *
   * @since 0.1.0
   * @category annotations
   */
  Origin,
  /**
   * The arguments as the model gives them: any JSON object, described to the model by the tool's `inputSchema`.
   * A tool's handler checks the arguments with it (the tool itself is a `Tool.dynamic` whose parameters are the
   * server's JSON Schema, so the toolkit does not decode them): arguments that are not an object come back to the
   * model as a failure, an `AiError` whose reason is a `ToolParameterValidationError`.
   *
   * @since 0.1.0
   * @category schemas
   */
  Parameters,
  /**
   * What the model gets back from a successful call: the tool's content blocks and its structured content.
   *
   * @since 0.1.0
   * @category schemas
   */
  Success,
  /**
   * A tool not offered to the model: its `inputSchema` passes a bound (`SchemaDepth`, `SchemaSize`). `tool` is the
   * source's name for it; the message is escaped for a log line (the name is the server's).
   *
   * @since 0.2.0
   * @category errors
   */
  ToolLeftOut
} from "./internal/toolkitModel.js"

/**
 * One MCP tool as an `effect/ai` tool: a `Tool.dynamic` with the server's `inputSchema` as its JSON Schema.
 *
 * @since 0.1.0
 * @category models
 */
export type McpTool = Tool.Tool<string, {
  readonly parameters: typeof Schema.Unknown
  readonly success: typeof Success
  readonly failure: typeof Failure
  readonly failureMode: "return"
}>

/**
 * @since 0.1.0
 * @category models
 */
export type Tools = Record<string, McpTool>

/**
 * A progress notification of a tool call the model asked for.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProgressEvent {
  /** The tool's name as the model knows it. */
  readonly tool: string
  readonly origin: SourceTool
  readonly progress: McpSchema.Progress
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Receives each progress notification of every call (and asks servers for them). Keep it short. */
  readonly onProgress?: ((event: ProgressEvent) => Effect.Effect<void>) | undefined
  /** Options of every call (timeout, `resetTimeoutOnProgress`, `_meta`, …). */
  readonly requestOptions?: Omit<McpClient.RequestOptions, "onProgress"> | undefined
  /** Longest tool name given to the model (default 64). */
  readonly maxNameLength?: number | undefined
  /** Deepest `inputSchema` offered to the model, in levels (default {@link defaultMaxSchemaDepth}). */
  readonly maxSchemaDepth?: number | undefined
  /** Longest `inputSchema` offered to the model, in characters of JSON (default {@link defaultMaxSchemaLength}). */
  readonly maxSchemaLength?: number | undefined
  /**
   * {@link live}: the least time between two of the source's changes that drop the current build (default 1
   * second, `McpClient.defaultMinRefreshInterval`). Changes that come while one waits make at most one more, so a
   * server that announces a change before every answer to `tools/list` makes the toolkit list its tools at most
   * once per interval; a change after a quiet interval drops the build at once.
   */
  readonly minRefreshInterval?: Duration.Input | undefined
  /**
   * Each tool passes through it before it is offered, with its origin (Effect's `McpClient.toolkit` option of the
   * same name). It must return a tool derived from the one it is given, with the same name, schemas and failure
   * mode: e.g. `tool.setNeedsApproval(true)` (Effect's approval protocol then asks before the call) or
   * `tool.annotate(...)`. A tool whose name changed is a defect of {@link make}.
   */
  readonly transformTool?: ((tool: McpTool, origin: SourceTool) => McpTool) | undefined
}

/**
 * A toolkit built from one listing of the source: the `Toolkit`, the layer of its handlers (which call the MCP
 * tools), and both together.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpToolkit {
  readonly toolkit: Toolkit.Toolkit<Tools>
  readonly layer: Layer.Layer<Tool.HandlersFor<Tools>>
  /** The toolkit with its handlers, ready for `LanguageModel.generateText({ toolkit })`. */
  readonly withHandler: Effect.Effect<Toolkit.WithHandler<Tools>>
  /** Model-visible name → where it comes from. */
  readonly origins: ReadonlyMap<string, SourceTool>
  /** The tools not offered, and why (each was also logged as a warning). */
  readonly leftOut: ReadonlyArray<ToolLeftOut>
}

/**
 * Lists the source's tools once and builds their toolkit.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: <E>(source: Source<E>, options?: Options) => Effect.Effect<McpToolkit, E> = internal.make

/**
 * A toolkit kept current: `toolkit` is the latest build, rebuilt on first use after the source's tools change.
 *
 * @since 0.1.0
 * @category models
 */
export interface Live<E> {
  /** Pass it as `generateText({ toolkit })`: each generation takes the toolkit current at its start. */
  readonly toolkit: Effect.Effect<Toolkit.WithHandler<Tools>, E>
  /** The current build. */
  readonly current: Effect.Effect<McpToolkit, E>
  /** Drops the current build; the next use lists the tools again. */
  readonly invalidate: Effect.Effect<void>
}

/**
 * Watches the source's changes for the life of the Scope and rebuilds the toolkit after each.
 *
 * @since 0.1.0
 * @category constructors
 */
export const live: <E>(source: Source<E>, options?: Options) => Effect.Effect<Live<E>, never, Scope.Scope> =
  internal.live

/**
 * The name a source's tool gets for the model, given the names already taken (see the module's note on names).
 *
 * @since 0.1.0
 * @category names
 */
export const modelName: (name: string, taken: ReadonlySet<string>, maxLength?: number) => string = internal.modelName
