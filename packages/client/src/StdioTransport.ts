/**
 * The stdio transport: runs an MCP server as a child process and exchanges newline-delimited JSON-RPC messages
 * over its stdin and stdout. The child is started through Effect's `ChildProcessSpawner`, so the
 * application provides the platform (for Node, `NodeServices.layer` from `@effect/platform-node`).
 *
 * Closing a connection's Scope closes the child's stdin, waits for it to exit, then signals its process group
 * with SIGTERM and SIGKILL, then its descendants outside that group (a child started in a new session, found by
 * parent links in `/proc`, or with `ps` where `/proc` is absent, as listed before the server exited) with SIGTERM
 * and, after `termTimeout`, SIGKILL; every step is bounded in time. SECURITY.md says what can still escape.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/stdioTransport.js"
import type * as McpError from "./McpError.js"
import * as Transport from "./Transport.js"

/**
 * Which environment the child gets:
 * - `"minimal"` (the default): a small allowlist of the parent's variables ({@link minimalEnvironment}: where the
 *   user's home and programs are, who they are, their terminal, locale and temporary directory) merged with `env`,
 *   so API keys and tokens in the parent's environment do not reach a server nobody gave them to;
 * - `"inherit"`: the parent's whole environment merged with `env` (opt in, for servers that need more);
 * - `"custom"`: exactly `env`.
 *
 * @since 0.1.0
 * @category models
 */
export type EnvPolicy = "inherit" | "minimal" | "custom"

/**
 * @since 0.1.0
 * @category models
 */
export interface StdioTransportOptions {
  /** The program to run. It is not run through a shell. */
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  /** Working directory of the child; the parent's when omitted. */
  readonly cwd?: string | undefined
  /** Variables for the child, combined with the parent's according to `envPolicy`. */
  readonly env?: Readonly<Record<string, string>> | undefined
  /** Defaults to `"minimal"`: the parent's secrets stay with the parent. */
  readonly envPolicy?: EnvPolicy | undefined
  /** Largest message the server may send, in bytes (default 64 MiB). A larger one closes the connection. */
  readonly maxFrameBytes?: number | undefined
  /**
   * How deep the arrays and objects of one line may nest (default 512), checked in one pass over the line before it
   * is parsed; a deeper line is dropped and logged, and counts against `maxRefusedFrames`.
   */
  readonly maxFrameDepth?: number | undefined
  /**
   * How many values one line may hold, counted as its arrays, objects and the commas between values (default
   * 1 000 000), checked with the depth; a line with more is dropped and logged, and counts against
   * `maxRefusedFrames`.
   */
  readonly maxFrameValues?: number | undefined
  /**
   * How many lines the server may send that are dropped (malformed JSON, past `maxFrameDepth` or `maxFrameValues`,
   * not JSON-RPC) before the connection is closed with `TransportError` `TooManyRefusedFrames` (default 100): that
   * many at once, earned back at that many a minute.
   */
  readonly maxRefusedFrames?: number | undefined
  /** How many of the child's last stderr lines to keep for error reports (default 50). */
  readonly stderrTailLines?: number | undefined
  /** How long to wait for the child to exit after its stdin is closed (default 2 seconds). */
  readonly closeTimeout?: Duration.Input | undefined
  /**
   * How long to wait for the child to exit after SIGTERM before SIGKILL (default 2 seconds), and then as long for
   * its descendants outside its process group.
   */
  readonly termTimeout?: Duration.Input | undefined
}

/**
 * The parent's variables a `"minimal"` environment keeps, when they are set.
 *
 * @since 0.1.0
 * @category constants
 */
export const minimalEnvironment: ReadonlyArray<string> = internal.minimalEnvironment

/**
 * The child process behind the current connection, for diagnostics.
 *
 * @since 0.1.0
 * @category tags
 */
export class StdioProcess extends Context.Service<StdioProcess, {
  /** The lines the server writes to stderr, across restarts of the child, from the moment of subscription. */
  readonly stderr: Stream.Stream<string>
  /** The last stderr lines of the most recent child, oldest first. */
  readonly stderrTail: Effect.Effect<ReadonlyArray<string>>
}>()("@conduit-mcp/client/StdioTransport/StdioProcess") {}

/**
 * Builds the transport and the process diagnostics service. The options are checked first: an invalid one
 * fails with `InvalidOption` before anything is started.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: StdioTransportOptions): Effect.Effect<
  {
    readonly transport: Transport.Transport["Service"]
    readonly process: StdioProcess["Service"]
  },
  McpError.InvalidOption,
  ChildProcessSpawner.ChildProcessSpawner | Scope.Scope
> =>
  internal.make(options)

/**
 * The stdio transport as a Layer. It also provides {@link StdioProcess}.
 *
 * @example
 * ```ts
 * import * as StdioTransport from "@conduit-mcp/client/StdioTransport"
 * import * as NodeServices from "@effect/platform-node/NodeServices"
 * import * as Layer from "effect/Layer"
 *
 * const TransportLive = StdioTransport.layer({
 *   command: "npx",
 *   args: ["-y", "@modelcontextprotocol/server-everything"],
 *   // the server gets PATH, HOME and the like (the default, "minimal"), plus this
 *   env: { EVERYTHING_MODE: "demo" }
 * }).pipe(Layer.provide(NodeServices.layer))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: StdioTransportOptions
): Layer.Layer<Transport.Transport | StdioProcess, McpError.InvalidOption, ChildProcessSpawner.ChildProcessSpawner> =>
  Layer.effectContext(
    Effect.map(make(options), ({ process, transport }) =>
      Context.make(Transport.Transport, transport).pipe(Context.add(StdioProcess, process)))
  )

/**
 * {@link layer} with options read from `Config`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  config: Config.Wrap<StdioTransportOptions>
): Layer.Layer<
  Transport.Transport | StdioProcess,
  McpError.InvalidOption | Config.ConfigError,
  ChildProcessSpawner.ChildProcessSpawner
> => Layer.unwrap(Effect.map(Config.unwrap(config), layer))
