/**
 * The wire deadline: every request with a timeout tells its transport when it is certainly over (a timeout that
 * restarts on progress by its hard ceiling, ten times the timeout unless `maxTotalTimeout` says otherwise), and the
 * HTTP transport stops an exchange nothing cancelled once that deadline (and a grace) has passed.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as TestClock from "effect/testing/TestClock"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Transport from "../src/Transport.js"
import * as Common from "./fixtures/http/common.js"
import * as HttpScripted from "./fixtures/http/scripted.js"
import { awaitSleep, withSleepLog } from "./utils/clock.js"
import { eventually } from "./utils/eventually.js"
import * as Scripted from "./utils/scriptedTransport.js"

/** A modern server that never answers tools/call; the options of each request are recorded. */
const recording = (seen: Array<{ readonly method: string; readonly options: Transport.WireOptions }>) =>
  Layer.succeed(
    Transport.Transport,
    Transport.Transport.of({
      kind: "in-process",
      connect: (emit) =>
        Effect.succeed({
          info: { binding: "in-process", target: "recording" },
          request: (message: McpSchema.JsonRpcRequest, options?: Transport.WireOptions) => {
            seen.push({ method: message.method, options: options ?? {} })
            return message.method === "server/discover"
              ? emit(Transport.TransportEvent.Response({
                message: { jsonrpc: "2.0", id: message.id, result: Scripted.discoverResult() }
              }))
              : Effect.void
          },
          notify: () => Effect.void,
          respond: () => Effect.void,
          cancel: () => Effect.void,
          setSession: () => Effect.void
        } satisfies Transport.TransportConnection)
    })
  )

describe("the wire deadline", () => {
  for (
    const [name, options, expected] of [
      ["a fixed timeout", { timeout: "2 seconds" }, 2_000],
      ["a timeout restarted on progress: ten times the timeout", {
        timeout: "2 seconds",
        resetTimeoutOnProgress: true
      }, 20_000],
      ["a timeout restarted on progress with a ceiling", {
        timeout: "2 seconds",
        resetTimeoutOnProgress: true,
        maxTotalTimeout: "5 seconds"
      }, 5_000]
    ] as const
  ) {
    it.effect(`${name}: deadline at ${expected} ms`, () =>
      Effect.gen(function*() {
        const seen: Array<{ readonly method: string; readonly options: Transport.WireOptions }> = []
        const context = yield* Layer.build(
          McpClient.layer({ healthCheckInterval: false }).pipe(Layer.provide(recording(seen)))
        )
        const client = Context.get(context, McpClient.McpClient)
        const start = yield* Clock.currentTimeMillis
        const call = yield* Effect.forkChild(client.callTool({ name: "slow" }, options))
        yield* Effect.yieldNow
        yield* Effect.yieldNow
        const sent = seen.find((s) => s.method === "tools/call")
        assert.strictEqual(sent?.options.deadline, start + expected)
        yield* Fiber.interrupt(call)
      }))
  }

  it.effect("HTTP: an exchange still running past its deadline is stopped with a Timeout transport error", () =>
    Effect.gen(function*() {
      const server = yield* HttpScripted.mcpServer("modern", { request: () => {} })
      const context = yield* Layer.build(Common.transport({ url: server.url }))
      const transport = Context.get(context, Transport.Transport)
      const events = yield* Queue.unbounded<Transport.TransportEvent>()
      const connection = yield* transport.connect((event) => Queue.offer(events, event))
      const request: McpSchema.JsonRpcRequest = {
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: {
          name: "slow",
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
          }
        }
      }
      const now = yield* Clock.currentTimeMillis
      yield* connection.request(request, { deadline: now + 500 })
      yield* eventually(() => server.seen.some((s) => HttpScripted.methodOf(s) === "tools/call"), "the request")
      yield* awaitSleep(1_500)
      assert.isTrue((yield* Queue.size(events)) === 0, "nothing before the deadline")
      yield* TestClock.adjust(1_500)
      const event = yield* Queue.take(events)
      assert.strictEqual(event._tag, "RequestFailed")
      if (event._tag === "RequestFailed") {
        assert.strictEqual(event.id, 7)
        assert.strictEqual(event.error._tag === "TransportError" ? event.error.reason : "", "Timeout")
      }
    }).pipe(withSleepLog))
})
