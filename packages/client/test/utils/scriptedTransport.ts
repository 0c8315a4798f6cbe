/**
 * A transport whose server is a script: each message the client sends is handed to the script, which answers
 * through a small context. For the exact cases a real server cannot produce (precise error codes, silence,
 * crashes at chosen points).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as McpError from "../../src/McpError.js"
import type * as McpSchema from "../../src/McpSchema.js"
import * as Transport from "../../src/Transport.js"

export interface ScriptContext {
  /** 1 for the first connection, 2 after the first reconnect, … */
  readonly connection: number
  readonly reply: (id: McpSchema.RequestId, result: unknown) => Effect.Effect<void>
  readonly fail: (id: McpSchema.RequestId, code: number, message: string, data?: unknown) => Effect.Effect<void>
  readonly notify: (method: string, params?: unknown) => Effect.Effect<void>
  readonly serverRequest: (id: McpSchema.RequestId, method: string, params?: unknown) => Effect.Effect<void>
  readonly raw: (event: Transport.TransportEvent) => Effect.Effect<void>
  readonly close: (detail?: string) => Effect.Effect<void>
}

export type Script = (message: McpSchema.JsonRpcMessage, context: ScriptContext) => Effect.Effect<void>

export interface Sent {
  readonly connection: number
  readonly message: McpSchema.JsonRpcMessage
}

export class ScriptLog extends Context.Service<ScriptLog, {
  readonly sent: Ref.Ref<ReadonlyArray<Sent>>
  readonly cancels: Ref.Ref<ReadonlyArray<{ readonly id: McpSchema.RequestId; readonly reason: string }>>
  readonly connections: Ref.Ref<number>
  readonly sessions: Ref.Ref<ReadonlyArray<Transport.SessionInfo>>
  /** The live connection's context, to push messages from a test. */
  readonly current: Ref.Ref<ScriptContext | undefined>
}>()("test/ScriptLog") {}

export const sentMethods = (sent: ReadonlyArray<Sent>): ReadonlyArray<string> =>
  sent.flatMap((s) => ("method" in s.message ? [s.message.method] : []))

export const layer = (
  script: Script,
  options: {
    readonly kind?: McpError.TransportKind
    readonly connectFails?: (n: number) => boolean
    /** Requests are also taken without running an effect, as the library's own transports take them. */
    readonly fastRequest?: boolean
  } = {}
): Layer.Layer<Transport.Transport | ScriptLog> =>
  Layer.effectContext(Effect.gen(function*() {
    const log = {
      sent: yield* Ref.make<ReadonlyArray<Sent>>([]),
      cancels: yield* Ref.make<ReadonlyArray<{ readonly id: McpSchema.RequestId; readonly reason: string }>>([]),
      connections: yield* Ref.make(0),
      sessions: yield* Ref.make<ReadonlyArray<Transport.SessionInfo>>([]),
      current: yield* Ref.make<ScriptContext | undefined>(undefined)
    }
    const kind = options.kind ?? "in-process"
    const transport = Transport.Transport.of({
      kind,
      connect: (emit) =>
        Effect.gen(function*() {
          const n = yield* Ref.updateAndGet(log.connections, (k) => k + 1)
          if (options.connectFails?.(n) === true) {
            return yield* new McpError.TransportError({ transport: kind, reason: "Connect", detail: "refused" })
          }
          let open = true
          const guard = (effect: Effect.Effect<void>) => Effect.suspend(() => (open ? effect : Effect.void))
          const context: ScriptContext = {
            connection: n,
            reply: (id, result) => guard(emit(Transport.TransportEvent.Response({ message: { jsonrpc: "2.0", id, result } }))),
            fail: (id, code, message, data) =>
              guard(emit(Transport.TransportEvent.Response({
                message: { jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } }
              }))),
            notify: (method, params) =>
              guard(emit(Transport.TransportEvent.Notification({ message: { jsonrpc: "2.0", method, params } }))),
            serverRequest: (id, method, params) =>
              guard(emit(Transport.TransportEvent.ServerRequest({
                message: { jsonrpc: "2.0", id, method, params },
                related: undefined
              }))),
            raw: (event) => guard(emit(event)),
            close: (detail) =>
              Effect.suspend(() => {
                if (!open) return Effect.void
                open = false
                return emit(Transport.TransportEvent.Closed({
                  error: new McpError.TransportError({ transport: kind, reason: "Exited", detail: detail ?? "closed" })
                }))
              })
          }
          yield* Ref.set(log.current, context)
          yield* Effect.addFinalizer(() => Effect.sync(() => (open = false)))
          const deliver = (message: McpSchema.JsonRpcMessage) =>
            Effect.suspend(() => {
              if (!open) {
                return Effect.fail(new McpError.TransportError({ transport: kind, reason: "Closed" }))
              }
              return Effect.andThen(
                Ref.update(log.sent, (all) => [...all, { connection: n, message }]),
                Effect.forkDetach(script(message, context))
              )
            }).pipe(Effect.asVoid)
          const connection = {
            info: { binding: "in-process", target: "scripted" },
            request: (message) => deliver(message),
            notify: (message) => deliver(message),
            respond: (message) => deliver(message),
            cancel: (id, reason) => Ref.update(log.cancels, (all) => [...all, { id, reason }]),
            setSession: (session) => Ref.update(log.sessions, (all) => [...all, session])
          } satisfies Transport.TransportConnection
          if (options.fastRequest !== true) return connection
          return {
            ...connection,
            // (a closed connection throws: the request then goes through `request`, which fails it)
            trySend: (message) => {
              Effect.runSync(deliver(message))
              return true
            }
          } satisfies Transport.TransportConnection
        })
    })
    return Context.make(Transport.Transport, transport).pipe(Context.add(ScriptLog, log))
  }))

export const discoverResult = (overrides: Record<string, unknown> = {}) => ({
  resultType: "complete",
  supportedVersions: ["2026-07-28"],
  capabilities: { tools: { listChanged: true } },
  instructions: "scripted modern server",
  _meta: { "io.modelcontextprotocol/serverInfo": { name: "scripted", version: "1.0.0" } },
  ...overrides
})

export const initializeResult = (version = "2025-11-25") => ({
  protocolVersion: version,
  capabilities: { tools: {} },
  serverInfo: { name: "scripted-legacy", version: "1.0.0" }
})

/** A legacy server: unknown methods before initialize get -32601. */
export const legacyScript = (handle: Script = () => Effect.void, version = "2025-11-25"): Script => (message, ctx) => {
  if (!("method" in message) || !("id" in message)) return handle(message, ctx)
  if (message.method === "server/discover") return ctx.fail(message.id, -32601, "Method not found")
  if (message.method === "initialize") return ctx.reply(message.id, initializeResult(version))
  return handle(message, ctx)
}

/** A modern server. */
export const modernScript = (handle: Script = () => Effect.void): Script => (message, ctx) => {
  if ("method" in message && "id" in message && message.method === "server/discover") {
    return ctx.reply(message.id, discoverResult())
  }
  return handle(message, ctx)
}
