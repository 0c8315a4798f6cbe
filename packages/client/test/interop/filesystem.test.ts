/**
 * Interop: `@modelcontextprotocol/server-filesystem` (legacy, stdio only), started without directories: it asks the
 * client for its roots (`roots/list`) after the handshake and serves only inside them.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { afterAll, assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Fs from "node:fs"
import * as Module from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import * as McpClient from "../../src/McpClient.js"
import type * as McpSchema from "../../src/McpSchema.js"
import * as RootsProvider from "../../src/RootsProvider.js"
import * as StdioTransport from "../../src/StdioTransport.js"

const require = Module.createRequire(import.meta.url)
const entry = Path.join(
  Path.dirname(require.resolve("@modelcontextprotocol/server-filesystem/package.json")),
  "dist",
  "index.js"
)

// (realpath: the server compares resolved paths, and the temporary directory may sit behind a symbolic link)
const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-interop-fs-")))
Fs.writeFileSync(Path.join(root, "note.txt"), "interop note")
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

const textOf = (result: McpSchema.CallToolResult) =>
  result.content.flatMap((block) => (block.type === "text" && "text" in block ? [block.text] : [])).join("")

const clientLayer = McpClient.layer({
  roots: RootsProvider.fixed([{ uri: Url.pathToFileURL(root).href, name: "interop" }]),
  healthCheckInterval: false,
  reconnect: false,
  probeTimeout: "20 seconds",
  clientInfo: { name: "conduit-interop", version: "0.1.0" }
}).pipe(
  Layer.provide(StdioTransport.layer({ command: process.execPath, args: [entry], closeTimeout: "1 second" })),
  Layer.provide(NodeServices.layer)
)

describe("server-filesystem over stdio (roots)", () => {
  layer(clientLayer, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("the probe finds the legacy era; the server takes its directories from the client's roots", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        assert.strictEqual((yield* client.session).era, "legacy")
        const names = (yield* client.listTools()).map((tool) => tool.name)
        assert.includeMembers(names, ["read_text_file", "list_allowed_directories"])
        // it asks for the roots once the handshake is done: poll until it has them
        let allowed = ""
        for (let i = 0; i < 50 && !allowed.includes(root); i++) {
          allowed = textOf(yield* client.callTool({ name: "list_allowed_directories", arguments: {} }))
          if (!allowed.includes(root)) yield* Effect.sleep("100 millis")
        }
        assert.include(allowed, root)
      }))

    it.effect("a file inside the roots is read; one outside is refused", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const read = yield* client.callTool({ name: "read_text_file", arguments: { path: Path.join(root, "note.txt") } })
        assert.strictEqual(textOf(read), "interop note")
        const outside = yield* client.callTool({ name: "read_text_file", arguments: { path: "/etc/hostname" } })
        assert.isTrue(outside.isError)
      }))
  })
})
