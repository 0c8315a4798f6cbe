/**
 * `conduit` against a hostile stdio server (a scripted child process): control sequences in everything the server
 * controls never reach the terminal as controls, a URL it asks to open reaches the browser command as one argument
 * (never a shell), and values nested 20,000 deep are printed, not a crash.
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import * as ShellWords from "../src/shellWords.js"
import * as Text from "../src/terminalText.js"
import * as Cli from "./utils/cli.js"
import * as Tmux from "./utils/tmux.js"

const server = (mode: string) =>
  `${Cli.node} ${Url.fileURLToPath(new URL("./fixtures/hostile-server.mjs", import.meta.url))} ${mode}`

// ESC, CSI (C1), BEL, and a carriage return that would overwrite the line
const controls = /[\u001b\u009b\u0007\r]/

layer(Cli.layer, { excludeTestServices: true })("conduit against a hostile server", (it) => {
  it.effect("control sequences in names, logs, progress, tool text and listings are shown escaped", () =>
    Effect.gen(function*() {
      const results = yield* Cli.runAll([
        ["--stdio", server("escapes"), "tools", "call", "open"],
        ["--stdio", server("escapes"), "tools", "list"],
        ["--stdio", server("escapes"), "probe"],
        ["--stdio", server("escapes"), "tools", "call", "open", "--json"]
      ])
      for (const result of results) {
        assert.strictEqual(result.code, 0, result.stderr)
        assert.notMatch(result.stdout, controls, result.stdout)
        assert.notMatch(result.stderr, controls, result.stderr)
      }
      const [call, list, probe, json] = results
      // visible, so the user sees that something was there
      assert.include(call.stdout, "text \\x1b]8;;https://evil.example/\\x1b\\https://good.example/")
      assert.include(call.stdout, "\\x1b[8mhidden")
      assert.include(call.stderr, "[server warning log\\x1b[2K] log \\x1b]8;;")
      assert.include(call.stderr, "progress \\x1b]8;;")
      assert.include(list.stdout, "tool\\x1b[31m")
      assert.include(probe.stdout, "hostile\\x1b]0;title")
      // --json stays valid JSON meaning the same text, with C1 controls escaped too
      const parsed = JSON.parse(json.stdout) as { content: ReadonlyArray<{ text: string }> }
      assert.include(parsed.content[0].text, "\u001b[8mhidden\u001b[0m\u009b31m")
      assert.include(json.stdout, "\\u009b31m")
    }))

  it.effect("values nested 20,000 deep: tools list and --json print, no crash", () =>
    Effect.gen(function*() {
      const [list, listJson, call] = yield* Cli.runAll([
        ["--stdio", server("deep-items"), "tools", "list"],
        ["--stdio", server("deep-items"), "tools", "list", "--json"],
        ["--stdio", server("deep-structured"), "tools", "call", "open", "--json"]
      ])
      assert.strictEqual(list.code, 0, list.stderr)
      assert.include(list.stdout, "x?: …[][]")
      assert.strictEqual(listJson.code, 0, listJson.stderr)
      assert.isTrue(listJson.stdout.startsWith("{\n  \"tools\": ["))
      assert.strictEqual(call.code, 0, call.stderr)
      assert.include(call.stdout, "\"leaf\": true")
    }))

  it.effect("a stdio server gets an allow-listed environment, plus -e variables, in --cwd", () =>
    Effect.gen(function*() {
      const directory = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-cwd-")))
      const secrets = { CONDUIT_TEST_API_KEY: "sk-secret", AWS_SECRET_ACCESS_KEY: "aws-secret" }
      const [plain, given, http] = yield* Cli.runAll([
        ["--stdio", server("env"), "tools", "call", "open"],
        ["--stdio", server("env"), "-e", "GIVEN=1", "--env", "WITH_EQUALS=a=b", "--cwd", directory, "tools", "call", "open"],
        ["--url", "http://127.0.0.1:9/mcp", "-e", "X=1", "tools", "list"]
      ], { env: secrets })
      assert.strictEqual(plain.code, 0, plain.stderr)
      const seen = JSON.parse(plain.stdout) as { env: Record<string, string>; cwd: string }
      assert.isUndefined(seen.env.CONDUIT_TEST_API_KEY)
      assert.isUndefined(seen.env.AWS_SECRET_ACCESS_KEY)
      assert.strictEqual(seen.env.PATH, process.env.PATH)
      assert.strictEqual(given.code, 0, given.stderr)
      const withOptions = JSON.parse(given.stdout) as { env: Record<string, string>; cwd: string }
      assert.strictEqual(withOptions.env.GIVEN, "1")
      assert.strictEqual(withOptions.env.WITH_EQUALS, "a=b")
      assert.isUndefined(withOptions.env.CONDUIT_TEST_API_KEY)
      assert.strictEqual(withOptions.cwd, directory)
      assert.strictEqual(http.code, 2, http.stderr)
      assert.include(http.stderr, "--env and --cwd only apply to stdio servers")
      Fs.rmSync(directory, { recursive: true, force: true })
    }))

  it.scoped("--header \"Authorization: Bearer …\" is sent, and never printed", () =>
    Effect.gen(function*() {
      const secret = "static-secret-4f1c"
      const seen: Array<string | undefined> = []
      const server = yield* Effect.acquireRelease(
        Effect.async<Http.Server>((resume) => {
          const http = Http.createServer((request, response) => {
            seen.push(request.headers.authorization)
            let body = ""
            request.on("data", (chunk) => (body += chunk))
            request.on("end", () => {
              if (request.method !== "POST") return void response.writeHead(405).end()
              if (request.headers.authorization !== `Bearer ${secret}`) return void response.writeHead(401).end()
              const message = JSON.parse(body)
              if (message.id === undefined) return void response.writeHead(202).end()
              const result = message.method === "initialize"
                ? { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } }
                : message.method === "tools/list"
                ? { tools: [{ name: "guarded", inputSchema: { type: "object" } }] }
                : {}
              response.writeHead(200, { "content-type": "application/json" })
              response.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }))
            })
          })
          http.listen(0, "127.0.0.1", () => resume(Effect.succeed(http)))
        }),
        (http) => Effect.sync(() => http.close())
      )
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
      const [list, refused] = yield* Cli.runAll([
        ["--url", url, "--era", "legacy", "--header", `Authorization: Bearer ${secret}`, "-v", "tools", "list"],
        ["--url", url, "--header", `Authorization: Basic ${secret}`, "tools", "list"]
      ])
      assert.strictEqual(list.code, 0, list.stderr)
      assert.include(list.stdout, "guarded")
      assert.isTrue(seen.length > 0 && seen.every((header) => header === `Bearer ${secret}`))
      assert.strictEqual(refused.code, 2)
      for (const result of [list, refused]) {
        assert.notInclude(result.stdout, secret)
        assert.notInclude(result.stderr, secret)
      }
    }))

  it.scoped("a URL elicitation: message escaped, URL shown normalised, opened as one argument without a shell", () =>
    Effect.gen(function*() {
      const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-hostile-"))
      const record = Path.join(directory, "argv.json")
      const recorder = Path.join(directory, "browser.mjs")
      Fs.writeFileSync(
        recorder,
        "import * as Fs from \"node:fs\"\nFs.writeFileSync(process.argv[2], JSON.stringify(process.argv.slice(3)))\n"
      )
      const terminal = yield* Tmux.open([Cli.node, Cli.bin, "--stdio", server("url"), "tools", "call", "open"], {
        env: { BROWSER: `${ShellWords.quote(Cli.node)} ${ShellWords.quote(recorder)} ${ShellWords.quote(record)}` }
      })
      yield* terminal.waitFor(/Open this URL in your browser\? \[y\/N\]/)
      const question = yield* terminal.screen
      assert.include(question, "Sign in at \\x1b]8;;https://evil.example/\\x1b\\https://good.example/")
      assert.include(question, "\\x1b[8mhidden")
      // the message's own "origin:" line is marked as the server's
      assert.include(question, "  |   origin: https://good.example")
      assert.include(question, "URL:    https://x.example/?a&calc|whoami^&b=%PATH%&c=$(id)")
      yield* terminal.sendKeys("y", "Enter")
      const screen = yield* terminal.waitFor(/\[exit \d+\]/)
      assert.include(screen, "action: accept")
      assert.deepStrictEqual(JSON.parse(Fs.readFileSync(record, "utf8")), [
        "https://x.example/?a&calc|whoami^&b=%PATH%&c=$(id)"
      ])
      Fs.rmSync(directory, { recursive: true, force: true })
    }))

  it.scoped("shell Tab: suggested values with terminal controls are dropped; a silent server holds the prompt briefly", () =>
    Effect.gen(function*() {
      const state = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-hostile-"))
      const hostile = yield* Tmux.open([Cli.node, Cli.bin, "--stdio", server("complete"), "shell"], {
        env: { XDG_STATE_HOME: state }
      })
      yield* hostile.waitFor(/conduit> $/m)
      // (the prompt's name completes once the shell has listed the prompts)
      yield* hostile.sendKeys("prompts get ", "Tab")
      yield* hostile.waitFor(/conduit> prompts get p $/m)
      yield* hostile.sendKeys("C-u", "prompts get p --arg q=", "Tab")
      const completed = yield* hostile.waitFor(/conduit> prompts get p --arg q=safe\\ value $/m)
      assert.notInclude(completed, "red")
      assert.notInclude(completed, "bell")
      assert.notInclude(completed, "xxxxxxxxxx")

      const silent = yield* Tmux.open([Cli.node, Cli.bin, "--stdio", server("complete-silent"), "shell"], {
        env: { XDG_STATE_HOME: state }
      })
      yield* silent.waitFor(/conduit> $/m)
      yield* silent.sendKeys("prompts get ", "Tab")
      yield* silent.waitFor(/conduit> prompts get p $/m)
      const started = Date.now()
      yield* silent.sendKeys("C-u", "prompts get p --arg q=", "Tab")
      yield* silent.sendKeys("typed")
      yield* silent.waitFor(/conduit> prompts get p --arg q=typed$/m)
      // the suggestions are waited for 500 ms at most (generous bound for a loaded machine)
      assert.isBelow(Date.now() - started, 3_000)
      Fs.rmSync(state, { recursive: true, force: true })
    }))

  for (const choice of ["retry", "cancel"] as const) {
    it.scoped(`-32042 with no completion report: the user ${choice === "retry" ? "retries" : "cancels"} by hand`, () =>
      Effect.gen(function*() {
        const terminal = yield* Tmux.open([Cli.node, Cli.bin, "--stdio", server("url-required"), "tools", "call", "open"], {
          env: { BROWSER: `${ShellWords.quote(Cli.node)} -e 0` }
        })
        yield* terminal.waitFor(/Open this URL in your browser\? \[y\/N\]/)
        yield* terminal.sendKeys("y", "Enter")
        yield* terminal.waitFor(/Press Enter to retry, or type c to cancel: /)
        yield* terminal.sendKeys(...(choice === "retry" ? ["Enter"] : ["c", "Enter"]))
        const screen = yield* terminal.waitFor(/\[exit \d+\]/)
        assert.include(screen, "Waiting for you to finish on https://good.example.")
        if (choice === "retry") {
          assert.include(screen, "ok\n[exit 0]")
        } else {
          assert.include(screen, "cancelled")
          assert.notInclude(screen, "[exit 0]")
        }
      }))
  }
})

layer(Cli.layer)("terminal text", (it) => {
  it("escapes every control but newline and tab in blocks, and those too on a line", () => {
    assert.strictEqual(Text.block("a\u001b[31mb\r\nc\td\u009b\u202e"), "a\\x1b[31mb\nc\td\\x9b\\u202e")
    assert.strictEqual(Text.line("a\nb\tc\rd"), "a\\nb\\tc\\rd")
    assert.strictEqual(Text.url("https://EXAMPLE.com/a b\u001bc"), "https://example.com/a%20b%1Bc")
  })

  it("the write filter lets only conduit's own styles through", () => {
    assert.strictEqual(Text.filter("\u001b[1mbold\u001b[22m \u001b[8mhidden\u001b[2K\r", false), "\u001b[1mbold\u001b[22m \\x1b[8mhidden\u001b[2K\\x0d")
    assert.strictEqual(Text.filter("\r\u001b[2Kbar", true), "\r\u001b[2Kbar")
    assert.strictEqual(Text.filter("\u001b]8;;x\u0007", false), "\\x1b]8;;x\\x07")
  })

  it("json writes what JSON.stringify writes, without recursion, C1 escaped", () => {
    const value = { a: [1, "x\u009b", null, { b: true, u: undefined }], e: [], o: {}, n: Number.NaN }
    assert.strictEqual(Text.json(value, 2), JSON.stringify(value, null, 2).replace("\u009b", "\\u009b"))
    assert.strictEqual(Text.json(value), JSON.stringify(value).replace("\u009b", "\\u009b"))
    let deep: unknown = 1
    for (let i = 0; i < 50_000; i++) deep = [deep]
    assert.strictEqual(Text.json(deep).length, 100_001)
  })
})
