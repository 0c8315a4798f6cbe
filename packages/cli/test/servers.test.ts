/**
 * Config files: `conduit servers` lists the servers of a file or of the known locations, `--server <name>` alone
 * finds its entry there, and a bad file or a missing `--server` is one clear sentence.
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Cli from "./utils/cli.js"

const project = () => {
  const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-servers-home-"))
  const cwd = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-servers-cwd-"))
  Fs.mkdirSync(Path.join(cwd, ".vscode"))
  const [command, ...args] = Cli.demoServerCommand().split(" ")
  Fs.writeFileSync(Path.join(cwd, ".vscode", "mcp.json"), JSON.stringify({ servers: { demo: { command, args } } }))
  Fs.mkdirSync(Path.join(home, ".cursor"))
  Fs.writeFileSync(
    Path.join(home, ".cursor", "mcp.json"),
    JSON.stringify({ mcpServers: { remote: { url: "http://127.0.0.1:1/mcp" } } })
  )
  Fs.writeFileSync(Path.join(cwd, "broken.json"), "{\"mcpServers\": {")
  return { cwd, env: { HOME: home, XDG_CONFIG_HOME: Path.join(home, ".config") } }
}

layer(Cli.layer, { excludeTestServices: true })("config files", (it) => {
  it.effect("servers lists the known files' entries; --server alone picks one; mistakes are one sentence", () =>
    Effect.gen(function*() {
      const options = project()
      const [listed, json, called, unknown, noServer, broken] = yield* Effect.all([
        Cli.run(["servers"], options),
        Cli.run(["servers", "--json"], options),
        Cli.run(["--server", "demo", "tools", "call", "echo", "{\"text\":\"found\"}"], options),
        Cli.run(["--server", "nope", "probe"], options),
        Cli.run(["--config", Path.join(".vscode", "mcp.json"), "probe"], options),
        Cli.run(["--config", "broken.json", "--server", "demo", "probe"], options)
      ], { concurrency: 3 })
      assert.strictEqual(listed.code, 0, listed.stderr)
      assert.match(listed.stdout, /^demo\s+stdio\s+/m)
      assert.match(listed.stdout, /^remote\s+http\s+http:\/\/127\.0\.0\.1:1\/mcp/m)
      assert.strictEqual(json.code, 0, json.stderr)
      const parsed = Cli.parseJson(json) as { servers: ReadonlyArray<{ name: string; file: string }> }
      assert.deepStrictEqual(parsed.servers.map((s) => s.name), ["demo", "remote"])
      assert.deepStrictEqual(called, { code: 0, stdout: "found\n", stderr: "" })
      assert.strictEqual(unknown.code, 2)
      assert.include(unknown.stderr, "no server named \"nope\" in the known config files (they have: demo, remote")
      assert.strictEqual(noServer.code, 2)
      assert.include(noServer.stderr, "--config needs --server <name> to pick one of its servers: demo")
      assert.strictEqual(broken.code, 2)
      assert.match(broken.stderr, /^conduit: config file broken\.json is not JSON: /)
      assert.strictEqual(broken.stderr.trim().split("\n").length, 1)
    }))
})
