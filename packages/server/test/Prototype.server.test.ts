/**
 * A hostile client's `__proto__` members: a server's tool that decodes its arguments with a `Record` (a copy by
 * assignment) must not get an object whose prototype is the client's value, over stdio and over HTTP.
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import * as McpServer from "../src/McpServer.js"
import * as McpServerHttp from "../src/McpServerHttp.js"
import * as Input from "../src/internal/serverInput.js"

// answers what the handler sees of its arguments: an inherited isAdmin, and whether their prototype is the usual one
const makeServer = McpServer.make({
  name: "proto",
  version: "1",
  tools: [McpServer.tool({
    name: "whoami",
    parameters: Schema.Record(Schema.String, Schema.Unknown),
    handler: (args) =>
      Effect.succeed(JSON.stringify({
        isAdmin: Reflect.get(args, "isAdmin") ?? null,
        plain: Object.getPrototypeOf(args) === Object.prototype
      }))
  })]
})

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "hostile", version: "1" } }
}
const initialized = { jsonrpc: "2.0", method: "notifications/initialized" }
// plainly, and with escapes JSON.parse turns into the same name
const calls = [
  `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{"__proto__":{"isAdmin":true}}}}`,
  `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{"\\u005f_proto__":{"isAdmin":1}}}}`
]
const expected = JSON.stringify({ isAdmin: null, plain: true })

describe("a client's __proto__ members", () => {
  it.effect("never become a prototype of what a tool gets over stdio", () =>
    Effect.gen(function*() {
      const server = yield* makeServer
      const lines = yield* Queue.unbounded<string>()
      const text = [JSON.stringify(initialize), JSON.stringify(initialized), ...calls].join("\n") + "\n"
      const input = Stream.make(new TextEncoder().encode(text))
      const output = Sink.forEach((bytes: Uint8Array) => Queue.offer(lines, new TextDecoder().decode(bytes)))
      yield* Layer.launch(McpServer.layerStdio(server, { input, output })).pipe(Effect.forkScoped)
      const answers = new Map<number, unknown>()
      while (answers.size < 3) {
        for (const line of (yield* Queue.take(lines)).split("\n").filter((l) => l !== "")) {
          const message = JSON.parse(line)
          answers.set(message.id, message)
        }
      }
      for (const id of [2, 3]) {
        const answer = answers.get(id) as { result: { content: ReadonlyArray<{ text: string }> } }
        assert.strictEqual(answer.result.content[0]!.text, expected, `call ${id}`)
      }
    }))

  it.effect("never become a prototype of what a tool gets over HTTP", () =>
    Effect.gen(function*() {
      const server = yield* makeServer
      const node = Http.createServer()
      const http = yield* NodeHttpServer.make(() => node, { port: 0, host: "127.0.0.1" })
      yield* Effect.addFinalizer(() => Effect.sync(() => node.closeAllConnections()))
      yield* http.serve(yield* McpServerHttp.makeApp(server))
      const port = http.address._tag === "UnixPathAddress" ? 0 : http.address.port
      const post = (body: string, session?: string) =>
        Effect.promise(() =>
          fetch(`http://127.0.0.1:${port}/mcp`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-protocol-version": "2025-06-18",
              ...(session !== undefined ? { "mcp-session-id": session } : {})
            },
            body
          }).then(async (response) => ({ session: response.headers.get("mcp-session-id"), text: await response.text() }))
        )
      const opened = yield* post(JSON.stringify(initialize))
      const session = opened.session ?? undefined
      yield* post(JSON.stringify(initialized), session)
      for (const call of calls) {
        const answered = yield* post(call, session)
        const data = answered.text.split("\n").find((line) => line.startsWith("data: "))
        const message = JSON.parse(data !== undefined ? data.slice(6) : answered.text)
        assert.strictEqual(message.result.content[0].text, expected, call)
      }
    }).pipe(Effect.orDie))

  it("never become a prototype of the answers a requestState carries", () => {
    // the state of an MRTR round comes back from the client as base64url JSON: its answers are Records
    const text = `{"v":1,"method":"tools/call","target":"t","answers":{"__proto__":{"x":{}},` +
      `"elicit:1":{"\\u005f_proto__":{"action":"accept"},"content":{}}}}`
    const state = Input.decodeRequestState(Base64Url.encode(text))
    assert.isTrue(Result.isSuccess(state))
    if (Result.isFailure(state)) return
    const answers = state.success.answers
    assert.strictEqual(Object.getPrototypeOf(answers), Object.prototype)
    assert.deepStrictEqual(Object.keys(answers), ["elicit:1"])
    assert.strictEqual(Object.getPrototypeOf(answers["elicit:1"]), Object.prototype)
    assert.isUndefined(Reflect.get(answers["elicit:1"]!, "action"))
  })
})
