/**
 * `conduit` in a real terminal (tmux): the progress bar redrawn in place on stderr, an interactive form
 * elicitation filled in from the keyboard, and a URL elicitation refused at the consent question.
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ShellWords from "../src/shellWords.js"
import * as Cli from "./utils/cli.js"
import * as Tmux from "./utils/tmux.js"

const everything = Cli.everythingCommand

layer(Cli.layer, { excludeTestServices: true })("conduit in a terminal", (it) => {
  it.effect("a progress bar is drawn while the tool reports progress, then cleared", () =>
    Effect.gen(function*() {
      const terminal = yield* Tmux.open([Cli.node, Cli.bin, "tools", "call", "slow", "{\"steps\":40,\"delayMs\":100}"])
      const during = yield* terminal.waitFor(/\[#+-+\]\s+\d+% \d+\/40 step \d+ of 40/)
      // one bar line, redrawn in place: never two reports on screen at once
      assert.strictEqual(during.match(/ of 40/g)?.length, 1, during)
      const after = yield* terminal.waitFor(/\[exit \d+\]/)
      assert.include(after, "done after 40 steps\n[exit 0]")
      assert.notInclude(after, "of 40")
    }))

  it.effect("a form elicitation is asked field by field, defaults taken with Enter", () =>
    Effect.gen(function*() {
      const terminal = yield* Tmux.open([
        Cli.node,
        Cli.bin,
        "--stdio",
        everything,
        "tools",
        "call",
        "trigger-elicitation-request"
      ])
      yield* terminal.waitFor(/asks: Please provide inputs[\s\S]*Your full, legal name\n>/)
      // the name, then Enter for the 12 other fields (defaults or left out), then Enter to send
      yield* terminal.sendKeys("Ada Lovelace", "Enter")
      yield* terminal.waitFor(/Agree to the terms and conditions\n>/)
      for (let field = 0; field < 13; field++) yield* terminal.sendKeys("Enter")
      const screen = yield* terminal.waitFor(/\[exit \d+\]/)
      assert.include(screen, "> [42]")
      assert.include(screen, "1) Monica")
      assert.include(screen, "Send these answers? [Y/n]")
      assert.include(screen, "User provided the requested information")
      assert.include(screen, "- Name: Ada Lovelace")
      assert.include(screen, "\"titledSingleSelectEnum\": \"hero-1\"")
      assert.include(screen, "[exit 0]")
    }))

  it.effect("a URL elicitation shows the URL and its origin and opens nothing without consent", () =>
    Effect.gen(function*() {
      const terminal = yield* Tmux.open([
        Cli.node,
        Cli.bin,
        "--stdio",
        everything,
        "tools",
        "call",
        "trigger-url-elicitation",
        "--arg",
        "url=https://example.com/verify?step=1"
      ], {
        // were the browser started, this command would fail the test by printing its marker
        env: { BROWSER: `${Cli.node} -e ${ShellWords.quote("console.log('BROWSER-STARTED')")}` }
      })
      yield* terminal.waitFor(/Open this URL in your browser\? \[y\/N\]/)
      const question = yield* terminal.screen
      assert.include(question, "URL:    https://example.com/verify?step=1")
      assert.include(question, "origin: https://example.com")
      yield* terminal.sendKeys("n", "Enter")
      const screen = yield* terminal.waitFor(/\[exit \d+\]/)
      assert.include(screen, "declined")
      assert.notInclude(screen, "BROWSER-STARTED")
      assert.include(screen, "[exit 0]")
    }))
})
