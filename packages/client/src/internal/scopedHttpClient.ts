/**
 * `HttpClient.withScope` with a cheaper abort.
 *
 * The platform's `withScope` makes an `AbortController` for each request and aborts it when the request's Scope
 * closes, whether or not the request is still running. `abort()` without a reason builds a `DOMException`, which
 * captures a stack: the largest single item in a profile of an HTTP call (about 6% of its CPU time), spent on
 * every exchange, finished or not. This does the same with one reason made once.
 *
 * The platform's client finds the controller of a request in a map it keeps as a global value (that is how its
 * own `withScope` hands the controller over). When that map is not found under the key the pinned platform uses,
 * the client makes its own controller for each request and wraps the response in one that aborts when its body
 * is read or interrupted. The exchange then still ends the request when it ends (it destroys or cancels a body it
 * stops reading, and a response of that shape is read through `response.stream`): only the saving is lost.
 * `HttpTransport.scope.test.ts` checks that the pinned platform takes the controller.
 *
 * @internal
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import { globalValue } from "effect/GlobalValue"
import * as Scope from "effect/Scope"

const scopedRequests = globalValue(
  "@effect/platform/HttpClient/scopedRequests",
  () => new WeakMap<HttpClientRequest.HttpClientRequest, AbortController>()
)

/**
 * The reason every scoped request is aborted with. Made once: when the request is still running, the HTTP client
 * fails it with this reason, and the exchange that closed the Scope is being interrupted or has ended anyway.
 *
 * @internal
 */
export const abortReason: Error = new DOMException("The request's scope was closed", "AbortError")

/**
 * Aborts each request when the Scope it runs in closes, as `HttpClient.withScope` does.
 *
 * @internal
 */
export const withScope = <E, R>(
  client: HttpClient.HttpClient.With<E, R>
): HttpClient.HttpClient.With<E, R | Scope.Scope> =>
  HttpClient.transform(client, (effect, request) => {
    const controller = new AbortController()
    scopedRequests.set(request, controller)
    return Effect.flatMap(
      Effect.scopeWith((scope) => Scope.addFinalizer(scope, Effect.sync(() => controller.abort(abortReason)))),
      () => effect
    )
  })
