/**
 * The body of `McpHub`: definitions checked once, clients in a `LayerMap`, and a catalog of every server's lists
 * kept fresh by a watcher that lives as long as each connection.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as LayerMap from "effect/LayerMap"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as ElicitationHandler from "../ElicitationHandler.js"
import type * as ExtensionHandler from "../ExtensionHandler.js"
import * as McpClient from "../McpClient.js"
import * as McpError from "../McpError.js"
import type * as McpHub from "../McpHub.js"
import type * as McpSchema from "../McpSchema.js"
import type * as RootsProvider from "../RootsProvider.js"
import type * as SamplingHandler from "../SamplingHandler.js"
import * as TypedTool from "../TypedTool.js"
import * as HubModel from "./hubModel.js"
import * as Value from "./jsonSchemaValue.js"
import { printable } from "./printable.js"
import * as ToolResultInternal from "./toolResult.js"

type Entry<R> =
  | {
    readonly _tag: "Valid"
    readonly definition: McpHub.ServerDefinition<R>
    readonly allows: (tool: string) => boolean
  }
  | { readonly _tag: "Invalid"; readonly error: McpHub.HubError }

interface ListTypes {
  readonly tools: McpSchema.Tool
  readonly prompts: McpSchema.Prompt
  readonly resources: McpSchema.Resource
  readonly resourceTemplates: McpSchema.ResourceTemplate
}

type Lists = { readonly [K in McpHub.ListKind]?: ReadonlyArray<ListTypes[K]> }

// a listing comes from a server and may nest arbitrarily deep: compared within these limits, and past them
// counted as changed (a change announced for nothing costs one more read; a recursion without bound, the fiber)
const listingLimits = { maxDepth: 256, maxSteps: 1_000_000 } as const

const KINDS: ReadonlyArray<McpHub.ListKind> = ["tools", "prompts", "resources", "resourceTemplates"]

const fetchers: {
  readonly [K in McpHub.ListKind]: (
    client: McpClient.McpClientService
  ) => Effect.Effect<ReadonlyArray<ListTypes[K]>, McpError.McpClientError>
} = {
  tools: (client) => client.listTools(),
  prompts: (client) => client.listPrompts(),
  resources: (client) => client.listResources(),
  resourceTemplates: (client) => client.listResourceTemplates()
}

// a computed key of a generic kind widens to a string index; the value is the kind's own list
const withList = <K extends McpHub.ListKind>(lists: Lists, kind: K, items: ReadonlyArray<ListTypes[K]>): Lists =>
  ({ ...lists, [kind]: items }) as Lists

const globToRegExp = (pattern: string): RegExp =>
  new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`)

const compileFilter = (filters: ReadonlyArray<McpHub.ToolFilter | undefined>): (tool: string) => boolean => {
  const checks = filters.flatMap((filter) => {
    if (filter === undefined) return []
    const allow = filter.allow?.map(globToRegExp)
    const deny = (filter.deny ?? []).map(globToRegExp)
    return [(tool: string) =>
      (allow === undefined || allow.some((re) => re.test(tool))) && !deny.some((re) => re.test(tool))]
  })
  return (tool) => checks.every((check) => check(tool))
}

/** How many list changes a reader of `changes` may fall behind before the oldest are dropped. */
const changeBufferSize = 1_000

/** A server name must leave the first separator of `<server><separator><name>` right after itself. */
const nameProblem = (name: string, separator: string): string | undefined => {
  if (name === "") return "a server name may not be empty"
  if (`${name}${separator}`.indexOf(separator) !== name.length) {
    return `a server name may not contain "${separator}" (nor end with part of it): the hub's names are ` +
      `<server>${separator}<name>`
  }
  return undefined
}

const checkDefinitions = <R>(options: McpHub.McpHubOptions<McpHub.ServerSpec<R>>, separator: string) => {
  const counts = new Map<string, number>()
  for (const spec of options.servers) counts.set(spec.name, (counts.get(spec.name) ?? 0) + 1)
  const entries = new Map<string, Entry<R>>()
  for (const spec of options.servers) {
    const name = spec.name
    if (entries.has(name)) continue
    const count = counts.get(name) ?? 0
    const problem = nameProblem(name, separator)
    const invalid = (reason: McpHub.HubError["reason"], detail: string): Entry<R> => ({
      _tag: "Invalid",
      error: new HubModel.HubError({ reason, server: name, detail })
    })
    entries.set(
      name,
      count > 1
        ? invalid("DuplicateName", `defined ${count} times; a name must be unique (none of them is used)`)
        : problem !== undefined
        ? invalid("InvalidName", problem)
        : "problem" in spec
        ? invalid("InvalidConfig", spec.problem)
        : {
          _tag: "Valid",
          definition: spec,
          allows: compileFilter([spec.tools, options.filters?.[name]])
        }
    )
  }
  return entries
}

const toServerState = (state: McpClient.ConnectionState, server: string): McpHub.ServerState => {
  switch (state._tag) {
    case "Connecting":
    case "Probing":
      return HubModel.ServerState.Connecting()
    case "Connected":
      return HubModel.ServerState.Connected({ era: state.era, protocolVersion: state.protocolVersion })
    case "Reconnecting":
      return HubModel.ServerState.Reconnecting({ attempt: state.attempt, error: state.error })
    case "Closed":
      return state.error === undefined
        ? HubModel.ServerState.Idle()
        : HubModel.ServerState.Failed({ error: new HubModel.ServerError({ server, error: state.error }) })
  }
}

const resolve = <S>(given: McpClient.Feature<S, never> | undefined): Effect.Effect<S | undefined> =>
  given === undefined ? Effect.succeed(undefined) : Effect.isEffect(given) ? given : Effect.succeed(given)

/**
 * The handlers given in a server's client options (the hub's, or its definition's own), told which server they
 * serve through `CurrentServer`.
 */
const handlersFor = (server: string, options: McpClient.McpClientOptions) =>
  Effect.gen(function*() {
    const sampling = yield* resolve(options.sampling)
    const elicitation = yield* resolve(options.elicitation)
    const roots = yield* resolve(options.roots)
    const extensions = yield* resolve(options.extensions)
    const tagged = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.provideService(effect, HubModel.CurrentServer, server)
    const features: {
      sampling?: SamplingHandler.Service
      elicitation?: ElicitationHandler.Service
      roots?: RootsProvider.Service
      extensions?: ExtensionHandler.Service
    } = {}
    if (sampling !== undefined) {
      features.sampling = { ...sampling, createMessage: (params) => tagged(sampling.createMessage(params)) }
    }
    if (elicitation !== undefined) {
      const completed = elicitation.completed
      features.elicitation = {
        ...elicitation,
        elicit: (request, elicitContext) => tagged(elicitation.elicit(request, elicitContext)),
        ...(completed !== undefined ? { completed: (id: string) => tagged(completed(id)) } : {})
      }
    }
    if (roots !== undefined) features.roots = { ...roots, roots: tagged(roots.roots) }
    if (extensions !== undefined) {
      const requests: Record<string, ExtensionHandler.RequestHandler> = {}
      for (const [method, handler] of Object.entries(extensions.requests)) {
        requests[method] = (params, requestContext) => tagged(handler(params, requestContext))
      }
      features.extensions = { requests }
    }
    return features
  })

/** @internal */
export const make = <R>(
  options: McpHub.McpHubOptions<McpHub.ServerSpec<R>>
): Effect.Effect<McpHub.Service, never, R | Scope.Scope> =>
  Effect.gen(function*() {
    const separator = options.separator ?? "__"
    if (separator === "") return yield* Effect.die(new Error("McpHub: the separator may not be empty"))
    const entries = checkDefinitions(options, separator)
    const order = [...entries.keys()]
    for (const name of Object.keys(options.filters ?? {})) {
      if (!entries.has(name)) yield* Effect.logWarning(printable(`McpHub: a tool filter names no server: ${name}`))
    }
    for (const entry of entries.values()) {
      if (entry._tag === "Invalid") yield* Effect.logWarning(printable(`McpHub: ${entry.error.message}`))
    }
    const hubScope = yield* Effect.scope
    const minRefreshInterval = options.minRefreshInterval ?? McpClient.defaultMinRefreshInterval
    const states = yield* SubscriptionRef.make<ReadonlyMap<string, McpHub.ServerState>>(
      new Map(order.map((name) => {
        const entry = entries.get(name)!
        const state = entry._tag === "Invalid"
          ? HubModel.ServerState.Invalid({ error: entry.error })
          : HubModel.ServerState.Idle()
        return [name, state]
      }))
    )
    const catalog = yield* Ref.make<ReadonlyMap<string, Lists>>(new Map())
    // bounded like every buffer between servers and user code: a reader that falls behind loses the oldest
    // changes (a change says only which list to read again, so the newest ones are what matter)
    const changes = yield* PubSub.sliding<McpHub.ListChange>(changeBufferSize)
    const generations = new Map<string, number>()

    const setState = (server: string, generation: number, state: McpHub.ServerState) =>
      SubscriptionRef.update(states, (current) =>
        generations.get(server) === generation ? new Map(current).set(server, state) : current)

    const store = <K extends McpHub.ListKind>(
      server: string,
      kind: K,
      items: ReadonlyArray<ListTypes[K]>
    ): Effect.Effect<void> =>
      Effect.flatMap(
        Ref.modify(catalog, (current) => {
          const before = current.get(server)?.[kind]
          const same = before !== undefined && Value.equalWithin(before, items, listingLimits)
          return [same, new Map(current).set(server, withList(current.get(server) ?? {}, kind, items))]
        }),
        (same) => same ? Effect.void : PubSub.publish(changes, { server, list: kind })
      )

    const refresh = <K extends McpHub.ListKind>(
      server: string,
      client: McpClient.McpClientService,
      kind: K
    ): Effect.Effect<void> =>
      fetchers[kind](client).pipe(
        Effect.flatMap((items) => store(server, kind, items)),
        Effect.catch((error) =>
          Effect.logWarning(printable(`McpHub: cannot refresh the ${kind} of ${server}: ${error.message}`))
        )
      )

    const refreshKnown = (server: string, client: McpClient.McpClientService): Effect.Effect<void> =>
      Effect.flatMap(Ref.get(catalog), (current) => {
        const known = current.get(server) ?? {}
        const kinds = KINDS.filter((kind) => known[kind] !== undefined)
        return Effect.forEach(kinds, (kind) => refresh(server, client, kind), { discard: true })
      })

    // Runs as long as one connection: mirrors the client's state, refreshes lists on list_changed and on each
    // (re)connection. It holds the client directly, not through the LayerMap, so it never keeps a server open.
    const watch = (
      server: string,
      generation: number,
      client: McpClient.McpClientService
    ): Effect.Effect<void, never, Scope.Scope> =>
      Effect.gen(function*() {
        const react = (state: McpClient.ConnectionState): Effect.Effect<void> =>
          state._tag === "Connected"
            ? refreshKnown(server, client)
            : state._tag === "Closed"
            ? Effect.asVoid(Effect.forkIn(layerMap.invalidate(server), hubScope))
            : Effect.void
        // The hub's state is the client's from now on, not once the watcher has run (a forked fiber starts after
        // this one yields): a call made through the client this returns finds the server `Connected`.
        const initial = yield* client.state
        yield* setState(server, generation, toServerState(initial, server))
        // the watcher's first state is the current one: already mirrored if it is still the one read above
        let first = true
        yield* client.stateChanges.pipe(
          Stream.runForEach((state) => {
            const mirrored = first && state === initial
            first = false
            return Effect.andThen(
              mirrored ? Effect.void : setState(server, generation, toServerState(state, server)),
              react(state)
            )
          }),
          Effect.forkScoped
        )
        // each list refreshed on its changes, coalesced: a change storm is listed once per interval at most
        const refresher = (refreshed: Effect.Effect<void>) => McpClient.coalescedRefresh(refreshed, minRefreshInterval)
        const tools = yield* refresher(refresh(server, client, "tools"))
        const prompts = yield* refresher(refresh(server, client, "prompts"))
        const resources = yield* refresher(
          Effect.andThen(refresh(server, client, "resources"), refresh(server, client, "resourceTemplates"))
        )
        // A modern listen that dropped is listened again by the client; changes made meanwhile were not reported,
        // so every acknowledgement after the first reads the known lists again (a legacy reconnection does it on
        // `Connected`, above).
        let acknowledged = false
        yield* client.listen({ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true }).pipe(
          Stream.runForEach((notification) => {
            switch (notification.method) {
              case "notifications/subscriptions/acknowledged": {
                const again = acknowledged
                acknowledged = true
                return again ? refreshKnown(server, client) : Effect.void
              }
              case "notifications/tools/list_changed":
                return tools
              case "notifications/prompts/list_changed":
                return prompts
              case "notifications/resources/list_changed":
                return resources
              default:
                return Effect.void
            }
          }),
          Effect.catch((error) =>
            Effect.logDebug(printable(`McpHub: ${server} stopped sending list changes: ${error.message}`))
          ),
          // started before the connection is handed out: a legacy server's change announced right after it is
          // heard, and a modern listen is sent before the caller's first listing
          Effect.forkScoped({ startImmediately: true })
        )
      })

    const connect = (server: string): Effect.Effect<McpClient.McpClientService, McpHub.ServerError, R | Scope.Scope> =>
      Effect.gen(function*() {
        const entry = entries.get(server)
        if (entry === undefined || entry._tag === "Invalid") {
          return yield* Effect.die(new Error(`McpHub: no server ${server}`))
        }
        const generation = (generations.get(server) ?? 0) + 1
        generations.set(server, generation)
        yield* setState(server, generation, HubModel.ServerState.Connecting())
        let connected = false
        yield* Effect.addFinalizer(() =>
          connected ? setState(server, generation, HubModel.ServerState.Idle()) : Effect.void
        )
        const built = Effect.gen(function*() {
          // built again at each connection, on a memo map of its own (as Effect 3's Layer.build did): nothing of
          // it is shared with another server or with layers the application built
          const transport = yield* Layer.buildWithMemoMap(
            entry.definition.transport,
            yield* Layer.makeMemoMap,
            yield* Effect.scope
          )
          const clientOptions: McpClient.McpClientOptions = { ...options.client, ...entry.definition.client }
          const handlers = yield* handlersFor(server, clientOptions)
          return yield* McpClient.make({ ...clientOptions, ...handlers }).pipe(Effect.provide(transport))
        })
        const client = yield* built.pipe(
          Effect.mapError((error) => new HubModel.ServerError({ server, error })),
          Effect.tapError((error) => setState(server, generation, HubModel.ServerState.Failed({ error })))
        )
        connected = true
        yield* watch(server, generation, client)
        return client
      }).pipe(Effect.annotateLogs({ module: "McpHub", server: printable(server) }))

    const layerMap: LayerMap.LayerMap<string, McpClient.McpClient, McpHub.ServerError> = yield* LayerMap.make(
      (server: string) => Layer.effect(McpClient.McpClient, connect(server)),
      { idleTimeToLive: options.idleTimeToLive ?? Duration.minutes(5) }
    )

    const service = makeService({
      entries,
      order,
      separator,
      states,
      catalog,
      changes,
      store,
      listTimeout: Duration.fromInputUnsafe(options.listTimeout ?? Duration.seconds(30)),
      client: (server) =>
        layerMap.contextEffect(server).pipe(
          Effect.map((context) => Context.get(context, McpClient.McpClient)),
          Effect.tapError(() => layerMap.invalidate(server))
        ),
      release: (server) => layerMap.invalidate(server)
    })
    return service
  })

interface Parts<R> {
  readonly entries: ReadonlyMap<string, Entry<R>>
  readonly order: ReadonlyArray<string>
  readonly separator: string
  readonly states: SubscriptionRef.SubscriptionRef<ReadonlyMap<string, McpHub.ServerState>>
  readonly catalog: Ref.Ref<ReadonlyMap<string, Lists>>
  readonly changes: PubSub.PubSub<McpHub.ListChange>
  readonly store: <K extends McpHub.ListKind>(
    server: string,
    kind: K,
    items: ReadonlyArray<ListTypes[K]>
  ) => Effect.Effect<void>
  readonly listTimeout: Duration.Duration
  /** The client of a valid server, through the LayerMap. */
  readonly client: (server: string) => Effect.Effect<McpClient.McpClientService, McpHub.ServerError, Scope.Scope>
  readonly release: (server: string) => Effect.Effect<void>
}

const projectors = <R>(entries: ReadonlyMap<string, Entry<R>>, separator: string) => {
  const namespaced = (server: string, name: string) => `${server}${separator}${name}`
  return {
    tools: (server: string, items: ReadonlyArray<McpSchema.Tool>): Array<McpHub.HubTool> => {
      const entry = entries.get(server)
      return items
        .filter((tool) => entry?._tag === "Valid" && entry.allows(tool.name))
        .map((tool) => ({ name: namespaced(server, tool.name), server, tool }))
    },
    prompts: (server: string, items: ReadonlyArray<McpSchema.Prompt>): Array<McpHub.HubPrompt> =>
      items.map((prompt) => ({ name: namespaced(server, prompt.name), server, prompt })),
    resources: (server: string, items: ReadonlyArray<McpSchema.Resource>): Array<McpHub.HubResource> =>
      items.map((resource) => ({ server, resource })),
    resourceTemplates: (
      server: string,
      items: ReadonlyArray<McpSchema.ResourceTemplate>
    ): Array<McpHub.HubResourceTemplate> => items.map((template) => ({ server, template }))
  }
}

const listOf = <R, K extends McpHub.ListKind, A>(
  parts: Parts<R>,
  valid: (server: string) => Result.Result<unknown, McpHub.HubError>,
  use: <B>(
    server: string,
    f: (client: McpClient.McpClientService) => Effect.Effect<B, McpError.McpClientError>
  ) => Effect.Effect<B, McpHub.McpHubError>,
  kind: K,
  toItems: (server: string, items: ReadonlyArray<ListTypes[K]>) => Array<A>
) =>
(options?: McpHub.ListOptions): Effect.Effect<McpHub.Listing<A>> =>
  Effect.forEach(parts.order, (server) =>
    Effect.gen(function*() {
      yield* Effect.fromResult(valid(server))
      const cached = (yield* Ref.get(parts.catalog)).get(server)?.[kind]
      if (cached !== undefined && options?.refresh !== true) return toItems(server, cached)
      const fetched = yield* use(server, fetchers[kind]).pipe(
        Effect.timeoutOrElse({
          duration: parts.listTimeout,
          orElse: () =>
            Effect.fail(
              new HubModel.ServerError({
                server,
                error: new McpError.RequestTimeout({
                  method: `${kind} listing`,
                  timeoutMillis: Duration.toMillis(parts.listTimeout)
                })
              })
            )
        })
      )
      yield* parts.store(server, kind, fetched)
      return toItems(server, fetched)
    }).pipe(Effect.result), { concurrency: "unbounded" }).pipe(
    Effect.map((results) => ({
      items: results.flatMap((result) => (Result.isSuccess(result) ? result.success : [])),
      errors: results.flatMap((result) => (Result.isFailure(result) ? [result.failure] : []))
    }))
  )

const stateEvents = (
  states: SubscriptionRef.SubscriptionRef<ReadonlyMap<string, McpHub.ServerState>>,
  order: ReadonlyArray<string>
) =>
  Stream.mapAccum(
    SubscriptionRef.changes(states),
    (): ReadonlyMap<string, McpHub.ServerState> => new Map(),
    (previous, next) => [
      next,
      order.flatMap((server) => {
        const state = next.get(server)!
        return previous.get(server) === state ? [] : [{ server, state }]
      })
    ] as const
  )

const makeService = <R>(parts: Parts<R>): McpHub.Service => {
  const { catalog, entries, order, separator } = parts
  const project = projectors(entries, separator)
  const unknownServer = (server: string) =>
    new HubModel.HubError({
      reason: "UnknownServer",
      server,
      detail: `no such server (the hub has: ${order.join(", ") || "none"})`
    })
  const valid = (server: string): Result.Result<Extract<Entry<R>, { _tag: "Valid" }>, McpHub.HubError> => {
    const entry = entries.get(server)
    if (entry === undefined) return Result.fail(unknownServer(server))
    return entry._tag === "Invalid" ? Result.fail(entry.error) : Result.succeed(entry)
  }
  const known = (server: string): Effect.Effect<string, McpHub.HubError> =>
    entries.has(server) ? Effect.succeed(server) : Effect.fail(unknownServer(server))

  const client = (server: string) => Effect.flatMap(Effect.fromResult(valid(server)), () => parts.client(server))
  const use = <A, RA>(
    server: string,
    f: (client: McpClient.McpClientService) => Effect.Effect<A, McpError.McpClientError | McpError.TaskError, RA>
  ): Effect.Effect<A, McpHub.McpHubError, RA> =>
    Effect.scoped(
      Effect.flatMap(client(server), (c) => Effect.mapError(f(c), (error) => new HubModel.ServerError({ server, error })))
    )

  const resolve = (name: string): Result.Result<{ readonly server: string; readonly name: string }, McpHub.HubError> => {
    const at = name.indexOf(separator)
    const rest = at > 0 ? name.slice(at + separator.length) : ""
    if (at <= 0 || rest === "") {
      return Result.fail(
        new HubModel.HubError({
          reason: "UnknownName",
          detail: `"${name}" is not a hub name (<server>${separator}<name>)`
        })
      )
    }
    const server = name.slice(0, at)
    return entries.has(server) ? Result.succeed({ server, name: rest }) : Result.fail(unknownServer(server))
  }

  const toolsOf = (server: string) =>
    Effect.flatMap(Ref.get(catalog), (current) => {
      const cached = current.get(server)?.tools
      if (cached !== undefined) return Effect.succeed(cached)
      return use(server, (c) => c.listTools()).pipe(Effect.tap((tools) => parts.store(server, "tools", tools)))
    })

  const allowed = (server: string, tool: string): Effect.Effect<void, McpHub.HubError> =>
    Effect.flatMap(Effect.fromResult(valid(server)), (entry) =>
      entry.allows(tool)
        ? Effect.void
        : Effect.fail(
          new HubModel.HubError({ reason: "NotAllowed", server, detail: `tool "${tool}" is hidden by the hub's filter` })
        ))

  const callOn = (server: string, tool: string) =>
  (args: Readonly<Record<string, unknown>> | undefined, options?: McpClient.RequestOptions) =>
    use(server, (c) => c.callTool({ name: tool, arguments: args }, options))

  const bindTool: McpHub.Service["bindTool"] = (server, tool) =>
    Effect.gen(function*() {
      yield* allowed(server, tool.name)
      let checked = yield* Effect.flatMap(toolsOf(server), (tools) => TypedTool.check(tool, tools))
      const call = TypedTool.callWith(tool, callOn(server, tool.name))
      return (params, options) =>
        Effect.gen(function*() {
          const current = (yield* Ref.get(catalog)).get(server)?.tools
          const advertised = current?.find((candidate) => candidate.name === tool.name)
          if (current !== undefined && advertised !== checked) checked = yield* TypedTool.check(tool, current)
          return yield* call(params, options)
        })
    })

  return {
    servers: order,
    client,
    use,
    state: (server) =>
      Effect.flatMap(known(server), () => Effect.map(SubscriptionRef.get(parts.states), (m) => m.get(server)!)),
    stateChanges: (server) =>
      Stream.unwrap(Effect.map(known(server), () =>
        SubscriptionRef.changes(parts.states).pipe(
          Stream.map((m) => m.get(server)!),
          Stream.changesWith((a, b) => a === b)
        ))),
    states: stateEvents(parts.states, order),
    listTools: listOf(parts, valid, use, "tools", project.tools),
    listPrompts: listOf(parts, valid, use, "prompts", project.prompts),
    listResources: listOf(parts, valid, use, "resources", project.resources),
    listResourceTemplates: listOf(parts, valid, use, "resourceTemplates", project.resourceTemplates),
    knownTools: Effect.map(Ref.get(catalog), (current) =>
      order.flatMap((server) => project.tools(server, current.get(server)?.tools ?? []))),
    changes: Stream.fromPubSub(parts.changes),
    resolve,
    callTool: ((params: McpClient.CallToolParams, given?: McpClient.CallToolOptions) => {
      const { isError, ...options } = given ?? {}
      const called = Effect.flatMap(Effect.fromResult(resolve(params.name)), ({ name: tool, server }) =>
        Effect.andThen(allowed(server, tool), callOn(server, tool)(params.arguments, options)))
      return isError === "fail" ? Effect.flatMap(called, ToolResultInternal.failOnError(params.name)) : called
    }) as McpHub.Service["callTool"],
    getPrompt: ({ arguments: args, name }, options) =>
      Effect.flatMap(Effect.fromResult(resolve(name)), ({ name: prompt, server }) =>
        use(server, (c) => c.getPrompt({ name: prompt, arguments: args }, options))),
    readResource: ({ server, uri }, options) => use(server, (c) => c.readResource({ uri }, options)),
    bindTool,
    release: (server) => Effect.flatMap(known(server), parts.release)
  }
}
