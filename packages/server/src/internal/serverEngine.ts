/**
 * The server as a whole, behind `McpServer.make`: the eras and versions it speaks, its info and capabilities,
 * the changes it publishes to every connection that asked about them, the connections it opens, and the record
 * of inbound messages and interrupted requests kept for tests.
 *
 * @internal
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as McpServer from "../McpServer.js"
import * as Connection from "./serverConnection.js"
import type * as Definitions from "./serverDefinitions.js"
import * as Methods from "./serverMethods.js"
import type * as model from "./serverModel.js"
import * as ServerTasks from "./serverTasks.js"

/**
 * Everything `McpServer.make` hands to the engine.
 *
 * @internal
 */
export interface EngineConfig extends Methods.Served {
  readonly options: McpServer.Options
  /** The services the handlers need, captured by `make`; RequestContext is provided per request. */
  readonly context: Context.Context<never>
  readonly onReceived: (received: McpServer.Received) => Effect.Effect<void>
  readonly onInterrupted: (interrupted: McpServer.Interrupted) => Effect.Effect<void>
}

/** @internal */
export interface Engine {
  readonly info: McpSchema.Implementation
  readonly eras: McpServer.Eras
  readonly supportedVersions: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly capabilities: McpSchema.ServerCapabilities
  readonly connect: (send: McpServer.Send) => Effect.Effect<McpServer.Connection, never, Scope.Scope>
  readonly publish: (change: model.Change) => Effect.Effect<void>
}

/** @internal */
export const makeEngine = (config: EngineConfig): Effect.Effect<Engine> =>
  Effect.gen(function*() {
    const { options } = config
    const eras = options.eras ?? "both"
    const modernVersions: ReadonlyArray<McpSchema.ModernVersion> = eras === "legacy"
      ? []
      : [...McpSchema.MODERN_VERSIONS].reverse()
    const legacyVersions: ReadonlyArray<McpSchema.LegacyVersion> = eras === "modern"
      ? []
      : [...McpSchema.LEGACY_VERSIONS].reverse()
    const supportedVersions: ReadonlyArray<McpSchema.ProtocolVersion> = [...modernVersions, ...legacyVersions]
    const info: McpSchema.Implementation = {
      name: options.name,
      version: options.version,
      ...(options.title !== undefined ? { title: options.title } : {})
    }
    const offers = Methods.offersOf(config)
    const capabilities = Methods.capabilitiesOf(offers)
    const methods = Methods.make({
      served: config,
      offers,
      info,
      cacheHints: options.cacheHints ?? { ttlMs: 0, cacheScope: "public" },
      pageSize: options.pageSize !== undefined && options.pageSize > 0 ? Math.floor(options.pageSize) : undefined,
      serverTasks: ServerTasks.make(options.tasks),
      context: config.context
    })

    const connectionIds = yield* Ref.make(0)
    const audiences = new Set<(change: model.Change) => Effect.Effect<void>>()
    const publish = (change: model.Change): Effect.Effect<void> =>
      Effect.forEach([...audiences], (deliver) => deliver(change), { discard: true })

    const server: Connection.ServerSide = {
      eras,
      legacyVersions,
      modernVersions,
      supportedVersions,
      info,
      capabilities,
      instructions: options.instructions,
      methods,
      nextId: Ref.updateAndGet(connectionIds, (n) => n + 1),
      audiences,
      publish,
      onReceived: config.onReceived,
      onInterrupted: config.onInterrupted
    }
    const connect = (send: McpServer.Send) => Connection.make(server, send)

    return { info, eras, supportedVersions, capabilities, connect, publish }
  })

/**
 * The body of `McpServer.make`: the engine, and the record of inbound messages and interrupted requests (kept
 * only when `options.record` is set).
 *
 * @internal
 */
export const makeServer = (
  options: McpServer.MakeOptions<
    Definitions.Tool<unknown>,
    Definitions.Resource<unknown>,
    Definitions.ResourceTemplate<unknown>,
    Definitions.Prompt<unknown>
  >,
  context: Context.Context<never>
): Effect.Effect<McpServer.Server> =>
  Effect.gen(function*() {
    const record = options.record ?? false
    const receivedRef = yield* SubscriptionRef.make<ReadonlyArray<McpServer.Received>>([])
    const interruptedRef = yield* SubscriptionRef.make<ReadonlyArray<McpServer.Interrupted>>([])
    const engine = yield* makeEngine({
      options,
      context,
      tools: options.tools ?? [],
      resources: options.resources ?? [],
      resourceTemplates: options.resourceTemplates ?? [],
      prompts: options.prompts ?? [],
      onReceived: (received) =>
        record ? SubscriptionRef.update(receivedRef, (all) => [...all, received]) : Effect.void,
      onInterrupted: (interrupted) =>
        record ? SubscriptionRef.update(interruptedRef, (all) => [...all, interrupted]) : Effect.void
    })
    const byMethod =
      (method: string | undefined) => (all: ReadonlyArray<McpServer.Received>): ReadonlyArray<McpServer.Received> =>
        method === undefined ? all : all.filter((r) => r.method === method)
    return {
      info: engine.info,
      eras: engine.eras,
      supportedVersions: engine.supportedVersions,
      capabilities: engine.capabilities,
      connect: engine.connect,
      publish: engine.publish,
      received: (method) => Effect.map(SubscriptionRef.get(receivedRef), byMethod(method)),
      awaitReceived: (method, count = 1) =>
        SubscriptionRef.changes(receivedRef).pipe(
          Stream.map(byMethod(method)),
          Stream.filter((found) => found.length >= count),
          Stream.runHead,
          Effect.map(Option.getOrElse((): ReadonlyArray<McpServer.Received> => []))
        ),
      interrupted: SubscriptionRef.get(interruptedRef),
      awaitInterrupted: (id) =>
        SubscriptionRef.changes(interruptedRef).pipe(
          Stream.map((all) => all.find((i) => i.id === id)),
          Stream.filter((found) => found !== undefined),
          Stream.runHead,
          Effect.flatMap(Option.match({ onNone: () => Effect.never, onSome: Effect.succeed }))
        )
    } satisfies McpServer.Server
  })
