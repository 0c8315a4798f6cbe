/**
 * The hub over in-process servers: namespaced names and routing, bad definitions, filters, a dead server, list
 * changes, lazy connection and idle release under the TestClock, handlers told the server's name, typed tools.
 */
import { McpServer } from "@conduit-mcp/server"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as FileSystem from "effect/FileSystem"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { expectTypeOf } from "vitest"
import * as McpHub from "../src/McpHub.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as SamplingHandler from "../src/SamplingHandler.js"
import * as TypedTool from "../src/TypedTool.js"
import { echoServer, growingServer } from "./utils/hubServers.js"
import * as Scripted from "./utils/scriptedTransport.js"

const quick = { healthCheckInterval: false, probeTimeout: "300 millis" } as const


const texts = (result: { readonly content: ReadonlyArray<unknown> }) =>
  result.content.map((block) => (block as { readonly text?: string }).text)

const hubOf = <S extends McpHub.ServerSpec<unknown>>(
  servers: ReadonlyArray<S>,
  options: Omit<McpHub.McpHubOptions<S>, "servers"> = {}
) =>
  McpHub.make({ client: quick, ...options, servers })

describe("McpHub names and routing", () => {
  it.effect("tools of every server under <server>__<tool>; a call goes to the owning server", () =>
    Effect.gen(function*() {
      const alpha = yield* echoServer("alpha", [
        McpServer.tool({ name: "a__b", parameters: Schema.Struct({}), handler: () => Effect.succeed("alpha's a__b") })
      ])
      const beta = yield* echoServer("beta")
      const hub = yield* hubOf([
        { name: "alpha", transport: alpha.transport },
        { name: "beta", transport: beta.transport }
      ])
      const { errors, items } = yield* hub.listTools()
      assert.deepStrictEqual(errors, [])
      assert.deepStrictEqual(items.map((tool) => tool.name), [
        "alpha__echo",
        "alpha__secret_dump",
        "alpha__fail",
        "alpha__a__b",
        "beta__echo",
        "beta__secret_dump",
        "beta__fail"
      ])
      assert.strictEqual(items[0].tool.description, "Echo on alpha")
      assert.deepStrictEqual(texts(yield* hub.callTool({ name: "alpha__echo", arguments: { text: "hi" } })), ["alpha: hi"])
      assert.deepStrictEqual(texts(yield* hub.callTool({ name: "beta__echo", arguments: { text: "hi" } })), ["beta: hi"])
      // a tool whose name holds the separator: the server's name ends at the first one, so it cannot collide
      assert.deepStrictEqual(yield* Effect.fromResult(hub.resolve("alpha__a__b")), { server: "alpha", name: "a__b" })
      assert.deepStrictEqual(texts(yield* hub.callTool({ name: "alpha__a__b" })), ["alpha's a__b"])
    }))

  it.effect("a tool's failure is a result, or with isError: \"fail\" a ToolFailed naming the hub's tool", () =>
    Effect.gen(function*() {
      const alpha = yield* echoServer("alpha")
      const hub = yield* hubOf([{ name: "alpha", transport: alpha.transport }])
      const result = yield* hub.callTool({ name: "alpha__fail" })
      assert.isTrue(result.isError)
      const error = yield* Effect.flip(hub.callTool({ name: "alpha__fail" }, { isError: "fail" }))
      assert.strictEqual(error._tag, "ToolFailed")
      if (error._tag === "ToolFailed") {
        assert.strictEqual(error.tool, "alpha__fail")
        assert.strictEqual(error.text, "alpha cannot do that")
      }
      const ok = yield* hub.callTool({ name: "alpha__echo", arguments: { text: "x" } }, { isError: "fail" })
      assert.deepStrictEqual(texts(ok), ["alpha: x"])
    }))

  it.effect("an unknown server or a name without a server is a HubError naming it; nothing is connected", () =>
    Effect.gen(function*() {
      const alpha = yield* echoServer("alpha")
      const hub = yield* hubOf([{ name: "alpha", transport: alpha.transport }])
      const unknown = yield* Effect.flip(hub.callTool({ name: "gamma__echo", arguments: {} }))
      assert.strictEqual(unknown._tag, "HubError")
      assert.strictEqual(unknown._tag === "HubError" ? unknown.reason : "", "UnknownServer")
      assert.strictEqual(unknown.message, `server "gamma": no such server (the hub has: alpha)`)
      const bare = yield* Effect.flip(hub.callTool({ name: "echo", arguments: {} }))
      assert.strictEqual(bare._tag === "HubError" ? bare.reason : "", "UnknownName")
      assert.include(bare.message, `"echo" is not a hub name`)
      assert.strictEqual(yield* alpha.control.connections, 0)
      assert.isTrue(Result.isFailure(hub.resolve("alpha__")))
    }))

  it.effect("bad definitions fail only themselves, with an error naming the entry", () =>
    Effect.gen(function*() {
      const alpha = yield* echoServer("alpha")
      const beta = yield* echoServer("beta")
      const fromFile = yield* Effect.fromResult(McpHub.fromConfig({
        mcpServers: {
          broken: { args: ["--stdio"] },
          both: { command: "node", url: "http://127.0.0.1:1/mcp" },
          odd: { command: 42 }
        }
      }))
      const hub = yield* hubOf([
        ...fromFile,
        { name: "alpha", transport: alpha.transport },
        { name: "twice", transport: beta.transport },
        { name: "twice", transport: beta.transport },
        { name: "my__server", transport: beta.transport },
        { name: "trailing_", transport: beta.transport }
      ])
      assert.deepStrictEqual(hub.servers, ["broken", "both", "odd", "alpha", "twice", "my__server", "trailing_"])
      const { errors, items } = yield* hub.listTools()
      assert.deepStrictEqual(items.map((tool) => tool.name), ["alpha__echo", "alpha__secret_dump", "alpha__fail"])
      assert.deepStrictEqual(errors.map((error) => [error._tag === "HubError" ? error.reason : error._tag, error.message]), [
        ["InvalidConfig", `server "broken": the entry has neither "command" nor "url"`],
        ["InvalidConfig", `server "both": the entry has both "command" and "url"`],
        ["InvalidConfig", `server "odd": the entry is malformed: command: Expected string | undefined`],
        ["DuplicateName", `server "twice": defined 2 times; a name must be unique (none of them is used)`],
        ["InvalidName", `server "my__server": a server name may not contain "__" (nor end with part of it): the hub's ` +
          `names are <server>__<name>`],
        ["InvalidName", `server "trailing_": a server name may not contain "__" (nor end with part of it): the hub's ` +
          `names are <server>__<name>`]
      ])
      const call = yield* Effect.flip(hub.callTool({ name: "broken__anything" }))
      assert.strictEqual(call.message, `server "broken": the entry has neither "command" nor "url"`)
      assert.strictEqual((yield* hub.state("twice"))._tag, "Invalid")
      assert.deepStrictEqual(texts(yield* hub.callTool({ name: "alpha__echo", arguments: { text: "still here" } })), ["alpha: still here"])
      assert.strictEqual(yield* beta.control.connections, 0)
    }).pipe(Effect.provide(Layer.merge(NodeServices.layer, FetchHttpClient.layer))))

  it.effect("filters hide tools from the aggregate and refuse calls to them", () =>
    Effect.gen(function*() {
      const alpha = yield* echoServer("alpha")
      const beta = yield* echoServer("beta")
      const hub = yield* hubOf([
        { name: "alpha", transport: alpha.transport, tools: { deny: ["secret_*"] } },
        { name: "beta", transport: beta.transport }
      ], { filters: { beta: { allow: ["echo", "fail"] } } })
      const { items } = yield* hub.listTools()
      assert.deepStrictEqual(items.map((tool) => tool.name), ["alpha__echo", "alpha__fail", "beta__echo", "beta__fail"])
      const refused = yield* Effect.flip(hub.callTool({ name: "alpha__secret_dump" }))
      assert.strictEqual(refused._tag === "HubError" ? refused.reason : "", "NotAllowed")
      assert.strictEqual(refused.message, `server "alpha": tool "secret_dump" is hidden by the hub's filter`)
    }))
})

describe("McpHub failures", () => {
  it.effect("a dead server fails its own calls and listings with a ServerError; the others keep serving", () =>
    Effect.gen(function*() {
      const alpha = yield* echoServer("alpha")
      const hub = yield* hubOf([
        McpHub.stdio("dead", { command: process.execPath, args: ["-e", "process.exit(3)"], closeTimeout: "200 millis" }),
        { name: "alpha", transport: alpha.transport }
      ])
      const { errors, items } = yield* hub.listTools()
      assert.deepStrictEqual(items.map((tool) => tool.server), ["alpha", "alpha", "alpha"])
      assert.strictEqual(errors.length, 1)
      const [error] = errors
      assert.strictEqual(error._tag, "ServerError")
      if (error._tag === "ServerError") {
        assert.strictEqual(error.server, "dead")
        assert.strictEqual(error.error._tag, "TransportError")
        assert.match(error.message, /^server "dead": stdio transport/)
      }
      const state = yield* hub.state("dead")
      assert.strictEqual(state._tag, "Failed")
      const call = yield* Effect.flip(hub.callTool({ name: "dead__echo", arguments: {} }))
      assert.strictEqual(call._tag, "ServerError")
      assert.deepStrictEqual(texts(yield* hub.callTool({ name: "alpha__echo", arguments: { text: "ok" } })), ["alpha: ok"])
    }).pipe(Effect.provide(NodeServices.layer)))

  it.live("a server that never answers is reported after listTimeout without holding up the others", () =>
    Effect.gen(function*() {
      const alpha = yield* echoServer("alpha")
      const hub = yield* hubOf([
        McpHub.stdio("mute", { command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"], closeTimeout: "200 millis" }, {
          client: { era: "legacy", initializeTimeout: "1 minute" }
        }),
        { name: "alpha", transport: alpha.transport }
      ], { listTimeout: "500 millis" })
      const { errors, items } = yield* hub.listTools()
      assert.strictEqual(items.length, 3)
      assert.deepStrictEqual(errors.map((error) => error.message), [`server "mute": tools listing timed out after 500 ms`])
    }).pipe(Effect.provide(NodeServices.layer), Effect.scoped))
  it.effect("a tool schema nested 20,000 deep: refreshes and list_changed still list every server", () =>
    Effect.gen(function*() {
      // JSON.parse builds such a value without complaint, and the client's listing accepts it
      let items: Record<string, unknown> = { type: "string" }
      for (let i = 0; i < 20_000; i++) items = { type: "array", items }
      const tools: Array<McpSchema.Tool> = [{ name: "deep", inputSchema: { type: "object", properties: { x: items } } }]
      let connection: Scripted.ScriptContext | undefined
      const script = Scripted.legacyScript((message, ctx) => {
        connection = ctx
        if (!("method" in message) || !("id" in message)) return Effect.void
        return message.method === "tools/list" ? ctx.reply(message.id, { tools }) : Effect.void
      })
      const alpha = yield* echoServer("alpha")
      const hub = yield* hubOf([
        { name: "deep", transport: Scripted.layer(script) },
        { name: "alpha", transport: alpha.transport }
      ])
      const names = ["deep__deep", "alpha__echo", "alpha__secret_dump", "alpha__fail"]
      const first = yield* hub.listTools()
      assert.deepStrictEqual([first.items.map((tool) => tool.name), first.errors], [names, []])
      // compared with the listing held: past the comparison's limits it counts as changed
      const refreshed = yield* hub.listTools({ refresh: true })
      assert.deepStrictEqual([refreshed.items.map((tool) => tool.name), refreshed.errors], [names, []])
      const announced = yield* hub.changes.pipe(Stream.take(1), Stream.runCollect, (effect) => Effect.forkChild(effect))
      yield* Effect.yieldNow
      tools.push({ name: "added", inputSchema: { type: "object" } })
      yield* connection!.notify("notifications/tools/list_changed")
      assert.deepStrictEqual(yield* Fiber.join(announced), [{ server: "deep", list: "tools" }])
      const known = yield* hub.knownTools
      assert.deepStrictEqual(known.map((tool) => tool.name), [...names.slice(0, 1), "deep__added", ...names.slice(1)])
    }))
})

describe("McpHub lifecycle", () => {
  it.effect("connects on first use, stays open while used, closes after the idle time (TestClock)", () =>
    Effect.gen(function*() {
      const alpha = yield* echoServer("alpha")
      const hub = yield* hubOf([{ name: "alpha", transport: alpha.transport }], { idleTimeToLive: "1 minute" })
      assert.strictEqual(yield* alpha.control.connections, 0, "nothing connects before first use")
      assert.strictEqual((yield* hub.state("alpha"))._tag, "Idle")
      yield* hub.callTool({ name: "alpha__echo", arguments: { text: "one" } })
      yield* hub.callTool({ name: "alpha__echo", arguments: { text: "two" } })
      assert.strictEqual(yield* alpha.control.connections, 1, "one connection serves both calls")
      assert.strictEqual((yield* hub.state("alpha"))._tag, "Connected")
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual(yield* alpha.control.open, 1)
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* alpha.control.open, 0, "released after a minute unused")
      assert.strictEqual((yield* hub.state("alpha"))._tag, "Idle")
      yield* hub.callTool({ name: "alpha__echo", arguments: { text: "three" } })
      assert.strictEqual(yield* alpha.control.connections, 2, "the next use connects again")
    }))

  it.effect("states: every server's current state, then each change", () =>
    Effect.gen(function*() {
      const alpha = yield* echoServer("alpha")
      const hub = yield* hubOf([
        { name: "alpha", transport: alpha.transport },
        { name: "bad", problem: "no transport" }
      ], { idleTimeToLive: "1 minute" })
      const seen = yield* hub.states.pipe(Stream.take(5), Stream.runCollect, (effect) => Effect.forkChild(effect))
      yield* Effect.yieldNow
      yield* hub.callTool({ name: "alpha__echo", arguments: { text: "x" } })
      yield* TestClock.adjust("2 minutes")
      const events = (yield* Fiber.join(seen)).map(({ server, state }) => `${server}:${state._tag}`)
      assert.deepStrictEqual(events, ["alpha:Idle", "bad:Invalid", "alpha:Connecting", "alpha:Connected", "alpha:Idle"])
    }))

  it.effect("a list_changed on one server updates the aggregate and is announced on changes", () =>
    Effect.gen(function*() {
      const growing = yield* growingServer("grow")
      const alpha = yield* echoServer("alpha")
      const hub = yield* hubOf([
        { name: "grow", transport: growing.transport },
        { name: "alpha", transport: alpha.transport }
      ])
      const before = yield* hub.listTools()
      assert.strictEqual(before.items.length, 6)
      const announced = yield* hub.changes.pipe(Stream.take(1), Stream.runCollect, (effect) =>
        Effect.forkChild(effect, { startImmediately: true }))
      yield* growing.add({ name: "new_tool", inputSchema: { type: "object" } })
      assert.deepStrictEqual(yield* Fiber.join(announced), [{ server: "grow", list: "tools" }])
      const known = yield* hub.knownTools
      assert.deepStrictEqual(known.filter((tool) => tool.server === "grow").map((tool) => tool.name), [
        "grow__echo",
        "grow__secret_dump",
        "grow__fail",
        "grow__new_tool"
      ])
      assert.strictEqual((yield* hub.listTools()).items.length, 7)
    }))

  it.effect("release closes a connection now; the next use reconnects", () =>
    Effect.gen(function*() {
      const alpha = yield* echoServer("alpha")
      const hub = yield* hubOf([{ name: "alpha", transport: alpha.transport }])
      yield* hub.callTool({ name: "alpha__echo", arguments: { text: "x" } })
      yield* hub.release("alpha")
      assert.strictEqual(yield* alpha.control.open, 0)
      yield* hub.callTool({ name: "alpha__echo", arguments: { text: "y" } })
      assert.strictEqual(yield* alpha.control.connections, 2)
    }))
})

describe("McpHub handlers and typed tools", () => {
  it.effect("one sampling handler serves every server and reads which one asks from CurrentServer", () =>
    Effect.gen(function*() {
      const asking = (name: string) =>
        echoServer(name, [
          McpServer.tool({
            name: "ask",
            parameters: Schema.Struct({}),
            handler: () =>
              Effect.map(
                McpServer.sample({ messages: [{ role: "user", content: { type: "text", text: "hello" } }], maxTokens: 5 }),
                (result) => JSON.stringify(result.content)
              ).pipe(Effect.orDie)
          })
        ])
      const one = yield* asking("one")
      const two = yield* asking("two")
      const sampling: SamplingHandler.Service = {
        createMessage: () =>
          Effect.map(McpHub.CurrentServer, (server) => ({
            role: "assistant" as const,
            content: { type: "text", text: `answered for ${server}` },
            model: "test"
          }))
      }
      const hub = yield* hubOf([
        { name: "one", transport: one.transport },
        { name: "two", transport: two.transport }
      ], { client: { ...quick, sampling } })
      assert.deepStrictEqual(texts(yield* hub.callTool({ name: "one__ask" })), [`{"type":"text","text":"answered for one"}`])
      assert.deepStrictEqual(texts(yield* hub.callTool({ name: "two__ask" })), [`{"type":"text","text":"answered for two"}`])
    }))

  it.effect("a typed tool bound through the hub is checked again when the server's tool list changes", () =>
    Effect.gen(function*() {
      const growing = yield* growingServer("grow")
      const hub = yield* hubOf([{ name: "grow", transport: growing.transport }])
      const Echo = TypedTool.make("echo", { parameters: Schema.Struct({ text: Schema.String }), success: Schema.String })
      const echo = yield* hub.bindTool("grow", Echo)
      assert.strictEqual(yield* echo({ text: "typed" }), "grow: typed")
      const Missing = TypedTool.make("later", { parameters: Schema.Struct({ n: Schema.Number }), success: Schema.String })
      const missing = yield* Effect.flip(hub.bindTool("grow", Missing))
      assert.strictEqual(missing._tag, "ToolSchemaMismatch")
      const hidden = yield* Effect.flip(
        McpHub.make({ servers: [{ name: "grow", transport: growing.transport, tools: { deny: ["echo"] } }] }).pipe(
          Effect.flatMap((filtered) => filtered.bindTool("grow", Echo))
        )
      )
      assert.strictEqual(hidden._tag, "HubError")
    }))
})

describe("McpHub configuration", () => {
  it("a hub needs what its servers' transports need", () => {
    const hub = McpHub.make({
      servers: [
        McpHub.stdio("files", { command: "files-server" }),
        McpHub.http("docs", { url: "https://example.com/mcp" }),
        { name: "broken", problem: "no transport" }
      ]
    })
    expectTypeOf(hub).toEqualTypeOf<
      Effect.Effect<McpHub.Service, never, ChildProcessSpawner.ChildProcessSpawner | HttpClient.HttpClient | Scope.Scope>
    >()
    expectTypeOf(McpHub.layerConfigFile("mcp.json")).toEqualTypeOf<
      Layer.Layer<
        McpHub.McpHub,
        McpHub.HubError,
        FileSystem.FileSystem | ChildProcessSpawner.ChildProcessSpawner | HttpClient.HttpClient
      >
    >()
  })

  it.effect("Claude Desktop's mcpServers and VS Code's servers; disabled entries are skipped", () =>
    Effect.gen(function*() {
      const specs = yield* Effect.fromResult(McpHub.fromConfig({
        mcpServers: { files: { command: "npx", args: ["-y", "files"], env: { ROOT: "/tmp" }, cwd: "/tmp" } },
        servers: {
          remote: { type: "http", url: "https://example.com/mcp", headers: { "X-Team": "a" } },
          legacy: { type: "sse", url: "https://example.com/sse" },
          off: { command: "x", disabled: true },
          wrongType: { type: "stdio", url: "https://example.com/mcp" }
        }
      }))
      assert.deepStrictEqual(specs.map((spec) => [spec.name, "problem" in spec ? spec.problem : "ok"]), [
        ["files", "ok"],
        ["remote", "ok"],
        ["legacy", "ok"],
        ["wrongType", `"type" is stdio but the entry has a "url"`]
      ])
      const none = McpHub.fromConfig({ other: {} })
      assert.isTrue(Result.isFailure(none))
      if (Result.isFailure(none)) assert.strictEqual(none.failure.message, `the configuration has no "mcpServers" (or "servers") object`)
    }))

  it.effect("servers from Effect Config (a nested table per server)", () =>
    Effect.gen(function*() {
      const specs = yield* McpHub.config()
      assert.deepStrictEqual(specs.map((spec) => [spec.name, "problem" in spec ? spec.problem : "ok"]).sort(), [
        ["docs", "ok"],
        ["empty", `the entry has neither "command" nor "url"`],
        ["everything", "ok"]
      ])
    }).pipe(
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({
        mcpServers: {
          everything: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] },
          docs: { url: "http://127.0.0.1:8080/mcp", headers: { "X-Key": "k" } },
          empty: { cwd: "/tmp" }
        }
      }))
    ))

  it.effect("a configuration file that cannot be read fails the layer with a HubError naming it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(McpHub.layerConfigFile("/nonexistent/mcp.json")))
      assert.strictEqual(error.reason, "InvalidConfig")
      assert.include(error.message, "cannot read /nonexistent/mcp.json")
    }).pipe(Effect.provide(Layer.merge(NodeServices.layer, FetchHttpClient.layer))))
})
