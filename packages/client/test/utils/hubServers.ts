/**
 * In-process servers for the hub's tests: an echo server named after itself, and one whose tool list grows at
 * run time (its `tools/list` answers carry the added tools, and each addition is announced with list_changed).
 */
import { McpServer } from "@conduit-mcp/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as InProcessTransport from "../../src/InProcessTransport.js"
import type * as McpSchema from "../../src/McpSchema.js"
import * as Transport from "../../src/Transport.js"

/** Tools that say which server answered. */
export const tools = (server: string) => [
  McpServer.tool({
    name: "echo",
    description: `Echo on ${server}`,
    annotations: { readOnlyHint: true },
    parameters: Schema.Struct({ text: Schema.String }),
    handler: ({ text }) => Effect.succeed(`${server}: ${text}`)
  }),
  McpServer.tool({
    name: "secret_dump",
    parameters: Schema.Struct({}),
    handler: () => Effect.succeed(`${server}: secrets`)
  }),
  McpServer.tool({
    name: "fail",
    parameters: Schema.Struct({}),
    handler: () => Effect.succeed({ content: [McpServer.text(`${server} cannot do that`)], isError: true })
  })
]

/** An in-process server and the controls of its transport (connections opened, open now). */
export const echoServer = (name: string, extra: ReadonlyArray<McpServer.Tool<McpServer.RequestContext>> = []) =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({ name, version: "1.0.0", tools: [...tools(name), ...extra] })
    const { control, transport } = yield* InProcessTransport.make(server)
    return { server, control, transport: Layer.succeed(Transport.Transport, transport) }
  })

/** A server whose tool list grows: `add` lists a new tool and tells connected clients. */
export const growingServer = (name: string) =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({ name, version: "1.0.0", tools: tools(name) })
    const added = yield* Ref.make<ReadonlyArray<McpSchema.Tool>>([])
    const peer: InProcessTransport.Peer = {
      info: server.info,
      connect: (send) =>
        Effect.gen(function*() {
          const listing = new Set<string | number>()
          const rewrite = (message: McpSchema.JsonRpcMessage) =>
            Effect.gen(function*() {
              if (!("result" in message) || !listing.delete(message.id)) return message
              const result = message.result as { readonly tools: ReadonlyArray<McpSchema.Tool> } // a tools/list answer
              return { ...message, result: { ...result, tools: [...result.tools, ...(yield* Ref.get(added))] } }
            })
          const connection = yield* server.connect((message) => Effect.flatMap(rewrite(message), send))
          return {
            handle: (message) =>
              Effect.suspend(() => {
                if ("method" in message && "id" in message && message.method === "tools/list") listing.add(message.id)
                return connection.handle(message)
              }),
            cancel: connection.cancel
          }
        })
    }
    const { transport } = yield* InProcessTransport.make(peer)
    const add = (tool: McpSchema.Tool) =>
      Effect.andThen(
        Ref.update(added, (current) => [...current, tool]),
        server.publish(McpServer.Change.ListChanged({ list: "tools" }))
      )
    return { server, add, transport: Layer.succeed(Transport.Transport, transport) }
  })
