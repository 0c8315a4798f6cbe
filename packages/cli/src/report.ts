/**
 * How a failed command is reported: one sentence on stderr, or under `--json` one JSON object on stdout
 * (`{"error":{"tag","message","exitCode"}}`), and the exit code it stands for.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { type CliError, describe, exitCodeOf } from "./errors.js"
import * as Output from "./output.js"
import * as Text from "./terminalText.js"

/**
 * Prints the failure and returns its exit code.
 *
 * @since 0.1.0
 * @category reporting
 */
export const failure = (error: CliError, json: boolean): Effect.Effect<number> => {
  const exitCode = exitCodeOf(error)
  if (error._tag === "Reported") return Effect.succeed(exitCode)
  // a tool's isError result was printed already: under --json it is the one JSON object
  if (json && error._tag === "ToolFailed") return Effect.succeed(exitCode)
  // the hint's URL aside, a refused authorization is the client's AuthError
  const tag = error._tag === "LoginNeeded" ? "AuthError" : error._tag
  if (json) return Effect.as(Output.json({ error: { tag, message: describe(error), exitCode } }), exitCode)
  return Effect.as(Output.stderr(`conduit: ${Text.block(describe(error))}`), exitCode)
}
