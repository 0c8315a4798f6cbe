/**
 * The command-line grammar: what each command line parses to, the usage error that names what was wrong, and the
 * help text (plain when not on a terminal, whatever the environment).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as ChildProcess from "node:child_process"
import * as Cli from "../src/cli.js"
import * as Grammar from "../src/grammar.js"
import { bin, node } from "./utils/cli.js"

const parse = (line: ReadonlyArray<string>) => Grammar.parse(line, Cli.commands, Cli.serverOptions)

const usage = (line: ReadonlyArray<string>): string => {
  const result = parse(line)
  if (Result.isSuccess(result)) return assert.fail(`${line.join(" ")} parsed`)
  return result.failure.message
}

const run = (line: ReadonlyArray<string>) => {
  const result = parse(line)
  if (Result.isFailure(result)) return assert.fail(result.failure.message)
  if (result.success._tag !== "Run") return assert.fail(`${line.join(" ")} is ${result.success._tag}`)
  return result.success.parsed
}

describe("grammar", () => {
  it("server options stand before or after the command; command options after it", () => {
    const parsed = run(["--stdio", "npx x", "tools", "call", "echo", "{}", "--arg", "a=1", "--arg=b=2", "--json"])
    assert.deepStrictEqual(parsed.command.path, ["tools", "call"])
    assert.deepStrictEqual(parsed.arguments, ["echo", "{}"])
    assert.deepStrictEqual(parsed.options.get("stdio"), ["npx x"])
    assert.deepStrictEqual(parsed.options.get("arg"), ["a=1", "b=2"])
    assert.deepStrictEqual(parsed.options.get("json"), ["true"])
    // after `--`, everything is an argument
    assert.deepStrictEqual(run(["resources", "read", "--", "--not-an-option"]).arguments, ["--not-an-option"])
  })

  it("a command's own option shadows the server option of the same name", () => {
    const parsed = run(["demo-server", "--stdio", "--era", "legacy"])
    assert.deepStrictEqual(parsed.options.get("stdio"), ["true"])
    assert.deepStrictEqual(parsed.options.get("era"), ["legacy"])
  })

  it("every usage error names what was wrong", () => {
    assert.include(usage(["--loud", "tools", "list"]), "unknown option --loud")
    assert.include(usage(["tools", "lst"]), "unknown command \"lst\" for conduit tools (one of: list, call, describe)")
    assert.include(usage(["--stdio"]), "--stdio needs a value")
    assert.include(usage(["--stdio", "--url", "x", "probe"]), "--stdio needs a value")
    assert.include(usage(["--era", "bogus", "probe"]), "--era must be one of auto, legacy, modern; got \"bogus\"")
    assert.include(usage(["tools"]), "conduit tools needs a command: list, call, describe")
    assert.include(usage(["tools", "call"]), "needs <name>")
    assert.include(usage(["tools", "call", "echo", "{}", "extra"]), "unexpected argument \"extra\"")
    assert.include(usage(["login", "--device=yes"]), "--device takes no value")
    assert.include(usage(["probe", "--url", "a", "--url", "b"]), "--url was given twice")
    assert.include(usage(["demo-server", "--url", "x"]), "unknown option --url for conduit demo-server")
    assert.include(usage(["tools", "list", "--arg", "a=1"]), "unknown option --arg for conduit tools list")
    assert.include(usage([]), "give a command")
  })

  it("--help anywhere asks for the help of the command path read so far", () => {
    assert.deepStrictEqual(parse(["tools", "--help"]), Result.succeed({ _tag: "Help", path: ["tools"] }))
    assert.deepStrictEqual(parse(["tools", "call", "-h"]), Result.succeed({ _tag: "Help", path: ["tools", "call"] }))
    assert.deepStrictEqual(parse(["--version"]), Result.succeed({ _tag: "Version" }))
  })

  it("help describes every option and command once, within the width", () => {
    const text = Cli.helpText([])
    for (const option of Cli.serverOptions) assert.include(text, `--${option.name}`)
    for (const command of Cli.commands) assert.include(text, command.path.join(" "))
    assert.notInclude(text, "A user-defined piece of text")
    // the server options are listed once, not on every command
    assert.strictEqual(text.split("--protocol-version").length - 1, 1)
    assert.isTrue(text.split("\n").every((line) => line.length <= 100), text)
    const call = Cli.helpText(["tools", "call"])
    assert.include(call, "Usage: conduit [server options] tools call <name> [<json-arguments>] [options]")
    assert.include(call, "--arg key=value")
    assert.include(call, "(repeatable)")
  })

  it("the binary's help has no escape sequences under a pipe, NO_COLOR or not", () => {
    for (const env of [{}, { NO_COLOR: "1" }]) {
      const { NO_COLOR: _, ...inherited } = process.env
      const result = ChildProcess.spawnSync(node, [bin, "--help"], { env: { ...inherited, ...env }, encoding: "utf8" })
      assert.strictEqual(result.status, 0, result.stderr)
      assert.include(result.stdout, "Usage: conduit")
      assert.notInclude(result.stdout, "\u001b")
    }
  })

  it("usage errors exit 2 with one line on stderr, or one JSON object on stdout under --json", () => {
    const plain = ChildProcess.spawnSync(node, [bin, "tools", "lst"], { encoding: "utf8" })
    assert.strictEqual(plain.status, 2)
    assert.strictEqual(plain.stdout, "")
    assert.match(plain.stderr, /^conduit: unknown command "lst" for conduit tools \(one of: list, call, describe\)/)
    const json = ChildProcess.spawnSync(node, [bin, "--json", "--era", "bogus", "probe"], { encoding: "utf8" })
    assert.strictEqual(json.status, 2)
    assert.strictEqual(json.stderr, "")
    assert.deepStrictEqual(JSON.parse(json.stdout), {
      error: {
        tag: "UsageError",
        message: "--era must be one of auto, legacy, modern; got \"bogus\" (conduit --help shows the usage)",
        exitCode: 2
      }
    })
  })
})
