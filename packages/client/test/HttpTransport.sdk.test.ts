/**
 * The client over HTTP against the official SDK v2 server (`createMcpHandler` from `@modelcontextprotocol/server`
 * served by `toNodeHandler` from `@modelcontextprotocol/node`), started in the test process on 127.0.0.1.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Common from "./fixtures/http/common.js"
import * as SdkV2 from "./fixtures/http/sdkV2Http.js"
import { eventually } from "./utils/eventually.js"

const textOf = (result: McpSchema.CallToolResult) =>
  result.content.flatMap((block) => (block.type === "text" && "text" in block ? [block.text] : [])).join("")

type Json = { readonly [key: string]: unknown }
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const bodyOf = (request: SdkV2.Recorded): Json => (isObject(request.body) ? request.body : {})

const callsOf = (server: SdkV2.SdkV2Http, tool: string) =>
  server.requests.filter((request) => {
    const body = bodyOf(request)
    return body.method === "tools/call" && isObject(body.params) && body.params.name === tool
  })

const startCall = (client: McpClient.McpClientService, name: string) =>
  Effect.gen(function*() {
    let started: (() => void) | undefined
    const running = Effect.callback<void>((resume) => {
      started = () => resume(Effect.void)
    })
    const fiber = yield* Effect.forkChild(
      client.callTool({ name, arguments: {} }, { onProgress: () => Effect.sync(() => started?.()) })
    )
    yield* running
    return fiber
  })

describe("the SDK v2 server over HTTP", () => {
  it.live("is detected as modern; every POST carries the standard headers; tools are listed and called", () =>
    Effect.gen(function*() {
      const server = yield* SdkV2.start
      const { client, recorder } = yield* Common.connect({ url: server.url })
      const session = yield* client.session
      assert.strictEqual(session.era, "modern")
      assert.strictEqual(session.protocolVersion, "2026-07-28")
      assert.strictEqual(session.serverInfo?.name, SdkV2.SERVER_NAME)
      assert.strictEqual(session.transport.binding, "streamable-http")
      assert.strictEqual(session.transport.origin, new URL(server.url).origin)

      const tools = yield* client.listTools()
      assert.deepStrictEqual(tools.map((tool) => tool.name), ["echo", "query", "progress", "wait"])
      const echo = yield* client.callTool({ name: "echo", arguments: { message: "héllo" } })
      assert.strictEqual(textOf(echo), "Echo: héllo")

      assert.isAbove(server.requests.length, 2)
      for (const request of server.requests) {
        const body = bodyOf(request)
        assert.strictEqual(request.method, "POST")
        assert.strictEqual(request.status(), 200)
        assert.include(String(request.headers.accept), "application/json")
        assert.include(String(request.headers.accept), "text/event-stream")
        assert.strictEqual(request.headers["content-type"], "application/json")
        assert.strictEqual(request.headers["mcp-protocol-version"], "2026-07-28")
        assert.strictEqual(request.headers["mcp-method"], body.method)
        assert.isUndefined(request.headers["mcp-session-id"])
        if (body.method === "tools/call" && isObject(body.params)) {
          assert.strictEqual(request.headers["mcp-name"], body.params.name)
        } else {
          assert.isUndefined(request.headers["mcp-name"])
        }
      }
      yield* Common.assertSentMessagesValid(recorder, session.protocolVersion)
    }).pipe(Effect.scoped))

  it.live("an x-mcp-header tool gets its Mcp-Param headers, encoded where needed, and the server accepts them", () =>
    Effect.gen(function*() {
      const server = yield* SdkV2.start
      const { client, recorder } = yield* Common.connect({ url: server.url })
      yield* client.listTools()
      const plain = yield* client.callTool({ name: "query", arguments: { region: "eu-west-3", sql: "select 1" } })
      assert.strictEqual(textOf(plain), "ran select 1 in eu-west-3")
      const encoded = yield* client.callTool({
        name: "query",
        arguments: { region: "Zürich", sql: "select 2", target: { tenant: " tenant-7" } }
      })
      assert.strictEqual(textOf(encoded), "ran select 2 in Zürich for  tenant-7")
      const [first, second] = callsOf(server, "query")
      assert.strictEqual(first!.headers["mcp-param-region"], "eu-west-3")
      assert.isUndefined(first!.headers["mcp-param-tenant"])
      assert.strictEqual(second!.headers["mcp-param-region"], "=?base64?WsO8cmljaA==?=")
      assert.strictEqual(second!.headers["mcp-param-tenant"], "=?base64?IHRlbmFudC03?=")
      assert.strictEqual(second!.headers["mcp-name"], "query")
      yield* Common.assertSentMessagesValid(recorder, "2026-07-28")
    }).pipe(Effect.scoped))

  it.live("before tools/list the server refuses with HeaderMismatch; the tools are listed and the call re-sent", () =>
    Effect.gen(function*() {
      const server = yield* SdkV2.start
      const { client, recorder } = yield* Common.connect({ url: server.url })
      const result = yield* client.callTool({ name: "query", arguments: { region: "eu-west-3", sql: "y" } })
      assert.strictEqual(textOf(result), "ran y in eu-west-3")
      const after = server.requests.slice(1).map((request) => [bodyOf(request).method, request.status()])
      assert.deepStrictEqual(after, [["tools/call", 400], ["tools/list", 200], ["tools/call", 200]])
      const [refused, , accepted] = server.requests.slice(1)
      assert.isUndefined(refused!.headers["mcp-param-region"])
      assert.strictEqual(accepted!.headers["mcp-param-region"], "eu-west-3")
      assert.strictEqual(bodyOf(refused!).id, bodyOf(accepted!).id)
      // the refresh is the transport's own request: the client never saw it
      assert.deepStrictEqual(yield* Common.sentMethods(recorder), ["server/discover", "tools/call"])
    }).pipe(Effect.scoped))

  it.live("progress notifications stream before the final response", () =>
    Effect.gen(function*() {
      const server = yield* SdkV2.start
      const { client } = yield* Common.connect({ url: server.url })
      const reports: Array<number> = []
      const result = yield* client.callTool({ name: "progress", arguments: { steps: 3 } }, {
        onProgress: (report) => Effect.sync(() => reports.push(report.progress))
      })
      assert.strictEqual(textOf(result), "completed 3 steps")
      assert.deepStrictEqual(reports, [1, 2, 3])
    }).pipe(Effect.scoped))

  it.live("cancelling closes the response stream: the server sees it closed and aborts; nothing is sent", () =>
    Effect.gen(function*() {
      const server = yield* SdkV2.start
      const { client } = yield* Common.connect({ url: server.url })
      const fiber = yield* startCall(client, "wait")
      const call = callsOf(server, "wait")[0]!
      assert.isUndefined(call.ended)
      // the interruption returns once the call's cancellation ran: whatever it sent has been sent
      yield* Fiber.interrupt(fiber)
      yield* eventually(() => call.ended === "closed", "the server to see the stream closed")
      yield* eventually(() => server.aborted.has(bodyOf(call).id as string | number), "the handler to be aborted")
      assert.isFalse(server.requests.some((request) => bodyOf(request).method === "notifications/cancelled"))
    }).pipe(Effect.scoped))

  it.live("pinned to the legacy era, its stateless legacy serving works: no session, the GET stream refused", () =>
    Effect.gen(function*() {
      const server = yield* SdkV2.start
      const { client, recorder } = yield* Common.connect({ url: server.url }, { era: "legacy" })
      const session = yield* client.session
      assert.strictEqual(session.era, "legacy")
      assert.strictEqual(session.transport.binding, "streamable-http")
      const echo = yield* client.callTool({ name: "echo", arguments: { message: "old" } })
      assert.strictEqual(textOf(echo), "Echo: old")
      yield* eventually(() => server.requests.some((request) => request.method === "GET"), "the GET stream attempt")
      const get = server.requests.find((request) => request.method === "GET")!
      assert.strictEqual(get.status(), 405)
      assert.isFalse(server.requests.some((request) => request.headers["mcp-session-id"] !== undefined))
      yield* Common.assertSentMessagesValid(recorder, session.protocolVersion)
    }).pipe(Effect.scoped))
})
