/**
 * One client connection of a server: its own state (the legacy session, the modern listens, the requests it sent
 * the client), the changes it passes on to its client, the request context its handlers see, and how an inbound
 * message is handled: a request is routed to its era and answered from its own fiber (cancellable), a response
 * goes to the request to the client that awaits it, `notifications/cancelled` interrupts a request.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import type * as Scope from "effect/Scope"
import * as McpError from "@conduit-mcp/client/McpError"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as McpServer from "../McpServer.js"
import * as Ask from "./serverAsk.js"
import * as Legacy from "./serverLegacy.js"
import * as Listen from "./serverListen.js"
import * as Methods from "./serverMethods.js"
import * as Modern from "./serverModern.js"
import * as model from "./serverModel.js"
import { isProgressToken, isRequestId, passes, record, type RequestInfo } from "./serverRequest.js"
import * as ServerTasks from "./serverTasks.js"

type JsonObject = model.JsonObject

/**
 * What every connection of a server shares.
 *
 * @internal
 */
export interface ServerSide {
  readonly eras: McpServer.Eras
  readonly legacyVersions: ReadonlyArray<McpSchema.LegacyVersion>
  readonly modernVersions: ReadonlyArray<McpSchema.ModernVersion>
  readonly supportedVersions: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly info: McpSchema.Implementation
  readonly capabilities: McpSchema.ServerCapabilities
  readonly instructions: string | undefined
  readonly methods: Methods.Methods
  /** The id of the next connection (1 for the first). */
  readonly nextId: Effect.Effect<number>
  /** Every live connection's way of passing a change on to its client (legacy session or modern listens). */
  readonly audiences: Set<(change: model.Change) => Effect.Effect<void>>
  readonly publish: (change: model.Change) => Effect.Effect<void>
  readonly onReceived: (received: McpServer.Received) => Effect.Effect<void>
  readonly onInterrupted: (interrupted: McpServer.Interrupted) => Effect.Effect<void>
}

/** One connection's own pieces. */
interface Wired {
  readonly server: ServerSide
  readonly connection: number
  readonly send: McpServer.Send
  readonly notify: (method: string, params: JsonObject) => Effect.Effect<void>
  readonly inflight: FiberMap.FiberMap<McpSchema.RequestId>
  readonly legacy: Legacy.LegacyState
  /** The modern listens open on this connection, by request id. */
  readonly listens: Map<McpSchema.RequestId, Listen.ListenFilter>
  readonly outgoing: Ask.Outgoing
  readonly listen: (
    id: McpSchema.RequestId,
    params: JsonObject,
    clientCapabilities: JsonObject
  ) => Effect.Effect<never, McpError.McpError>
}

/** Passes a change on to the client, if it asked about it: its legacy subscriptions, its modern listens. */
const deliver = (wired: Wired) => (change: model.Change): Effect.Effect<void> =>
  Effect.suspend(() => {
    const { legacy, listens, notify } = wired
    const { method, params } = Listen.changeNotification(change)
    const tagged = [...listens].filter(([, filter]) => Listen.wants(filter, change)).map(([id]) =>
      notify(method, { ...params, _meta: { [McpSchema.MetaKeys.subscriptionId]: id } })
    )
    const plain = legacy.session !== undefined &&
        (change._tag === "ListChanged" || legacy.subscribed.has(change.uri))
      ? [notify(method, params)]
      : []
    return Effect.all([...plain, ...tagged], { discard: true })
  })

const requestContext = (
  wired: Wired,
  request: RequestInfo,
  input: model.RequestContext["Service"]["input"]
): model.RequestContext["Service"] => {
  const { notify } = wired
  const progressToken = isProgressToken(request.meta.progressToken) ? request.meta.progressToken : undefined
  return {
    connection: wired.connection,
    requestId: request.id,
    method: request.method,
    era: request.era,
    protocolVersion: request.version,
    clientCapabilities: request.clientCapabilities,
    clientInfo: request.clientInfo,
    progressToken,
    meta: request.meta,
    publish: wired.server.publish,
    progress: (value, details) =>
      progressToken === undefined ? Effect.void : notify("notifications/progress", {
        progressToken,
        progress: value,
        ...(details?.total !== undefined ? { total: details.total } : {}),
        ...(details?.message !== undefined ? { message: details.message } : {})
      }),
    log: (level, data, logger) =>
      passes(request.era === "legacy" ? wired.legacy.level : request.logThreshold, level) ?
        notify("notifications/message", { level, data, ...(logger !== undefined ? { logger } : {}) }) :
        Effect.void,
    input
  }
}

/** Runs a method both eras share, with the request context of its era. */
const run = (wired: Wired, request: RequestInfo): Effect.Effect<JsonObject, McpError.McpError> => {
  const { methods } = wired.server
  if (request.era === "legacy") {
    return Effect.provideService(
      Methods.common(methods, request),
      model.RequestContext,
      requestContext(wired, request, wired.outgoing.askClient(request))
    )
  }
  return Effect.flatMap(Ask.startRound(request), (round) => {
    const handled = Effect.provideService(
      Methods.common(methods, request),
      model.RequestContext,
      requestContext(wired, request, Ask.askInRound(request, round))
    )
    if (round === undefined) return handled
    // Once the handler waits for an answer it does not have, the request answers input_required and the
    // handler is interrupted; the yield lets inputs asked for concurrently join the same round.
    const blocked = Deferred.await(round.blocked).pipe(
      Effect.andThen(Effect.yieldNow),
      Effect.map(() => Ask.inputRequired(wired.server.info, request, round))
    )
    // The handler starts on the scheduler, after the request's fiber has suspended here and is registered as in
    // flight (a race's fibers run at once when it starts): the message that started the request is handled
    // before its handler runs, and a cancellation that arrives before the handler started interrupts it.
    return Effect.raceFirst(Effect.andThen(Effect.yieldNow, handled), blocked)
  })
}

/** Which era a request belongs to, and its answer. */
const route = (wired: Wired, request: McpSchema.JsonRpcRequest): Effect.Effect<JsonObject, McpError.McpError> => {
  const { server } = wired
  const params = record(request.params) ?? {}
  const meta = record(params._meta)
  if (request.method === "initialize") return Legacy.initialize(server, wired.legacy, params)
  const isModern = server.eras === "modern" ||
    (server.eras === "both" &&
      (request.method === "server/discover" ||
        (meta !== undefined && McpSchema.MetaKeys.protocolVersion in meta)))
  if (isModern) {
    return Modern.request({
      modernVersions: server.modernVersions,
      supportedVersions: server.supportedVersions,
      capabilities: server.capabilities,
      instructions: server.instructions,
      notify: wired.notify,
      finish: (info, result, cacheable) => Methods.finish(server.methods, info, result, cacheable),
      listen: wired.listen,
      run: (info) => run(wired, info)
    }, request, params, meta)
  }
  return Legacy.request({
    eras: server.eras,
    offersResources: server.methods.offers.resources,
    notify: wired.notify,
    run: (info) => run(wired, info)
  }, wired.legacy, request, params, meta)
}

/** Answers a request on the connection: its result, its error, or an internal error when its handler died. */
const answer = (wired: Wired, request: McpSchema.JsonRpcRequest): Effect.Effect<void> =>
  Effect.suspend(() => route(wired, request)).pipe(
    Effect.map((result): McpSchema.JsonRpcMessage => ({ jsonrpc: "2.0", id: request.id, result })),
    Effect.catch((error) =>
      Effect.succeed<McpSchema.JsonRpcMessage>({
        jsonrpc: "2.0",
        id: request.id,
        error: {
          code: error.code,
          message: error.message,
          ...(error.data !== undefined ? { data: error.data } : {})
        }
      })
    ),
    Effect.catchDefect((defect) =>
      Effect.as(
        Effect.logError("request handler died", defect).pipe(
          Effect.annotateLogs({ method: McpError.printable(request.method) })
        ),
        {
          jsonrpc: "2.0",
          id: request.id,
          error: { code: McpSchema.ErrorCode.InternalError, message: "Internal error" }
        } satisfies McpSchema.JsonRpcMessage
      )
    ),
    Effect.flatMap(wired.send),
    Effect.onInterrupt(() =>
      wired.server.onInterrupted({ connection: wired.connection, id: request.id, method: request.method })
    ),
    Effect.withSpan(`McpServer ${request.method}`, {
      kind: "server",
      attributes: { "rpc.system": "jsonrpc", "rpc.method": request.method, "mcp.connection": wired.connection }
    })
  )

const STATEFUL_METHODS: ReadonlySet<string> = new Set([
  "initialize",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe"
])

const handle = (wired: Wired, message: McpSchema.JsonRpcMessage): Effect.Effect<void> =>
  Effect.gen(function*() {
    const { inflight } = wired
    const method = "method" in message ? message.method : undefined
    const id = "id" in message && message.id !== null ? message.id : undefined
    yield* wired.server.onReceived({
      connection: wired.connection,
      message,
      method,
      id,
      params: "params" in message ? message.params : undefined
    })
    if (McpSchema.isRequest(message)) {
      if (yield* FiberMap.has(inflight, message.id)) {
        return yield* wired.send({
          jsonrpc: "2.0",
          id: message.id,
          error: { code: McpSchema.ErrorCode.InvalidRequest, message: "Duplicate request id" }
        })
      }
      // Requests that change the connection's state are answered in arrival order, before the next
      // message is looked at; every other request runs in its own fiber and can be cancelled.
      if (STATEFUL_METHODS.has(message.method)) return yield* answer(wired, message)
      yield* FiberMap.run(inflight, message.id, answer(wired, message))
      return
    }
    if (McpSchema.isResponse(message)) return yield* wired.outgoing.answerFromClient(message)
    if (McpSchema.isNotification(message) && message.method === "notifications/cancelled") {
      const requestId = record(message.params)?.requestId
      if (isRequestId(requestId)) yield* FiberMap.remove(inflight, requestId)
    }
    // Other notifications (initialized, roots/list_changed) need no action.
  })

/**
 * Opens a connection of the server; closing the Scope interrupts its in-flight requests.
 *
 * @internal
 */
export const make = (
  server: ServerSide,
  send: McpServer.Send
): Effect.Effect<McpServer.Connection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const connection = yield* server.nextId
    const inflight = yield* FiberMap.make<McpSchema.RequestId>()
    const notify = (method: string, params: JsonObject) => send({ jsonrpc: "2.0", method, params })
    const listens = new Map<McpSchema.RequestId, Listen.ListenFilter>()
    const { offers, serverTasks } = server.methods
    const wired: Wired = {
      server,
      connection,
      send,
      notify,
      inflight,
      legacy: Legacy.makeState(),
      listens,
      outgoing: Ask.makeOutgoing({ info: server.info, connection, send, notify }),
      listen: Listen.makeListen({
        offers: { tools: offers.tools, prompts: offers.prompts, resources: offers.resources },
        tasks: serverTasks,
        extensionId: ServerTasks.EXTENSION_ID,
        notify,
        listens
      })
    }
    const deliverChange = deliver(wired)
    yield* Effect.acquireRelease(
      Effect.sync(() => server.audiences.add(deliverChange)),
      () => Effect.sync(() => server.audiences.delete(deliverChange))
    )
    return {
      id: connection,
      handle: (message) => handle(wired, message),
      cancel: (id) => FiberMap.remove(inflight, id),
      awaitIdle: FiberMap.awaitEmpty(inflight).pipe(Effect.catchCause(() => Effect.void))
    } satisfies McpServer.Connection
  })
