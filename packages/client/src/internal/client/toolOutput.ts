/**
 * Tool output validation: the output schema of every tool listed so far, and the check that a call's
 * `structuredContent` matches it (and, for `callToolStructured`, the caller's own Schema).
 *
 * A declared output schema is always checked: a result with `structuredContent` from a tool the client has not
 * seen in a listing, before any listing was made on this client, makes it list the tools once (all pages, one
 * listing however many calls wait for it) and then check the result. Once a listing was made, a tool it did not show has no schema to check, until the
 * application lists again (`listTools`, or a page of it) or the server announces a change of its tools (then
 * everything learnt is forgotten, and the next structured result lists again). A listing that fails leaves the
 * result unchecked, with a warning.
 *
 * The JSON Schema validator is loaded with the first output schema learnt: a client whose server declares none
 * never loads it.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import type * as JsonSchema from "../../JsonSchema.js"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"

const invalid = (detail: string, cause?: unknown) =>
  new McpError.ProtocolError({
    reason: "InvalidResult",
    method: "tools/call",
    detail,
    ...(cause !== undefined ? { cause } : {})
  })

/**
 * @internal
 */
export interface ToolOutput {
  /** Remembers (or forgets) the output schemas of a page of tools (loading the validator for the first one). */
  readonly learn: (tools: ReadonlyArray<McpSchema.Tool>) => Effect.Effect<void>
  /** Forgets every output schema (the server's tools changed: the next `tools/list` teaches them again). */
  readonly forget: () => void
  /** Whether a result of this tool can be checked without listing first. */
  readonly known: (name: string) => boolean
  /** Runs `list` (which learns through `learn`) unless a listing was already made; one at a time. */
  readonly listOnce: <E>(list: Effect.Effect<void, E>) => Effect.Effect<void>
  /** A tool that declares an output schema must return structured content matching it (unless `isError`). */
  readonly check: (
    name: string,
    result: McpSchema.CallToolResult
  ) => Result.Result<McpSchema.CallToolResult, McpError.ProtocolError>
}

/**
 * @internal
 */
export const make = (): ToolOutput => {
  const outputSchemas = new Map<string, Readonly<Record<string, unknown>>>()
  // set before the first schema is kept: every schema in `outputSchemas` has a validator to check it
  let validator: { readonly module: typeof JsonSchema; readonly cache: JsonSchema.Cache } | undefined
  const loadValidator = Effect.suspend(() =>
    validator !== undefined ? Effect.void : Effect.map(Effect.promise(() => import("../../JsonSchema.js")), (module) => {
      validator ??= { module, cache: module.unsafeMakeCache() }
    })
  )
  const keep = (tools: ReadonlyArray<McpSchema.Tool>) => {
    listed = true
    for (const tool of tools) {
      if (tool.outputSchema === undefined) outputSchemas.delete(tool.name)
      else outputSchemas.set(tool.name, tool.outputSchema)
    }
  }
  let listed = false
  const lock = Semaphore.makeUnsafe(1)
  return {
    known: (name) => listed || outputSchemas.has(name),
    listOnce: (list) =>
      lock.withPermits(1)(Effect.suspend(() =>
        listed ? Effect.void : list.pipe(
          Effect.catchCause((cause) =>
            Effect.logWarning("the tool list could not be fetched: this result's output schema is not checked", cause)
          ),
          Effect.annotateLogs({ module: "McpClient", method: "tools/list" })
        )
      )),
    learn: (tools) =>
      validator === undefined && tools.some((tool) => tool.outputSchema !== undefined)
        ? Effect.map(loadValidator, () => keep(tools))
        : Effect.sync(() => keep(tools)),
    forget: () => {
      // the next structured result of a tool not listed since lists again
      listed = false
      outputSchemas.clear()
    },
    check: (name, result) => {
      const schema = outputSchemas.get(name)
      if (schema === undefined || validator === undefined || result.isError === true) return Result.succeed(result)
      if (result.structuredContent === undefined) {
        return Result.fail(invalid(`${name} declares an output schema but returned no structuredContent`))
      }
      const verdict = validator.cache.validate(schema, result.structuredContent)
      if (Result.isSuccess(verdict)) return Result.succeed(result)
      const error = verdict.failure
      return Result.fail(invalid(
        error._tag === "JsonSchemaMismatch"
          ? `the structuredContent of ${name} does not match its output schema: ${
            validator.module.formatIssues(error.issues)
          }`
          : `the output schema of ${name} cannot be used: ${error.message}`
      ))
    }
  }
}

/**
 * A result's `structuredContent` decoded with the caller's Schema; an `isError` result is still a value.
 *
 * @internal
 */
export const structured = <A, I>(
  params: McpClient.CallToolParams,
  schema: Schema.Codec<A, I>,
  result: McpSchema.CallToolResult
): Effect.Effect<
  { readonly result: McpSchema.CallToolResult; readonly structured: A | undefined },
  McpError.ProtocolError
> => {
  if (result.isError === true) return Effect.succeed({ result, structured: undefined })
  if (result.structuredContent === undefined) {
    return Effect.fail(invalid(`${params.name} returned no structuredContent`))
  }
  return Effect.mapBoth(Schema.decodeUnknownEffect(schema)(result.structuredContent), {
    onFailure: (cause) =>
      invalid(`the structuredContent of ${params.name} does not match the expected schema: ${cause.message}`, cause),
    onSuccess: (structured) => ({ result, structured })
  })
}
