/**
 * The connection a `conduit shell` (or `conduit run`) session keeps: while it is in the context, a command uses it
 * instead of connecting (and closing) on its own.
 *
 * @since 0.1.0
 */
import type * as McpClient from "@conduit-mcp/client/McpClient"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Connection from "./connection.js"

/**
 * @since 0.1.0
 * @category tags
 */
export class SharedClient extends Context.Service<SharedClient, {
  readonly client: McpClient.McpClientService
  readonly resolved: Connection.Resolved
  /** `listen` runs this once its subscriptions are in force, so that the shell goes on only then. */
  readonly listening?: Effect.Effect<void> | undefined
  /**
   * `listen` gives the shell, for as long as it listens, what prints the notifications that arrived by now (the
   * shell runs it before a command prints: see follow.ts).
   */
  readonly follow?: ((catchUp: Effect.Effect<void>) => Effect.Effect<void, never, Scope.Scope>) | undefined
}>()("@conduit-mcp/cli/SharedClient") {}
