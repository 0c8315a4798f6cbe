/**
 * Interop: Effect's own MCP client (`effect/ai/McpClient`, Effect 4.1.5) as a client of `@conduit-mcp/server`.
 *
 * The server is the standard fixture server of the tests (`utils/fixtureServer.ts`, both eras), served
 *
 * - over stdio: `test/fixtures/server.ts` spawned with tsx, through Effect's `McpClient.layerStdio` (a
 *   `ChildProcess.Command` run by `NodeServices`' `ChildProcessSpawner`);
 * - over Streamable HTTP: `McpServerHttp` on Node's HTTP server in this process (`fixtures/http/mcpServerHttp.ts`),
 *   through Effect's `McpClient.layerHttp` on the undici `HttpClient`.
 *
 * Effect's client speaks exactly one protocol revision, chosen by the protocol adapter it is given
 * (`McpProtocol.v2025_11_25` or `McpProtocol.v2026_07_28`; its `ProtocolVersion` type has no other member): there is
 * no negotiation. Each binding runs in both revisions: the connection reports the revision, tools are listed and
 * called, a resource is listed and read, a prompt is listed and got, a tool-reported error comes back as a result,
 * and a schema turns the structured result into a value.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, layer } from "@effect/vitest"
import * as EffectMcpClient from "effect/ai/McpClient"
import * as McpProtocol from "effect/ai/McpProtocol"
import type * as EffectMcpSchema from "effect/ai/McpSchema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ChildProcess from "effect/process/ChildProcess"
import * as Schema from "effect/Schema"
import * as Module from "node:module"
import * as Url from "node:url"
import * as McpServerHttp from "../fixtures/http/mcpServerHttp.js"
import * as FixtureServer from "../utils/fixtureServer.js"

const require = Module.createRequire(import.meta.url)
const tsx = Url.pathToFileURL(require.resolve("tsx")).href
const fixtureProgram = Url.fileURLToPath(new URL("../fixtures/server.ts", import.meta.url))

/** The revisions Effect's client speaks, with their protocol adapters. */
export const revisions = [
  { version: "2025-11-25", protocol: McpProtocol.v2025_11_25 },
  { version: "2026-07-28", protocol: McpProtocol.v2026_07_28 }
] as const

type Revision = (typeof revisions)[number]

const identity = { name: "effect-interop", version: "0.1.0" }

/** Effect's client over stdio, spawning the Conduit fixture server (both eras). */
export const overStdio = (revision: Revision) =>
  EffectMcpClient.layerStdio({
    ...identity,
    protocol: revision.protocol,
    // the fixture starts under tsx on a loaded machine
    timeout: "30 seconds",
    command: ChildProcess.make(process.execPath, ["--import", tsx, fixtureProgram, "--eras", "both"])
  }).pipe(Layer.provide(NodeServices.layer))

/** Effect's client over Streamable HTTP, to the Conduit fixture server served in the layer's scope. */
export const overHttp = (revision: Revision) =>
  Layer.unwrap(
    Effect.map(Effect.flatMap(FixtureServer.make({ eras: "both" }), McpServerHttp.serve), (url) =>
      EffectMcpClient.layerHttp({ ...identity, protocol: revision.protocol, url }))
  ).pipe(Layer.provide(NodeHttpClient.layerUndici))

const textOf = (content: ReadonlyArray<EffectMcpSchema.ContentBlock>) =>
  content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("")

const toolNamed = (tools: ReadonlyArray<EffectMcpSchema.Tool>, name: string) => {
  const tool = tools.find((tool) => tool.name === name)
  return tool === undefined ? assert.fail(`no tool ${name} in ${tools.map((tool) => tool.name).join(", ")}`) : tool
}

const suite = (binding: string, clientLayer: (revision: Revision) => Layer.Layer<EffectMcpClient.McpClient, unknown>) =>
  revisions.forEach((revision) =>
    describe(`effect/ai McpClient → @conduit-mcp/server over ${binding}, ${revision.version}`, () => {
      // the real clock: a child process and an HTTP server answer on their own time
      layer(clientLayer(revision), { timeout: 60_000, excludeTestServices: true })((it) => {
        it.effect("the connection runs the chosen revision against the Conduit server", () =>
          Effect.gen(function*() {
            const client = yield* EffectMcpClient.McpClient
            assert.strictEqual(client.protocolVersion, revision.version)
            assert.strictEqual(client.serverInfo?.name, FixtureServer.SERVER_NAME)
            assert.strictEqual(client.serverInfo?.version, FixtureServer.SERVER_VERSION)
            assert.isDefined(client.capabilities.tools)
            assert.isDefined(client.capabilities.resources)
            assert.isDefined(client.capabilities.prompts)
          }))

        it.effect("tools are listed and called", () =>
          Effect.gen(function*() {
            const client = yield* EffectMcpClient.McpClient
            const tools = yield* client.listTools()
            assert.includeMembers(tools.map((tool) => tool.name), ["echo", "add", "slow", "fail"])
            const result = yield* client.callTool({ tool: toolNamed(tools, "echo"), arguments: { text: "hi" } })
            assert.strictEqual(textOf(result.content), "hi")
            assert.notStrictEqual(result.isError, true)
          }))

        it.effect("a tool-reported error is a result; with a schema it is a ToolError keeping the result", () =>
          Effect.gen(function*() {
            const client = yield* EffectMcpClient.McpClient
            const fail = toolNamed(yield* client.listTools(), "fail")
            const result = yield* client.callTool({ tool: fail, arguments: { message: "no" } })
            assert.strictEqual(result.isError, true)
            assert.include(textOf(result.content), "no")
            const error = yield* Effect.flip(
              client.callTool({ tool: fail, arguments: { message: "no" }, schema: Schema.Unknown })
            )
            assert.strictEqual(error.reason._tag, "ToolError")
          }))

        it.effect("a schema decodes the structured result", () =>
          Effect.gen(function*() {
            const client = yield* EffectMcpClient.McpClient
            const add = toolNamed(yield* client.listTools(), "add")
            const sum = yield* client.callTool({
              tool: add,
              arguments: { a: 2, b: 3 },
              schema: Schema.Struct({ sum: Schema.Number })
            })
            assert.deepStrictEqual(sum, { sum: 5 })
          }))

        it.effect("a resource is listed and read", () =>
          Effect.gen(function*() {
            const client = yield* EffectMcpClient.McpClient
            const resources = yield* client.listResources()
            assert.include(resources.map((resource) => resource.uri), "fixture://hello")
            const read = yield* client.readResource({ uri: "fixture://hello" })
            const first = read.contents[0]
            assert.strictEqual(first !== undefined && "text" in first ? first.text : undefined, "Hello, world!")
            // a URI of the fixture's resource template is read as well
            const item = yield* client.readResource({ uri: "fixture://items/10" })
            const itemContent = item.contents[0]
            assert.strictEqual(itemContent !== undefined && "text" in itemContent ? itemContent.text : undefined, "item 10")
          }))

        it.effect("a prompt is listed and got", () =>
          Effect.gen(function*() {
            const client = yield* EffectMcpClient.McpClient
            const prompts = yield* client.listPrompts()
            const greet = prompts.find((prompt) => prompt.name === "greet")
            assert.isDefined(greet)
            assert.deepStrictEqual(greet?.arguments?.map((argument) => argument.name), ["name"])
            const got = yield* client.getPrompt({ prompt: greet!, arguments: { name: "Ada" } })
            const content = got.messages[0]?.content
            assert.strictEqual(content?.type === "text" ? content.text : undefined, "Hello, Ada!")
          }))
      })
    })
  )

suite("stdio", overStdio)
suite("Streamable HTTP", overHttp)
