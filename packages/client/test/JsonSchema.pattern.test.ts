/**
 * `pattern` and `patternProperties` come from servers, so they run on a linear-time engine: a pattern built to
 * make a backtracking engine take exponential time is matched at once, matching is charged to the step budget,
 * what an automaton cannot match is refused, and everything else means what the native engine means.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import * as Pattern from "../src/internal/jsonSchemaPattern.js"
import * as JsonSchema from "../src/JsonSchema.js"
import { RE2JS } from "re2js"
import { costRatio } from "./utils/cost.js"


const reasonOf = (verdict: Result.Result<void, JsonSchema.JsonSchemaMismatch | JsonSchema.JsonSchemaError>) =>
  Result.isSuccess(verdict) ? "valid" : verdict.failure._tag === "JsonSchemaMismatch" ? "mismatch" : verdict.failure.reason

describe("JsonSchema patterns", () => {
  // (costs are compared with a baseline measured in the same test, never with milliseconds: utils/cost.ts)
  it("^(a+)+$ against 29 a's and a ! finishes at once (a backtracking engine needs about 2^29 steps)", () => {
    const hostile = () => JsonSchema.validate({ pattern: "^(a+)+$" }, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaa!")
    assert.strictEqual(reasonOf(hostile()), "mismatch")
    // the baseline: 3000 a's, which every engine matches in one pass
    const matching = () => JsonSchema.validate({ pattern: "^(a+)+$" }, "a".repeat(3000))
    assert.strictEqual(reasonOf(matching()), "valid")
    // a linear engine: about 1; a backtracking one: about 10^5 (2^29 steps against 3000)
    assert.isBelow(costRatio(hostile, matching), 10)
    const keys = (key: string) => () =>
      JsonSchema.validate({ patternProperties: { "^(a|aa)+$": false } }, { [key]: 1, aaaa: 2 })
    assert.strictEqual(reasonOf(keys("a".repeat(5000) + "!")()), "mismatch")
    // the same key without the !: one pass for every engine
    assert.isBelow(costRatio(keys("a".repeat(5000) + "!"), keys("a".repeat(5000))), 10)
  })

  it("long inputs stay linear", () => {
    const words = (count: number) => () => JsonSchema.validate({ pattern: "^(\\w+\\s?)*$" }, "ab ".repeat(count) + "!")
    assert.strictEqual(reasonOf(words(30_000)()), "mismatch")
    // ten times the input: about ten times the cost (a quadratic engine: a hundred)
    assert.isBelow(costRatio(words(30_000), words(3_000)), 40)
  })

  it("matching is charged to the step budget: a big program on a long input ends with BudgetExceeded", () => {
    // about 8 s of automaton simulation on 100,000 characters; refused before it starts
    const schema = { pattern: "[\\s\\S]{0,1000}a[ab]{900}$" }
    const long = () => JsonSchema.validate(schema, "ab".repeat(50_000))
    const short = () => JsonSchema.validate(schema, "a" + "b".repeat(900))
    assert.strictEqual(reasonOf(long()), "BudgetExceeded")
    assert.strictEqual(reasonOf(short()), "valid")
    // refused for less than compiling the program and matching 901 characters costs (run, it would cost ~16 times)
    assert.isBelow(costRatio(long, short, 3), 1)
  })

  it("one pattern that would compile far past the budget is refused before it is compiled", () => {
    // 7 000 characters, a million units: about a second of compiling
    assert.strictEqual(reasonOf(JsonSchema.validate({ pattern: ".{1000}".repeat(1000) }, "x")), "BudgetExceeded")
    // one of the same kind within the budget compiles and matches
    assert.strictEqual(reasonOf(JsonSchema.validate({ pattern: "^.{1000}$" }, "x".repeat(1000))), "valid")
    assert.strictEqual(reasonOf(JsonSchema.validate({ pattern: "^.{1000}$" }, "x".repeat(999))), "mismatch")
  })

  it("the size estimate is never below the size of the program RE2 compiles", () => {
    const sources = FastCheck.array(
      FastCheck.oneof(
        FastCheck.constantFrom("a", ".", "\\d", "\\p{L}", "[a-z]", "[^ab]", "\\x{263a}", "|", "^", "$"),
        FastCheck.tuple(
          FastCheck.constantFrom("(?:", "(", "(?P<n>"),
          FastCheck.constantFrom("ab", "[0-9]+", "x|y", ".{3}")
        ).map(([open, body]) => `${open}${body})`),
        FastCheck.tuple(
          FastCheck.nat(40),
          FastCheck.nat(40),
          FastCheck.constantFrom("*", "+", "?", "{n}", "{n,}", "{n,m}")
        ).map(([n, m, q]) => `(?:b[cd])${q.replace("n", String(n)).replace("m", String(n + m))}`)
      ),
      { minLength: 1, maxLength: 12 }
    )
    FastCheck.assert(
      FastCheck.property(sources, (parts) => {
        const source = parts.join("")
        const compiled = Result.try(() => RE2JS.compile(source))
        if (Result.isFailure(compiled)) return
        assert.isAtLeast(Pattern.estimateSize(source), compiled.success.programSize(), source)
      }),
      { numRuns: 300 }
    )
  })

  it("a schema whose patterns compile to too big a program is refused", () => {
    const properties = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`p${i}`, { pattern: `^(?:\\p{L}|\\d|_){1,1000}x${i}$` }])
    )
    const all = () => JsonSchema.validate({ properties }, {})
    assert.strictEqual(reasonOf(all()), "BudgetExceeded")
    // refused once the budget is spent: a few of the patterns compiled, not the hundred (the baseline compiles one)
    const one = () => JsonSchema.validate({ properties: { p0: properties.p0 } }, { p0: "abx0" })
    assert.strictEqual(reasonOf(one()), "valid")
    assert.isBelow(costRatio(all, one, 3), 20)
  })

  it("what an automaton cannot match is refused; what no engine accepts is invalid", () => {
    for (const pattern of ["a(?=b)", "a(?!b)", "(?<=a)b", "(?<!a)b", "(a)\\1", "(?<x>a)\\k<x>"]) {
      const verdict = JsonSchema.validate({ pattern }, "ab")
      assert.strictEqual(reasonOf(verdict), "UnsupportedKeyword", pattern)
      assert.include(Result.isFailure(verdict) ? verdict.failure.message : "", "bounded time")
    }
    for (const pattern of ["(", "[", "a**", "(?i)a"]) {
      assert.strictEqual(reasonOf(JsonSchema.validate({ pattern }, "a")), "InvalidSchema", pattern)
    }
  })

  it("ECMA-262 meanings are kept", () => {
    const cases: ReadonlyArray<readonly [string, string, boolean]> = [
      ["^.$", "😀", true],
      ["^.$", "\n", false],
      ["^.$", "\u2028", false],
      ["^\\s$", "\u00a0", true],
      ["^\\s$", "\ufeff", true],
      ["^\\S$", "\u3000", false],
      ["^[\\s]$", "\u2003", true],
      ["^\\p{Lu}", "Élan", true],
      ["^\\p{Letter}+$", "héllo", true],
      ["^\\p{Script=Greek}$", "α", true],
      ["^\\p{gc=Nd}$", "٣", true],
      ["^\\P{L}$", "1", true],
      ["^\\u00e9$", "é", true],
      ["^\\u{1F600}$", "😀", true],
      ["^\\uD83D\\uDE00$", "😀", true],
      ["^\\x41\\cJ$", "A\n", true],
      ["^a\\-b$", "a-b", true],
      ["^[^]$", "\n", true],
      ["^[]$", "", false],
      ["^[\\b]$", "\b", true],
      ["\\bword\\b", "a word here", true],
      ["^(?<year>\\d{4})-\\d{2}$", "2024-05", true],
      ["^[\\w.-]+@[a-z]+\\.[a-z]{2,}$", "x.y-z@host.io", true],
      ["^[[]$", "[", true],
      ["^\\/\\$\\^$", "/$^", true],
      ["^a{2,3}$", "aaaa", false],
      ["x{", "x{", true],
      ["^\\d+(?:\\.\\d+)?$", "3.14", true]
    ]
    for (const [pattern, text, expected] of cases) {
      const compiled = Pattern.compile(pattern)
      assert.isTrue(Result.isSuccess(compiled), `${pattern}: ${JSON.stringify(Result.getFailure(compiled))}`)
      if (Result.isSuccess(compiled)) assert.strictEqual(compiled.success.test(text), expected, `${pattern} on ${text}`)
    }
  })

  // patterns a backtracking engine runs quickly on short inputs: the native engine is the oracle
  const atom = FastCheck.constantFrom(
    "a",
    "b",
    ".",
    "\\d",
    "\\w",
    "\\s",
    "\\S",
    "[ab]",
    "[^a]",
    "[a-c\\d]",
    "\\u0061",
    "\\x62",
    "é",
    "😀",
    "\\p{L}",
    "\\b",
    "-"
  )
  const piece = FastCheck.tuple(atom, FastCheck.constantFrom("", "*", "+", "?", "{1,2}", "*?")).map(([a, q]) =>
    a === "\\b" ? a : a + q
  )
  const sequence = FastCheck.array(piece, { minLength: 1, maxLength: 4 }).map((pieces) => pieces.join(""))
  const pattern = FastCheck.tuple(
    FastCheck.constantFrom("", "^"),
    FastCheck.array(sequence, { minLength: 1, maxLength: 3 }),
    FastCheck.boolean(),
    FastCheck.constantFrom("", "$")
  ).map(([start, alternatives, group, end]) =>
    `${start}${group ? `(?:${alternatives.join("|")})` : alternatives.join("|")}${end}`
  )
  const text = FastCheck.array(FastCheck.constantFrom("a", "b", "c", "1", " ", "\u00a0", "é", "😀", "\n", "-", "_"), {
    maxLength: 8
  }).map((chars) => chars.join(""))

  it("random patterns give the native engine's verdict", () => {
    FastCheck.assert(
      FastCheck.property(pattern, FastCheck.array(text, { minLength: 1, maxLength: 5 }), (source, texts) => {
        const compiled = Pattern.compile(source)
        if (Result.isFailure(compiled)) return false
        const native = new RegExp(source, "u")
        return texts.every((t) => compiled.success.test(t) === native.test(t))
      }),
      { numRuns: 300 }
    )
  })
})
