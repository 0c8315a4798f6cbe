/** @internal */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Mailbox from "effect/Mailbox"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { TransportError } from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"
import type * as InProcessTransport from "../InProcessTransport.js"
import * as Transport from "../Transport.js"
import * as codec from "./codec.js"
import { printable } from "./printable.js"

const parseJson = Schema.decodeUnknownEither(Schema.parseJson())

/**
 * Sends a message across the process boundary that is not there: serialize, parse and decode it as the wire
 * transports do, so a value that could not travel (a bigint, a cycle, a non-JSON-RPC shape) fails here.
 */
const cross = (message: McpSchema.JsonRpcMessage): Either.Either<McpSchema.JsonRpcMessage, string> =>
  Either.try({ try: () => codec.encode(message), catch: (cause) => `not serializable: ${String(cause)}` }).pipe(
    Either.flatMap((text) =>
      Either.map(Either.mapLeft(parseJson(text), () => "not valid JSON once serialized"), (parsed) => ({ parsed, text }))
    ),
    Either.flatMap(({ parsed, text }) => {
      const frame = codec.decodeValue(parsed, text)
      return frame.messages.length === 1 && frame.invalid.length === 0
        ? Either.right(frame.messages[0])
        : Either.left(frame.invalid.join("; "))
    })
  )

const closedError = (detail: string) => new TransportError({ transport: "in-process", reason: "Closed", detail })

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
        const scope = yield* Scope.fork(outer, ExecutionStrategy.sequential)
        let closed = false

        const deliver = (message: McpSchema.JsonRpcMessage): Effect.Effect<void> =>
          Either.match(cross(message), {
            onRight: (crossed) => emit(codec.toEvent(crossed)),
            onLeft: (detail) =>
              "id" in message && !("method" in message) && message.id !== null
                ? emit(Transport.TransportEvent.RequestFailed({
                  id: message.id,
                  error: new TransportError({ transport: "in-process", reason: "Read", detail })
                }))
                : Effect.logWarning(printable(`dropping a server message: ${detail}`))
          })

        // One emitter keeps the server's messages in order and stops with the connection.
        const outbox = yield* Mailbox.make<McpSchema.JsonRpcMessage>()
        yield* Mailbox.toStream(outbox).pipe(Stream.runForEach(deliver), Effect.forkIn(scope))
        const connection = yield* server.connect((message) => Effect.asVoid(outbox.offer(message))).pipe(
          Scope.extend(scope)
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
          () => Effect.zipRight(Effect.sync(() => live.delete(entry)), stop)
        )
        yield* Ref.update(opened, (n) => n + 1)

        const toServer = (message: McpSchema.JsonRpcMessage): Effect.Effect<void, TransportError> =>
          Effect.suspend(() => {
            if (closed) return Effect.fail(closedError("connection closed"))
            return Either.match(cross(message), {
              onLeft: (detail) => Effect.fail(new TransportError({ transport: "in-process", reason: "Write", detail })),
              onRight: connection.handle
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
      transport: Transport.Transport.of({ kind: "in-process", connect }),
      control: {
        disconnect: Effect.suspend(() => Effect.forEach([...live], (entry) => entry.disconnect, { discard: true })),
        connections: Ref.get(opened),
        open: Effect.sync(() => live.size)
      }
    }
  })
