/**
 * The MCP client for code that awaits promises: a Node service whose handlers are `async` functions, a script, a
 * test. It is the same client (`McpClient`, built from the same layers), with each call a promise: the usual
 * calls (`callTool`, `readResource`, `getPrompt`) go out and come back without starting a fiber each, and every
 * other operation of the client is `run` as an effect.
 *
 * A call rejects with the client's typed error itself (`McpError.RequestTimeout`, `McpError.McpError`, ...:
 * narrow it with `McpError.isMcpClientError`, then check its `_tag`), not with a `FiberFailure` as
 * `Effect.runPromise` would; with the defect when something broke; with the signal's reason when its `signal`
 * aborts it (the call is then cancelled on the wire the way the era and binding require, as an interrupted
 * fiber's is, including the rounds of an `input_required` answer still running); and, once the client is closed,
 * with a `TransportError` whose reason is `Closed`.
 *
 * @example
 * ```ts
 * import { McpClient, McpPromiseClient, ToolResult } from "@conduit-mcp/client"
 * import { NodeServices } from "@effect/platform-node"
 * import { Layer } from "effect"
 *
 * export const addOnce = async (): Promise<string> => {
 *   const client = await McpPromiseClient.make(
 *     McpClient.layerStdio({ command: "npx", args: ["-y", "some-mcp-server"] }).pipe(Layer.provide(NodeServices.layer))
 *   )
 *   try {
 *     const result = await client.callTool({ name: "add", arguments: { a: 1, b: 2 } }, { timeout: "5 seconds" })
 *     return ToolResult.text(result)
 *   } finally {
 *     await client.close()
 *   }
 * }
 * ```
 *
 * @since 0.1.0
 */
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as internal from "./internal/promiseClient.js"
import type * as McpClient from "./McpClient.js"
import type * as McpMethod from "./McpMethod.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * How one call is made.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromiseRequestOptions {
  /** How long to wait for the answer (default: the client's `requestTimeout`). */
  readonly timeout?: Duration.Input | undefined
  /** Progress notifications restart the timeout, up to `maxTotalTimeout`. */
  readonly resetTimeoutOnProgress?: boolean | undefined
  /** The hard ceiling when progress restarts the timeout (default 10 × timeout). */
  readonly maxTotalTimeout?: Duration.Input | undefined
  /**
   * Receives every progress notification of this call (and asks the server for them). It runs where the
   * connection reads, so keep it short; a throw of it is logged and goes no further.
   */
  readonly onProgress?: ((progress: McpSchema.Progress) => void) | undefined
  /** Extra `_meta` entries for the request (see `McpClient.RequestOptions`). */
  readonly meta?: Readonly<Record<string, unknown>> | undefined
  /** Gives the call up: the promise rejects with the signal's reason and the request is cancelled. */
  readonly signal?: AbortSignal | undefined
}

/**
 * The client, as promises. `R`: the services of the runtime it runs in (the client's, and whatever else the layer
 * or runtime it was made from provides), which `run` may use.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpPromiseClient<R = McpClient.McpClient> {
  /** The client service itself, for what `run` runs. */
  readonly client: McpClient.McpClientService
  /**
   * `tools/call`. A result with `isError: true` resolves as a value, or rejects with `McpError.ToolFailed` given
   * `{ isError: "fail" }`.
   */
  readonly callTool: (
    params: McpClient.CallToolParams,
    options?: PromiseRequestOptions & { readonly isError?: "result" | "fail" | undefined }
  ) => Promise<McpSchema.CallToolResult>
  readonly readResource: (
    params: McpClient.ReadResourceParams,
    options?: PromiseRequestOptions
  ) => Promise<McpSchema.ReadResourceResult>
  readonly getPrompt: (
    params: McpClient.GetPromptParams,
    options?: PromiseRequestOptions
  ) => Promise<McpSchema.GetPromptResult>
  readonly complete: (
    params: McpClient.CompleteParams,
    options?: PromiseRequestOptions
  ) => Promise<McpSchema.CompleteResult>
  readonly listTools: (options?: PromiseRequestOptions) => Promise<ReadonlyArray<McpSchema.Tool>>
  readonly listResources: (options?: PromiseRequestOptions) => Promise<ReadonlyArray<McpSchema.Resource>>
  readonly listResourceTemplates: (
    options?: PromiseRequestOptions
  ) => Promise<ReadonlyArray<McpSchema.ResourceTemplate>>
  readonly listPrompts: (options?: PromiseRequestOptions) => Promise<ReadonlyArray<McpSchema.Prompt>>
  readonly ping: (options?: PromiseRequestOptions) => Promise<void>
  /** A request by its method's definition (an extension's method): see `McpClient.request` and `McpMethod`. */
  readonly request: <M extends McpMethod.Any>(
    method: M,
    ...args: [void] extends [McpMethod.Params<M>] ? [params?: McpMethod.Params<M>, options?: PromiseRequestOptions]
      : [params: McpMethod.Params<M>, options?: PromiseRequestOptions]
  ) => Promise<McpMethod.Result<M>>
  /**
   * Runs anything else the client offers, as an effect in the client's runtime (with its services): the promise
   * settles with its outcome (rejecting as a call does); the signal interrupts it, and so does `close`.
   */
  readonly run: <A, E>(
    use: (client: McpClient.McpClientService) => Effect.Effect<A, E, R>,
    options?: { readonly signal?: AbortSignal | undefined }
  ) => Promise<A>
  /**
   * Closes the client: calls still waiting reject (`TransportError`, reason `Closed`) and are cancelled, and later
   * ones reject at once; then, for a client made by {@link make}, the connection ends (a stdio server is stopped)
   * and the layer's resources are released. A client made with {@link fromRuntime} leaves the runtime to its
   * owner.
   */
  readonly close: () => Promise<void>
}

/**
 * Builds the client's layer and connects: the promise settles once the client is connected (rejecting with the
 * connection's typed error, after what was built is released).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: <R, E>(
  layer: Layer.Layer<R | McpClient.McpClient, E>
) => Promise<McpPromiseClient<R | McpClient.McpClient>> = internal.make

/**
 * The promise client of an `McpClient` in a context the application already has (for one `ManagedRuntime`:
 * `await managed.context()`): calls run with the context's services and references (its tracer, its logger).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRuntime: <R>(
  context: Context.Context<R | McpClient.McpClient>
) => McpPromiseClient<R | McpClient.McpClient> = (context) => internal.fromRuntime(context)
