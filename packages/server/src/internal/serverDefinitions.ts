/**
 * The definitions a server serves, re-exported by `McpServer` as they are: tools, resources, resource templates
 * and prompts, what their handlers return, and the constructors that declare them (a tool's arguments are decoded
 * with its Schema, which also gives the JSON Schema it advertises).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import type * as McpError from "@conduit-mcp/client/McpError"
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as model from "./serverModel.js"

type JsonObject = model.JsonObject
type ToolError = model.ToolError
type InputError = model.InputError

// ---------------------------------------------------------------------------------------------------------------
// Models

/**
 * What a tool handler returns: a string is one text content block.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolResult = string | {
  readonly content: ReadonlyArray<McpSchema.ContentBlock>
  readonly structuredContent?: unknown
  readonly isError?: boolean | undefined
  readonly _meta?: JsonObject | undefined
}

/**
 * What reading a resource returns: a string is one text content for the resource's URI.
 *
 * @since 0.1.0
 * @category models
 */
export type ResourceResult = string | ReadonlyArray<McpSchema.ResourceContents>

/**
 * One message of a prompt.
 *
 * @since 0.1.0
 * @category models
 */
export type PromptMessage = typeof McpSchema.PromptMessage.Type

/**
 * What a prompt handler returns: a string is one user text message.
 *
 * @since 0.1.0
 * @category models
 */
export type PromptResult = string | {
  readonly description?: string | undefined
  readonly messages: ReadonlyArray<PromptMessage>
}

/**
 * Suggests values for a prompt argument or a template variable. `context` holds the arguments the client
 * already resolved. At most 100 values are sent.
 *
 * @since 0.1.0
 * @category models
 */
export type Completer<R> = (
  value: string,
  context: Readonly<Record<string, string>>
) => Effect.Effect<ReadonlyArray<string>, McpError.McpError, R>

/**
 * A tool ready to be served.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool<out R> {
  readonly _tag: "Tool"
  readonly definition: McpSchema.Tool
  /** Decodes the raw `arguments` and runs the handler. */
  readonly handler: (args: unknown) => Effect.Effect<ToolResult, ToolError | InputError | McpError.McpError, R>
}

/**
 * A resource with a fixed URI.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resource<out R> {
  readonly _tag: "Resource"
  readonly definition: McpSchema.Resource
  readonly read: Effect.Effect<ResourceResult, InputError | McpError.McpError, R>
}

/**
 * A family of resources whose URIs match a URI template.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceTemplate<out R> {
  readonly _tag: "ResourceTemplate"
  readonly definition: McpSchema.ResourceTemplate
  readonly read: (
    uri: string,
    variables: Readonly<Record<string, string>>
  ) => Effect.Effect<ResourceResult, InputError | McpError.McpError, R>
  readonly complete: Readonly<Record<string, Completer<R>>>
}

/**
 * A prompt.
 *
 * @since 0.1.0
 * @category models
 */
export interface Prompt<out R> {
  readonly _tag: "Prompt"
  readonly definition: McpSchema.Prompt
  readonly handler: (
    args: Readonly<Record<string, string>>
  ) => Effect.Effect<PromptResult, InputError | McpError.McpError, R>
  readonly complete: Readonly<Record<string, Completer<R>>>
}

/**
 * The services a definition's handlers need.
 *
 * @since 0.1.0
 * @category models
 */
export type DefinitionContext<D> = D extends Tool<infer R> ? R
  : D extends Resource<infer R> ? R
  : D extends ResourceTemplate<infer R> ? R
  : D extends Prompt<infer R> ? R
  : never

// ---------------------------------------------------------------------------------------------------------------
// Constructors

// What Effect 4 compiles a schema to describes its JSON codec (`Schema.toCodecJson`): a `Number` also takes the
// strings "NaN", "Infinity" and "-Infinity", and an `optional` member also takes `null`. A tool's arguments are
// decoded with the schema itself, which takes neither, so the advertised schema leaves those branches out.
const isNonFiniteBranch = (member: unknown): boolean => {
  if (!Predicate.isObject(member) || member.type !== "string" || !Array.isArray(member.enum)) return false
  const values = member.enum as ReadonlyArray<unknown>
  return values.length === 3 && ["NaN", "Infinity", "-Infinity"].every((value) => values.includes(value))
}

const isNullBranch = (member: unknown): boolean =>
  Predicate.isObject(member) && member.type === "null" && Object.keys(member).length === 1

// an `optional(NullOr(X))` member is `X | null | undefined`: one `null` branch is enough
const secondNullBranch = () => {
  let seen = false
  return (member: unknown): boolean => {
    if (!isNullBranch(member)) return false
    if (seen) return true
    seen = true
    return false
  }
}

/** An `anyOf` without the given branches: the one branch left in its place when a single one remains. */
const withoutBranches = (node: JsonObject, drop: (member: unknown) => boolean): JsonObject => {
  if (!Array.isArray(node.anyOf)) return node
  const kept = (node.anyOf as ReadonlyArray<unknown>).filter((member) => !drop(member))
  if (kept.length === node.anyOf.length) return node
  const rest = Object.fromEntries(Object.entries(node).filter(([key]) => key !== "anyOf"))
  return kept.length === 1 && Predicate.isObject(kept[0]) ? { ...kept[0], ...rest } : { ...rest, anyOf: kept }
}

const takesNull = (ast: SchemaAST.AST): boolean =>
  SchemaAST.isNull(ast) || (SchemaAST.isUnion(ast) && ast.types.some(takesNull))

// whether a member's type takes `undefined` but not `null` (an `optional` member, not a `NullOr` one)
const takesUndefinedOnly = (ast: SchemaAST.AST): boolean =>
  SchemaAST.isUnion(ast) && ast.types.some(SchemaAST.isUndefined) && !takesNull(ast)

/** Leaves out the codec's branches, everywhere in the document; `ast` follows it through the objects it can. */
const forDecoding = (node: unknown, ast: SchemaAST.AST | undefined): unknown => {
  if (Array.isArray(node)) return node.map((item) => forDecoding(item, undefined))
  if (!Predicate.isObject(node)) return node
  const objects = ast !== undefined && SchemaAST.isObjects(ast) ? ast : undefined
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(withoutBranches(node, isNonFiniteBranch))) {
    if (key === "properties" && Predicate.isObject(value)) {
      const properties: Record<string, unknown> = {}
      for (const [name, property] of Object.entries(value)) {
        const signature = objects?.propertySignatures.find((candidate) => candidate.name === name)
        const optional = signature !== undefined && SchemaAST.isOptional(signature.type) &&
          takesUndefinedOnly(signature.type)
        const cleaned = !Predicate.isObject(property) ? property : optional
          ? withoutBranches(property, isNullBranch)
          : withoutBranches(property, secondNullBranch())
        properties[name] = forDecoding(cleaned, signature?.type)
      }
      out[key] = properties
    } else {
      out[key] = forDecoding(value, undefined)
    }
  }
  return out
}

/**
 * The JSON Schema advertised for a tool whose arguments are described by an Effect Schema (draft 2020-12, closed
 * objects, shared definitions under `$defs`).
 *
 * @internal
 */
export const jsonSchemaOf = <S extends Schema.Top>(schema: S): JsonObject => {
  const ast = SchemaAST.toEncoded(schema.ast)
  // `Schema.Struct({})` means "any object" to Effect (`{ not: { type: "null" } }`), but a tool's inputSchema must
  // be an object schema.
  if (SchemaAST.isObjects(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
    return { type: "object", properties: {} }
  }
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  const root = forDecoding(document.schema, ast) as JsonObject
  const definitions = forDecoding(document.definitions, undefined) as JsonObject
  const body: JsonObject = Object.keys(definitions).length > 0 ? { ...root, $defs: definitions } : root
  return body.type === undefined ? { type: "object", ...body } : body
}

/**
 * Metadata shared by both ways of declaring a tool.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolInfo {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly outputSchema?: JsonObject | undefined
  readonly annotations?: JsonObject | undefined
  /** `taskSupport`: `forbidden` (default), `optional` or `required` (see {@link TaskOptions}). */
  readonly execution?: { readonly taskSupport?: "forbidden" | "optional" | "required" | undefined } | undefined
  readonly _meta?: JsonObject | undefined
}

const AnyArguments = Schema.Record(Schema.String, Schema.Unknown)

const toolDefinition = (info: ToolInfo, inputSchema: JsonObject): McpSchema.Tool => ({
  name: info.name,
  inputSchema,
  ...(info.title !== undefined ? { title: info.title } : {}),
  ...(info.description !== undefined ? { description: info.description } : {}),
  ...(info.outputSchema !== undefined ? { outputSchema: info.outputSchema } : {}),
  ...(info.annotations !== undefined ? { annotations: info.annotations } : {}),
  ...(info.execution?.taskSupport !== undefined ? { execution: { taskSupport: info.execution.taskSupport } } : {}),
  ...(info._meta !== undefined ? { _meta: info._meta } : {})
})

const decodeArguments = <A, I>(name: string, schema: Schema.Codec<A, I>) => {
  const decode = Schema.decodeUnknownEffect(schema)
  return (args: unknown): Effect.Effect<A, ToolError> =>
    decode(args ?? {}).pipe(
      Effect.mapError((error) =>
        new model.ToolError({ message: `Invalid arguments for tool ${name}: ${error.message}` })
      )
    )
}

/**
 * Declares a tool. With `parameters` the arguments are decoded with the Schema (its JSON Schema is the
 * advertised `inputSchema` unless one is given); with only `inputSchema` the handler gets the raw arguments.
 * Arguments that do not decode answer with `isError: true`, so the model can correct itself.
 *
 * @since 0.1.0
 * @category constructors
 */
export function tool<A, I, R = never>(options: ToolInfo & {
  readonly parameters: Schema.Codec<A, I>
  readonly inputSchema?: JsonObject | undefined
  readonly handler: (args: A) => Effect.Effect<ToolResult, ToolError | InputError | McpError.McpError, R>
}): Tool<R>
export function tool<R = never>(options: ToolInfo & {
  readonly inputSchema: JsonObject
  readonly handler: (args: JsonObject) => Effect.Effect<ToolResult, ToolError | InputError | McpError.McpError, R>
}): Tool<R>
export function tool<A, I, R>(
  options:
    & ToolInfo
    & (
      | {
        readonly parameters: Schema.Codec<A, I>
        readonly inputSchema?: JsonObject | undefined
        readonly handler: (args: A) => Effect.Effect<ToolResult, ToolError | InputError | McpError.McpError, R>
      }
      | {
        readonly parameters?: undefined
        readonly inputSchema: JsonObject
        readonly handler: (args: JsonObject) => Effect.Effect<ToolResult, ToolError | InputError | McpError.McpError, R>
      }
    )
): Tool<R> {
  if (options.parameters !== undefined) {
    const decode = decodeArguments(options.name, options.parameters)
    const handler = options.handler
    return {
      _tag: "Tool",
      definition: toolDefinition(options, options.inputSchema ?? jsonSchemaOf(options.parameters)),
      handler: (args) => Effect.flatMap(decode(args), handler)
    }
  }
  const decode = decodeArguments(options.name, AnyArguments)
  const handler = options.handler
  return {
    _tag: "Tool",
    definition: toolDefinition(options, options.inputSchema),
    handler: (args) => Effect.flatMap(decode(args), handler)
  }
}

/**
 * Metadata of a resource or resource template.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceInfo {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
  readonly _meta?: JsonObject | undefined
}

const resourceInfo = (info: ResourceInfo) => ({
  name: info.name,
  ...(info.title !== undefined ? { title: info.title } : {}),
  ...(info.description !== undefined ? { description: info.description } : {}),
  ...(info.mimeType !== undefined ? { mimeType: info.mimeType } : {}),
  ...(info._meta !== undefined ? { _meta: info._meta } : {})
})

/**
 * Declares a resource with a fixed URI.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resource = <R = never>(options: ResourceInfo & {
  readonly uri: string
  readonly size?: number | undefined
  readonly read: Effect.Effect<ResourceResult, InputError | McpError.McpError, R>
}): Resource<R> => ({
  _tag: "Resource",
  definition: {
    uri: options.uri,
    ...resourceInfo(options),
    ...(options.size !== undefined ? { size: options.size } : {})
  },
  read: options.read
})

/**
 * Declares resources whose URIs match a URI template (`{name}` stops at `/`, `{+name}` takes the rest).
 * `complete` suggests values for the template's variables (`completion/complete` with `ref/resource`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const resourceTemplate = <R = never>(options: ResourceInfo & {
  readonly uriTemplate: string
  readonly read: (
    uri: string,
    variables: Readonly<Record<string, string>>
  ) => Effect.Effect<ResourceResult, InputError | McpError.McpError, R>
  readonly complete?: Readonly<Record<string, Completer<R>>> | undefined
}): ResourceTemplate<R> => ({
  _tag: "ResourceTemplate",
  definition: { uriTemplate: options.uriTemplate, ...resourceInfo(options) },
  read: options.read,
  complete: options.complete ?? {}
})

/**
 * One argument of a prompt, with an optional completer.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptArgument<R> {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly required?: boolean | undefined
  readonly complete?: Completer<R> | undefined
}

/**
 * Declares a prompt. Missing required arguments are refused with `-32602` before the handler runs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const prompt = <R = never>(options: {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly arguments?: ReadonlyArray<PromptArgument<R>> | undefined
  readonly _meta?: JsonObject | undefined
  readonly handler: (
    args: Readonly<Record<string, string>>
  ) => Effect.Effect<PromptResult, InputError | McpError.McpError, R>
}): Prompt<R> => {
  const args = options.arguments ?? []
  const complete: Record<string, Completer<R>> = {}
  for (const argument of args) {
    if (argument.complete !== undefined) complete[argument.name] = argument.complete
  }
  return {
    _tag: "Prompt",
    definition: {
      name: options.name,
      ...(options.title !== undefined ? { title: options.title } : {}),
      ...(options.description !== undefined ? { description: options.description } : {}),
      ...(options._meta !== undefined ? { _meta: options._meta } : {}),
      ...(args.length > 0 ?
        {
          arguments: args.map((argument) => ({
            name: argument.name,
            ...(argument.title !== undefined ? { title: argument.title } : {}),
            ...(argument.description !== undefined ? { description: argument.description } : {}),
            ...(argument.required !== undefined ? { required: argument.required } : {})
          }))
        } :
        {})
    },
    handler: options.handler,
    complete
  }
}

/**
 * One text content block.
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (value: string): McpSchema.ContentBlock => ({ type: "text", text: value })
