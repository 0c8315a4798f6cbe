/**
 * McpToolkit against a hostile server (a real child process, fixtures/hostile-schemas.mjs): a tool whose inputSchema is
 * nested 20,000 deep, one of about 2 MB, and tools named `__proto__`, `constructor` and `toString`, offered to a
 * scripted model that serializes every tool's JSON Schema as a provider does to build its request.
 */
import { McpToolkit } from "@conduit-mcp/ai"
import { McpClient, McpHub, StdioTransport } from "@conduit-mcp/client"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as AiError from "effect/ai/AiError"
import * as LanguageModel from "effect/ai/LanguageModel"
import type * as Response from "effect/ai/Response"
import * as Tool from "effect/ai/Tool"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Ref from "effect/Ref"
import * as References from "effect/References"
import * as Stream from "effect/Stream"
import * as Url from "node:url"

const fixture = Url.fileURLToPath(new URL("./fixtures/hostile-schemas.mjs", import.meta.url))
// The transport's frame scan refuses a listing nested past maxFrameDepth (512 by default) before the toolkit sees it;
// the depth is raised here so that the toolkit's own bound, for applications that raise it, is what is tested.
const stdio: StdioTransport.StdioTransportOptions = {
  command: process.execPath,
  args: [fixture],
  closeTimeout: "500 millis",
  maxFrameDepth: 30_000
}
const deepName = "deep\u001b]0;owned\u0007\u202e"

const client = McpClient.layer({ healthCheckInterval: false, probeTimeout: "300 millis" }).pipe(
  Layer.provide(StdioTransport.layer(stdio)),
  Layer.provide(NodeServices.layer)
)

/** Every log line, message and annotations. */
const capture = Effect.gen(function*() {
  const lines = yield* Ref.make<ReadonlyArray<string>>([])
  const logger = Logger.make(({ fiber, message }) => {
    const text = [Array.isArray(message) ? message.map(String).join(" ") : String(message)]
    for (const value of Object.values(fiber.getRef(References.CurrentLogAnnotations))) text.push(String(value))
    Effect.runSync(Ref.update(lines, (all) => [...all, text.join(" ")]))
  })
  return { lines, layer: Logger.layer([logger]) }
})

const finish: Response.PartEncoded = {
  type: "finish",
  reason: "stop",
  usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } }
}

/**
 * A model that builds a provider's request (every offered tool's JSON Schema through JSON.stringify), then asks for
 * the given calls on its first turn.
 */
const model = (calls: (offered: ReadonlyArray<string>) => ReadonlyArray<readonly [string, unknown]>) =>
  Effect.gen(function*() {
    const requests = yield* Ref.make<ReadonlyArray<string>>([])
    const service = yield* LanguageModel.make({
      generateText: (options) =>
        Effect.gen(function*() {
          const request = JSON.stringify(options.tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            parameters: Tool.getJsonSchema(tool as McpToolkit.McpTool)
          })))
          yield* Ref.update(requests, (all) => [...all, request])
          const offered = options.tools.map((tool) => tool.name)
          return [
            ...calls(offered).map(([name, params], i): Response.PartEncoded => ({
              type: "tool-call",
              id: `c${i}`,
              name,
              params
            })),
            finish
          ]
        }),
      streamText: () => Stream.empty
    })
    return { service, requests }
  })

const byPrefix = (names: ReadonlyArray<string>, prefix: string) => names.find((name) => name.startsWith(prefix))!

/** What every source must give: the two oversized tools left out with an escaped reason, the others called. */
const assertSafe = (
  built: McpToolkit.McpToolkit,
  logged: ReadonlyArray<string>,
  server: string | undefined
) => {
  const prefix = server === undefined ? "" : `${server}__`
  assert.deepStrictEqual(
    built.leftOut.map((left) => [left._tag, left.tool, left.server, left.reason]),
    [
      ["ToolLeftOut", `${prefix}${deepName}`, server, "SchemaDepth"],
      ["ToolLeftOut", `${prefix}huge`, server, "SchemaSize"]
    ]
  )
  const names = [...built.origins.keys()]
  assert.strictEqual(names.length, 4)
  assert.isTrue(names.every((name) => !Object.hasOwn(Object.prototype, name)), names.join(","))
  assert.deepStrictEqual(names.map((name) => built.origins.get(name)!.tool.name), [
    "echo",
    "__proto__",
    "constructor",
    "toString"
  ])
  const warnings = logged.filter((line) => line.includes("is left out"))
  assert.strictEqual(warnings.length, 2, logged.join("\n"))
  const all = warnings.join("\n")
  assert.notMatch(all, /[\u001b\u0007\u202e]/)
  assert.include(all, "deep\\x1b]0;owned\\x07\\u202e")
  assert.include(all, "nested deeper than 64 levels")
  assert.include(all, "longer than 65536 characters")
}

describe("McpToolkit against hostile tools", () => {
  it.effect("make(fromClient): oversized schemas are left out, prototype names are renamed and called", () =>
    Effect.gen(function*() {
      const { layer, lines } = yield* capture
      const mcp = yield* McpClient.McpClient
      const built = yield* McpToolkit.make(McpToolkit.fromClient(mcp)).pipe(Effect.provide(layer))
      const { requests, service } = yield* model((offered) =>
        ["__proto__", "constructor", "toString"].map((name) => [byPrefix(offered, name), {}] as const)
      )
      const { toolResults } = yield* LanguageModel.generateText({ prompt: "go", toolkit: built.withHandler }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, service)
      )
      assert.deepStrictEqual(toolResults.map((result) => result.result), [
        { content: [{ type: "text", text: "called __proto__" }] },
        { content: [{ type: "text", text: "called constructor" }] },
        { content: [{ type: "text", text: "called toString" }] }
      ])
      assertSafe(built, yield* Ref.get(lines), undefined)
      const [request] = yield* Ref.get(requests)
      assert.deepStrictEqual(
        (JSON.parse(request!) as Array<{ name: string }>).map((tool) => tool.name),
        [...built.origins.keys()]
      )

      // a name the toolkit does not have, though every object answers it, is a typed failure, not a TypeError
      const withHandler = yield* built.withHandler
      for (const name of ["hasOwnProperty", "__proto__", "constructor"]) {
        const exit = yield* Effect.exit(withHandler.handle(name as never, {}))
        const reasons = exit._tag === "Failure" ? exit.cause.reasons : []
        assert.isTrue(reasons.length === 1 && reasons[0]._tag === "Fail", `${name}: ${String(exit)}`)
        const error = reasons[0]?._tag === "Fail" ? reasons[0].error : undefined
        assert.instanceOf(error, AiError.AiError)
        assert.strictEqual((error as AiError.AiError).reason._tag, "ToolNotFoundError")
      }
    }).pipe(Effect.provide(client)))

  it.effect("live(fromClient): each generation gets the bounded toolkit", () =>
    Effect.gen(function*() {
      const { layer, lines } = yield* capture
      const mcp = yield* McpClient.McpClient
      const live = yield* McpToolkit.live(McpToolkit.fromClient(mcp))
      const built = yield* live.current.pipe(Effect.provide(layer))
      const { service } = yield* model((offered) => [[byPrefix(offered, "__proto__"), {}]])
      // effect/ai takes a toolkit effect that cannot fail: fromClient's listing errors become defects here
      const { toolResults } = yield* LanguageModel.generateText({
        prompt: "go",
        toolkit: Effect.orDie(live.toolkit)
      }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, service)
      )
      assert.deepStrictEqual(toolResults.map((result) => result.result), [
        { content: [{ type: "text", text: "called __proto__" }] }
      ])
      assertSafe(built, yield* Ref.get(lines), undefined)
    }).pipe(Effect.provide(client)))

  it.effect("fromHub: one hostile server no longer breaks every generation", () =>
    Effect.gen(function*() {
      const { layer, lines } = yield* capture
      const hub = yield* McpHub.make({
        servers: [McpHub.stdio("s", stdio)],
        client: { healthCheckInterval: false, probeTimeout: "300 millis" }
      })
      const built = yield* McpToolkit.make(McpToolkit.fromHub(hub)).pipe(Effect.provide(layer))
      const { service } = yield* model(() => [["s__echo", { text: "hi" }]])
      const { toolResults } = yield* LanguageModel.generateText({ prompt: "go", toolkit: built.withHandler }).pipe(
        Effect.provideService(LanguageModel.LanguageModel, service)
      )
      assert.deepStrictEqual(toolResults.map((result) => result.result), [
        { content: [{ type: "text", text: "called echo" }] }
      ])
      assertSafe(built, yield* Ref.get(lines), "s")
    }).pipe(Effect.provide(NodeServices.layer)))

  it("the bounds are options", () =>
    Effect.gen(function*() {
      const tool = { name: "t", inputSchema: { type: "object", properties: { a: { type: "string" } } } }
      const source: McpToolkit.Source<never> = {
        tools: Effect.succeed([{ name: "t", tool }]),
        call: () => Effect.die("not called"),
        changes: Stream.empty
      }
      const shallow = yield* McpToolkit.make(source, { maxSchemaDepth: 2 })
      assert.deepStrictEqual(shallow.leftOut.map((left) => left.reason), ["SchemaDepth"])
      const short = yield* McpToolkit.make(source, { maxSchemaLength: 20 })
      assert.deepStrictEqual(short.leftOut.map((left) => left.reason), ["SchemaSize"])
      const justOver = yield* McpToolkit.make(source, { maxSchemaLength: 53 })
      assert.deepStrictEqual(justOver.leftOut.map((left) => left.reason), ["SchemaSize"])
      const fits = yield* McpToolkit.make(source, { maxSchemaDepth: 3, maxSchemaLength: 54 })
      assert.deepStrictEqual([fits.leftOut, [...fits.origins.keys()]], [[], ["t"]])
      assert.strictEqual(JSON.stringify(tool.inputSchema).length, 54)
    }).pipe(Effect.runPromise))
})
