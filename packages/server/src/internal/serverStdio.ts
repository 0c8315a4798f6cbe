/** @internal */
import type * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as McpServer from "../McpServer.js"

// a client's text: its `__proto__` members are removed before any schema copies them
const parseJson = (line: string) => Result.try(() => McpSchema.parseJson(line))

const describe = (text: string): string => text.length > 200 ? `${text.slice(0, 200)}…` : text

/** A parsed line: the messages it holds (a batch holds several) and a description of each invalid part. */
const decodeValue = (
  parsed: unknown,
  line: string
): { readonly messages: ReadonlyArray<McpSchema.JsonRpcMessage>; readonly invalid: ReadonlyArray<string> } => {
  const elements = Array.isArray(parsed) ? parsed : [parsed]
  const messages: Array<McpSchema.JsonRpcMessage> = []
  const invalid: Array<string> = Array.isArray(parsed) && parsed.length === 0 ? ["empty batch"] : []
  for (const element of elements) {
    const decoded = McpSchema.decodeMessage(element)
    if (Result.isSuccess(decoded)) messages.push(decoded.success)
    else invalid.push(`not a JSON-RPC message: ${describe(Array.isArray(parsed) ? String(JSON.stringify(element)) : line)}`)
  }
  return { messages, invalid }
}

const errorLine = (code: number, message: string, data: string): McpSchema.JsonRpcMessage => ({
  jsonrpc: "2.0",
  id: null,
  error: { code, message, data }
})

/**
 * Serves one connection over newline-delimited JSON-RPC byte streams.
 *
 * @internal
 */
export const serve = <EI, EO, RI, RO>(
  server: McpServer.Server,
  options: {
    readonly input: Stream.Stream<Uint8Array, EI, RI>
    readonly output: Sink.Sink<unknown, Uint8Array, unknown, EO, RO>
    readonly drainTimeout?: Duration.Input | undefined
  }
): Effect.Effect<void, EI | EO, RI | RO> =>
  Effect.scoped(
    Effect.gen(function*() {
      const encoder = new TextEncoder()
      const outbox = yield* Queue.unbounded<Uint8Array, Cause.Done>()
      const writer = yield* Stream.fromQueue(outbox).pipe(Stream.run(options.output), Effect.forkChild)

      const send: McpServer.Send = (message) =>
        Result.match(Result.try(() => JSON.stringify(message)), {
          onFailure: (cause) => Effect.logWarning("dropping a message that cannot be serialized", cause),
          onSuccess: (line) => Effect.asVoid(Queue.offer(outbox, encoder.encode(`${line}\n`)))
        })

      const connection = yield* server.connect(send)

      const onLine = (line: string): Effect.Effect<void> => {
        if (line.trim() === "") return Effect.void
        const parsed = parseJson(line)
        if (Result.isFailure(parsed)) return send(errorLine(McpSchema.ErrorCode.ParseError, "Parse error", line))
        const frame = decodeValue(parsed.success, line)
        return Effect.andThen(
          Effect.forEach(
            frame.invalid,
            (detail) => send(errorLine(McpSchema.ErrorCode.InvalidRequest, "Invalid Request", detail)),
            { discard: true }
          ),
          Effect.forEach(frame.messages, connection.handle, { discard: true })
        )
      }

      const read = options.input.pipe(Stream.decodeText(), Stream.splitLines, Stream.runForEach(onLine))
      // A failing output ends the loop too: nobody could read the answers any more.
      const exit = yield* Effect.exit(Effect.raceFirst(read, Effect.andThen(Fiber.join(writer), Effect.never)))
      yield* Effect.timeoutOption(connection.awaitIdle, options.drainTimeout ?? "5 seconds")
      yield* Queue.end(outbox)
      yield* Fiber.join(writer)
      return yield* exit
    })
  ).pipe(Effect.annotateLogs({ module: "McpServer", method: "serve" }))
