/**
 * Typed tools: declare a tool's parameters and result with Schema, and call it as a typed function.
 *
 * Binding a declaration to a client lists the server's tools and checks the declaration against the tool's
 * advertised `inputSchema` before anything is called: a parameter the server requires that the Schema leaves out
 * or makes optional, a property the server does not take, or a type the server does not accept is a
 * `ToolSchemaMismatch` naming the tool and every such property. The result is decoded from `structuredContent`,
 * or from the text content when the server sends none (the text itself, or the JSON it holds); an `isError`
 * result is a `ToolFailed`.
 *
 * @example
 * ```ts
 * import { McpClient, TypedTool } from "@conduit-mcp/client"
 * import { Effect, Schema } from "effect"
 *
 * const Add = TypedTool.make("add", {
 *   parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
 *   success: Schema.Struct({ sum: Schema.Number })
 * })
 *
 * const program = Effect.gen(function*() {
 *   const add = yield* TypedTool.bind(Add) // checked against the server's tool list
 *   const { sum } = yield* add({ a: 2, b: 3 })
 *   return sum
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as internal from "./internal/typedTool.js"
import * as McpClient from "./McpClient.js"
import type * as McpError from "./McpError.js"
import * as McpErrors from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * A tool declared with Schema: what the caller passes (`A`, encoded to `I` on the wire) and what it gets back
 * (`R`, decoded from `RI`).
 *
 * @since 0.1.0
 * @category models
 */
export interface TypedTool<Name extends string, A, I extends Readonly<Record<string, unknown>>, R, RI> {
  readonly name: Name
  readonly parameters: Schema.Codec<A, I>
  readonly success: Schema.Codec<R, RI>
  /** The JSON Schema of the encoded parameters, compared with the server's `inputSchema`. */
  readonly jsonSchema: Readonly<Record<string, unknown>>
}

/**
 * What the check needs of a declaration.
 *
 * @since 0.1.0
 * @category models
 */
export interface Declaration {
  readonly name: string
  readonly jsonSchema: Readonly<Record<string, unknown>>
}

/**
 * One way the declaration and the server disagree, at a JSON Pointer into the arguments (`""` is the whole).
 *
 * @since 0.1.0
 * @category errors
 */
export const Issue = Schema.Struct({
  path: Schema.String,
  reason: Schema.Literals(["NotAdvertised", "MissingRequired", "WrongType", "UnknownProperty"]),
  detail: Schema.String
})

/**
 * @since 0.1.0
 * @category errors
 */
export type Issue = typeof Issue.Type

/**
 * The declaration does not match what the server advertises for the tool (or the server has no such tool).
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolSchemaMismatch extends Schema.TaggedError<ToolSchemaMismatch>(
  "@conduit-mcp/client/ToolSchemaMismatch"
)("ToolSchemaMismatch", {
  tool: Schema.String,
  issues: Schema.Array(Issue)
}) {
  override get message(): string {
    return `tool "${this.tool}" does not match the server's inputSchema:\n${
      this.issues.map((issue) => `  ${issue.path === "" ? "(arguments)" : issue.path}: ${issue.detail}`).join("\n")
    }`
  }
}

/**
 * The tool ran and reported a failure (`isError: true`); `text` is its text content. The same class as
 * `McpError.ToolFailed`.
 *
 * @since 0.1.0
 * @category errors
 */
export const ToolFailed = McpErrors.ToolFailed

/**
 * @since 0.1.0
 * @category errors
 */
export type ToolFailed = McpErrors.ToolFailed

/**
 * What a call of a bound typed tool may fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type CallError = McpError.McpClientError | McpError.TaskError | Schema.SchemaError | ToolFailed

/**
 * A typed tool bound to a server.
 *
 * @since 0.1.0
 * @category models
 */
export type Bound<A, R> = (params: A, options?: McpClient.RequestOptions) => Effect.Effect<R, CallError>

/**
 * Declares a tool. `success` describes `structuredContent`, or the text content for a tool without an output
 * schema (`Schema.String` takes the text as it is).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const Name extends string, A, I extends Readonly<Record<string, unknown>>, R, RI>(
  name: Name,
  options: { readonly parameters: Schema.Codec<A, I>; readonly success: Schema.Codec<R, RI> }
): TypedTool<Name, A, I, R, RI> => ({
  name,
  parameters: options.parameters,
  success: options.success,
  jsonSchema: internal.jsonSchemaOf(options.parameters)
})

/**
 * Compares a declaration with the tool a server advertises. An empty array means they agree.
 *
 * @since 0.1.0
 * @category checking
 */
export const issues = (tool: Declaration, advertised: McpSchema.Tool): ReadonlyArray<Issue> =>
  internal.inputIssues(tool.jsonSchema, advertised)

/**
 * Checks a declaration against a tool list (as `tools/list` returned it).
 *
 * @since 0.1.0
 * @category checking
 */
export const check = (
  tool: Declaration,
  tools: ReadonlyArray<McpSchema.Tool>
): Effect.Effect<McpSchema.Tool, ToolSchemaMismatch> => {
  const advertised = tools.find((candidate) => candidate.name === tool.name)
  if (advertised === undefined) {
    return Effect.fail(
      new ToolSchemaMismatch({
        tool: tool.name,
        issues: [{ path: "", reason: "NotAdvertised", detail: "the server does not list this tool" }]
      })
    )
  }
  const found = issues(tool, advertised)
  return found.length === 0
    ? Effect.succeed(advertised)
    : Effect.fail(new ToolSchemaMismatch({ tool: tool.name, issues: found }))
}

/**
 * Calls a typed tool through any `tools/call` function (a client's, or a hub's routed one), without checking it
 * against the tool list first.
 *
 * @since 0.1.0
 * @category calling
 */
export const callWith = <Name extends string, A, I extends Readonly<Record<string, unknown>>, R, RI, E>(
  tool: TypedTool<Name, A, I, R, RI>,
  callTool: (
    args: Readonly<Record<string, unknown>>,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<McpSchema.CallToolResult, E>
) =>
(params: A, options?: McpClient.RequestOptions): Effect.Effect<R, E | Schema.SchemaError | ToolFailed> =>
  Effect.gen(function*() {
    const args = yield* Schema.encodeEffect(tool.parameters)(params)
    const result = yield* callTool(args, options)
    if (result.isError === true) return yield* internal.toolFailed(tool.name, result)
    return yield* internal.decodeResult(tool.success, result)
  })

/**
 * Binds a declaration to a client: lists the server's tools, checks the declaration, and returns the typed call.
 *
 * @since 0.1.0
 * @category calling
 */
export const bindTo = <Name extends string, A, I extends Readonly<Record<string, unknown>>, R, RI>(
  client: McpClient.McpClientService,
  tool: TypedTool<Name, A, I, R, RI>
): Effect.Effect<Bound<A, R>, McpError.McpClientError | ToolSchemaMismatch> =>
  Effect.flatMap(client.listTools(), (tools) =>
    Effect.as(
      check(tool, tools),
      callWith(tool, (args, options) => client.callTool({ name: tool.name, arguments: args }, options))
    ))

/**
 * {@link bindTo} the `McpClient` in context.
 *
 * @since 0.1.0
 * @category calling
 */
export const bind = <Name extends string, A, I extends Readonly<Record<string, unknown>>, R, RI>(
  tool: TypedTool<Name, A, I, R, RI>
): Effect.Effect<Bound<A, R>, McpError.McpClientError | ToolSchemaMismatch, McpClient.McpClient> =>
  Effect.flatMap(McpClient.McpClient, (client) => bindTo(client, tool))
