/**
 * Server requests and notifications of methods the library does not know, answered by the application's
 * handlers: an in-process server that also sends requests of its own to the client (2025 handshake).
 */
import { McpServer } from "@conduit-mcp/server"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as ExtensionHandler from "../src/ExtensionHandler.js"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as McpClient from "../src/McpClient.js"
import * as McpError from "../src/McpError.js"
import * as McpHub from "../src/McpHub.js"
import type * as McpSchema from "../src/McpSchema.js"

/** A server whose connection the test can also use to send the client requests and notifications. */
const extendedServer = Effect.gen(function*() {
  const server = yield* McpServer.make({
    name: "acme",
    version: "1.0.0",
    tools: [McpServer.tool({ name: "noop", parameters: Schema.Struct({}), handler: () => Effect.succeed("ok") })]
  })
  const toClient = yield* Deferred.make<(message: McpSchema.JsonRpcMessage) => Effect.Effect<void>>()
  const answers = yield* Queue.unbounded<McpSchema.JsonRpcMessage>()
  const peer: InProcessTransport.Peer = {
    info: server.info,
    connect: (send) =>
      Effect.gen(function*() {
        yield* Deferred.succeed(toClient, send)
        const connection = yield* server.connect(send)
        return {
          handle: (message) =>
            !("method" in message) && typeof message.id === "string" && message.id.startsWith("acme-")
              ? Queue.offer(answers, message)
              : connection.handle(message),
          cancel: connection.cancel
        }
      })
  }
  const ask = (id: string, method: string, params: unknown) =>
    Effect.gen(function*() {
      const send = yield* Deferred.await(toClient)
      yield* send({ jsonrpc: "2.0", id: `acme-${id}`, method, params })
      return yield* Queue.take(answers)
    })
  const tell = (method: string, params: unknown) =>
    Effect.flatMap(Deferred.await(toClient), (send) => send({ jsonrpc: "2.0", method, params }))
  return { peer, ask, tell }
})

const Extensions = ExtensionHandler.layer({
  "acme/whoami": (params, context) =>
    Effect.succeed({ user: "ada", asked: params, method: context.method, server: context.serverName }),
  "acme/delete": () => Effect.fail(new McpError.McpError({ code: -32001, message: "deleting is not allowed" }))
})

describe("ExtensionHandler", () => {
  it.effect("a server request of an unknown method is answered by its handler, or refused", () =>
    Effect.gen(function*() {
      const acme = yield* extendedServer
      const client = yield* McpClient.make({
        era: "legacy",
        healthCheckInterval: false,
        extensions: ExtensionHandler.ExtensionHandler
      }).pipe(
        Effect.provide(Layer.merge(InProcessTransport.layer(acme.peer), Extensions))
      )
      yield* client.session
      assert.deepStrictEqual(yield* acme.ask("1", "acme/whoami", { verbose: true }), {
        jsonrpc: "2.0",
        id: "acme-1",
        result: { user: "ada", asked: { verbose: true }, method: "acme/whoami", server: "acme" }
      })
      const refused = yield* acme.ask("2", "acme/delete", {})
      assert.deepStrictEqual("error" in refused ? refused.error : undefined, {
        code: -32001,
        message: "deleting is not allowed"
      })
      const unknown = yield* acme.ask("3", "acme/unknown", {})
      assert.strictEqual("error" in unknown ? unknown.error.code : 0, -32601)
      // the client still serves its own methods
      const ping = yield* acme.ask("4", "ping", {})
      assert.deepStrictEqual("result" in ping ? ping.result : undefined, {})
    }))

  it.effect("without handlers, an unknown request is refused with -32601", () =>
    Effect.gen(function*() {
      const acme = yield* extendedServer
      const client = yield* McpClient.make({ era: "legacy", healthCheckInterval: false }).pipe(
        Effect.provide(InProcessTransport.layer(acme.peer))
      )
      yield* client.session
      const answer = yield* acme.ask("1", "acme/whoami", {})
      assert.strictEqual("error" in answer ? answer.error.code : 0, -32601)
    }))

  it.effect("given to a hub, the handlers serve every server and read its name from CurrentServer", () =>
    Effect.gen(function*() {
      const one = yield* extendedServer
      const two = yield* extendedServer
      const hub = yield* McpHub.make({
        servers: [
          { name: "one", transport: InProcessTransport.layer(one.peer) },
          { name: "two", transport: InProcessTransport.layer(two.peer) }
        ],
        client: {
          era: "legacy",
          healthCheckInterval: false,
          extensions: ExtensionHandler.make({
            "acme/whoami": () => Effect.map(McpHub.CurrentServer, (server) => ({ hub: server }))
          })
        }
      })
      yield* hub.use("one", (client) => client.session)
      yield* hub.use("two", (client) => client.session)
      const answers = yield* Effect.all([one.ask("1", "acme/whoami", {}), two.ask("1", "acme/whoami", {})])
      assert.deepStrictEqual(answers.map((answer) => ("result" in answer ? answer.result : undefined)), [
        { hub: "one" },
        { hub: "two" }
      ])
    }))

  it.effect("onNotifications runs a handler for each notification of its method", () =>
    Effect.gen(function*() {
      const acme = yield* extendedServer
      const client = yield* McpClient.make({ era: "legacy", healthCheckInterval: false }).pipe(
        Effect.provide(InProcessTransport.layer(acme.peer))
      )
      yield* client.session
      const seen = yield* Ref.make<ReadonlyArray<unknown>>([])
      const done = yield* Deferred.make<void>()
      yield* ExtensionHandler.onNotifications(client, {
        "notifications/acme/progress": (params) =>
          Effect.andThen(Ref.update(seen, (all) => [...all, params]), Deferred.succeed(done, undefined))
      })
      yield* acme.tell("notifications/acme/other", { ignored: true })
      yield* acme.tell("notifications/acme/progress", { step: 1 })
      yield* Deferred.await(done)
      assert.deepStrictEqual(yield* Ref.get(seen), [{ step: 1 }])
    }))
})
