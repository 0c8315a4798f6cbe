/**
 * HTTP+SSE (2024-11-05): a GET stream whose first event names the endpoint to POST to (it must have the URL's
 * origin); every message goes there and is acknowledged, and everything the server sends, answers included,
 * comes on the stream.
 *
 * @internal
 */
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import type * as McpError from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"
import type { Inbound } from "./httpInbound.js"
import * as Body from "./httpResponse.js"
import type { Sender } from "./httpSender.js"
import type { Binding, Resolved, State } from "./httpState.js"
import { ACCEPT_BOTH, EVENT_STREAM, transportError, unexpected } from "./httpState.js"

/**
 * The HTTP+SSE binding, and the endpoint it needs.
 *
 * @internal
 */
export interface Sse extends Binding {
  /** The endpoint of the HTTP+SSE session, opening the stream the first time. */
  readonly endpoint: Effect.Effect<URL, McpError.TransportFailure>
  /** POSTs a message to the endpoint. */
  readonly post: (message: McpSchema.JsonRpcMessage, what: string) => Effect.Effect<void, McpError.TransportFailure>
}

/** @internal */
export const make = (
  resolved: Resolved,
  state: State,
  sender: Sender,
  inbound: Inbound,
  /** Runs the stream in the connection's background (interrupted when the connection closes). */
  runBackground: (stream: Effect.Effect<void, McpError.TransportFailure>) => Effect.Effect<void>
): Sse => {
  const resolveEndpoint = (data: string): Result.Result<URL, McpError.TransportError> =>
    Result.flatMap(
      Result.try({
        try: () => new URL(data.trim(), resolved.url),
        catch: () => transportError("Connect", "the endpoint event does not hold a URL")
      }),
      (endpoint) =>
        endpoint.origin === resolved.origin
          ? Result.succeed(endpoint)
          : Result.fail(
            transportError(
              "Connect",
              `the endpoint event points to another origin (${endpoint.origin}); only ${resolved.origin} is trusted`
            )
          )
    )

  const stream = (ready: Deferred.Deferred<URL, McpError.TransportFailure>) =>
    Effect.scoped(
      Effect.gen(function*() {
        const headers: Record<string, string> = { ...sender.baseHeaders(), accept: EVENT_STREAM }
        const response = yield* sender.execute(HttpClientRequest.get(resolved.url, { headers })).pipe(
          Effect.mapError(sender.sendError("the HTTP+SSE stream could not be opened"))
        )
        const status = response.status
        if (status === 401 || status === 403) return yield* sender.authError(status, response)
        if (!Body.isSuccess(status)) return yield* sender.refused(response, "the HTTP+SSE GET")
        if (Body.mediaType(response) !== EVENT_STREAM) {
          return yield* Effect.fail(
            transportError("Connect", `the HTTP+SSE GET answered ${Body.contentType(response) ?? "no content type"}`)
          )
        }
        let endpointSeen = false
        yield* Body.forEachSseItem(
          response,
          "the HTTP+SSE stream broke off",
          resolved.maxEventBytes,
          (item): boolean | Effect.Effect<boolean, McpError.TransportError> => {
            if (item._tag !== "Event") return true
            if (!endpointSeen) {
              if (item.event !== "endpoint") {
                return Effect.fail(
                  transportError("Connect", `the HTTP+SSE stream began with a ${item.event} event, not endpoint`)
                )
              }
              return Result.match(resolveEndpoint(item.data), {
                onFailure: Effect.fail,
                onSuccess: (endpoint) => {
                  endpointSeen = true
                  return Effect.as(Deferred.succeed(ready, endpoint), true)
                }
              })
            }
            if (item.event !== "message" || item.data.trim().length === 0) return true
            return Effect.as(inbound.deliver(item.data, { request: undefined, route: "sse" }), true)
          }
        )
        return yield* Effect.fail(transportError("Closed", "the HTTP+SSE stream ended"))
      })
    ).pipe(
      // a defect (a bug in delivering what was read) ends the stream like a failure, rather than in silence
      Effect.catchCause((cause) => {
        const failure = Cause.findErrorOption(cause)
        if (Option.isNone(failure) && Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
        const failed = Option.isSome(failure)
          ? Effect.succeed(failure.value)
          : unexpected("the HTTP+SSE stream", cause)
        return Effect.flatMap(Effect.zip(failed, Deferred.isDone(ready)), ([error, done]) => {
          if (!done) return Deferred.fail(ready, error)
          const closed = error._tag === "TransportError" ? error : transportError("Closed", error.message, error)
          return inbound.emitClosed(closed)
        })
      }),
      Effect.asVoid,
      Effect.annotateLogs({ module: "HttpTransport", method: "sseStream" })
    )

  const endpoint: Effect.Effect<URL, McpError.TransportFailure> = Effect.suspend(() => {
    let ready = state.sse
    const open = ready === undefined
    if (ready === undefined) {
      ready = Deferred.makeUnsafe<URL, McpError.TransportFailure>()
      state.sseOpening(ready)
    }
    const opened = open ? runBackground(stream(ready)) : Effect.void
    return Effect.andThen(
      opened,
      Deferred.await(ready).pipe(
        Effect.timeoutOrElse({
          duration: resolved.connectTimeout,
          orElse: () =>
            Effect.fail(transportError(
              "Timeout",
              `no endpoint event within ${Duration.format(resolved.connectTimeout)} on the HTTP+SSE stream`
            ))
        })
      )
    )
  })

  const post: Sse["post"] = (message, what) =>
    Effect.scoped(
      Effect.gen(function*() {
        const url = yield* endpoint
        const headers: Record<string, string> = { ...sender.baseHeaders(), accept: ACCEPT_BOTH }
        const response = yield* sender.post(url, message, headers, what)
        const status = response.status
        if (status === 401 || status === 403) return yield* sender.authError(status, response)
        if (!Body.isSuccess(status)) return yield* sender.refused(response, what)
        yield* Body.readSnippet(response)
      })
    )

  return {
    exchange: (request) => post(request, request.method),
    oneWay: post,
    announcesCancel: true,
    endpoint,
    post
  }
}
