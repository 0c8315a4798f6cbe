/**
 * `--root <dir>`: the CLI declares the roots capability and shows the directories to the server
 * (server-everything's get-roots-list tool lists what the client gave it).
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import * as Cli from "./utils/cli.js"

layer(Cli.layer, { excludeTestServices: true })("roots", (it) => {
  it.effect("--root directories reach the server as file:// roots; a missing directory is a usage error", () =>
    Effect.gen(function*() {
      const first = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-root-a-"))
      const second = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-root-b-"))
      const [listed, missing] = yield* Cli.runAll([
        ["--stdio", Cli.everythingCommand, "--root", first, "--root", second, "tools", "call", "get-roots-list"],
        ["--root", Path.join(first, "does-not-exist"), "probe"]
      ])
      assert.strictEqual(listed.code, 0, listed.stderr)
      assert.include(listed.stdout, "(2 total)")
      assert.include(listed.stdout, Url.pathToFileURL(first).href)
      assert.include(listed.stdout, Url.pathToFileURL(second).href)
      assert.strictEqual(missing.code, 2)
      assert.include(missing.stderr, "not a directory")
    }))
})
