/**
 * Bursts over legacy Streamable HTTP (issue 21): 10 000 concurrent calls all succeed over a bounded number of
 * connections; a server that holds its answers until many calls are in flight is not deadlocked by the bound; a
 * request whose connection could not be made is sent once more, even a tool call.
 */
import * as HttpClient from "effect/http/HttpClient"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"
import * as NodeHttp from "node:http"
import type * as Net from "node:net"
import * as Admission from "../src/internal/httpAdmission.js"
import * as Body from "../src/internal/httpResponse.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Common from "./fixtures/http/common.js"
import * as Scripted from "./fixtures/http/scripted.js"

interface Counting {
  readonly url: string
  /** Connections accepted so far, and the most open at once. */
  readonly connections: () => { readonly total: number; readonly peak: number }
  readonly calls: () => number
  /** Completes once the server has received `count` tool calls. */
  readonly received: (count: number) => Effect.Effect<void>
}

/**
 * A legacy MCP server that answers `tools/call` with its `n` argument, holding every answer until `hold` calls
 * are waiting (0: answering at once), and counting its connections.
 */
const countingServer = (hold = 0): Effect.Effect<Counting, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: NodeHttp.Server; readonly sockets: Set<Net.Socket>; readonly counting: Counting }>(
      (resume) => {
        let total = 0
        let peak = 0
        let calls = 0
        const held: Array<() => void> = []
        const watchers: Array<{ readonly count: number; readonly wake: () => void }> = []
        const received = (count: number) =>
          Effect.callback<void>((wake) => {
            if (calls >= count) return wake(Effect.void)
            const watcher = { count, wake: () => wake(Effect.void) }
            watchers.push(watcher)
            return Effect.sync(() => {
              const at = watchers.indexOf(watcher)
              if (at >= 0) watchers.splice(at, 1)
            })
          })
        const sockets = new Set<Net.Socket>()
        const server = NodeHttp.createServer((req, res) => {
          const parts: Array<Buffer> = []
          req.on("data", (chunk: Buffer) => parts.push(chunk))
          req.on("end", () => {
            if (req.method !== "POST") return void res.writeHead(req.method === "DELETE" ? 200 : 405).end()
            const message = JSON.parse(Buffer.concat(parts).toString("utf8")) as Scripted.Json
            if (!("id" in message)) return void res.writeHead(202).end()
            const answer = (result: unknown, headers: NodeHttp.OutgoingHttpHeaders = {}) =>
              Scripted.sendJson(res, 200, Scripted.success(message.id, result), headers)
            if (message.method === "initialize") {
              return answer(Scripted.initializeResult(), { "mcp-session-id": "burst-session" })
            }
            if (message.method !== "tools/call") return answer({})
            calls++
            for (const watcher of watchers.filter((watcher) => watcher.count <= calls)) {
              watchers.splice(watchers.indexOf(watcher), 1)
              watcher.wake()
            }
            const params = message.params as { readonly arguments: { readonly n: number } }
            const reply = () => answer(Scripted.textResult(String(params.arguments.n)))
            if (hold === 0) return reply()
            held.push(reply)
            if (held.length >= hold) for (const waiting of held.splice(0)) waiting()
          })
        })
        server.on("connection", (socket) => {
          total++
          sockets.add(socket)
          peak = Math.max(peak, sockets.size)
          socket.on("close", () => sockets.delete(socket))
        })
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          resume(Effect.succeed({
            server,
            sockets,
            counting: {
              url: `http://127.0.0.1:${port}/mcp`,
              connections: () => ({ total, peak }),
              calls: () => calls,
              received
            }
          }))
        })
      }
    ),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ counting }) => counting))

const textOf = (result: McpSchema.CallToolResult) =>
  result.content.flatMap((block) => (block.type === "text" && "text" in block ? [block.text] : [])).join("")

/** Calls `echo` `count` times at once; the texts of the answers that came, and the errors. */
const burst = (client: Common.Connected["client"], count: number) =>
  Effect.gen(function*() {
    const outcomes = yield* Effect.forEach(
      Array.from({ length: count }, (_, n) => n),
      (n) => Effect.result(client.callTool({ name: "echo", arguments: { n } }, { timeout: "120 seconds" })),
      { concurrency: "unbounded" }
    )
    const texts = new Set<string>()
    const errors: Array<string> = []
    for (const outcome of outcomes) {
      if (outcome._tag === "Success") texts.add(textOf(outcome.success))
      else errors.push(outcome.failure.message)
    }
    return { texts, errors }
  })

describe("a burst over legacy Streamable HTTP", () => {
  it.live("10 000 concurrent tool calls: 10 000 answers, over a few hundred connections, not 10 000", () =>
    Effect.gen(function*() {
      const server = yield* countingServer()
      const { client } = yield* Common.connect({ url: server.url }, { era: "legacy" })
      const { errors, texts } = yield* burst(client, 10_000)
      assert.deepStrictEqual(errors.slice(0, 3), [])
      assert.strictEqual(texts.size, 10_000)
      assert.strictEqual(server.calls(), 10_000)
      // 256 requests out at once (the default); the HTTP client may open more connections while it hands finished
      // ones back to its pool, and a client starved of CPU for a second lets another 256 through
      assert.isAtMost(server.connections().peak, 4 * 256)
    }).pipe(Effect.scoped), { timeout: 120_000 })

  it.live("a server that answers only once 700 calls wait gets them all: the bound queues, it never deadlocks", () =>
    Effect.gen(function*() {
      const server = yield* countingServer(700)
      const { client } = yield* Common.connect({ url: server.url }, { era: "legacy" })
      const { errors, texts } = yield* burst(client, 700)
      assert.deepStrictEqual(errors, [])
      assert.strictEqual(texts.size, 700)
      // the waiting calls went in steps (256, then 512, then all), not all at once
      assert.isAtMost(server.connections().peak, 3 * 256 + 4)
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.effect("a server that answers once 200 calls wait: with 8 places the window doubles each stalled second", () =>
    Effect.gen(function*() {
      const server = yield* countingServer(200)
      const sent = sentCalls()
      const { client } = yield* Common.connect({ url: server.url, maxInFlight: 8 }, { era: "legacy" }, sent.layer)
      const calls = yield* Effect.forkChild(burst(client, 200))
      // the tool calls the server has received after 0, 1, 2… stall periods (on the TestClock) without an answer:
      // each time, every request the client let through has reached the server before the clock moves on
      const received: Array<number> = []
      const arrived = Effect.gen(function*() {
        for (;;) {
          yield* settle
          const count = sent.calls()
          yield* server.received(count)
          yield* settle
          if (sent.calls() === count) return server.calls()
        }
      })
      received.push(yield* arrived)
      for (let period = 1; period <= 5; period++) {
        yield* TestClock.adjust(Admission.stall)
        received.push(yield* arrived)
      }
      // (a window grown by 8 each period: 8, 16, 24, 32, 40, 48, and all 200 only after 24 periods)
      assert.deepStrictEqual(received, [8, 16, 32, 64, 128, 200])
      const { errors, texts } = yield* Fiber.join(calls)
      assert.deepStrictEqual(errors, [])
      assert.strictEqual(texts.size, 200)
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.live("with maxInFlight 8, 500 calls go over a handful of connections", () =>
    Effect.gen(function*() {
      const server = yield* countingServer()
      const { client } = yield* Common.connect({ url: server.url, maxInFlight: 8 }, { era: "legacy" })
      const { errors, texts } = yield* burst(client, 500)
      assert.deepStrictEqual(errors, [])
      assert.strictEqual(texts.size, 500)
      assert.isAtMost(server.connections().peak, 2 * 8 + 4)
    }).pipe(Effect.scoped), { timeout: 60_000 })
})

/** Lets every fiber that can run do so. */
const settle = Effect.repeat(Effect.yieldNow, { times: 20 })

/** The undici client, counting the tool calls it was given (those the transport let through). */
const sentCalls = () => {
  let calls = 0
  const layer = Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (client) =>
      HttpClient.make((request) => {
        const body = request.body
        if (body._tag === "Uint8Array" && new TextDecoder().decode(body.body).includes(`"tools/call"`)) calls++
        return client.execute(request)
      }))
  ).pipe(Layer.provide(NodeHttpClient.layerUndici))
  return { layer, calls: () => calls }
}

/**
 * The undici client, failing the first `failures` tool calls as a connection that could not be made (nothing
 * written) or, with `written`, as one reset after the request went out.
 */
const failingCalls = (failures: number, written = false) => {
  let left = failures
  return Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (client) =>
      HttpClient.make((request, url, signal, fiber) => {
        const body = request.body
        const text = body._tag === "Uint8Array" ? new TextDecoder().decode(body.body) : ""
        if (left > 0 && text.includes(`"tools/call"`)) {
          left--
          const cause = Object.assign(new Error(written ? "read ECONNRESET" : "connect ECONNREFUSED"), {
            code: written ? "ECONNRESET" : "ECONNREFUSED",
            syscall: written ? "read" : "connect"
          })
          return Effect.fail(new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, cause }) }))
        }
        void url
        void signal
        void fiber
        return client.execute(request)
      }))
  ).pipe(Layer.provide(NodeHttpClient.layerUndici))
}

describe("a request whose connection could not be made", () => {
  it.live("is sent once more, even a tool call, and succeeds", () =>
    Effect.gen(function*() {
      const server = yield* countingServer()
      const { client } = yield* Common.connect({ url: server.url }, { era: "legacy" }, failingCalls(1))
      const result = yield* client.callTool({ name: "echo", arguments: { n: 7 } })
      assert.strictEqual(textOf(result), "7")
      assert.strictEqual(server.calls(), 1)
    }).pipe(Effect.scoped))

  it.live("only once: a second connection that cannot be made fails the call with a Connect error", () =>
    Effect.gen(function*() {
      const server = yield* countingServer()
      const { client } = yield* Common.connect({ url: server.url }, { era: "legacy" }, failingCalls(2))
      const error = yield* Effect.flip(client.callTool({ name: "echo", arguments: { n: 7 } }))
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") assert.strictEqual(error.reason, "Connect")
      assert.strictEqual(server.calls(), 0)
    }).pipe(Effect.scoped))

  for (const [name, layer] of [["undici", NodeHttpClient.layerUndici], ["fetch", FetchHttpClient.layer]] as const) {
    it.live(`${name}: a refused connection is recognised as one that never carried the request`, () =>
      Effect.gen(function*() {
        // a port that was just free: nothing listens there
        const url = yield* Effect.scoped(Effect.map(countingServer(), (server) => server.url))
        const client = yield* HttpClient.HttpClient
        const error = yield* Effect.flip(Effect.scoped(client.execute(HttpClientRequest.post(url))))
        assert.isTrue(Body.isNeverSent(error))
      }).pipe(Effect.provide(layer)))
  }

  it.live("a tool call whose connection was reset after it was written is not sent again", () =>
    Effect.gen(function*() {
      const server = yield* countingServer()
      const { client } = yield* Common.connect({ url: server.url }, { era: "legacy" }, failingCalls(1, true))
      const error = yield* Effect.flip(client.callTool({ name: "echo", arguments: { n: 7 } }))
      assert.strictEqual(error._tag, "TransportError")
      assert.strictEqual(server.calls(), 0)
    }).pipe(Effect.scoped))
})
