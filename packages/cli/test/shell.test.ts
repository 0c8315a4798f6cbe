/**
 * `conduit shell` and `conduit run`: one connection across commands. In a real terminal (tmux): a background
 * `listen` printing between prompts, Tab completion, Ctrl-C cancelling the call and not the shell, Ctrl-D leaving,
 * the history kept for the next session. With piped stdin and a script file: a stateful scenario against
 * server-everything, and a script stopping at its first failure.
 */
import { assert, describe, it as plainIt, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Completion from "../src/shellCompletion.js"
import * as Shell from "../src/shell.js"
import * as Cli from "./utils/cli.js"
import * as Tmux from "./utils/tmux.js"

const temporaryDirectory = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-shell-test-"))

describe("shell completion", () => {
  const commands = Shell.shellCommands([
    { path: ["tools", "call"], description: "", arguments: [{ name: "name", description: "" }], options: [
      { name: "arg", value: "key=value", repeatable: true, description: "" }
    ], run: () => Effect.void },
    { path: ["tools", "list"], description: "", run: () => Effect.void },
    { path: ["resources", "read"], description: "", arguments: [{ name: "uri", description: "" }], run: () => Effect.void },
    { path: ["servers"], description: "", run: () => Effect.void }
  ])
  const catalog: Completion.Catalog = {
    tools: [{ name: "echo", arguments: ["text"] }, { name: "slow", arguments: ["steps", "delayMs"] }],
    prompts: [],
    resources: ["demo://about"]
  }
  const complete = (line: string) => Completion.complete(line, commands, catalog)

  plainIt("asks the server for a prompt argument's value or a template's variable, and keeps only safe values", () => {
    const withPrompts: Completion.Catalog = {
      ...catalog,
      prompts: [{ name: "greet", arguments: ["name", "style"] }],
      templates: ["demo://notes/{topic}", "demo://{a}/{b}"]
    }
    const promptCommands = Shell.shellCommands([
      { path: ["prompts", "get"], description: "", arguments: [{ name: "name", description: "" }], options: [
        { name: "arg", value: "key=value", repeatable: true, description: "" }
      ], run: () => Effect.void },
      { path: ["resources", "read"], description: "", arguments: [{ name: "uri", description: "" }], run: () => Effect.void }
    ])
    const question = Completion.serverQuestion("prompts get greet --arg style=formal --arg name=A", promptCommands, withPrompts)
    assert.deepStrictEqual(question?.ref, { type: "ref/prompt", name: "greet" })
    assert.deepStrictEqual(question?.argument, { name: "name", value: "A" })
    assert.deepStrictEqual(question?.context, { arguments: { style: "formal" } })
    assert.strictEqual(question?.word, "name=A")
    // an argument the prompt does not have, a tool (no completion for tools), a name not typed yet: nothing asked
    assert.isUndefined(Completion.serverQuestion("prompts get greet --arg nope=", promptCommands, withPrompts))
    assert.isUndefined(Completion.serverQuestion("prompts get greet --arg na", promptCommands, withPrompts))
    const template = Completion.serverQuestion("resources read demo://notes/ef", promptCommands, withPrompts)
    assert.deepStrictEqual(template?.ref, { type: "ref/resource", uri: "demo://notes/{topic}" })
    assert.deepStrictEqual(template?.argument, { name: "topic", value: "ef" })
    if (question === undefined || template === undefined) return
    assert.deepStrictEqual(
      Completion.suggested(question, ["Ada", "Ada", "A b", "\u001b[31mred", "a\u202eb", "c\u009bd", "x".repeat(201), 7, ""]),
      ["name=Ada ", "name=A\\ b "]
    )
    // invisible characters: tag characters, a zero-width space, a soft hyphen, a line separator, and even a joiner
    // an emoji sequence needs (the candidate's backslashes would part it from its pictographs)
    const invisible = ["safe\u{e0072}\u{e006d}", "ec\u200bho", "a\u00adb", "b\u2028c", "\u{1f469}\u200d\u{1f4bb}"]
    assert.deepStrictEqual(Completion.suggested(question, [...invisible, "Ada"]), ["name=Ada "])
    assert.deepStrictEqual(Completion.suggested(template, ["effect"]), ["demo://notes/effect "])
    const many = Array.from({ length: 500 }, (_, i) => `v${i}`)
    assert.strictEqual(Completion.suggested(question, many).length, Completion.maxSuggestions)
  })

  plainIt("completes command words, names and argument names", () => {
    assert.deepStrictEqual(complete("to"), [["tools "], "to"])
    assert.deepStrictEqual(complete("tools "), [["call ", "list "], ""])
    assert.deepStrictEqual(complete("tools call s"), [["slow "], "s"])
    assert.deepStrictEqual(complete("tools call slow --arg d"), [["delayMs="], "d"])
    assert.deepStrictEqual(complete("tools call slow --a"), [["--arg "], "--a"])
    assert.deepStrictEqual(complete("resources read demo"), [["demo://about "], "demo"])
    assert.deepStrictEqual(complete("conduit tools call e"), [["echo "], "e"])
    // commands that start another connection are not offered in the shell
    assert.deepStrictEqual(complete("ser"), [[], "ser"])
    assert.deepStrictEqual(complete("tools call echo x"), [[], "x"])
  })
})

layer(Cli.layer, { excludeTestServices: true })("conduit shell", (it) => {
  it.effect("in a terminal: background listen, Tab, Ctrl-C cancels the call only, Ctrl-D leaves, history kept", () =>
    Effect.gen(function*() {
      const state = temporaryDirectory()
      const env = { XDG_STATE_HOME: state }
      const terminal = yield* Tmux.open([Cli.node, Cli.bin, "shell"], { env })
      yield* terminal.waitFor(/Connected to the embedded demo server[^\n]*\nconduit> $/m)
      yield* terminal.sendKeys("listen --uri demo://about", "Enter")
      yield* terminal.waitFor(/unlisten stops\nconduit> $/m)
      // Tab completes the tool name (the list is fetched in the background when the shell starts)
      yield* terminal.sendKeys("tools call tou", "Tab")
      yield* terminal.waitFor(/conduit> tools call touch $/m)
      yield* terminal.sendKeys("Enter")
      const notified = yield* terminal.waitFor(/announced an update of demo:\/\/about\nconduit> $/m)
      assert.match(notified, /notifications\/resources\/updated \{"uri":"demo:\/\/about"/)
      // the argument name, then a slow call cancelled with Ctrl-C: the shell stays
      yield* terminal.sendKeys("tools call slow --arg ste", "Tab")
      yield* terminal.waitFor(/conduit> tools call slow --arg steps=$/m)
      yield* terminal.sendKeys("100", "Enter")
      yield* terminal.waitFor(/step \d+ of 100/)
      yield* terminal.sendKeys("C-c")
      yield* terminal.waitFor(/conduit: cancelled\nconduit> $/m)
      // argument values the server suggests (completion/complete): a prompt's argument, a template's variable
      yield* terminal.sendKeys("prompts get greet --arg name=Gr", "Tab")
      yield* terminal.waitFor(/conduit> prompts get greet --arg name=Grace $/m)
      yield* terminal.sendKeys("C-u", "resources read demo://notes/ef", "Tab")
      yield* terminal.waitFor(/conduit> resources read demo:\/\/notes\/effect $/m)
      yield* terminal.sendKeys("C-u")
      yield* terminal.sendKeys("tools call echo --arg text=still-here", "Enter")
      yield* terminal.waitFor(/^still-here\nconduit> $/m)
      yield* terminal.sendKeys("C-d")
      const closed = yield* terminal.waitFor(/\[exit \d+\]/)
      assert.include(closed, "[exit 0]")
      assert.notInclude(closed, "conduit> [exit")

      const history = Fs.readFileSync(Path.join(state, "conduit", "history"), "utf8")
      assert.include(history, "tools call echo --arg text=still-here\n")
      assert.strictEqual(Fs.statSync(Path.join(state, "conduit", "history")).mode & 0o777, 0o600)
      // the next session recalls it with the Up arrow
      const again = yield* Tmux.open([Cli.node, Cli.bin, "shell"], { env })
      yield* again.waitFor(/conduit> $/m)
      yield* again.sendKeys("Up", "Enter")
      yield* again.waitFor(/^still-here\nconduit> $/m)
    }))

  it.effect("an unknown command in the shell points to the shell's own help, not to conduit --help", () =>
    Effect.gen(function*() {
      // (commands on stdin stop at the first failure: one run each)
      const [top, sub] = yield* Effect.forEach(
        ["bogus", "tools lst"],
        (line) => Cli.run(["--stdio", Cli.demoServerCommand("legacy"), "shell"], { stdin: `${line}\n` }),
        { concurrency: 2 }
      )
      assert.match(top.stderr, /unknown command "bogus" \(one of: [a-z, -]+\) \(help shows the commands\)/)
      assert.include(
        sub.stderr,
        "unknown command \"lst\" for tools (one of: list, call, describe) (tools --help shows the usage)"
      )
      for (const result of [top, sub]) assert.notInclude(result.stderr, "conduit --help")
    }))

  it.effect("commands on stdin: a resource a tool created is there for the next command (server-everything)", () =>
    Effect.gen(function*() {
      const result = yield* Cli.run(["--stdio", Cli.everythingCommand, "shell"], {
        stdin: [
          "# one session, several commands",
          "tools call gzip-file-as-resource --arg name=notes.txt.gz --arg data=data:text/plain,hello --arg outputType=resourceLink",
          "resources list --json",
          ""
        ].join("\n")
      })
      assert.strictEqual(result.code, 0, result.stderr)
      assert.include(result.stdout, "demo://resource/session/notes.txt.gz")
      const listed = JSON.parse(result.stdout.slice(result.stdout.indexOf("{")))
      assert.isTrue(
        listed.resources.some((resource: { readonly uri: string }) => resource.uri === "demo://resource/session/notes.txt.gz")
      )
    }))

  it.effect("conduit run <file>: a background listen sees what the next command causes; the first failure stops it", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const script = Path.join(directory, "scenario.txt")
      Fs.writeFileSync(
        script,
        [
          "listen --uri demo://about",
          "tools call touch",
          "sleep 200ms",
          "tools call add --arg a=1 --arg b=x",
          "tools call echo --arg text=never"
        ].join("\n")
      )
      const [ran, missing] = yield* Cli.runAll([["run", script], ["run", Path.join(directory, "absent.txt")]])
      assert.strictEqual(ran.code, 2, ran.stderr)
      assert.match(ran.stdout, /notifications\/resources\/updated \{"uri":"demo:\/\/about"/)
      assert.include(ran.stdout, "announced an update of demo://about")
      assert.notInclude(ran.stdout, "never")
      assert.include(ran.stderr, `${script}:4: stopped at: tools call add --arg a=1 --arg b=x`)
      assert.include(ran.stderr, "--arg b: expected a number")
      assert.strictEqual(missing.code, 2)
      assert.include(missing.stderr, "cannot read the script")
    }))

  it.effect("conduit run: --timeout on one command is its deadline, longer or shorter than the session's", () =>
    Effect.gen(function*() {
      const stdin = [
        // no progress before 800 ms: past the session's 300 ms, within the command's 3 s
        "tools call slow --arg steps=1 --arg delayMs=800 --timeout 3s",
        // progress every 100 ms would restart a request timeout: the command's deadline still ends it
        "tools call slow --arg steps=50 --arg delayMs=100 --timeout 500ms",
        "tools call echo --arg text=never",
        ""
      ].join("\n")
      const [own, session] = yield* Effect.all([
        Cli.run(["--timeout", "300ms", "run", "-"], { stdin }),
        Cli.run(["--timeout", "300ms", "run", "-"], { stdin: "tools call slow --arg steps=1 --arg delayMs=800\n" })
      ], { concurrency: 2 })
      assert.strictEqual(own.code, 124, own.stderr)
      assert.include(own.stdout, "done after 1 steps")
      assert.notInclude(own.stdout, "never")
      assert.include(own.stderr, "stdin:2: stopped at")
      assert.include(own.stderr, "conduit: timed out (--timeout 500ms)")
      assert.notInclude(own.stderr, "step 10 of 50")
      // without its own --timeout a command keeps the session's
      assert.strictEqual(session.code, 124)
      assert.include(session.stderr, "timed out after 300 ms")
    }))

  it.effect("conduit run: --json on a command, and its failure as one JSON object", () =>
    Effect.gen(function*() {
      const result = yield* Cli.run(["run", "-"], { stdin: "tools call add --arg a=1 --arg b=2 --json\ntools call nope --json\n" })
      assert.strictEqual(result.code, 2, result.stderr)
      const [first, second] = result.stdout.split(/\n(?=\{)/).map((part) => JSON.parse(part))
      assert.deepStrictEqual(first.structuredContent, { sum: 3 })
      assert.strictEqual(second.error.tag, "UsageError")
      assert.strictEqual(second.error.exitCode, 2)
    }))
})
