/**
 * `--timeout` on one command of `conduit shell` or `conduit run`: the command's own deadline, in place of the
 * session's. Every request the command makes waits up to it (a tool call reporting progress has it restarted, as
 * in one-shot runs), and the command as a whole ends by it: past it, whatever is still running is cancelled and
 * the command fails as timed out (exit code 124 in a script). Its requests take it through
 * `McpClient.withRequestTimeout`, which every method of the client honours.
 *
 * @since 0.1.0
 */
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
