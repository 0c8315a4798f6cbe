/** @internal */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { TransportError } from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"
import type * as InProcessTransport from "../InProcessTransport.js"
import * as Transport from "../Transport.js"
import * as codec from "./codec.js"
import { printable } from "./printable.js"

const parseJson = Schema.decodeUnknownResult(Schema.fromJsonString(Schema.Unknown))

/**
 * Sends a message across the process boundary that is not there: serialize, parse and decode it as the wire
 * transports do, so a value that could not travel (a bigint, a cycle, a non-JSON-RPC shape) fails here.
 */
const cross = (message: McpSchema.JsonRpcMessage): Result.Result<McpSchema.JsonRpcMessage, string> =>
  Result.try({ try: () => codec.encode(message), catch: (cause) => `not serializable: ${String(cause)}` }).pipe(
    Result.flatMap((text) =>
      Result.map(Result.mapError(parseJson(text), () => "not valid JSON once serialized"), (parsed) => ({ parsed, text }))
    ),
    Result.flatMap(({ parsed, text }) => {
      const frame = codec.decodeValue(parsed, text)
      return frame.messages.length === 1 && frame.invalid.length === 0
        ? Result.succeed(frame.messages[0])
        : Result.fail(frame.invalid.join("; "))
    })
  )

const closedError = (detail: string) => new TransportError({ transport: "in-process", reason: "Closed", detail })

/**
 * What the client reads of this transport: the default probe rules (a server that says nothing to the probe is a
 * legacy one), and a send that hands the message to a server running in this process, whose handler may run under
 * the call's span.
 */
const traits: Transport.Traits = { probeFailures: "stream", untracedSend: false }

interface Live {
  readonly disconnect: Effect.Effect<void>
}

/** @internal */
export const make = (server: InProcessTransport.Peer) =>
  Effect.gen(function*() {
    const opened = yield* Ref.make(0)
    const live = new Set<Live>()

    const connect = (emit: Transport.Emit) =>
      Effect.gen(function*() {
        const outer = yield* Effect.scope
        const scope = yield* Scope.fork(outer, "sequential")
        let closed = false

        const deliver = (message: McpSchema.JsonRpcMessage): Effect.Effect<void> =>
          Result.match(cross(message), {
            onSuccess: (crossed) => emit(codec.toEvent(crossed)),
            onFailure: (detail) =>
              "id" in message && !("method" in message) && message.id !== null
                ? emit(Transport.TransportEvent.RequestFailed({
                  id: message.id,
                  error: new TransportError({ transport: "in-process", reason: "Read", detail })
                }))
                : Effect.logWarning(printable(`dropping a server message: ${detail}`))
          })

        // One emitter keeps the server's messages in order and stops with the connection.
        const outbox = yield* Queue.unbounded<McpSchema.JsonRpcMessage>()
        yield* Stream.fromQueue(outbox).pipe(Stream.runForEach(deliver), Effect.forkIn(scope))
        const connection = yield* server.connect((message) => Effect.asVoid(Queue.offer(outbox, message))).pipe(
          Scope.provide(scope)
        )

        const stop = Effect.suspend(() => {
          if (closed) return Effect.succeed(false)
          closed = true
          return Effect.as(Scope.close(scope, Exit.void), true)
        })
        const entry: Live = {
          disconnect: Effect.flatMap(stop, (wasOpen) =>
            wasOpen
              ? emit(Transport.TransportEvent.Closed({ error: closedError("the in-process server went away") }))
              : Effect.void)
        }
        yield* Effect.acquireRelease(
          Effect.sync(() => live.add(entry)),
          () => Effect.andThen(Effect.sync(() => live.delete(entry)), stop)
        )
        yield* Ref.update(opened, (n) => n + 1)

        const toServer = (message: McpSchema.JsonRpcMessage): Effect.Effect<void, TransportError> =>
          Effect.suspend(() => {
            if (closed) return Effect.fail(closedError("connection closed"))
            return Result.match(cross(message), {
              onFailure: (detail) => Effect.fail(new TransportError({ transport: "in-process", reason: "Write", detail })),
              onSuccess: connection.handle
            })
          })

        return {
          info: { binding: "in-process", target: `in-process:${server.info.name}` },
          request: (message) => toServer(message),
          notify: toServer,
          respond: toServer,
          cancel: (id) =>
            closed ? Effect.void : Effect.asVoid(Effect.timeoutOption(connection.cancel(id), "2 seconds")),
          setSession: () => Effect.void
        } satisfies Transport.TransportConnection
      }).pipe(Effect.annotateLogs({ module: "InProcessTransport", method: "connect" }))

    return {
      transport: Transport.Transport.of({ kind: "in-process", connect, traits }),
      control: {
        disconnect: Effect.suspend(() => Effect.forEach([...live], (entry) => entry.disconnect, { discard: true })),
        connections: Ref.get(opened),
        open: Effect.sync(() => live.size)
      }
    }
  })
