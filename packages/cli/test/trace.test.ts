/**
 * `--trace` (every JSON-RPC message on stderr, secrets redacted) and `--verbose` showing what a stdio server writes
 * to its stderr, escaped.
 */
import { assert, describe, it as plainIt, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Trace from "../src/trace.js"
import * as Cli from "./utils/cli.js"

describe("trace redaction", () => {
  plainIt("redacts the values of secret-looking keys at any depth, keeps MCP's own tokens and the key order", () => {
    const redacted = Trace.redact({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "login",
        arguments: { user: "ada", password: "hunter2", nested: [{ apiKey: "k-123", Authorization: "Bearer x" }] },
        _meta: { progressToken: "p-1" },
        maxTokens: 100,
        long: "x".repeat(1500)
      }
    })
    assert.deepStrictEqual(redacted, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "login",
        arguments: { user: "ada", password: "[redacted]", nested: [{ apiKey: "[redacted]", Authorization: "[redacted]" }] },
        _meta: { progressToken: "p-1" },
        maxTokens: 100,
        long: `${"x".repeat(1000)}… (500 more characters)`
      }
    })
    assert.deepStrictEqual(Object.keys(redacted as object), ["jsonrpc", "id", "method", "params"])
  })

  plainIt("a value nested thousands deep is cut, without a stack overflow", () => {
    let deep: unknown = "bottom"
    for (let i = 0; i < 20_000; i++) deep = { a: deep }
    const text = JSON.stringify(Trace.redact(deep))
    assert.include(text, "[too deep]")
  })
})

layer(Cli.layer, { excludeTestServices: true })("--trace and --verbose", (it) => {
  it.effect("--trace prints each message sent and received on stderr; stdout keeps only the result", () =>
    Effect.gen(function*() {
      const [demo, stdio] = yield* Cli.runAll([
        ["--trace", "tools", "call", "echo", "--arg", "text=hi"],
        ["--trace", "--stdio", Cli.demoServerCommand("legacy"), "tools", "call", "echo", "--arg", "text=hi"]
      ])
      for (const result of [demo, stdio]) {
        assert.strictEqual(result.code, 0, result.stderr)
        assert.strictEqual(result.stdout, "hi\n")
        assert.match(
          result.stderr,
          /\[trace\] → \{"jsonrpc":"2\.0","id":\d+,"method":"tools\/call","params":\{"name":"echo","arguments":\{"text":"hi"\}/
        )
        assert.match(result.stderr, /\[trace\] ← \{"jsonrpc":"2\.0","id":\d+,"result":\{"content":\[\{"type":"text","text":"hi"\}\]/)
      }
      assert.match(stdio.stderr, /\[trace\] → \{"jsonrpc":"2\.0","id":\d+,"method":"initialize"/)
      assert.include(stdio.stderr, "[trace] → {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")
    }))

  it.effect("--verbose shows a stdio server's stderr, escaped; without it the lines are not shown", () =>
    Effect.gen(function*() {
      const server = `${Cli.node} -e "process.stderr.write('\\x1b[31mred alert\\n'); setTimeout(() => process.exit(1), 300)"`
      const [verbose, quiet] = yield* Cli.runAll([
        ["-v", "--era", "legacy", "--stdio", server, "tools", "list"],
        ["--era", "legacy", "--stdio", server, "tools", "list"]
      ])
      assert.strictEqual(verbose.code, 3, verbose.stderr)
      assert.include(verbose.stderr, "[server stderr] \\x1b[31mred alert")
      assert.notInclude(verbose.stderr, "\u001b")
      assert.notInclude(quiet.stderr, "[server stderr]")
      const demo = yield* Cli.run(["-v", "--stdio", Cli.demoServerCommand(), "tools", "list"])
      assert.strictEqual(demo.code, 0, demo.stderr)
      assert.match(demo.stderr, /\[server stderr\] .*serving both era\(s\) over stdio/)
    }))
})
