/**
 * Arguments are checked before any call, the same way on every server: the embedded demo server and
 * server-everything over stdio give the same exit code (2) and a message naming the argument.
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Cli from "./utils/cli.js"

layer(Cli.layer, { excludeTestServices: true })("arguments checked before the call", (it) => {
  it.effect("an unknown tool, a wrong type and a missing argument exit 2 on two different servers", () =>
    Effect.gen(function*() {
      const everything = ["--stdio", Cli.everythingCommand]
      const results = yield* Cli.runAll([
        ["tools", "call", "no-such-tool"],
        [...everything, "tools", "call", "no-such-tool"],
        ["tools", "call", "add", "--arg", "a=abc", "--arg", "b=1"],
        [...everything, "tools", "call", "get-sum", "--arg", "a=abc", "--arg", "b=1"],
        ["tools", "call", "add", "--arg", "a=1"],
        [...everything, "tools", "call", "get-sum", "--arg", "a=1"],
        ["prompts", "get", "greet"],
        [...everything, "prompts", "get", "args-prompt"],
        [...everything, "tools", "call", "get-sum", "--arg", "a=2", "--arg", "b=3"]
      ])
      const [unknownDemo, unknownEverything, typeDemo, typeEverything] = results
      const [missingDemo, missingEverything, promptDemo, promptEverything, sum] = results.slice(4)
      for (const result of results.slice(0, 8)) assert.strictEqual(result.code, 2, result.stderr)
      assert.include(unknownDemo.stderr, "unknown tool \"no-such-tool\"")
      assert.include(unknownEverything.stderr, "unknown tool \"no-such-tool\"")
      assert.include(typeDemo.stderr, "--arg a: expected a number, got \"abc\"")
      assert.include(typeEverything.stderr, "--arg a: expected a number, got \"abc\"")
      assert.include(missingDemo.stderr, "missing b")
      assert.include(missingEverything.stderr, "missing b")
      assert.include(promptDemo.stderr, "missing name")
      assert.include(promptEverything.stderr, "missing city")
      assert.strictEqual(sum.code, 0, sum.stderr)
      assert.include(sum.stdout, "5")
    }))
})
