/**
 * The pure pieces of `conduit`: shell-like splitting, durations, headers, argument coercion, completion
 * references, form answers, the progress bar and the exit code of each error.
 */
import * as McpError from "@conduit-mcp/client/McpError"
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as Arguments from "../src/arguments.js"
import * as Cli from "../src/cli.js"
import * as Describe from "../src/describe.js"
import * as Connection from "../src/connection.js"
import * as Elicitation from "../src/elicitation.js"
import * as Errors from "../src/errors.js"
import * as Progress from "../src/progress.js"
import * as ShellWords from "../src/shellWords.js"

describe("ShellWords", () => {
  it("splits like a POSIX shell", () => {
    assert.deepStrictEqual(ShellWords.split("npx -y  some-server"), Result.succeed(["npx", "-y", "some-server"]))
    assert.deepStrictEqual(
      ShellWords.split(`node -e 'console.log("a b")' "x \\"y\\" \\$HOME" a\\ b ''`),
      Result.succeed(["node", "-e", `console.log("a b")`, `x "y" $HOME`, "a b", ""])
    )
    assert.deepStrictEqual(ShellWords.split("a'b'\"c\"d $HOME | x"), Result.succeed(["abcd", "$HOME", "|", "x"]))
    assert.deepStrictEqual(ShellWords.split("  "), Result.succeed([]))
    assert.deepStrictEqual(ShellWords.split("'open"), Result.fail("UnterminatedSingleQuote"))
    assert.deepStrictEqual(ShellWords.split("\"open"), Result.fail("UnterminatedDoubleQuote"))
    assert.deepStrictEqual(ShellWords.split("end\\"), Result.fail("TrailingBackslash"))
  })

  it("quote round-trips through split", () => {
    const words = ["plain", "with space", "it's", "", "$HOME", "a\"b", "tab\there"]
    assert.deepStrictEqual(ShellWords.split(words.map(ShellWords.quote).join(" ")), Result.succeed(words))
  })
})

describe("options", () => {
  it("durations", () => {
    const millis = (text: string) => Result.map(Connection.parseDuration(text), Duration.toMillis)
    assert.deepStrictEqual(millis("500ms"), Result.succeed(500))
    assert.deepStrictEqual(millis("30s"), Result.succeed(30_000))
    assert.deepStrictEqual(millis("2m"), Result.succeed(120_000))
    assert.deepStrictEqual(millis("1.5"), Result.succeed(1_500))
    assert.deepStrictEqual(millis("10 seconds"), Result.succeed(10_000))
    assert.isTrue(Result.isFailure(millis("0")))
    assert.isTrue(Result.isFailure(millis("soon")))
  })

  it("headers", () => {
    assert.deepStrictEqual(
      Connection.parseHeaders(["X-Api-Key: abc:def", "Accept-Language:fr "]),
      Result.succeed({ "X-Api-Key": "abc:def", "Accept-Language": "fr" })
    )
    assert.isTrue(Result.isFailure(Connection.parseHeaders(["no colon"])))
    assert.isTrue(Result.isFailure(Connection.parseHeaders(["Bad Name: x"])))
  })
})

describe("arguments", () => {
  it("--arg values follow the type the tool declares", () => {
    const read = (raw: string, property: unknown) => Arguments.coerceArgument(raw, property)
    assert.deepStrictEqual(read("007", { type: "string" }), Option.some("007"))
    assert.deepStrictEqual(read("42", { type: "integer" }), Option.some(42))
    assert.deepStrictEqual(read("4.5", { type: "integer" }), Option.none())
    assert.deepStrictEqual(read("abc", { type: "number" }), Option.none())
    assert.deepStrictEqual(read("true", { type: "boolean" }), Option.some(true))
    assert.deepStrictEqual(read("yes", { type: "boolean" }), Option.some(true))
    assert.deepStrictEqual(read("maybe", { type: "boolean" }), Option.none())
    assert.deepStrictEqual(read("[1,2]", { type: "array" }), Option.some([1, 2]))
    assert.deepStrictEqual(read("a, b", { type: "array", items: { type: "string" } }), Option.some(["a", "b"]))
    assert.deepStrictEqual(read("1,2", { type: "array", items: { type: "number" } }), Option.some([1, 2]))
    assert.deepStrictEqual(read("1,x", { type: "array", items: { type: "number" } }), Option.none())
    assert.deepStrictEqual(read("{\"a\":1}", undefined), Option.some({ a: 1 }))
    assert.deepStrictEqual(read("hello", undefined), Option.some("hello"))
    assert.deepStrictEqual(read("12", { type: ["string", "null"] }), Option.some("12"))
    assert.deepStrictEqual(read("null", { type: ["string", "null"] }), Option.some(null))
    assert.deepStrictEqual(read("null", { type: "string" }), Option.some("null"))
  })

  it("tool arguments are checked against the input schema before any call", () => {
    const tool = {
      name: "t",
      inputSchema: {
        type: "object",
        properties: {
          a: { type: "number" },
          tags: { type: "array", items: { type: "string" } },
          flag: { type: "boolean" },
          address: { type: "object", properties: { city: { type: "string" } } },
          mode: { type: "string", enum: ["fast", "slow"] }
        },
        required: ["a"]
      }
    } as const
    const build = (json: string | undefined, args: ReadonlyArray<string>) =>
      Arguments.toolArguments(tool, Option.fromNullishOr(json), args)
    assert.deepStrictEqual(
      build(undefined, ["a=2", "tags=x,y", "flag=no", "address.city=Oslo"]),
      Result.succeed({ a: 2, tags: ["x", "y"], flag: false, address: { city: "Oslo" } })
    )
    const message = (result: Result.Result<unknown, { readonly message: string }>) =>
      Result.isFailure(result) ? result.failure.message : "parsed"
    assert.include(message(build(undefined, ["a=abc"])), "--arg a: expected a number, got \"abc\"")
    assert.include(message(build(undefined, ["a=1", "flag=maybe"])), "--arg flag: expected true or false")
    assert.include(message(build(undefined, ["tags=x"])), "missing a (a number)")
    assert.include(message(build(undefined, ["a=1", "colour=red"])), "unknown argument \"colour\"")
    assert.include(message(build("{\"a\":1,\"mode\":\"medium\"}", [])), "mode:")
    assert.include(message(build("{\"a\":\"1\"}", [])), "a:")
  })

  it("prompt arguments are checked against the declared ones", () => {
    const prompt = { name: "p", arguments: [{ name: "topic", required: true }, { name: "tone" }] }
    assert.deepStrictEqual(Arguments.promptArguments(prompt, Option.none(), ["topic=x"]), Result.succeed({ topic: "x" }))
    const left = Arguments.promptArguments(prompt, Option.none(), ["tone=dry"])
    assert.isTrue(Result.isFailure(left) && left.failure.message.includes("missing topic"))
    const unknown = Arguments.promptArguments(prompt, Option.none(), ["topic=x", "mood=y"])
    assert.isTrue(Result.isFailure(unknown) && unknown.failure.message.includes("unknown argument \"mood\""))
  })

  it("key=value pairs and JSON objects", () => {
    assert.deepStrictEqual(Arguments.parseKeyValues(["a=1", "b=x=y", "c="]), Result.succeed([["a", "1"], ["b", "x=y"], ["c", ""]]))
    assert.isTrue(Result.isFailure(Arguments.parseKeyValues(["=1"])))
    assert.isTrue(Result.isFailure(Arguments.parseKeyValues(["flag"])))
    assert.deepStrictEqual(Arguments.parseJsonArguments(Option.some("{\"a\":[1]}")), Result.succeed({ a: [1] }))
    assert.deepStrictEqual(Arguments.parseJsonArguments(Option.none()), Result.succeed({}))
    assert.isTrue(Result.isFailure(Arguments.parseJsonArguments(Option.some("[1]"))))
    assert.isTrue(Result.isFailure(Arguments.parseJsonArguments(Option.some("{oops"))))
  })

  it("completion references", () => {
    assert.deepStrictEqual(Cli.parseReference("greet"), { type: "ref/prompt", name: "greet" })
    assert.deepStrictEqual(Cli.parseReference("prompt:greet"), { type: "ref/prompt", name: "greet" })
    assert.deepStrictEqual(Cli.parseReference("ref/prompt:greet"), { type: "ref/prompt", name: "greet" })
    assert.deepStrictEqual(Cli.parseReference("resource:demo://notes/{topic}"), {
      type: "ref/resource",
      uri: "demo://notes/{topic}"
    })
    assert.deepStrictEqual(Cli.parseReference("file:///tmp/{name}"), { type: "ref/resource", uri: "file:///tmp/{name}" })
  })
})

describe("form answers", () => {
  it("reads each field type, retries on a bad answer, and leaves defaults to the client", () => {
    const parse = (field: Record<string, unknown>, answer: string, required = false) =>
      Elicitation.parseAnswer(field, answer, required)
    assert.deepStrictEqual(parse({ type: "string" }, " Ada "), { _tag: "Value", value: "Ada" })
    assert.deepStrictEqual(parse({ type: "string" }, ""), { _tag: "Skip" })
    assert.strictEqual(parse({ type: "string" }, "", true)._tag, "Retry")
    assert.deepStrictEqual(parse({ type: "string", default: "x" }, "", true), { _tag: "Skip" })
    assert.strictEqual(parse({ type: "string", minLength: 3 }, "ab")._tag, "Retry")
    assert.deepStrictEqual(parse({ type: "boolean" }, "Y"), { _tag: "Value", value: true })
    assert.deepStrictEqual(parse({ type: "boolean" }, "no"), { _tag: "Value", value: false })
    assert.strictEqual(parse({ type: "boolean" }, "maybe")._tag, "Retry")
    assert.deepStrictEqual(parse({ type: "integer", minimum: 1, maximum: 100 }, "42"), { _tag: "Value", value: 42 })
    assert.strictEqual(parse({ type: "integer" }, "4.2")._tag, "Retry")
    assert.strictEqual(parse({ type: "number", maximum: 10 }, "11")._tag, "Retry")
    const pets = { type: "string", enum: ["pet-1", "pet-2"], enumNames: ["Cats", "Dogs"] }
    assert.deepStrictEqual(parse(pets, "2"), { _tag: "Value", value: "pet-2" })
    assert.deepStrictEqual(parse(pets, "pet-1"), { _tag: "Value", value: "pet-1" })
    assert.strictEqual(parse(pets, "3")._tag, "Retry")
    const heroes = { type: "string", oneOf: [{ const: "hero-1", title: "Superman" }, { const: "hero-2" }] }
    assert.deepStrictEqual(Elicitation.choices(heroes), [
      { value: "hero-1", label: "Superman (hero-1)" },
      { value: "hero-2", label: "hero-2" }
    ])
    const fish = { type: "array", maxItems: 2, items: { anyOf: [{ const: "tuna" }, { const: "trout" }, { const: "cod" }] } }
    assert.deepStrictEqual(parse(fish, "1, trout"), { _tag: "Value", value: ["tuna", "trout"] })
    assert.strictEqual(parse(fish, "1,2,3")._tag, "Retry")
    assert.strictEqual(parse(fish, "salmon")._tag, "Retry")
  })
})

describe("progress and exit codes", () => {
  it("the bar shows the share done, the count and the message, within the width", () => {
    assert.strictEqual(
      Progress.renderBar({ progressToken: 1, progress: 3, total: 4, message: "step 3" }, 80),
      `[${"#".repeat(23)}${"-".repeat(7)}]  75% 3/4 step 3`
    )
    assert.strictEqual(Progress.renderBar({ progressToken: 1, progress: 3, total: 4 }, 20).length, 19)
    assert.include(Progress.renderBar({ progressToken: 1, progress: 7 }, 80), "] 7")
    assert.strictEqual(Progress.renderLine({ progressToken: 1, progress: 1, total: 2, message: "half" }), "progress 1/2 half")
  })

  it("each error kind has its exit code", () => {
    const codes = [
      new Errors.ToolFailed({ tool: "t" }),
      new Errors.UsageError({ message: "m" }),
      new McpError.InvalidOption({ option: "o", detail: "d" }),
      new McpError.TransportError({ transport: "stdio", reason: "Exited" }),
      new McpError.SessionExpired({ sessionId: "s" }),
      new McpError.AuthError({ status: 401, challenges: [] }),
      new McpError.McpError({ code: -32602, message: "m" }),
      new McpError.ProtocolError({ reason: "Negotiation", detail: "d" }),
      new McpError.RequestTimeout({ method: "tools/call", timeoutMillis: 1 }),
      new Errors.TimedOut({ message: "m" })
    ].map(Errors.exitCodeOf)
    assert.deepStrictEqual(codes, [1, 2, 2, 3, 3, 4, 5, 5, 124, 124])
  })
})

describe("tools describe", () => {
  it("shows arguments with their facts, and the structured result", () => {
    const text = Describe.tool({
      name: "t",
      title: "T",
      description: "Does t.",
      annotations: { readOnlyHint: true },
      inputSchema: {
        type: "object",
        properties: { n: { type: "integer", minimum: 1, description: "How many" }, tags: { type: "array", items: { type: "string" } } },
        required: ["n"]
      },
      outputSchema: { type: "object", properties: { total: { type: "number" } } }
    })
    assert.include(text, "t — T")
    assert.include(text, "readOnlyHint: true")
    assert.include(text, "n (integer, required, min 1) — How many")
    assert.include(text, "tags (list of string, optional)")
    assert.include(text, "Structured result:\n  total (number, optional)")
  })

  it("a hostile schema (20,000 levels deep, 100,000 properties) gives bounded text and no stack overflow", () => {
    let deep: Record<string, unknown> = { type: "string" }
    for (let i = 0; i < 20_000; i++) deep = { type: "array", items: deep }
    let nested: Record<string, unknown> = { type: "object", properties: {} }
    for (let i = 0; i < 20_000; i++) nested = { type: "object", properties: { x: nested } }
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`p${i}`, { type: "string" }]))
    const text = Describe.tool({
      name: "hostile",
      inputSchema: { type: "object", properties: { deep, nested, ...wide } }
    })
    assert.isBelow(text.length, 20_000)
    assert.include(text, "…")
  })
})

