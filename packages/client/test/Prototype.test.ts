/**
 * Prototype safety: members named `__proto__` in what a server sends (a real child process, fixtures/stdio/proto.mjs)
 * never become an object's prototype, whichever schema decodes them: a skill's listed frontmatter (a `Record`), a
 * result's `_meta`, structured content (kept as it came, or decoded by a typed tool's `Record`), JSON text of a
 * tool's answer, a key spelled with escapes, and tools named `__proto__`, `constructor` and `toString` in a hub.
 */
import { McpServer } from "@conduit-mcp/server"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as FastCheck from "fast-check"
import * as Url from "node:url"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as codec from "../src/internal/codec.js"
import * as McpClient from "../src/McpClient.js"
import * as McpHub from "../src/McpHub.js"
import * as Skills from "../src/Skills.js"
import * as StdioTransport from "../src/StdioTransport.js"
import * as TypedTool from "../src/TypedTool.js"

const fixture = Url.fileURLToPath(new URL("./fixtures/stdio/proto.mjs", import.meta.url))
const stdio: StdioTransport.StdioTransportOptions = {
  command: process.execPath,
  args: [fixture],
  closeTimeout: "500 millis"
}

const client = McpClient.layer({
  healthCheckInterval: false,
  probeTimeout: "300 millis",
  capabilities: Skills.clientCapabilities
}).pipe(Layer.provide(StdioTransport.layer(stdio)), Layer.provide(NodeServices.layer))

/** Every object in a value, its own members only, without recursion. */
const objectsOf = (value: unknown): Array<object> => {
  const out: Array<object> = []
  const stack = [value]
  while (stack.length > 0) {
    const current = stack.pop()
    if (typeof current !== "object" || current === null) continue
    out.push(current)
    stack.push(...Object.values(current))
  }
  return out
}

/** No object in `value` has a `__proto__` member of its own, and every one has the prototype JSON gives it. */
const assertPrototypeSafe = (value: unknown, what: string) => {
  for (const object of objectsOf(value)) {
    assert.isFalse(Object.hasOwn(object, "__proto__"), `${what}: an own __proto__ member`)
    assert.strictEqual(
      Object.getPrototypeOf(object),
      Array.isArray(object) ? Array.prototype : Object.prototype,
      `${what}: a prototype a server chose`
    )
  }
}

/** A client's own arguments holding a `__proto__` member, as JSON.parse makes them. */
const argsWithProto = JSON.parse(`{"text":"hi","nested":{"__proto__":{"isAdmin":true},"k":1}}`) as Record<
  string,
  unknown
>

const AsRecord = Schema.Record(Schema.String, Schema.Unknown)

describe("__proto__ from a server", () => {
  it.effect("a skill's listed frontmatter has the keys the server listed, not the ones its __proto__ would lend", () =>
    Effect.gen(function*() {
      const [skill] = yield* Skills.list()
      const frontmatter = skill!.frontmatter
      assert.deepStrictEqual(Object.keys(frontmatter), ["name", "description"])
      assert.isUndefined(frontmatter["allowed-tools"])
      assert.isFalse("allowed-tools" in frontmatter)
      assertPrototypeSafe(skill, "skills/list")
    }).pipe(Effect.provide(client)))

  it.effect("tool arguments echoed back, structured content, _meta and a typed tool's Record stay prototype-safe", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      const tools = yield* mcp.listTools()
      assertPrototypeSafe(tools, "tools/list")
      assert.isUndefined(tools.find((tool) => tool.name === "echo")!._meta?.["trusted"])

      const echoed = yield* mcp.callTool({ name: "echo", arguments: argsWithProto })
      assertPrototypeSafe(echoed, "tools/call")
      assert.isUndefined(echoed._meta?.["trace"])
      assert.deepStrictEqual(echoed.structuredContent, { text: "hi", nested: { k: 1 } })

      // a typed tool decodes the structured content, and JSON text, with a Record (copied by assignment)
      const echo = yield* TypedTool.bind(TypedTool.make("echo", {
        parameters: Schema.Struct({ text: Schema.String, nested: AsRecord }),
        success: Schema.Struct({ text: Schema.String, nested: AsRecord })
      }))
      const typed = yield* echo(argsWithProto as { text: string; nested: Record<string, unknown> })
      assertPrototypeSafe(typed, "a typed tool's structured content")
      assert.isUndefined(typed.nested["isAdmin"])
      const textEcho = yield* TypedTool.bind(TypedTool.make("text-echo", {
        parameters: Schema.Struct({ text: Schema.String }),
        success: AsRecord
      }))
      const fromText = yield* textEcho({ text: "hi" })
      assertPrototypeSafe(fromText, "a typed tool's JSON text")
      assert.deepStrictEqual(fromText, { text: "hi" })
      assert.isUndefined(fromText["isAdmin"])
    }).pipe(Effect.provide(client)))

  it.effect("a __proto__ key spelled with JSON escapes is removed too", () =>
    Effect.gen(function*() {
      const mcp = yield* McpClient.McpClient
      const result = yield* mcp.callTool({ name: "escaped" })
      assertPrototypeSafe(result, "escaped")
      assert.deepStrictEqual(result.structuredContent, { ok: 1 })
      const typed = yield* Schema.decodeUnknownEffect(AsRecord)(result.structuredContent)
      assert.isUndefined(typed["isAdmin"])
    }).pipe(Effect.provide(client)))

  it.effect("tools named __proto__, constructor and toString are listed and called through a hub", () =>
    Effect.gen(function*() {
      const hub = yield* McpHub.make({
        servers: [McpHub.stdio("s", stdio)],
        client: { healthCheckInterval: false, probeTimeout: "300 millis" }
      })
      const { errors, items } = yield* hub.listTools()
      assert.deepStrictEqual(errors, [])
      const names = ["__proto__", "constructor", "toString"]
      assert.deepStrictEqual(
        items.filter((item) => names.includes(item.tool.name)).map((item) => item.name),
        names.map((name) => `s__${name}`)
      )
      for (const name of names) {
        const result = yield* hub.callTool({ name: `s__${name}`, arguments: {} })
        assert.deepStrictEqual(result.content, [{ type: "text", text: `called ${name}` }])
      }
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("an in-process server's answers are cleaned like a child's", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "in-process",
        version: "1.0.0",
        tools: [McpServer.tool({
          name: "leak",
          parameters: Schema.Struct({}),
          handler: () =>
            Effect.succeed({ content: [], structuredContent: JSON.parse(`{"__proto__":{"isAdmin":true},"ok":1}`) })
        })]
      })
      const result = yield* Effect.flatMap(McpClient.McpClient, (mcp) => mcp.callTool({ name: "leak" })).pipe(
        Effect.provide(McpClient.layer({ healthCheckInterval: false }).pipe(Layer.provide(InProcessTransport.layer(server))))
      )
      assertPrototypeSafe(result, "in-process")
      assert.deepStrictEqual(result.structuredContent, { ok: 1 })
    }))

  it("property: injected __proto__ members, plain or escaped, are removed from any JSON value and nothing else", () => {
    const key = FastCheck.constantFrom(`"__proto__"`, `"\\u005f_proto__"`, `"__pr\\u006fto__"`, `"\\u005F\\u005Fproto__"`)
    // writes the value with a __proto__ member (spelled one of the ways above) first in every object
    const hostile = (value: unknown, spelling: string): string => {
      if (Array.isArray(value)) return `[${value.map((element) => hostile(element, spelling)).join(",")}]`
      if (typeof value !== "object" || value === null) return JSON.stringify(value)
      const members = Object.entries(value).map(([name, member]) => `${JSON.stringify(name)}:${hostile(member, spelling)}`)
      return `{${[`${spelling}:{"polluted":true}`, ...members].join(",")}}`
    }
    // values holding such a name, or the marker, of their own are not what this property is about
    const values = FastCheck.jsonValue({ maxDepth: 6 }).filter((value) => !/__proto__|polluted/.test(JSON.stringify(value)))
    FastCheck.assert(
      FastCheck.property(values, key, (value, spelling) => {
        const text = `{"jsonrpc":"2.0","id":1,"result":{"value":${hostile(value, spelling)}}}`
        const frame = codec.decodeFrame(text)
        assert.deepStrictEqual(frame.invalid, [])
        const result = (frame.messages[0] as { result: { value: unknown } }).result
        assertPrototypeSafe(result, "decoded")
        assert.deepStrictEqual(result.value, JSON.parse(JSON.stringify(value)))
        assert.isFalse(objectsOf(result).some((object) => "polluted" in object))
      }),
      { numRuns: 300 }
    )
  })

  it("a frame nested 100,000 deep with a __proto__ at the bottom is cleaned without recursion", () => {
    const depth = 100_000
    const text = `{"jsonrpc":"2.0","id":1,"result":${`{"a":`.repeat(depth)}{"__proto__":{"x":1}}${"}".repeat(depth)}}`
    // the default maxFrameDepth refuses such a frame before JSON.parse; an application that raises it gets it cleaned
    assert.strictEqual(codec.decodeFrame(text).messages.length, 0)
    const frame = codec.decodeFrame(text, { ...codec.defaultLimits, maxDepth: depth + 10 })
    assert.deepStrictEqual(frame.invalid, [])
    let current: unknown = (frame.messages[0] as { result: unknown }).result
    for (let i = 0; i < depth; i++) current = (current as { a: unknown }).a
    assert.deepStrictEqual(Object.keys(current as object), [])
    assert.strictEqual(Object.getPrototypeOf(current), Object.prototype)
  })
})
