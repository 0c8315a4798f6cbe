/**
 * The MCP client for code that awaits promises: a Node service whose handlers are `async` functions, a script, a
 * test. It is the same client (`McpClient`, built from the same layers), with each call a promise: the usual
 * calls (`callTool`, `readResource`, `getPrompt`) go out and come back without starting a fiber each, and every
 * other operation of the client is `run` as an effect.
 *
 * A call rejects with the client's typed error (`McpError.RequestTimeout`, `McpError.McpError`, ...: check its
 * `_tag`), with the defect itself when something broke, or with the signal's reason when its `signal` aborts it;
 * an aborted call is cancelled on the wire the way the era and binding require, as an interrupted fiber's is.
 *
 * @example
 * ```ts
 * import { McpClient, McpPromiseClient, StdioTransport } from "@conduit-mcp/client"
 * import { NodeContext } from "@effect/platform-node"
 * import { Layer } from "effect"
 *
 * const client = await McpPromiseClient.make(
 *   McpClient.layer({ clientInfo: { name: "my-app", version: "1.0.0" } }).pipe(
 *     Layer.provide(StdioTransport.layer({ command: "npx", args: ["-y", "some-mcp-server"] })),
 *     Layer.provide(NodeContext.layer)
 *   )
 * )
 * try {
 *   const result = await client.callTool({ name: "add", arguments: { a: 1, b: 2 } }, { timeout: "5 seconds" })
 * } finally {
 *   await client.close()
 * }
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Runtime from "effect/Runtime"
import * as internal from "./internal/promiseClient.js"
import type * as McpClient from "./McpClient.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * How one call is made.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromiseRequestOptions {
  /** How long to wait for the answer (default: the client's `requestTimeout`). */
  readonly timeout?: Duration.DurationInput | undefined
  /** Progress notifications restart the timeout, up to `maxTotalTimeout`. */
  readonly resetTimeoutOnProgress?: boolean | undefined
  /** The hard ceiling when progress restarts the timeout (default 10 × timeout). */
  readonly maxTotalTimeout?: Duration.DurationInput | undefined
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
 * The client, as promises.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpPromiseClient {
  /** The client service itself, for what `run` runs. */
  readonly client: McpClient.McpClientService
  readonly callTool: (
    params: McpClient.CallToolParams,
    options?: PromiseRequestOptions
  ) => Promise<McpSchema.CallToolResult>
  readonly readResource: (uri: string, options?: PromiseRequestOptions) => Promise<McpSchema.ReadResourceResult>
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
  /**
   * Runs anything else the client offers, as an effect in the client's runtime: the promise settles with its
   * outcome (rejecting as a call does); the signal interrupts it.
   */
  readonly run: <A, E>(
    use: (client: McpClient.McpClientService) => Effect.Effect<A, E>,
    options?: { readonly signal?: AbortSignal | undefined }
  ) => Promise<A>
  /**
   * Closes the client made by {@link make}: the connection ends (a stdio server is stopped), calls still waiting
   * fail. A client made with {@link fromRuntime} leaves its runtime to its owner: this does nothing.
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
export const make: <E>(layer: Layer.Layer<McpClient.McpClient, E>) => Promise<McpPromiseClient> = internal.make

/**
 * The promise client of an `McpClient` in a runtime the application already has (for one `ManagedRuntime`:
 * `await managed.runtime()`): calls run with the runtime's services and fiber refs (its tracer, its logger).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRuntime: (runtime: Runtime.Runtime<McpClient.McpClient>) => McpPromiseClient = internal.fromRuntime
