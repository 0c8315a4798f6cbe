/**
 * MCP tools handed to an effect/ai LanguageModel: a scripted model (no network) that asks for tools, then reads
 * their results from the prompt of its next turn. The servers are in-process `@conduit-mcp/server` servers behind
 * a hub or a single client.
 */
import { McpToolkit } from "@conduit-mcp/ai"
import { InProcessTransport, McpClient, McpHub, Transport } from "@conduit-mcp/client"
import { McpServer } from "@conduit-mcp/server"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as AiError from "effect/ai/AiError"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Prompt from "effect/ai/Prompt"
import type * as Response from "effect/ai/Response"
import * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import { agent } from "./examples/agent.js"

const conduit = Url.fileURLToPath(new URL("../../cli/bin/conduit.mjs", import.meta.url))

// ---------------------------------------------------------------------------------------------------------------
// Servers

const echo = (server: string) =>
  McpServer.tool({
    name: "echo",
    title: "Echo",
    description: `Echoes text on ${server}`,
    annotations: { readOnlyHint: true, openWorldHint: false },
    parameters: Schema.Struct({ text: Schema.String.annotate({ description: "What to echo" }) }),
    handler: ({ text }) => Effect.succeed(`${server} says ${text}`)
  })

const add = McpServer.tool({
  name: "add",
  description: "Adds two numbers",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
  annotations: { destructiveHint: false, idempotentHint: true },
  handler: ({ a, b }) => Effect.succeed({ content: [McpServer.text(String(a + b))], structuredContent: { sum: a + b } })
})

const explode = McpServer.tool({
  name: "explode",
  description: "Always fails",
  parameters: Schema.Struct({}),
  handler: () => Effect.succeed({ content: [McpServer.text("the reactor is offline")], isError: true })
})

const slow = McpServer.tool({
  name: "slow",
  parameters: Schema.Struct({}),
  handler: () => Effect.andThen(McpServer.progress(1, { total: 2, message: "half" }), Effect.succeed("done"))
})

const transportTo = (name: string, tools: ReadonlyArray<McpServer.Tool<McpServer.RequestContext>>) =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({ name, version: "1.0.0", tools })
    const { transport } = yield* InProcessTransport.make(server)
    return { server, transport: Layer.succeed(Transport.Transport, transport) }
  })

const makeHub = Effect.gen(function*() {
  const alpha = yield* transportTo("alpha", [echo("alpha"), explode, slow])
  const beta = yield* transportTo("beta", [echo("beta"), add])
  return yield* McpHub.make({
    servers: [{ name: "alpha", transport: alpha.transport }, { name: "beta", transport: beta.transport }],
    client: { healthCheckInterval: false }
  })
})

// ---------------------------------------------------------------------------------------------------------------
// A scripted model: each turn is a function of what it is offered and of the prompt so far

interface Turn {
  readonly tools: ReadonlyArray<Tool.Any>
  readonly results: ReadonlyArray<Prompt.ToolResultPart>
}

// Effect 4's generateText gives the results of concurrent tool calls in the order they complete (Effect 3's @effect/ai
// gave them in the order of the calls): the tests read them in the order of the calls, whose ids are c1, c2, ...
const inCallOrder = <P extends { readonly id: string }>(parts: ReadonlyArray<P>): ReadonlyArray<P> =>
  [...parts].sort((a, b) => a.id.localeCompare(b.id, "en", { numeric: true }))

const toolResults = (prompt: Prompt.Prompt): ReadonlyArray<Prompt.ToolResultPart> =>
  inCallOrder(prompt.content.flatMap((message) =>
    message.role === "tool" ? message.content.filter((part) => part.type === "tool-result") : []
  ))

const scripted = (script: (turn: Turn) => ReadonlyArray<Response.PartEncoded>) =>
  Effect.gen(function*() {
    const turns = yield* Ref.make<ReadonlyArray<Turn>>([])
    const model = yield* LanguageModel.make({
      generateText: (options) =>
        Effect.gen(function*() {
          const turn = { tools: options.tools, results: toolResults(options.prompt) }
          yield* Ref.update(turns, (all) => [...all, turn])
          return [...script(turn), finish]
        }),
      streamText: () => Stream.empty
    })
    return { model, turns }
  })

const finish: Response.PartEncoded = {
  type: "finish",
  reason: "stop",
  usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } }
}

const call = (id: string, name: string, params: unknown): Response.PartEncoded => ({
  type: "tool-call",
  id,
  name,
  params
})

/** One agent step: the model asks, the toolkit answers, and the model reads the answers on its next turn. */
const twoTurns = (model: LanguageModel.LanguageModel, toolkit: McpToolkit.McpToolkit, prompt: string) =>
  Effect.gen(function*() {
    const first = yield* model.generateText({ prompt, toolkit: toolkit.withHandler })
    const history = Prompt.concat(Prompt.make(prompt), Prompt.fromResponseParts(first.content))
    const second = yield* model.generateText({ prompt: history, toolkit: toolkit.withHandler })
    return { first, second }
  })

/** A call through the toolkit, as the model's would be: its final (not preliminary) result. */
const handle = (withHandler: Toolkit.WithHandler<McpToolkit.Tools>, name: string, params: Record<string, unknown>) =>
  Effect.flatMap(withHandler.handle(name, params as never), (results) =>
    Effect.map(Stream.runCollect(results), (all) => all.filter((result) => !result.preliminary).at(-1)!))

describe("McpToolkit", () => {
  it.effect("the model calls two tools on two servers and reads both results", () =>
    Effect.gen(function*() {
      const hub = yield* makeHub
      const toolkit = yield* McpToolkit.make(McpToolkit.fromHub(hub))
      const { model, turns } = yield* scripted(({ results }) =>
        results.length === 0
          ? [call("c1", "alpha__echo", { text: "hello" }), call("c2", "beta__add", { a: 2, b: 3 })]
          : [{ type: "text", text: `saw ${results.map((r) => `${r.name}=${JSON.stringify(r.result)}`).join(" ")}` }]
      )
      const { first, second } = yield* twoTurns(model, toolkit, "echo hello and add 2 and 3")
      assert.deepStrictEqual(inCallOrder(first.toolResults).map((r) => [r.name, r.isFailure, r.result]), [
        ["alpha__echo", false, { content: [{ type: "text", text: "alpha says hello" }] }],
        ["beta__add", false, { content: [{ type: "text", text: "5" }], structuredContent: { sum: 5 } }]
      ])
      assert.strictEqual(
        second.text,
        `saw alpha__echo={"content":[{"type":"text","text":"alpha says hello"}]} ` +
          `beta__add={"content":[{"type":"text","text":"5"}],"structuredContent":{"sum":5}}`
      )
      // what the model was offered: every server's tools, with the servers' JSON Schemas and annotations
      const offered = (yield* Ref.get(turns))[0].tools
      assert.deepStrictEqual(offered.map((tool) => tool.name), [
        "alpha__echo",
        "alpha__explode",
        "alpha__slow",
        "beta__echo",
        "beta__add"
      ])
      const alphaEcho = offered[0]
      assert.strictEqual(alphaEcho.description, "Echoes text on alpha")
      assert.deepStrictEqual(Tool.getJsonSchema(alphaEcho as McpToolkit.McpTool), {
        type: "object",
        required: ["text"],
        properties: { text: { type: "string", description: "What to echo" } },
        additionalProperties: false
      })
      assert.strictEqual(Context.getUnsafe(alphaEcho.annotations, Tool.Title), "Echo")
      assert.isTrue(Context.get(alphaEcho.annotations, Tool.Readonly))
      assert.isFalse(Context.get(alphaEcho.annotations, Tool.OpenWorld))
      assert.isTrue(Context.get(offered[4].annotations, Tool.Idempotent))
      assert.isFalse(Context.get(offered[4].annotations, Tool.Destructive))
      assert.deepStrictEqual(Context.getUnsafe(offered[4].annotations, McpToolkit.Origin).server, "beta")
    }))

  it.effect("a failing tool, arguments the server refuses and a dead server come back to the model as failures", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-ai-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      const alpha = yield* transportTo("alpha", [echo("alpha"), explode])
      const hub = yield* McpHub.make({
        servers: [
          { name: "alpha", transport: alpha.transport },
          // the demo server over stdio, which starts only once: after its process dies, reconnecting fails
          McpHub.stdio("demo", {
            command: "sh",
            args: [
              "-c",
              `[ -e "$0" ] && exit 3; touch "$0"; exec "$@"`,
              Path.join(dir, "started"),
              process.execPath,
              conduit,
              "demo-server",
              "--stdio"
            ]
          }, { client: { reconnect: false } })
        ],
        client: { healthCheckInterval: false }
      })
      const toolkit = yield* McpToolkit.make(McpToolkit.fromHub(hub))
      const { model } = yield* scripted(({ results }) =>
        results.length === 0
          ? [call("c1", "alpha__explode", {}), call("c2", "demo__echo", { text: 42 })]
          : [{
            type: "text",
            text: results.map((r) => `${r.name}:${r.isFailure}:${JSON.stringify(r.result)}`).join("\n")
          }]
      )
      const { first, second } = yield* twoTurns(model, toolkit, "try")
      assert.deepStrictEqual(inCallOrder(first.toolResults).map((r) => [r.name, r.isFailure]), [
        ["alpha__explode", true],
        ["demo__echo", true]
      ])
      const [exploded, refused] = second.text.split("\n")
      assert.strictEqual(exploded, `alpha__explode:true:{"error":"the reactor is offline"}`)
      assert.match(refused, /^demo__echo:true:\{"error":"Invalid arguments for tool echo/)

      // the demo server's process dies: its tools fail for the model with the hub's error; alpha still answers
      const pid = yield* hub.use("demo", (client) => Effect.map(client.session, (session) => session.transport.pid))
      process.kill(pid!, "SIGKILL")
      const handled = yield* Effect.flatMap(toolkit.withHandler, (withHandler) =>
        Effect.all([
          handle(withHandler, "demo__add", { a: 1, b: 1 }),
          handle(withHandler, "alpha__echo", { text: "still" })
        ]))
      assert.isTrue(handled[0].isFailure)
      assert.match(JSON.stringify(handled[0].result), /^\{"error":"server \\"demo\\": stdio transport/)
      assert.deepStrictEqual([handled[1].isFailure, handled[1].result], [
        false,
        { content: [{ type: "text", text: "alpha says still" }] }
      ])
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("progress of a call reaches onProgress with the tool's name", () =>
    Effect.gen(function*() {
      const hub = yield* makeHub
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      const toolkit = yield* McpToolkit.make(McpToolkit.fromHub(hub), {
        onProgress: ({ origin, progress, tool }) =>
          Ref.update(seen, (all) => [
            ...all,
            `${tool} (${origin.server}): ${progress.progress}/${progress.total} ${progress.message}`
          ])
      })
      const result = yield* Effect.flatMap(toolkit.withHandler, (withHandler) => handle(withHandler, "alpha__slow", {}))
      assert.deepStrictEqual(result.result, { content: [{ type: "text", text: "done" }] })
      assert.deepStrictEqual(yield* Ref.get(seen), ["alpha__slow (alpha): 1/2 half"])
    }))

  it.live("a live toolkit from one client is rebuilt after the server's tool list changes", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "solo", version: "1.0.0", tools: [echo("solo"), add] })
      const client = yield* McpClient.make({ healthCheckInterval: false }).pipe(
        Effect.provide(InProcessTransport.layer(server))
      )
      // the listing hides "add" until the flag is set: the server's list_changed notification is the real one
      const published = yield* Ref.make(false)
      const source = McpToolkit.fromClient(client)
      const live = yield* McpToolkit.live({
        ...source,
        tools: Effect.zipWith(source.tools, Ref.get(published), (all, shown) =>
          shown ? all : all.filter(({ name }) => name !== "add"))
      })
      const before = yield* live.current
      assert.deepStrictEqual([...before.origins.keys()], ["echo"])
      assert.strictEqual(yield* live.current, before, "unchanged: the same build")
      yield* Ref.set(published, true)
      yield* server.publish(McpServer.Change.ListChanged({ list: "tools" }))
      const after = yield* live.current.pipe(
        Effect.filterOrFail((built) => built !== before, () => "not rebuilt yet"),
        Effect.retry({ schedule: Schedule.spaced("10 millis"), times: 500 })
      )
      assert.deepStrictEqual([...after.origins.keys()], ["echo", "add"])
      // effect/ai takes a toolkit effect that cannot fail: fromClient's listing errors become defects here
      const { toolResults } = yield* LanguageModel.generateText({
        prompt: "add",
        toolkit: Effect.orDie(live.toolkit)
      }).pipe(
        Effect.provideServiceEffect(
          LanguageModel.LanguageModel,
          Effect.map(scripted(() => [call("c1", "add", { a: 1, b: 2 })]), ({ model }) => model)
        )
      )
      assert.deepStrictEqual(toolResults.map((r) => r.result), [
        { content: [{ type: "text", text: "3" }], structuredContent: { sum: 3 } }
      ])
    }))

  it.effect("a live toolkit over a source that announces a change with every listing lists once per interval", () =>
    Effect.gen(function*() {
      const changes = yield* PubSub.unbounded<void>()
      let listed = 0
      const source: McpToolkit.Source<never> = {
        // a server that sends tools/list_changed before every tools/list answer
        tools: Effect.suspend(() => {
          listed++
          return Effect.as(PubSub.publish(changes, undefined), [])
        }),
        call: () => Effect.die("not called"),
        changes: Stream.fromPubSub(changes)
      }
      const settle = Effect.repeat(Effect.yieldNow, { times: 50 })
      const live = yield* McpToolkit.live(source)
      yield* settle
      const use = Effect.gen(function*() {
        for (let i = 0; i < 20; i++) {
          yield* live.current
          yield* settle
        }
      })
      // the first change (after a quiet interval) drops the build at once; the next waits a second on the Clock
      yield* use
      assert.strictEqual(listed, 2)
      yield* TestClock.adjust("1 second")
      yield* use
      assert.strictEqual(listed, 3)
    }))

  it.effect("the README's agent loop: the model asks, reads the results, answers", () =>
    Effect.gen(function*() {
      const hub = yield* makeHub
      const { model, turns } = yield* scripted(({ results }) =>
        results.length === 0
          ? [call("c1", "beta__add", { a: 20, b: 22 }), call("c2", "alpha__echo", { text: "hi" })]
          : [{ type: "text", text: `the sum is ${JSON.stringify(results[0].result)}` }]
      )
      const answer = yield* agent("what is 20 + 22?").pipe(
        Effect.provideService(McpHub.McpHub, hub),
        Effect.provideService(LanguageModel.LanguageModel, model)
      )
      assert.strictEqual(answer, `the sum is {"content":[{"type":"text","text":"42"}],"structuredContent":{"sum":42}}`)
      assert.strictEqual((yield* Ref.get(turns)).length, 2)
    }))

  it.effect("transformTool: each tool passes through it before it is offered; a renaming one is a defect", () =>
    Effect.gen(function*() {
      const tool = { name: "t", inputSchema: { type: "object", properties: { a: { type: "string" } } } }
      const calls: Array<unknown> = []
      const source: McpToolkit.Source<never> = {
        tools: Effect.succeed([{ name: "t", server: "s", tool }]),
        call: (_name, args) =>
          Effect.sync(() => {
            calls.push(args)
            return { content: [{ type: "text" as const, text: "ok" }] }
          }),
        changes: Stream.empty
      }
      const seen: Array<string> = []
      const built = yield* McpToolkit.make(source, {
        transformTool: (offered, origin) => {
          seen.push(`${offered.name} ${origin.server}`)
          return offered.setNeedsApproval(true)
        }
      })
      assert.deepStrictEqual(seen, ["t s"])
      const [offered] = Object.values(built.toolkit.tools)
      assert.strictEqual(offered.needsApproval, true)
      assert.strictEqual(Context.get(offered.annotations, Tool.Strict), false)
      assert.deepStrictEqual(Tool.getJsonSchema(offered), tool.inputSchema)
      // the handler is still the MCP call, and arguments that are not an object come back as a failure
      const withHandler = yield* built.withHandler
      const ok = yield* handle(withHandler, "t", { a: "x" })
      assert.deepStrictEqual([ok.isFailure, ok.result, calls], [false, { content: [{ type: "text", text: "ok" }] }, [
        { a: "x" }
      ]])
      const notAnObject = yield* Effect.flatMap(withHandler.handle("t", [1, 2]), (results) => Stream.runCollect(results))
      assert.deepStrictEqual(notAnObject.map((result) => result.isFailure), [true])
      const failure = notAnObject[0].result
      assert.strictEqual(AiError.isAiError(failure) ? failure.reason._tag : undefined, "ToolParameterValidationError")
      assert.strictEqual(calls.length, 1)

      // Effect's approval protocol: a call of a tool that needs approval is not made, the model's answer asks
      const { model } = yield* scripted(() => [call("c1", "t", { a: "y" })])
      const response = yield* model.generateText({ prompt: "go", toolkit: built.withHandler })
      assert.deepStrictEqual(response.content.map((part) => part.type).filter((type) => type.startsWith("tool")), [
        "tool-call",
        "tool-approval-request"
      ])
      assert.strictEqual(calls.length, 1)

      const renamed = yield* Effect.exit(McpToolkit.make(source, {
        transformTool: () => Tool.dynamic("other", { failureMode: "return" }) as never
      }))
      assert.isTrue(renamed._tag === "Failure" && renamed.cause.reasons.some((reason) => reason._tag === "Die"))
    }))

  it("names a model cannot take are rewritten, kept unique and short", () => {
    const taken = new Set<string>()
    const take = (name: string, max?: number) => {
      const out = McpToolkit.modelName(name, taken, max)
      taken.add(out)
      return out
    }
    assert.strictEqual(take("docs__search"), "docs__search")
    assert.strictEqual(take("files__read.file/v2"), "files__read_file_v2")
    const clash = take("files__read_file/v2")
    assert.match(clash, /^files__read_file_v2_[0-9a-f]{8}$/)
    const long = take(`x__${"a".repeat(100)}`)
    assert.strictEqual(long.length, 64)
    assert.match(long, /^x__a+_[0-9a-f]{8}$/)
    const empty = take("", 10)
    assert.isTrue(empty.length > 0 && empty.length <= 10)
  })
})
