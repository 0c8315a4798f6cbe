/**
 * The TCP connections the HTTP transport opens over undici (`NodeHttpClient.layerUndici`, an `Agent` per layer as
 * the README builds it). undici hands a kept-alive socket back to its pool only in the turn after the answer it
 * carried ended, so a request sent in the same turn opens a connection of its own (a TCP and TLS handshake more on
 * a remote server). The transport waits for that turn where it sends right after an answer itself: each step of
 * the handshake, the handshake's end and the session's DELETE. Counted by a TCP proxy on 127.0.0.1 in front of
 * real servers: server-everything (legacy sessions with a GET stream) in a child process, the SDK v2 server
 * (modern) and the project's own server (`McpServerHttp`, legacy here) in this process.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Net from "node:net"
import * as Common from "./fixtures/http/common.js"
import * as Everything from "./fixtures/http/everything.js"
import * as McpServerHttp from "./fixtures/http/mcpServerHttp.js"
import * as SdkV2 from "./fixtures/http/sdkV2Http.js"
import { eventually } from "./utils/eventually.js"
import * as FixtureServer from "./utils/fixtureServer.js"

interface Proxy {
  /** `target` with the proxy's port in place of the server's. */
  readonly url: string
  /** The requests (their methods) each connection accepted so far carried, in the order they were accepted. */
  readonly connections: () => ReadonlyArray<ReadonlyArray<string>>
}

// the start of a request on a connection (the JSON bodies sent here never hold a CRLF)
const REQUEST_LINE = /(?:^|\r\n)(GET|POST|DELETE) \S+ HTTP\/1\.1\r\n/g

/** A TCP proxy on 127.0.0.1 to the server of `target`, closed with every connection when the scope closes. */
const proxy = (target: string): Effect.Effect<Proxy, never, Scope.Scope> => {
  const upstream = new URL(target)
  const connections: Array<Array<string>> = []
  const sockets = new Set<Net.Socket>()
  const track = (socket: Net.Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => socket.destroy())
  }
  return Effect.acquireRelease(
    Effect.callback<Net.Server>((resume) => {
      const server = Net.createServer((socket) => {
        const requests: Array<string> = []
        connections.push(requests)
        const server = Net.connect(Number(upstream.port), upstream.hostname)
        track(socket)
        track(server)
        socket.on("data", (chunk: Buffer) => {
          for (const match of chunk.toString("latin1").matchAll(REQUEST_LINE)) requests.push(match[1]!)
        })
        socket.on("close", () => server.destroy())
        server.on("close", () => socket.destroy())
        socket.pipe(server).pipe(socket)
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map((server) => {
    const address = server.address()
    const url = new URL(target)
    url.port = String(typeof address === "object" && address !== null ? address.port : 0)
    return { url: url.href, connections: () => connections.filter((requests) => requests.length > 0) }
  }))
}

describe("the HTTP transport's connections", () => {
  it.live("legacy, found by the era probe: one for the handshake, the calls and the DELETE, one for the GET stream", () =>
    Effect.gen(function*() {
      const server = yield* Everything.start("streamableHttp")
      const through = yield* proxy(server.url)
      yield* Effect.scoped(Effect.gen(function*() {
        // the probe, initialize and notifications/initialized, each sent right after the answer before it
        const { client } = yield* Common.connect({ url: through.url })
        assert.strictEqual((yield* client.session).era, "legacy")
        // the first call goes out as soon as the connect resolves
        const tools = yield* client.listTools()
        assert.include(tools.map((tool) => tool.name), "echo")
        yield* server.awaitLine("Establishing new SSE stream for session")
        // and the close's DELETE right after the answer to the last one
        yield* client.listTools()
      }))
      yield* server.awaitLine("Received session termination request for session")
      assert.deepStrictEqual(through.connections(), [["POST", "POST", "POST", "POST", "POST", "DELETE"], ["GET"]])
    }).pipe(Effect.scoped))

  it.live("legacy: the first call right after the connect on the handshake's connection", () =>
    Effect.gen(function*() {
      const server = yield* FixtureServer.make()
      const through = yield* proxy(yield* McpServerHttp.serve(server))
      const { client } = yield* Common.connect({ url: through.url }, { era: "legacy" })
      assert.strictEqual((yield* client.session).era, "legacy")
      const echo = yield* client.callTool({ name: "echo", arguments: { text: "one" } })
      assert.deepStrictEqual(echo.content, [{ type: "text", text: "one" }])
      // (the GET stream was opened before the connect resolved, on a connection of its own)
      yield* eventually(() => through.connections().length >= 2, "the GET stream")
      assert.deepStrictEqual(through.connections(), [["POST", "POST", "POST"], ["GET"]])
    }).pipe(Effect.scoped))

  it.live("modern: one for the connect and the first call after it", () =>
    Effect.gen(function*() {
      const server = yield* SdkV2.start
      const through = yield* proxy(server.url)
      const { client } = yield* Common.connect({ url: through.url })
      assert.strictEqual((yield* client.session).era, "modern")
      const echo = yield* client.callTool({ name: "echo", arguments: { message: "one" } })
      assert.deepStrictEqual(echo.content, [{ type: "text", text: "Echo: one" }])
      assert.deepStrictEqual(through.connections(), [["POST", "POST"]])
    }).pipe(Effect.scoped))
})
