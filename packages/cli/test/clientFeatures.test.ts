/**
 * Client features on a terminal: sampling answered by a person (declined when nobody is there), form answers
 * checked against their declared format before they are sent, tables wrapped at the terminal's width, and the
 * hint of a refused authorization naming the server's URL.
 */
import { assert, describe, it as plainIt, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { costRatio } from "../../client/test/utils/cost.js"
import * as Elicitation from "../src/elicitation.js"
import * as Cli from "./utils/cli.js"
import * as Tmux from "./utils/tmux.js"

const everything = Cli.everythingCommand

describe("form answers against the field's schema", () => {
  plainIt("format, pattern (linear time), enum and bounds are checked before the answer is taken", () => {
    const parse = (field: Record<string, unknown>, answer: string) => Elicitation.parseAnswer(field, answer, true)
    assert.deepStrictEqual(parse({ type: "string", format: "email" }, "not-an-email"), {
      _tag: "Retry",
      reason: "not a valid email"
    })
    assert.deepStrictEqual(parse({ type: "string", format: "email" }, "ada@example.com"), {
      _tag: "Value",
      value: "ada@example.com"
    })
    assert.strictEqual(parse({ type: "string", format: "date" }, "2026-13-40")._tag, "Retry")
    assert.strictEqual(parse({ type: "string", format: "date" }, "2026-12-03")._tag, "Value")
    assert.strictEqual(parse({ type: "string", format: "uri" }, "not a uri")._tag, "Retry")
    assert.strictEqual(parse({ type: "string", format: "uri" }, "https://example.com/x")._tag, "Value")
    assert.deepStrictEqual(parse({ type: "string", pattern: "^[a-z]+$" }, "abc1"), { _tag: "Retry", reason: "must match ^[a-z]+$" })
    assert.strictEqual(parse({ type: "string", pattern: "^[a-z]+$" }, "abc")._tag, "Value")
    // a pattern that backtracks exponentially on a RegExp engine answers at once: about the cost of 3000 a's, which
    // every engine matches in one pass (a backtracking one: 2^40 steps), compared with no milliseconds
    const hostile = () => parse({ type: "string", pattern: "^(a+)+$" }, `${"a".repeat(40)}b`)
    const matching = () => parse({ type: "string", pattern: "^(a+)+$" }, "a".repeat(3000))
    assert.strictEqual(hostile()._tag, "Retry")
    assert.strictEqual(matching()._tag, "Value")
    assert.isBelow(costRatio(hostile, matching), 10)
    assert.strictEqual(parse({ type: "number", minimum: 0, maximum: 1000 }, "1001")._tag, "Retry")
    assert.strictEqual(parse({ type: "string", enum: ["a", "b"] }, "c")._tag, "Retry")
    // a format the validator does not know is left to the server
    assert.strictEqual(parse({ type: "string", format: "x-custom" }, "anything")._tag, "Value")
  })
})

layer(Cli.layer, { excludeTestServices: true })("client features", (it) => {
  it.effect("sampling on a terminal: the request is shown and the typed reply is the answer", () =>
    Effect.gen(function*() {
      const terminal = yield* Tmux.open([
        Cli.node,
        Cli.bin,
        "--stdio",
        everything,
        "tools",
        "call",
        "trigger-sampling-request",
        "--arg",
        "prompt=What is MCP?"
      ])
      const asked = yield* terminal.waitFor(/reply> $/m)
      assert.include(asked, "The server asks for a completion (up to 100 tokens)")
      assert.include(asked, "system: You are a helpful test server.")
      assert.include(asked, "[user] Resource trigger-sampling-request context: What is MCP?")
      yield* terminal.sendKeys("A protocol for tools.", "Enter")
      const screen = yield* terminal.waitFor(/\[exit \d+\]/)
      assert.include(screen, "A protocol for tools.")
      assert.include(screen, "[exit 0]")
    }))

  it.effect("sampling is declined when nobody is at a terminal, and says so", () =>
    Effect.gen(function*() {
      const result = yield* Cli.run(["--stdio", everything, "tools", "call", "trigger-sampling-request", "--arg", "prompt=hi"])
      assert.notStrictEqual(result.code, 0)
      assert.include(result.stderr, "asked for a completion (sampling); declined because this run is not interactive")
    }))

  it.effect("a form answer that is not a valid email is asked again", () =>
    Effect.gen(function*() {
      const terminal = yield* Tmux.open([Cli.node, Cli.bin, "--stdio", everything, "tools", "call", "trigger-elicitation-request"])
      yield* terminal.waitFor(/Your full, legal name\n>/)
      yield* terminal.sendKeys("Ada Lovelace", "Enter")
      yield* terminal.waitFor(/Agree to the terms and conditions\n>/)
      yield* terminal.sendKeys("Enter")
      yield* terminal.waitFor(/String with default[\s\S]*> \[[^\n]*$/m)
      yield* terminal.sendKeys("Enter")
      yield* terminal.waitFor(/String with email format[^\n]*\n[\s\S]*> $/m)
      yield* terminal.sendKeys("not-an-email", "Enter")
      yield* terminal.waitFor(/not a valid email\n> $/m)
      yield* terminal.sendKeys("ada@example.com", "Enter")
      for (let field = 0; field < 10; field++) yield* terminal.sendKeys("Enter")
      const screen = yield* terminal.waitFor(/\[exit \d+\]/)
      assert.include(screen, "ada@example.com")
      assert.include(screen, "[exit 0]")
    }))

  it.effect("a table keeps every column and wraps the description at the terminal's width", () =>
    Effect.gen(function*() {
      const terminal = yield* Tmux.open([Cli.node, Cli.bin, "tools", "list"], { columns: 80 })
      const screen = yield* terminal.waitFor(/\[exit \d+\]/)
      const lines = screen.split("\n").filter((line) => line.trim() !== "")
      for (const line of lines) assert.isAtMost(line.length, 80, line)
      const text = lines.join(" ").replace(/\s+/g, " ")
      assert.include(text, "Works for a while, reporting progress at each step; interrupting the call cancels it.")
      assert.notInclude(screen, "…")
    }))
})
