import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as ScopedHttpClient from "../src/internal/scopedHttpClient.js"

/** An HTTP client that records the signal each request is sent with, and answers as `answer` says. */
const recording = (answer: (request: HttpClientRequest.HttpClientRequest) => Effect.Effect<Response>) => {
  const signals: Array<AbortSignal> = []
  const client = HttpClient.make((request, _url, signal) => {
    signals.push(signal)
    return Effect.map(answer(request), (web) => HttpClientResponse.fromWeb(request, web))
  })
  return { client: ScopedHttpClient.withScope(client), signals }
}

describe("ScopedHttpClient.withScope", () => {
  it.effect("the platform's client sends a request with the controller made for its Scope", () =>
    Effect.gen(function*() {
      const { client, signals } = recording(() => Effect.succeed(new Response("ok")))
      const scope = yield* Scope.make()
      const response = yield* Scope.extend(client.execute(HttpClientRequest.get("http://127.0.0.1:9/")), scope)
      expect(response.status).toBe(200)
      expect(signals).toHaveLength(1)
      // the response is the client's own (a response it wrapped to abort on its own would hide its source)
      expect((response as unknown as { readonly source: unknown }).source).toBeInstanceOf(Response)
      expect(signals[0]!.aborted).toBe(false)
      yield* Scope.close(scope, Exit.void)
      expect(signals[0]!.aborted).toBe(true)
      expect(signals[0]!.reason).toBe(ScopedHttpClient.abortReason)
    }))

  it.effect("each request gets a controller of its own", () =>
    Effect.gen(function*() {
      const { client, signals } = recording(() => Effect.succeed(new Response("ok")))
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      yield* Scope.extend(client.execute(HttpClientRequest.get("http://127.0.0.1:9/a")), first)
      yield* Scope.extend(client.execute(HttpClientRequest.get("http://127.0.0.1:9/b")), second)
      yield* Scope.close(first, Exit.void)
      expect(signals.map((signal) => signal.aborted)).toEqual([true, false])
      yield* Scope.close(second, Exit.void)
      expect(signals.map((signal) => signal.aborted)).toEqual([true, true])
    }))

  it.effect("interrupting a request still waiting for its answer aborts it", () =>
    Effect.gen(function*() {
      const sent = yield* Deferred.make<void>()
      const { client, signals } = recording(() =>
        Effect.zipRight(Deferred.succeed(sent, undefined), Effect.never)
      )
      const fiber = yield* Effect.fork(Effect.scoped(client.execute(HttpClientRequest.get("http://127.0.0.1:9/"))))
      yield* Deferred.await(sent)
      expect(signals[0]!.aborted).toBe(false)
      yield* Fiber.interrupt(fiber)
      expect(signals[0]!.aborted).toBe(true)
      expect(signals[0]!.reason).toBe(ScopedHttpClient.abortReason)
    }))
})
