/**
 * What the conformance harness hands the driver: the scenario name and the protocol revision in environment
 * variables, scenario data as a JSON object in `MCP_CONFORMANCE_CONTEXT`, and the server URL as the last
 * command-line argument.
 *
 * @since 0.0.0
 */
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

/**
 * The driver could not start: a missing or malformed input.
 *
 * @since 0.0.0
 * @category errors
 */
export class InputError extends Data.TaggedError("InputError")<{ readonly message: string }> {}

/**
 * @since 0.0.0
 * @category models
 */
export interface Environment {
  readonly scenario: string
  readonly protocolVersion: McpSchema.ProtocolVersion
  readonly url: URL
  readonly context: Readonly<Record<string, unknown>>
}

const Context = Schema.fromJsonString(Schema.Record(Schema.String, Schema.Unknown))

/**
 * The revision a scenario runs at when the harness names none: its default in 0.2.0-alpha.12.
 *
 * @since 0.0.0
 * @category constants
 */
export const defaultVersion: McpSchema.ProtocolVersion = "2025-11-25"

/**
 * Reads the environment and the arguments.
 *
 * @since 0.0.0
 * @category constructors
 */
export const read = (
  env: Readonly<Record<string, string | undefined>>,
  argv: ReadonlyArray<string>
): Effect.Effect<Environment, InputError> =>
  Effect.gen(function*() {
    const scenario = env.MCP_CONFORMANCE_SCENARIO
    if (scenario === undefined || scenario.length === 0) {
      return yield* new InputError({ message: "MCP_CONFORMANCE_SCENARIO is not set" })
    }
    const version = env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? defaultVersion
    if (!McpSchema.isLegacyVersion(version) && !McpSchema.isModernVersion(version)) {
      return yield* new InputError({ message: `unknown protocol version ${JSON.stringify(version)}` })
    }
    const last = argv.at(-1)
    if (last === undefined || !URL.canParse(last)) {
      return yield* new InputError({ message: "the server URL must be the last argument" })
    }
    const raw = env.MCP_CONFORMANCE_CONTEXT
    const context = raw === undefined ? Result.succeed({}) : Schema.decodeUnknownResult(Context)(raw)
    if (Result.isFailure(context)) {
      return yield* new InputError({ message: "MCP_CONFORMANCE_CONTEXT is not a JSON object" })
    }
    return { scenario, protocolVersion: version, url: new URL(last), context: context.success }
  })

/**
 * A string field of the scenario context.
 *
 * @since 0.0.0
 * @category getters
 */
export const field = (environment: Environment, name: string): Effect.Effect<string, InputError> => {
  const value = environment.context[name]
  return typeof value === "string"
    ? Effect.succeed(value)
    : Effect.fail(new InputError({ message: `the scenario context has no string field ${name}` }))
}
