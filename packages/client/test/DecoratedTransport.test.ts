/**
 * A transport a user decorates (a wrapper that logs every message, written outside the library against the public
 * contract) keeps what the library's transports offer beyond the message pipe: the fast path over stdio, the
 * credentials of the HTTP transport (`McpClient.setAuth` through the wrapper) and the cache partition they give.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as HttpTransport from "../src/HttpTransport.js"
import * as McpClient from "../src/McpClient.js"
import * as ResultCache from "../src/ResultCache.js"
import * as StdioTransport from "../src/StdioTransport.js"
import * as Transport from "../src/Transport.js"
import * as Common from "./fixtures/http/common.js"
import * as HttpScripted from "./fixtures/http/scripted.js"
import { everything } from "./utils/realServers.js"
import * as Scripted from "./utils/scriptedTransport.js"

/** What a user writes: every message in and out is logged; the rest of the transport is passed on. */
const logging = (inner: Transport.Transport["Service"], log: Array<string>): Transport.Transport["Service"] => ({
  ...inner,
  connect: (emit, options) =>
    Effect.map(
      inner.connect(
        (event) => Effect.andThen(Effect.sync(() => log.push(`in ${event._tag}`)), emit(event)),
        options?.deliver === undefined ? options : {
          deliver: (event) => {
            const taken = options.deliver!(event)
            if (taken) log.push(`in ${event._tag} at once`)
            return taken
          }
        }
      ),
      (connection): Transport.TransportConnection => ({
        ...connection,
        request: (message, wire) =>
          Effect.andThen(Effect.sync(() => log.push(`out ${message.method}`)), connection.request(message, wire)),
        notify: (message) =>
          Effect.andThen(Effect.sync(() => log.push(`out ${message.method}`)), connection.notify(message)),
        trySend: connection.trySend === undefined ? undefined : (message, wire) => {
          const sent = connection.trySend!(message, wire)
          if (sent) log.push(`out ${message.method} at once`)
          return sent
        }
      })
    )
})

const decorated = <E, R>(
  layer: Layer.Layer<Transport.Transport, E, R>,
  log: Array<string>
): Layer.Layer<Transport.Transport, E, R> =>
  Layer.effect(
    Transport.Transport,
    Effect.gen(function*() {
      const inner = yield* Transport.Transport
      return logging(inner, log)
    })
  ).pipe(Layer.provide(layer))

const count = (log: ReadonlyArray<string>, line: string) => log.filter((entry) => entry === line).length

describe("a decorated transport", () => {
  it.live("over stdio keeps the fast path: calls sent and answered without an effect each, all of them logged", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const texts = yield* Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        return yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) => Effect.map(client.callTool({ name: "echo", arguments: { message: `m${i}` } }), (r) => r.content[0])
        )
      }).pipe(
        Effect.provide(
          McpClient.layer({ healthCheckInterval: false }).pipe(
            Layer.provide(decorated(StdioTransport.layer({ command: everything.command, args: [...everything.args] }), log)),
            Layer.provide(NodeServices.layer)
          )
        )
      )
      assert.deepStrictEqual(texts.at(-1), { type: "text", text: "Echo: m19" })
      assert.strictEqual(count(log, "out tools/call at once"), 20, log.join("\n"))
      assert.strictEqual(count(log, "out tools/call"), 0)
      assert.isAtLeast(count(log, "in Response at once"), 20)
    }))

  it.live("over HTTP keeps its credentials: setAuth through the wrapper, the new bearer on later requests", () =>
    Effect.gen(function*() {
      const server = yield* HttpScripted.mcpServer("legacy", {
        request: (seen, res) =>
          HttpScripted.sendJson(res, 200, HttpScripted.success(HttpScripted.idOf(seen), { content: [] }))
      })
      const log: Array<string> = []
      const transport = decorated(Common.transport({ url: server.url, bearerToken: Redacted.make("alpha") }), log)
      const built = yield* Layer.build(transport)
      assert.isDefined(Context.get(built, Transport.Transport).credentials)
      const client = yield* McpClient.make({ healthCheckInterval: false, reconnect: false }).pipe(
        Effect.provide(built)
      )
      yield* client.callTool({ name: "a" })
      yield* client.setAuth(HttpTransport.Auth.Bearer({ token: Redacted.make("beta") }))
      yield* client.callTool({ name: "b" })
      const calls = server.seen.filter((entry) => HttpScripted.methodOf(entry) === "tools/call")
      assert.deepStrictEqual(calls.map((entry) => entry.headers.authorization), ["Bearer alpha", "Bearer beta"])
      assert.strictEqual(count(log, "out tools/call"), 2)
    }).pipe(Effect.scoped))

  it.effect("keeps the cache partition of the credentials: a private result is not served to another credential", () =>
    Effect.gen(function*() {
      const server = Scripted.modernScript((message, ctx) =>
        "method" in message && "id" in message && message.method === "resources/read"
          ? ctx.reply(message.id, {
            resultType: "complete",
            contents: [{ uri: "file:///private", text: `for connection ${ctx.connection}` }],
            ttlMs: 60_000
          })
          : Effect.void
      )
      const cache = yield* Layer.build(ResultCache.layerMemory())
      const clientWith = (partition: string) =>
        Layer.build(McpClient.layer({ healthCheckInterval: false, resultCache: ResultCache.ResultCache }).pipe(
          Layer.provideMerge(Layer.flatMap(Scripted.layer(server), (context) =>
            Layer.succeedContext(Context.add(
              context,
              Transport.Transport,
              logging({
                ...Context.get(context, Transport.Transport),
                credentials: { set: () => Effect.void, partition: Effect.succeed(partition) }
              }, [])
            )))),
          Layer.provide(Layer.succeedContext(cache))
        ))
      const reads = (context: Context.Context<Scripted.ScriptLog>) =>
        Effect.map(Ref.get(Context.get(context, Scripted.ScriptLog).sent), (sent) =>
          sent.filter((s) => "method" in s.message && s.message.method === "resources/read").length)
      const a = yield* clientWith("bearer:aaaa")
      const a2 = yield* clientWith("bearer:aaaa")
      const b = yield* clientWith("bearer:bbbb")
      yield* Context.get(a, McpClient.McpClient).readResource({ uri: "file:///private" })
      yield* Context.get(a2, McpClient.McpClient).readResource({ uri: "file:///private" })
      yield* Context.get(b, McpClient.McpClient).readResource({ uri: "file:///private" })
      assert.deepStrictEqual([yield* reads(a), yield* reads(a2), yield* reads(b)], [1, 0, 1])
    }))
})
