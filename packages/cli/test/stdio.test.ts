/**
 * `conduit` end to end over stdio: the demo server as a child process (`conduit demo-server --stdio`, both eras),
 * `@modelcontextprotocol/server-everything`, a `--config` file, connection failures, and Ctrl-C during a slow
 * call (the server sees the cancellation).
 */
import { assert, layer } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as ShellWords from "../src/shellWords.js"
import * as Cli from "./utils/cli.js"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** How long `effect` took on the real clock (these tests run on it), in milliseconds, and its result. */
const millisOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.timed(effect), ([duration, result]) => [Duration.toMillis(duration), result] as const)

const temporaryDirectory = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-cli-test-"))

layer(Cli.layer, { excludeTestServices: true })("conduit over stdio", (it) => {
  it.effect("the demo server as a child process, in each era", () =>
    Effect.gen(function*() {
      const [probe, legacyProbe, call] = yield* Cli.runAll([
        ["--stdio", Cli.demoServerCommand(), "probe", "--json"],
        ["--stdio", Cli.demoServerCommand("legacy"), "probe", "--json"],
        ["tools", "call", "echo", "{\"text\":\"over stdio\"}", "--stdio", Cli.demoServerCommand("modern")]
      ])
      assert.strictEqual(probe.code, 0, probe.stderr)
      const modern = Cli.parseJson(probe)
      assert.isTrue(isRecord(modern) && modern.era === "modern" && modern.transport === "stdio")
      assert.strictEqual(legacyProbe.code, 0, legacyProbe.stderr)
      const legacy = Cli.parseJson(legacyProbe)
      assert.isTrue(isRecord(legacy) && legacy.era === "legacy" && legacy.transport === "stdio")
      assert.deepStrictEqual(call, { code: 0, stdout: "over stdio\n", stderr: "" })
    }))

  it.effect("server-everything: probe, a tool call, and an elicitation declined when not interactive", () =>
    Effect.gen(function*() {
      const [probe, echo, elicit] = yield* Cli.runAll([
        ["--stdio", Cli.everythingCommand, "probe", "--json"],
        ["--stdio", Cli.everythingCommand, "tools", "call", "echo", "--arg", "message=hello", "--json"],
        ["--stdio", Cli.everythingCommand, "tools", "call", "trigger-elicitation-request"]
      ])
      assert.strictEqual(probe.code, 0, probe.stderr)
      const session = Cli.parseJson(probe)
      assert.isTrue(isRecord(session))
      if (isRecord(session)) {
        assert.strictEqual(session.era, "legacy")
        assert.strictEqual(session.transport, "stdio")
        assert.isTrue(isRecord(session.serverInfo) && session.serverInfo.name === "mcp-servers/everything")
      }
      assert.strictEqual(echo.code, 0, echo.stderr)
      assert.deepStrictEqual(Cli.parseJson(echo), { content: [{ type: "text", text: "Echo: hello" }] })
      assert.strictEqual(elicit.code, 0, elicit.stderr)
      assert.include(elicit.stderr, "declined because this run is not interactive")
      assert.include(elicit.stdout, "decline")
    }))

  it.effect("--config picks a server of an mcpServers file", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const file = Path.join(directory, "mcp.json")
      const [command, ...args] = Result.getOrElse(
        ShellWords.split(Cli.demoServerCommand("legacy")),
        (): ReadonlyArray<string> => []
      )
      Fs.writeFileSync(file, JSON.stringify({ mcpServers: { demo: { command, args, env: { DEMO: "1" } } } }))
      const [probe, missing, noServer] = yield* Cli.runAll([
        ["--config", file, "--server", "demo", "probe", "--json"],
        ["--config", file, "--server", "other", "probe"],
        ["--config", Path.join(directory, "absent.json"), "--server", "demo", "probe"]
      ])
      Fs.rmSync(directory, { recursive: true, force: true })
      assert.strictEqual(probe.code, 0, probe.stderr)
      const session = Cli.parseJson(probe)
      assert.isTrue(isRecord(session) && session.era === "legacy" && session.transport === "stdio")
      assert.strictEqual(missing.code, 2)
      assert.include(missing.stderr, "it has: demo")
      assert.strictEqual(noServer.code, 2)
      // one sentence, without the platform's error text
      assert.strictEqual(noServer.stderr.trim(), `conduit: cannot read config file ${Path.join(directory, "absent.json")}: no such file`)
    }))

  it.effect("exit code 3 when the server cannot start or exits", () =>
    Effect.gen(function*() {
      const [notFound, exits, unbalanced] = yield* Cli.runAll([
        ["--stdio", "conduit-test-no-such-command --flag", "probe"],
        ["--stdio", `${Cli.node} -e "process.exit(7)"`, "probe"],
        ["--stdio", "node -e 'oops", "probe"]
      ])
      assert.strictEqual(notFound.code, 3)
      // one sentence, and no log lines before it
      assert.strictEqual(notFound.stderr, "conduit: cannot start \"conduit-test-no-such-command\": command not found\n")
      assert.strictEqual(exits.code, 3)
      assert.include(exits.stderr, "code 7")
      assert.strictEqual(unbalanced.code, 2)
      assert.include(unbalanced.stderr, "UnterminatedSingleQuote")
    }))

  it.effect("auto era: a server that fails on its own is started once; one that quits on the probe is restarted", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const fixture = Path.join(import.meta.dirname, "fixtures", "exiting-server.mjs")
      const server = (mode: string, record: string) =>
        `${ShellWords.quote(Cli.node)} ${ShellWords.quote(fixture)} ${mode} ${ShellWords.quote(record)}`
      const crashStarts = Path.join(directory, "crash")
      const quitStarts = Path.join(directory, "quit")
      const [crash, quit] = yield* Cli.runAll([
        ["--stdio", server("crash", crashStarts), "tools", "list"],
        ["--stdio", server("quit-on-probe", quitStarts), "tools", "list"]
      ])
      const starts = (file: string) => Fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "").length
      // the exit code and the server's own words, once; no second start to be told the same
      assert.strictEqual(crash.code, 3)
      assert.strictEqual(starts(crashStarts), 1)
      assert.include(crash.stderr, "code 3")
      assert.strictEqual(crash.stderr.split("fatal: API_TOKEN is not set").length, 2, crash.stderr)
      // a legacy server that quits on anything before initialize still works, as it needs the restart
      assert.strictEqual(quit.code, 0, quit.stderr)
      assert.include(quit.stdout, "only")
      assert.strictEqual(starts(quitStarts), 2)
      Fs.rmSync(directory, { recursive: true, force: true })
    }))

  it.effect("Ctrl-C during a slow call cancels it on the server and exits 130", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const log = Path.join(directory, "server.log")
      // the shell keeps the server's stderr (where it logs cancellations) in a file the test can read
      const server = `sh -c ${ShellWords.quote(`exec ${Cli.demoServerCommand()} 2>>${ShellWords.quote(log)}`)}`
      // the baseline: a whole quick run, which starts both processes and closes them the same way
      const [baseline] = yield* millisOf(Cli.run(["--stdio", server, "tools", "list"]))
      const running = yield* Cli.start([
        "--stdio",
        server,
        "tools",
        "call",
        "slow",
        "{\"steps\":600,\"delayMs\":100}"
      ])
      yield* running.awaitStderr("progress 1/600")
      const [exitedAfter, result] = yield* millisOf(Effect.andThen(running.signal("SIGINT"), running.result))
      assert.strictEqual(result.code, 130, result.stderr)
      assert.strictEqual(result.stdout, "")
      assert.include(result.stderr, "conduit: cancelled\n")
      // prompt: the server gets a short grace, not seconds (the library's 2 s graces would take longer than a whole
      // quick run; compared with that run, measured here on the same machine, never with milliseconds)
      assert.isBelow(exitedAfter, baseline, `exited ${exitedAfter} ms after Ctrl-C; a quick run took ${baseline} ms`)
      // the server got notifications/cancelled: without it the handler would only stop after stdin closed and
      // the drain timeout passed, by which time the client has already killed the process group
      const serverLog = Fs.readFileSync(log, "utf8")
      Fs.rmSync(directory, { recursive: true, force: true })
      assert.include(serverLog, "(tools/call slow) cancelled by the client")
    }))

  it.effect("SIGTERM during a slow call cancels it too, and exits 143 (not Ctrl-C's 130)", () =>
    Effect.gen(function*() {
      const running = yield* Cli.start([
        "--stdio",
        Cli.demoServerCommand(),
        "tools",
        "call",
        "slow",
        "{\"steps\":600,\"delayMs\":100}"
      ])
      yield* running.awaitStderr("progress 1/600")
      const result = yield* Effect.andThen(running.signal("SIGTERM"), running.result)
      assert.strictEqual(result.code, 143, result.stderr)
      assert.strictEqual(result.stdout, "")
      assert.include(result.stderr, "conduit: terminated\n")
    }))

  it.effect("--timeout is a deadline: a server that never answers ends the run soon after it", () =>
    Effect.gen(function*() {
      // the baseline: a run against a server that exits at once (the same two node processes started and ended)
      const [baseline] = yield* millisOf(Cli.run(["--stdio", `${Cli.node} -e 0`, "tools", "list"]))
      const [took, result] = yield* millisOf(
        Cli.run(["--stdio", `${Cli.node} -e "setTimeout(() => {}, 60000)"`, "--timeout", "1s", "tools", "list"])
      )
      assert.strictEqual(result.code, 124, result.stderr)
      assert.include(result.stderr, "timed out")
      // past the 1 s deadline, the child stopped within two short graces (150 ms each): about the baseline again,
      // where the two 2-second graces of before took 4 s more (compared with the baseline, never with milliseconds)
      assert.isBelow(took - 1_000, 2 * baseline + 300, `exited after ${took} ms; the baseline took ${baseline} ms`)
    }))
})
