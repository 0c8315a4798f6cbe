/**
 * The Streamable HTTP binding of an `McpServer`, on Effect's `HttpServer` (`effect/http/HttpServer`): one endpoint (`/mcp` unless
 * told otherwise) in both eras:
 *
 * - Modern (2026-07-28): every POST is one request, served by a fresh server connection and answered as an
 *   event stream (its progress notifications, then the response). Closing the stream cancels the request.
 * - Legacy (2025-03-26 … 2025-11-25): `initialize` opens a session named by `Mcp-Session-Id`; later POSTs carry
 *   it. A request is answered as an event stream of its progress and its response; notifications (such as
 *   `notifications/cancelled`) get 202. GET opens the session's stream of other server messages; DELETE ends
 *   the session. An unknown session is 404; a request without a session on a legacy-only server is 400.
 *
 * Provide any `HttpServer` (`NodeHttpServer.layer`, `BunHttpServer.layer`, ...); the binding keeps no state
 * between sessions.
 *
 * @since 0.1.0
 */
import * as McpError from "@conduit-mcp/client/McpError"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as McpServer from "./McpServer.js"

interface Session {
  readonly id: string
  readonly connection: McpServer.Connection
  readonly scope: Scope.Closeable
  /** The open POST streams, by the id of the request each one answers. */
  readonly replies: Map<McpSchema.RequestId, Queue.Queue<McpSchema.JsonRpcMessage>>
  /** Which request a progress token belongs to. */
  readonly progressOwners: Map<McpSchema.ProgressToken, McpSchema.RequestId>
  /** Everything else the server sends, for GET streams. */
  readonly standalone: PubSub.PubSub<McpSchema.JsonRpcMessage>
}

const sessionHeader = "mcp-session-id"

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const progressTokenOf = (message: McpSchema.JsonRpcRequest): McpSchema.ProgressToken | undefined => {
  const meta = isRecord(message.params) && isRecord(message.params._meta) ? message.params._meta : undefined
  const token = meta?.progressToken
  return typeof token === "string" || typeof token === "number" ? token : undefined
}

const encodeEvent = (message: McpSchema.JsonRpcMessage): string =>
  `event: message\ndata: ${JSON.stringify(message)}\n\n`

const eventStream = (messages: Stream.Stream<McpSchema.JsonRpcMessage>, headers: Record<string, string> = {}) =>
  HttpServerResponse.stream(Stream.encodeText(Stream.map(messages, encodeEvent)), {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-cache", ...headers }
  })

const jsonError = (status: number, code: number, message: string) =>
  HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", id: null, error: { code, message } }, { status })

const isResponseTo = (id: McpSchema.RequestId) => (message: McpSchema.JsonRpcMessage) =>
  McpSchema.isResponse(message) && message.id === id

/**
 * The HTTP application serving `server`, with the sessions it owns in the given Scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeApp = (server: McpServer.Server, options?: { readonly path?: string | undefined }) =>
  Effect.gen(function*() {
    const endpoint = options?.path ?? "/mcp"
    const sessions = new Map<string, Session>()
    const appScope = yield* Effect.scope

    const closeSession = (session: Session) =>
      Effect.suspend(() => {
        sessions.delete(session.id)
        return Scope.close(session.scope, Exit.void)
      })
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...sessions.values()], closeSession, { discard: true, concurrency: "unbounded" })
    )

    const route = (session: Session) => (message: McpSchema.JsonRpcMessage): Effect.Effect<void> => {
      if (McpSchema.isResponse(message) && message.id !== null) {
        const reply = session.replies.get(message.id)
        return reply !== undefined ? Queue.offer(reply, message) : Effect.void
      }
      if (McpSchema.isNotification(message) && isRecord(message.params)) {
        const token = message.params.progressToken
        const owner = typeof token === "string" || typeof token === "number"
          ? session.progressOwners.get(token)
          : undefined
        const reply = owner !== undefined ? session.replies.get(owner) : undefined
        if (reply !== undefined) return Queue.offer(reply, message)
      }
      return Effect.asVoid(PubSub.publish(session.standalone, message))
    }

    const openSession = Effect.gen(function*() {
      const scope = yield* Scope.fork(appScope, "sequential")
      const standalone = yield* PubSub.sliding<McpSchema.JsonRpcMessage>(256)
      yield* Scope.addFinalizer(scope, PubSub.shutdown(standalone))
      const replies = new Map<McpSchema.RequestId, Queue.Queue<McpSchema.JsonRpcMessage>>()
      const progressOwners = new Map<McpSchema.ProgressToken, McpSchema.RequestId>()
      const id = globalThis.crypto.randomUUID()
      let session: Session | undefined
      const connection = yield* server.connect((message) => session === undefined ? Effect.void : route(session)(message))
        .pipe(Scope.provide(scope))
      session = { id, connection, scope, replies, progressOwners, standalone }
      sessions.set(id, session)
      yield* Effect.logInfo(McpError.printable(`session ${id} opened`))
      return session
    })

    // A request of a legacy session: its progress and its response, as an event stream.
    const sessionRequest = (session: Session, message: McpSchema.JsonRpcRequest, headers: Record<string, string>) =>
      eventStream(
        Stream.unwrap(Effect.gen(function*() {
          const reply = yield* Queue.unbounded<McpSchema.JsonRpcMessage>()
          const token = progressTokenOf(message)
          yield* Effect.acquireRelease(
            Effect.sync(() => {
              session.replies.set(message.id, reply)
              if (token !== undefined) session.progressOwners.set(token, message.id)
            }),
            () =>
              Effect.sync(() => {
                session.replies.delete(message.id)
                if (token !== undefined) session.progressOwners.delete(token)
              })
          )
          yield* session.connection.handle(message)
          return Stream.fromQueue(reply).pipe(Stream.takeUntil(isResponseTo(message.id)))
        })),
        headers
      )

    // A modern request: a connection of its own, closed (and the handler interrupted) with the stream.
    const statelessRequest = (message: McpSchema.JsonRpcRequest) =>
      eventStream(Stream.unwrap(Effect.gen(function*() {
        const reply = yield* Queue.unbounded<McpSchema.JsonRpcMessage>()
        const connection = yield* server.connect((sent) => Queue.offer(reply, sent))
        yield* connection.handle(message)
        return Stream.fromQueue(reply).pipe(Stream.takeUntil(isResponseTo(message.id)))
      })))

    const post = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        // a client's text: its `__proto__` members are removed before any schema copies them
        const body = Result.flatMap(
          yield* Effect.result(request.text),
          (text) => Result.try(() => McpSchema.parseJson(text))
        )
        const decoded = Result.flatMap(body, (json) => McpSchema.decodeMessage(json))
        if (Result.isFailure(decoded)) return jsonError(400, McpSchema.ErrorCode.ParseError, "Parse error")
        const message = decoded.success
        const sessionId = request.headers[sessionHeader]
        if (sessionId !== undefined) {
          const session = sessions.get(sessionId)
          if (session === undefined) return jsonError(404, -32001, "Session not found")
          if (!McpSchema.isRequest(message)) {
            yield* session.connection.handle(message)
            return HttpServerResponse.empty({ status: 202 })
          }
          return sessionRequest(session, message, {})
        }
        if (!McpSchema.isRequest(message)) return HttpServerResponse.empty({ status: 202 })
        if (message.method === "initialize" && server.eras !== "modern") {
          const session = yield* openSession
          return sessionRequest(session, message, { "mcp-session-id": session.id })
        }
        if (server.eras === "legacy") {
          return jsonError(400, -32000, "Bad Request: No valid session ID provided")
        }
        return statelessRequest(message)
      })

    const get = (request: HttpServerRequest.HttpServerRequest) => {
      const sessionId = request.headers[sessionHeader]
      const session = sessionId !== undefined ? sessions.get(sessionId) : undefined
      if (sessionId === undefined) return Effect.succeed(HttpServerResponse.empty({ status: 405 }))
      if (session === undefined) return Effect.succeed(jsonError(404, -32001, "Session not found"))
      return Effect.succeed(eventStream(Stream.fromPubSub(session.standalone)))
    }

    const remove = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const sessionId = request.headers[sessionHeader]
        const session = sessionId !== undefined ? sessions.get(sessionId) : undefined
        if (session === undefined) return jsonError(404, -32001, "Session not found")
        yield* closeSession(session)
        yield* Effect.logInfo(McpError.printable(`session ${session.id} closed by the client`))
        return HttpServerResponse.empty({ status: 200 })
      })

    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = new URL(request.url, "http://localhost").pathname
      if (path !== endpoint) return HttpServerResponse.text(`Not found; the MCP endpoint is ${endpoint}`, { status: 404 })
      switch (request.method) {
        case "POST":
          return yield* post(request)
        case "GET":
          return yield* get(request)
        case "DELETE":
          return yield* remove(request)
        default:
          return HttpServerResponse.empty({ status: 405, headers: { allow: "GET, POST, DELETE" } })
      }
    })
  })

/**
 * Serves `server` on the `HttpServer` in context for the life of the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  server: McpServer.Server,
  options?: { readonly path?: string | undefined }
): Layer.Layer<never, never, HttpServer.HttpServer> =>
  Layer.effectDiscard(Effect.flatMap(makeApp(server, options), HttpServer.serveEffect()))
