/**
 * `--timeout` on one command of `conduit shell` or `conduit run`: the command's own deadline, in place of the
 * session's. Every request the command makes waits up to it (a tool call reporting progress has it restarted, as
 * in one-shot runs), and the command as a whole ends by it: past it, whatever is still running is cancelled and
 * the command fails as timed out (exit code 124 in a script).
 *
 * @since 0.1.0
 */
import type * as McpClient from "@conduit-mcp/client/McpClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { TimedOut } from "./errors.js"
import type * as Grammar from "./grammar.js"

/**
 * The option as the shell's commands take it.
 *
 * @since 0.1.0
 * @category options
 */
export const option: Grammar.OptionSpec = {
  name: "timeout",
  value: "<duration>",
  description: "This command's deadline (30s, 500ms, 2m; a bare number is seconds) instead of the session's"
}

/**
 * The client with every request of the command given `timeout` (a request's own timeout, where it sets one, wins).
 *
 * @since 0.1.0
 * @category constructors
 */
export const client = (
  client: McpClient.McpClientService,
  timeout: Duration.Duration
): McpClient.McpClientService => {
  const given = <O extends McpClient.RequestOptions>(options: O | undefined) => ({ timeout, ...options })
  return {
    ...client,
    request: (method, params, schema, options) => client.request(method, params, schema, given(options)),
    listTools: (options) => client.listTools(given(options)),
    listToolsPage: (cursor, options) => client.listToolsPage(cursor, given(options)),
    callTool: (params, options) => client.callTool(params, given(options)),
    callToolStructured: (params, schema, options) => client.callToolStructured(params, schema, given(options)),
    callToolRound: (params, options) => client.callToolRound(params, given(options)),
    listResources: (options) => client.listResources(given(options)),
    listResourcesPage: (cursor, options) => client.listResourcesPage(cursor, given(options)),
    listResourceTemplates: (options) => client.listResourceTemplates(given(options)),
    readResource: (uri, options) => client.readResource(uri, given(options)),
    listPrompts: (options) => client.listPrompts(given(options)),
    getPrompt: (params, options) => client.getPrompt(params, given(options)),
    complete: (params, options) => client.complete(params, given(options)),
    ping: (options) => client.ping(given(options))
  }
}

/**
 * The command bounded by its deadline.
 *
 * @since 0.1.0
 * @category combinators
 */
export const bounded = <A, E, R>(
  command: Effect.Effect<A, E, R>,
  timeout: Duration.Duration
): Effect.Effect<A, E | TimedOut, R> =>
  Effect.timeoutOrElse(command, {
    duration: timeout,
    orElse: () => Effect.fail(new TimedOut({ message: `timed out (--timeout ${Duration.format(timeout)})` }))
  })
