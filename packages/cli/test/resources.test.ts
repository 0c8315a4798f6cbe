/**
 * Binary resources: `resources read --output <file>` writes the bytes, a stdout that is not a terminal gets them
 * as they are, and a terminal gets a one-line note instead. The resource is one that server-everything makes in its
 * session (a gzip file), so each scenario runs in one `conduit run` or `conduit shell` session.
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Zlib from "node:zlib"
import * as Cli from "./utils/cli.js"
import * as Tmux from "./utils/tmux.js"

const makeGzip =
  "tools call gzip-file-as-resource --arg name=notes.gz --arg data=data:text/plain,hello --arg outputType=resourceLink"
const uri = "demo://resource/session/notes.gz"

// stdout as bytes (the helper of utils/cli.ts reads text)
const runBytes = (args: ReadonlyArray<string>, stdin: string) =>
  Effect.scoped(Effect.gen(function*() {
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const process = yield* spawner.spawn(ChildProcess.make(Cli.node, [Cli.bin, ...args], {
      env: { NO_COLOR: "1" },
      extendEnv: true,
      stdin: Stream.make(new TextEncoder().encode(stdin))
    }))
    const [chunks, code] = yield* Effect.all([Stream.runCollect(process.stdout), process.exitCode], { concurrency: 2 })
    return { code: Number(code), stdout: Buffer.concat(chunks) }
  })).pipe(Effect.orDie)

layer(Cli.layer, { excludeTestServices: true })("binary resources", (it) => {
  it.effect("--output writes the bytes to a file; a pipe gets the bytes as they are", () =>
    Effect.gen(function*() {
      const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-resources-test-"))
      const file = Path.join(directory, "notes.gz")
      const [written, piped] = yield* Effect.all([
        Cli.run(["--stdio", Cli.everythingCommand, "run", "-"], {
          stdin: `${makeGzip}\nresources read ${uri} --output ${file}\nresources read ${uri} -o ${file}.2 --json\n`
        }),
        runBytes(["--stdio", Cli.everythingCommand, "run"], `${makeGzip}\nresources read ${uri}\n`)
      ], { concurrency: 2 })
      assert.strictEqual(written.code, 0, written.stderr)
      assert.strictEqual(Zlib.gunzipSync(Fs.readFileSync(file)).toString("utf8"), "hello")
      assert.include(written.stderr, `bytes (application/gzip) of ${uri} to ${file}`)
      const summary = JSON.parse(written.stdout.slice(written.stdout.indexOf("{")))
      assert.deepStrictEqual(summary, { uri, file: `${file}.2`, bytes: Fs.statSync(file).size })
      assert.deepStrictEqual(Fs.readFileSync(`${file}.2`), Fs.readFileSync(file))

      assert.strictEqual(piped.code, 0)
      // the link the tool printed, then the gzip bytes exactly
      const link = Buffer.from(`[link notes.gz] ${uri}\n`)
      assert.deepStrictEqual(piped.stdout.subarray(0, link.length), link)
      assert.strictEqual(Zlib.gunzipSync(piped.stdout.subarray(link.length)).toString("utf8"), "hello")
    }))

  it.effect("a terminal gets a note instead of the bytes", () =>
    Effect.gen(function*() {
      const terminal = yield* Tmux.open([Cli.node, Cli.bin, "--stdio", Cli.everythingCommand, "shell"], {
        env: { CONDUIT_HISTORY_FILE: Path.join(Os.tmpdir(), `conduit-resources-history-${process.pid}`) }
      })
      yield* terminal.waitFor(/conduit> $/m)
      yield* terminal.sendKeys(makeGzip, "Enter")
      yield* terminal.waitFor(/\[link notes\.gz\][^\n]*\nconduit> $/m)
      yield* terminal.sendKeys(`resources read ${uri}`, "Enter")
      const screen = yield* terminal.waitFor(/\[binary [^\n]*\]\nconduit> $/m)
      assert.match(screen, /\[binary application\/gzip, \d+ bytes; use --output <file> or --json\]/)
    }))
})
