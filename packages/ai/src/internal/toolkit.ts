/**
 * Bodies of `McpToolkit`.
 *
 * @internal
 */
import * as McpClient from "@conduit-mcp/client/McpClient"
import * as McpError from "@conduit-mcp/client/McpError"
import type * as McpHub from "@conduit-mcp/client/McpHub"
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as AiError from "effect/ai/AiError"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Hash from "effect/Hash"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SynchronizedRef from "effect/SynchronizedRef"
import type * as McpToolkit from "../McpToolkit.js"
import * as SchemaBounds from "./schemaBounds.js"
import * as ToolkitModel from "./toolkitModel.js"

/** @internal */
export const fromClient = (client: McpClient.McpClientService): McpToolkit.Source<McpError.McpClientError> => ({
  tools: Effect.map(client.listTools(), (tools) => tools.map((tool) => ({ name: tool.name, tool }))),
  call: (name, args, options) => client.callTool({ name, arguments: args }, options),
  changes: client.listen({ toolsListChanged: true }).pipe(
    Stream.catch((error) =>
      Stream.fromEffect(
        Effect.logDebug(
          McpError.printable(`McpToolkit: the client stopped sending tool list changes: ${error.message}`)
        )
      ).pipe(Stream.drain)
    )
  )
})

/** @internal */
export const fromHub = (hub: McpHub.Service): McpToolkit.Source<never> => ({
  tools: Effect.flatMap(hub.listTools(), ({ errors, items }) =>
    Effect.as(
      Effect.forEach(
        errors,
        (error) => Effect.logWarning(McpError.printable(`McpToolkit: tools left out: ${error.message}`)),
        { discard: true }
      ),
      items.map((item) => ({ name: item.name, server: item.server, tool: item.tool }))
    )),
  call: (name, args, options) => hub.callTool({ name, arguments: args }, options),
  changes: Stream.filter(hub.changes, (change) => change.list === "tools")
})

const UNSAFE = /[^A-Za-z0-9_-]/g

// effect/ai keeps a toolkit's tools in a plain object, and so do providers: a name an object already answers
// (`__proto__`, `constructor`, `toString`, …) is taken, so that no tool is stored or looked up as one of them
const isTaken = (name: string, taken: ReadonlySet<string>): boolean =>
  taken.has(name) || Object.hasOwn(Object.prototype, name)

/** @internal */
export const modelName = (name: string, taken: ReadonlySet<string>, maxLength = 64): string => {
  const safe = name.replace(UNSAFE, "_")
  if (safe !== "" && safe.length <= maxLength && !isTaken(safe, taken)) return safe
  const digest = (Hash.string(name) >>> 0).toString(16).padStart(8, "0")
  for (let attempt = 0;; attempt++) {
    const suffix = attempt === 0 ? `_${digest}` : `_${digest}_${attempt}`
    const candidate = `${safe.slice(0, Math.max(1, maxLength - suffix.length))}${suffix}`
    if (!isTaken(candidate, taken)) return candidate
  }
}

const annotationsOf = (tool: McpSchema.Tool): Readonly<Record<string, unknown>> => tool.annotations ?? {}

const toTool = (name: string, origin: McpToolkit.SourceTool): McpToolkit.McpTool => {
  const mcp = origin.tool
  const annotations = annotationsOf(mcp)
  const title = mcp.title ?? (typeof annotations.title === "string" ? annotations.title : undefined)
  // the server's inputSchema is offered as it is (a dynamic tool's JSON Schema); the handler checks for an object
  let tool: McpToolkit.McpTool = Tool.dynamic(name, {
    ...(mcp.description !== undefined ? { description: mcp.description } : {}),
    parameters: mcp.inputSchema,
    success: ToolkitModel.Success,
    failure: ToolkitModel.Failure,
    failureMode: "return"
  }).annotate(Tool.Strict, false)
  const hint = (key: string) => (typeof annotations[key] === "boolean" ? annotations[key] : undefined)
  const readOnly = hint("readOnlyHint")
  const destructive = hint("destructiveHint")
  const idempotent = hint("idempotentHint")
  const openWorld = hint("openWorldHint")
  if (title !== undefined) tool = tool.annotate(Tool.Title, title)
  if (readOnly !== undefined) tool = tool.annotate(Tool.Readonly, readOnly)
  if (destructive !== undefined) tool = tool.annotate(Tool.Destructive, destructive)
  if (idempotent !== undefined) tool = tool.annotate(Tool.Idempotent, idempotent)
  if (openWorld !== undefined) tool = tool.annotate(Tool.OpenWorld, openWorld)
  return tool.annotate(ToolkitModel.Origin, origin)
}

const errorText = (result: McpSchema.CallToolResult): string => {
  const text = result.content.flatMap((block) =>
    block.type === "text" && "text" in block && typeof block.text === "string" ? [block.text] : []
  ).join("\n")
  return text === "" ? "the tool reported an error" : text
}

const handlerFor = <E>(
  source: McpToolkit.Source<E>,
  name: string,
  origin: McpToolkit.SourceTool,
  options: McpToolkit.Options | undefined
) =>
(
  params: unknown
): Effect.Effect<typeof McpToolkit.Success.Type, typeof McpToolkit.Failure.Type | AiError.AiErrorReason> => {
  const args = decodeArguments(params)
  if (Result.isFailure(args)) {
    return Effect.fail(
      new AiError.ToolParameterValidationError({
        toolName: name,
        description: "the arguments of an MCP tool must be a JSON object"
      })
    )
  }
  const onProgress = options?.onProgress
  const requestOptions: McpClient.RequestOptions = {
    ...options?.requestOptions,
    ...(onProgress !== undefined ? { onProgress: (progress) => onProgress({ tool: name, origin, progress }) } : {})
  }
  return source.call(origin.name, args.success, requestOptions).pipe(
    Effect.mapError((error) => ({ error: error.message })),
    Effect.flatMap((result) =>
      result.isError === true
        ? Effect.fail({ error: errorText(result) })
        : Effect.succeed({
          content: result.content,
          ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {})
        })
    ),
    Effect.withSpan("McpToolkit.call", { attributes: { "mcp.tool": origin.name, "gen_ai.tool.name": name } })
  )
}

// McpToolkit imports this module: its schemas are read on the first call, not at load
const decodeArguments = (params: unknown) => Schema.decodeUnknownResult(ToolkitModel.Parameters)(params)

/**
 * A call of a name the toolkit does not have fails as effect/ai fails it (a `ToolNotFoundError`), even when every
 * object answers the name; the name is the model's, so it is cut and escaped.
 */
const unknownTool = (name: string, available: ReadonlyArray<string>) =>
  AiError.make({
    module: "McpToolkit",
    method: "handle",
    reason: new AiError.ToolNotFoundError({
      toolName: McpError.printable(name.slice(0, 256)),
      availableTools: available
    })
  })

/** @internal */
export const build = <E>(
  source: McpToolkit.Source<E>,
  tools: ReadonlyArray<McpToolkit.SourceTool>,
  options: McpToolkit.Options | undefined
): McpToolkit.McpToolkit => {
  const maxDepth = options?.maxSchemaDepth ?? ToolkitModel.defaultMaxSchemaDepth
  const maxLength = options?.maxSchemaLength ?? ToolkitModel.defaultMaxSchemaLength
  const origins = new Map<string, McpToolkit.SourceTool>()
  const leftOut: Array<McpToolkit.ToolLeftOut> = []
  for (const origin of tools) {
    const excess = SchemaBounds.check(origin.tool.inputSchema, maxDepth, maxLength)
    if (excess !== undefined) {
      leftOut.push(new ToolkitModel.ToolLeftOut({ tool: origin.name, server: origin.server, ...excess }))
      continue
    }
    origins.set(modelName(origin.name, new Set(origins.keys()), options?.maxNameLength), origin)
  }
  const transform = options?.transformTool
  const offered = [...origins].map(([name, origin]): McpToolkit.McpTool => {
    const tool = toTool(name, origin)
    if (transform === undefined) return tool
    const transformed = transform(tool, origin)
    if (transformed.name !== name || transformed.failureMode !== "return") {
      throw new Error(
        McpError.printable(`McpToolkit: transformTool must keep the tool's name and failure mode (${name})`)
      )
    }
    return transformed
  })
  const toolkit = Toolkit.make(...offered) as unknown as Toolkit.Toolkit<McpToolkit.Tools>
  const handlers: Record<string, ReturnType<typeof handlerFor>> = Object.create(null)
  for (const [name, origin] of origins) handlers[name] = handlerFor(source, name, origin, options)
  const layer = toolkit.toLayer(handlers)
  const available = [...origins.keys()]
  const withHandler = Effect.map(
    Effect.flatMap(toolkit.toHandlers(handlers), (handlers) => Effect.provideContext(toolkit, handlers)),
    (resolved): Toolkit.WithHandler<McpToolkit.Tools> => ({
      tools: resolved.tools,
      handle: ((name, params, toolCallId, parseOptions) =>
        typeof name === "string" && origins.has(name)
          ? resolved.handle(name, params, toolCallId, parseOptions)
          : Effect.fail(unknownTool(String(name), available))) as typeof resolved.handle
    })
  )
  return { toolkit, layer, withHandler, origins, leftOut }
}

/** @internal */
export const make = <E>(
  source: McpToolkit.Source<E>,
  options?: McpToolkit.Options
): Effect.Effect<McpToolkit.McpToolkit, E> =>
  Effect.flatMap(source.tools, (tools) =>
    // a transformTool that breaks its contract throws in build: Effect.sync makes that a defect
    Effect.tap(
      Effect.sync(() => build(source, tools, options)),
      (built) =>
        Effect.forEach(built.leftOut, (left) => Effect.logWarning(McpError.printable(left.message)), { discard: true })
    ))

/** @internal */
export const live = <E>(
  source: McpToolkit.Source<E>,
  options?: McpToolkit.Options
): Effect.Effect<McpToolkit.Live<E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const current = yield* SynchronizedRef.make(Option.none<McpToolkit.McpToolkit>())
    const invalidate = SynchronizedRef.set(current, Option.none())
    // coalesced: a server announcing a change before every tools/list answer is listed once per interval at most
    const changed = yield* McpClient.coalescedRefresh(invalidate, options?.minRefreshInterval)
    yield* source.changes.pipe(Stream.runForEach(() => changed), Effect.forkScoped)
    const get = SynchronizedRef.modifyEffect(current, (cached) =>
      Option.match(cached, {
        onSome: (built) => Effect.succeed([built, cached] as const),
        onNone: () => Effect.map(make(source, options), (built) => [built, Option.some(built)] as const)
      }))
    return { current: get, toolkit: Effect.flatMap(get, (built) => built.withHandler), invalidate }
  })
