/**
 * `McpServer` change notifications, seen by the client over the in-process transport in both eras: a legacy
 * client hears list changes and the updates of the resources it subscribed to; a modern client hears what each of
 * its `subscriptions/listen` streams asked for (acknowledged first, tagged with the listen's id), and ending a
 * stream ends the listen on the server.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "@conduit-mcp/server/McpServer"

const makeServer = McpServer.make({
  name: "changes",
  version: "1.0.0",
  record: true,
  tools: [
    McpServer.tool({
      name: "touch",
      description: "Reports an update of the resource",
      parameters: Schema.Struct({ uri: Schema.String }),
      handler: ({ uri }) => Effect.as(McpServer.publish(McpServer.Change.ResourceUpdated({ uri })), "touched")
    })
  ],
  resources: [
    McpServer.resource({ uri: "file:///a.txt", name: "a", read: Effect.succeed("A") }),
    McpServer.resource({ uri: "file:///b.txt", name: "b", read: Effect.succeed("B") })
  ],
  prompts: [McpServer.prompt({ name: "hello", handler: () => Effect.succeed("Hello") })]
})

const connect = (server: McpServer.Server, era: "legacy" | "modern") =>
  McpClient.make({ era, healthCheckInterval: false }).pipe(
    Effect.provide(Layer.fresh(InProcessTransport.layer(server)))
  )

/** Takes `n` notifications from a listen stream in the background, so that changes can be published meanwhile. */
const collect = (stream: Stream.Stream<McpSchema.ServerNotification, unknown>, n: number) =>
  Effect.forkChild(Stream.runCollect(Stream.take(stream, n)))

const settle = Effect.repeat(Effect.yieldNow, { times: 50 })

const subscriptionOf = (notification: McpSchema.ServerNotification): unknown => {
  const params = notification.params as { readonly _meta?: Record<string, unknown> } | undefined
  return params?._meta?.["io.modelcontextprotocol/subscriptionId"]
}

describe("McpServer change notifications", () => {
  it.effect("the server advertises list changes and resource subscriptions", () =>
    Effect.gen(function*() {
      const server = yield* makeServer
      assert.deepStrictEqual(server.capabilities.tools, { listChanged: true })
      assert.deepStrictEqual(server.capabilities.prompts, { listChanged: true })
      assert.deepStrictEqual(server.capabilities.resources, { subscribe: true, listChanged: true })
    }))

  it.effect("modern: each listen gets its acknowledgement, then only what it asked for, tagged with its id", () =>
    Effect.gen(function*() {
      const server = yield* makeServer
      const client = yield* connect(server, "modern")
      const lists = yield* collect(client.listen({ toolsListChanged: true, promptsListChanged: true }), 3)
      const updates = yield* collect(client.listen({ resourceSubscriptions: ["file:///a.txt"] }), 2)
      yield* server.awaitReceived("subscriptions/listen", 2)
      yield* settle
      yield* server.publish(McpServer.Change.ResourceUpdated({ uri: "file:///b.txt" })) // nobody asked
      yield* server.publish(McpServer.Change.ListChanged({ list: "resources" })) // nobody asked
      yield* server.publish(McpServer.Change.ListChanged({ list: "tools" }))
      yield* client.callTool({ name: "touch", arguments: { uri: "file:///a.txt" } }) // a handler publishes
      yield* server.publish(McpServer.Change.ListChanged({ list: "prompts" }))

      const seenLists = yield* Fiber.join(lists)
      assert.deepStrictEqual(seenLists.map((n) => n.method), [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed"
      ])
      const seenUpdates = yield* Fiber.join(updates)
      assert.deepStrictEqual(seenUpdates.map((n) => n.method), [
        "notifications/subscriptions/acknowledged",
        "notifications/resources/updated"
      ])
      assert.deepStrictEqual(seenUpdates[0]!.params, {
        _meta: { "io.modelcontextprotocol/subscriptionId": subscriptionOf(seenUpdates[1]!) },
        notifications: { resourceSubscriptions: ["file:///a.txt"] }
      })
      assert.strictEqual((seenUpdates[1]!.params as { readonly uri: string }).uri, "file:///a.txt")
      const listens = yield* server.received("subscriptions/listen")
      assert.deepStrictEqual(
        [subscriptionOf(seenLists[1]!), subscriptionOf(seenUpdates[1]!)],
        listens.map((received) => received.id)
      )
    }))

  it.effect("modern: ending the stream ends the listen on the server, which then sends nothing more", () =>
    Effect.gen(function*() {
      const server = yield* makeServer
      const client = yield* connect(server, "modern")
      const first = yield* collect(client.listen({ toolsListChanged: true }), 2)
      const [listen] = yield* server.awaitReceived("subscriptions/listen")
      yield* settle
      yield* server.publish(McpServer.Change.ListChanged({ list: "tools" }))
      assert.strictEqual((yield* Fiber.join(first)).length, 2)
      // the stream took what it wanted and ended: the client cancels, the server's listen is interrupted
      const interrupted = yield* server.awaitInterrupted(listen!.id!)
      assert.strictEqual(interrupted.method, "subscriptions/listen")
    }))

  it.effect("legacy: list changes for everyone, resource updates for what was subscribed", () =>
    Effect.gen(function*() {
      const server = yield* makeServer
      const client = yield* connect(server, "legacy")
      const heard = yield* collect(client.listen({ toolsListChanged: true, resourceSubscriptions: ["file:///a.txt"] }), 2)
      yield* server.awaitReceived("resources/subscribe")
      yield* settle
      yield* server.publish(McpServer.Change.ResourceUpdated({ uri: "file:///b.txt" })) // not subscribed
      yield* server.publish(McpServer.Change.ListChanged({ list: "tools" }))
      yield* client.callTool({ name: "touch", arguments: { uri: "file:///a.txt" } })
      const seen = yield* Fiber.join(heard)
      assert.deepStrictEqual(seen.map((n) => n.method), [
        "notifications/tools/list_changed",
        "notifications/resources/updated"
      ])
      assert.deepStrictEqual(seen[1]!.params, { uri: "file:///a.txt" })
      const subscribes = yield* server.received("resources/subscribe")
      assert.deepStrictEqual(subscribes.map((received) => received.params), [{ uri: "file:///a.txt" }])
    }))
})
