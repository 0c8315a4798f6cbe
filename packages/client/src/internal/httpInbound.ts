/**
 * What comes back over one HTTP connection: the messages of a JSON body or an event stream reported as transport
 * events (the answer to the exchange's own request settled at once when the client can), what the transport learns
 * from answers (the legacy version, `x-mcp-header` declarations), and the classification of the answer to a POST:
 * a refusal, a JSON body, an event stream, or something else.
 *
 * @internal
 */
import type * as Headers from "effect/http/Headers"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as McpError from "../McpError.js"
import * as McpSchema from "../McpSchema.js"
import * as Transport from "../Transport.js"
import * as codec from "./codec.js"
import * as Body from "./httpResponse.js"
import type { Sender } from "./httpSender.js"
import type { Cursor, Resolved, Route, Source, State } from "./httpState.js"
import { EVENT_STREAM, isObject, JSON_TYPE, newCursor, transportError } from "./httpState.js"
import * as McpHeaders from "./mcpHeaders.js"
import { printable } from "./printable.js"

/**
 * What one frame from the server held.
 *
 * @internal
 */
export interface Delivered {
  readonly answered: boolean
  readonly messages: number
}

const ErrorBody = Schema.fromJsonString(Schema.Struct({ error: McpSchema.JsonRpcErrorObject }))
const decodeErrorBody = Schema.decodeUnknownOption(ErrorBody)

/**
 * The JSON-RPC error object a refusal's body carries, if it is one.
 *
 * @internal
 */
export const jsonRpcError = (body: string): McpSchema.JsonRpcErrorObject | undefined =>
  body.length === 0 ? undefined : Option.getOrUndefined(Option.map(decodeErrorBody(body), (decoded) => decoded.error))

/**
 * A response stream that ended or broke before the answer to its request.
 *
 * @internal
 */
export const streamEnded = (request: McpSchema.JsonRpcRequest, broken: McpError.TransportError | undefined) =>
  transportError(
    "StreamEnded",
    broken === undefined
      ? `the response stream of ${request.method} ended before its answer (the request may have run)`
      : `the response stream of ${request.method} broke off before its answer (the request may have run): ${
        broken.detail ?? broken.reason
      }`,
    broken
  )

/**
 * The inbound half of one connection.
 *
 * @internal
 */
export interface Inbound {
  /** Reports an event unless the connection is closing. */
  readonly emitOpen: (event: Transport.TransportEvent) => Effect.Effect<void>
  /**
   * Reports the connection closed with `error`, unless it is closing: every pending request fails with `error`.
   * Uninterruptible: the client's handling of the close ends the connection's scope, which interrupts the fiber
   * that reports it (an exchange, a stream); cut short there, it would leave the pending requests to fail with
   * the scope's plain `Closed` instead of `error`.
   */
  readonly emitClosed: (error: McpError.TransportError) => Effect.Effect<void>
  /** Reports a JSON-RPC error as the answer to `request`. */
  readonly emitResponse: (
    request: McpSchema.JsonRpcRequest,
    error: McpSchema.JsonRpcErrorObject
  ) => Effect.Effect<void>
  /**
   * Reports the messages of one frame, in order; `answered` when it held the answer to the source's request. A
   * frame refused past the connection's budget of refused frames closes the connection and fails with its error.
   */
  readonly deliver: (text: string, source: Source) => Effect.Effect<Delivered, McpError.TransportError>
  /** Reads an event stream until it ends or carries the answer to the source's request. */
  readonly readEvents: (
    response: HttpClientResponse.HttpClientResponse,
    source: Source,
    cursor: Cursor
  ) => Effect.Effect<boolean, McpError.TransportError, Scope.Scope>
  /** Handles the answer to a request POST (or a resumption GET); fails when the request got no answer. */
  readonly answer: (
    response: HttpClientResponse.HttpClientResponse,
    request: McpSchema.JsonRpcRequest,
    options: Transport.WireOptions,
    route: Route,
    how?: Answering
  ) => Effect.Effect<void, McpError.TransportFailure, Scope.Scope>
}

/**
 * How an answer is taken beyond the defaults.
 *
 * @internal
 */
export interface Answering {
  /** Takes the answer instead of the connection (the transport's own requests). */
  readonly capture?: ((answer: McpSchema.JsonRpcResponse) => void) | undefined
  /** Resumes a response stream that broke after an event id (legacy sessions). */
  readonly resume?:
    | ((request: McpSchema.JsonRpcRequest, cursor: Cursor) => Effect.Effect<void, McpError.TransportFailure>)
    | undefined
}

/**
 * Learns from the answer to one of our requests, and returns the result to report when it differs from the one
 * received: the negotiated legacy version from `initialize`; the `x-mcp-header` declarations from a modern
 * `tools/list`, whose tools with an invalid declaration are left out (2026-07-28 `server/tools.mdx`: an HTTP
 * client MUST reject them).
 */
const learn = (
  resolved: Resolved,
  state: State,
  request: McpSchema.JsonRpcRequest,
  route: Route,
  result: unknown
): Effect.Effect<unknown> | undefined => {
  if (request.method === "initialize" && isObject(result) && typeof result.protocolVersion === "string") {
    state.agreedLegacyVersion(result.protocolVersion)
  }
  if (request.method !== "tools/list" || route !== "modern") return undefined
  const index = McpHeaders.indexTools(result, { allowNumber: resolved.allowNumberHeaders })
  state.learnedTools(index.valid, index.invalid.map(({ tool }) => tool))
  if (index.invalid.length === 0 || !isObject(result) || !Array.isArray(result.tools)) return undefined
  const rejected = new Set(index.invalid.map(({ tool }) => tool))
  const tools = result.tools.filter((tool: unknown) => !(isObject(tool) && rejected.has(String(tool.name))))
  return Effect.as(
    Effect.forEach(
      index.invalid,
      ({ reason, tool }) =>
        Effect.logWarning(printable(`left out tool ${tool}: its x-mcp-header declaration is invalid (${reason})`)),
      { discard: true }
    ),
    { ...result, tools }
  )
}

/**
 * `now`: the clock the connection's budget of refused frames is read on.
 *
 * @internal
 */
export const make = (
  resolved: Resolved,
  state: State,
  sender: Sender,
  emit: Transport.Emit,
  now: () => number,
  deliverAtOnce: ((event: Transport.TransportEvent) => boolean) | undefined
): Inbound => {
  const emitOpen = (event: Transport.TransportEvent) => state.closed ? Effect.void : emit(event)
  const reportClosed = (error: McpError.TransportError) =>
    Effect.uninterruptible(emit(Transport.TransportEvent.Closed({ error })))
  const emitClosed = (error: McpError.TransportError) =>
    Effect.suspend(() => state.closed ? Effect.void : reportClosed(error))
  const budget = codec.refusedFrames(resolved.maxRefusedFrames, now)
  /**
   * Charges one refused frame (`reason`: why) to the connection's budget; past it, the connection is closed (every
   * pending request fails with the error, as when the stream broke) and the frame's reading fails with the error.
   */
  const refuse = (reason: string): Effect.Effect<void, McpError.TransportError> => {
    if (budget.charge()) return Effect.void
    const error = codec.tooManyRefusedFrames("http", resolved.maxRefusedFrames, reason)
    return Effect.andThen(
      Effect.suspend(() => {
        if (state.closed) return Effect.void
        const closing = reportClosed(error)
        state.close()
        return closing
      }),
      Effect.fail(error)
    )
  }
  /** A frame larger than `maxEventBytes` is refused too. */
  const chargeTooLarge = (error: McpError.TransportError): Effect.Effect<void, McpError.TransportError> =>
    error.reason === "FrameTooLarge" ? refuse(error.detail ?? "a frame too large") : Effect.void
  const emitAtOnce = deliverAtOnce

  /**
   * Reports the answer to the source's request. It is handed to the client at once when the client can settle it
   * without running an effect (`unsafeEmit`), so call this only as the reply is due, not ahead.
   */
  const reply = (source: Source, answer: McpSchema.JsonRpcResponse): Effect.Effect<void> => {
    const capture = source.capture
    if (capture !== undefined) return Effect.sync(() => capture(answer))
    if (state.closed) return Effect.void
    const event = Transport.TransportEvent.Response({ message: answer })
    return emitAtOnce?.(event) === true ? Effect.void : emit(event)
  }

  /** Reports one message from the server; true when it is the answer to the source's request. */
  const deliverOne = (message: McpSchema.JsonRpcMessage, source: Source): Effect.Effect<boolean> => {
    if (McpSchema.isResponse(message)) {
      const request = source.request
      // an error without an id on a request's own stream or body answers that request, and so does an error with
      // another id to the era probe (a server that could not read the probe's id)
      const own = request !== undefined &&
        (message.id === request.id || ("error" in message && (message.id === null || source.probe === true)))
      if (!own || request === undefined) {
        return Effect.as(emitOpen(Transport.TransportEvent.Response({ message })), false)
      }
      if (!("result" in message)) return Effect.as(reply(source, { ...message, id: request.id }), true)
      const learned = learn(resolved, state, request, source.route, message.result)
      if (learned === undefined) return Effect.as(reply(source, message), true)
      return Effect.flatMap(learned, (result) => Effect.as(reply(source, { ...message, result }), true))
    }
    if (McpSchema.isRequest(message)) {
      if (source.route === "modern") {
        return Effect.as(
          Effect.logWarning(printable(`dropped a ${message.method} request a modern server sent on its stream`)),
          false
        )
      }
      return Effect.as(
        emitOpen(Transport.TransportEvent.ServerRequest({ message, related: source.request?.id })),
        false
      )
    }
    return Effect.as(emitOpen(Transport.TransportEvent.Notification({ message })), false)
  }

  const deliver: Inbound["deliver"] = (text, source) =>
    Effect.suspend(() => {
      const frame = codec.decodeFrame(text, resolved.limits)
      const messages = frame.messages
      let answered = false
      const from = (index: number): Effect.Effect<Delivered> =>
        index === messages.length
          ? Effect.succeed({ answered, messages: messages.length })
          : Effect.flatMap(deliverOne(messages[index]!, source), (own) => {
            answered ||= own
            return from(index + 1)
          })
      if (frame.invalid.length === 0) return from(0)
      return Effect.forEach(
        frame.invalid,
        (problem) => Effect.logWarning(printable(`dropped a message from the server: ${problem}`)),
        { discard: true }
      ).pipe(
        Effect.andThen(refuse(frame.invalid[0]!)),
        Effect.andThen(Effect.suspend(() => from(0)))
      )
    })

  const readEvents: Inbound["readEvents"] = (response, source, cursor) =>
    Effect.suspend(() => {
      let answered = false
      return Body.forEachSseItem(response, "the event stream broke off", resolved.maxEventBytes, (item) => {
        switch (item._tag) {
          case "Id":
            cursor.lastEventId = item.id
            return true
          case "Retry":
            cursor.retry = item.millis
            return true
          case "Event":
            cursor.events++
            // keep-alive and priming events carry no message
            if (item.event !== "message" || item.data.trim().length === 0) return true
            // once the answer came, the rest is not read
            return Effect.map(deliver(item.data, source), (outcome) => {
              answered ||= outcome.answered
              return !answered
            })
        }
      }).pipe(Effect.tapError(chargeTooLarge), Effect.map(() => answered))
    })

  const emitResponse: Inbound["emitResponse"] = (request, error) =>
    emitOpen(Transport.TransportEvent.Response({ message: { jsonrpc: "2.0", id: request.id, error } }))

  const answer = classify(resolved, sender, { deliver, readEvents, reply, chargeTooLarge })

  return { emitOpen, emitClosed, emitResponse, deliver, readEvents, answer }
}

/**
 * The classification of the answer to a request POST (or a resumption GET): a refusal (whose JSON-RPC error, if
 * it carries one, is the answer), a JSON body that must hold the answer, an event stream read until the answer
 * (resumed when the binding can), or an unexpected content type.
 */
const classify = (
  resolved: Resolved,
  sender: Sender,
  delivery: {
    readonly deliver: Inbound["deliver"]
    readonly readEvents: Inbound["readEvents"]
    readonly reply: (source: Source, answer: McpSchema.JsonRpcResponse) => Effect.Effect<void>
    readonly chargeTooLarge: (error: McpError.TransportError) => Effect.Effect<void, McpError.TransportError>
  }
): Inbound["answer"] => {
  const { chargeTooLarge, deliver, readEvents, reply } = delivery

  /** A refusal: its JSON-RPC error is the answer (not for the era probe), else a status error. */
  const refusal = (
    response: HttpClientResponse.HttpClientResponse,
    request: McpSchema.JsonRpcRequest,
    options: Transport.WireOptions,
    source: Source
  ) =>
    Effect.flatMap(Body.readSnippet(response), (body) => {
      const status = response.status
      if (!Body.isSuccess(status) && options.probe !== true) {
        // a JSON-RPC error in a refusal (a modern 400 HeaderMismatch, a 404 method not found) is the answer
        const error = jsonRpcError(body)
        if (error !== undefined) return reply(source, { jsonrpc: "2.0", id: request.id, error })
      }
      const opening = request.method === "initialize" || request.method === "server/discover"
      return Effect.fail(Body.statusError(
        response,
        body,
        `the server answered ${request.method} with HTTP ${status}${opening ? Body.notFoundHint(status) : ""}`
      ))
    })

  /** A JSON body: it must hold the answer. */
  const jsonAnswer = (
    response: HttpClientResponse.HttpClientResponse,
    headers: Headers.Headers,
    request: McpSchema.JsonRpcRequest,
    source: Source
  ): Effect.Effect<void, McpError.TransportFailure, Scope.Scope> =>
    Effect.flatMap(
      // a body that breaks off loses the answer as a broken stream does
      // (piped: a data-first `catchIf(self, predicate, f)` is taken for the data-last `(predicate, f, orElse)`)
      Body.readBody(response, resolved.maxEventBytes, headers).pipe(
        Effect.tapError(chargeTooLarge),
        Effect.catchIf((error) => error.reason === "Read", (error) => Effect.fail(streamEnded(request, error)))
      ),
      (text) =>
        Effect.flatMap(deliver(text, source), (outcome) => {
          if (outcome.answered) return Effect.void
          return Effect.fail(
            new McpError.TransportError({
              transport: "http",
              reason: "Read",
              detail: outcome.messages === 0
                ? `the JSON answer to ${request.method} is not a JSON-RPC message`
                : `the JSON answer to ${request.method} holds no response to request ${request.id}`,
              status: response.status,
              contentType: headers["content-type"] ?? JSON_TYPE,
              body: text.length > Body.SNIPPET_BYTES ? text.slice(0, Body.SNIPPET_BYTES) : text
            })
          )
        })
    )

  return (response, request, options, route, how) => {
    const source: Source = { request, route, capture: how?.capture, probe: options.probe }
    const status = response.status
    if (status === 401 || status === 403) return sender.authError(status, response)
    if (!Body.isSuccess(status) || status === 202 || status === 204) return refusal(response, request, options, source)
    // the HTTP client may rebuild its headers on every read: read them once
    const headers = response.headers
    const type = Body.mediaTypeOf(headers)
    if (type === JSON_TYPE) return jsonAnswer(response, headers, request, source)
    if (type === EVENT_STREAM) {
      const cursor = newCursor()
      return Effect.flatMap(Effect.result(readEvents(response, source, cursor)), (outcome) => {
        if (Result.isSuccess(outcome) && outcome.success) return Effect.void
        const broken = Result.isFailure(outcome) ? outcome.failure : undefined
        if (broken?.reason === "FrameTooLarge" || broken?.reason === "TooManyRefusedFrames") return Effect.fail(broken)
        const resume = how?.resume
        if (resume !== undefined && cursor.lastEventId !== undefined) return resume(request, cursor)
        return Effect.fail(streamEnded(request, broken))
      })
    }
    return Effect.flatMap(Body.readSnippet(response), (body) => {
      const actual = headers["content-type"]
      return Effect.fail(
        new McpError.TransportError({
          transport: "http",
          reason: "Read",
          detail: `the server answered ${request.method} with the unexpected content type ${actual ?? "(none)"}`,
          status,
          ...(actual === undefined ? {} : { contentType: actual }),
          body
        })
      )
    })
  }
}
