import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Frontmatter from "../src/internal/skillsFrontmatter.js"
import { costRatio } from "./utils/cost.js"

const parsed = (text: string) => {
  const result = Frontmatter.parse(text)
  if (Result.isFailure(result)) assert.fail(`expected a mapping, got: ${result.failure}`)
  return result.success
}

const refused = (text: string) => {
  const result = Frontmatter.parse(text)
  assert.isTrue(Result.isFailure(result), `expected ${JSON.stringify(text)} to be refused`)
}

describe("skills frontmatter", () => {
  it("splits a SKILL.md into frontmatter and body", () => {
    const split = Frontmatter.split("---\nname: pdf\ndescription: Read PDFs\n---\n\n# Body\n")
    assert.deepStrictEqual(split, { frontmatter: "name: pdf\ndescription: Read PDFs", body: "\n# Body\n" })
    assert.isUndefined(Frontmatter.split("# no frontmatter\n"))
    assert.isUndefined(Frontmatter.split("---\nname: unterminated\n"))
    assert.deepStrictEqual(Frontmatter.split("\ufeff---\r\nname: x\r\n---\r\nbody"), {
      frontmatter: "name: x",
      body: "body"
    })
  })

  it("reads the scalars skill frontmatter uses", () => {
    assert.deepStrictEqual(
      parsed([
        "name: pdf-processing",
        "description: Extract, fill, and assemble PDF documents # a comment",
        "quoted: \"a: b # not a comment\"",
        "single: 'it''s'",
        "escaped: \"tab\\there \\u00e9\"",
        "count: 3",
        "ratio: 0.5",
        "flag: true",
        "nothing: null",
        "tilde: ~",
        "hash: a#b"
      ].join("\n")),
      {
        name: "pdf-processing",
        description: "Extract, fill, and assemble PDF documents",
        quoted: "a: b # not a comment",
        single: "it's",
        escaped: "tab\there é",
        count: 3,
        ratio: 0.5,
        flag: true,
        nothing: null,
        tilde: null,
        hash: "a#b"
      }
    )
  })

  it("reads nested mappings, sequences, flow collections and block scalars", () => {
    assert.deepStrictEqual(
      parsed([
        "metadata:",
        "  author: someone",
        "  version: \"1.0\"",
        "allowed-tools: [Bash, Read]",
        "tags:",
        "- one",
        "- two",
        "people:",
        "  - name: a",
        "    role: x",
        "  - name: b",
        "inline: {a: 1, b: two}",
        "literal: |",
        "  line one",
        "",
        "  line two",
        "folded: >-",
        "  folded",
        "  text",
        "long: a plain scalar",
        "  continued here"
      ].join("\n")),
      {
        metadata: { author: "someone", version: "1.0" },
        "allowed-tools": ["Bash", "Read"],
        tags: ["one", "two"],
        people: [{ name: "a", role: "x" }, { name: "b" }],
        inline: { a: 1, b: "two" },
        literal: "line one\n\nline two\n",
        folded: "folded text",
        long: "a plain scalar continued here"
      }
    )
  })

  it("refuses what it cannot read instead of guessing", () => {
    refused("name: a\nname: b")
    refused("anchor: &a value")
    refused("alias: *a")
    refused("\tname: tab")
    refused("- a list\n- not a mapping")
    refused("key: \"unterminated")
    refused("key: value\n   badly: indented")
  })

  it("compares values deeply, ignoring key order", () => {
    assert.isTrue(Frontmatter.equal({ a: [1, { b: "c" }], d: null }, { d: null, a: [1, { b: "c" }] }))
    assert.isFalse(Frontmatter.equal({ a: 1 }, { a: "1" }))
    assert.isFalse(Frontmatter.equal({ a: 1 }, { a: 1, b: undefined }))
    assert.isFalse(Frontmatter.equal([1, 2], [2, 1]))
  })
  it("mappings have no prototype, and keys that reach one are refused", () => {
    const value = parsed("name: x\nmetadata:\n  a: 1")
    assert.isNull(Object.getPrototypeOf(value))
    assert.isNull(Object.getPrototypeOf(value.metadata))
    for (const key of ["__proto__", "constructor", "prototype"]) {
      refused(`${key}:\n  allowed-tools: Bash(*)`)
      refused(`name: x\nmetadata: {${key}: 1}`)
      refused(`list:\n  - ${key}: 1`)
    }
  })

  it("nesting is bounded: too deep is an error, never a stack overflow", () => {
    const flow = (depth: number) => `deep: ${"[".repeat(depth)}${"]".repeat(depth)}`
    parsed(flow(Frontmatter.MAX_DEPTH - 1))
    refused(flow(Frontmatter.MAX_DEPTH + 1))
    refused(flow(20_000))
    const indented = (depth: number) =>
      Array.from({ length: depth }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n") + " x"
    parsed(indented(Frontmatter.MAX_DEPTH - 1))
    refused(indented(3000))
    const dashes = Array.from({ length: 3000 }, (_, i) => `${" ".repeat(2 * i)}- `).join("\n") + "x"
    refused(`list:\n${dashes}`)
  })

  it("no step is quadratic: long lines and many lines are read in linear time", () => {
    const read = (size: number) => () => {
      refused(`a${" ".repeat(150 * size)}x`)
      assert.strictEqual(Object.keys(parsed(`long: |\n${"  line\n".repeat(300 * size)}`)).length, 1)
      assert.strictEqual((parsed(`list:\n${"  - k: v\n".repeat(50 * size)}`).list as ReadonlyArray<unknown>).length, 50 * size)
    }
    // ten times the text costs about ten times as much (quadratic: a hundred); compared with the smaller reading
    // measured here, not with milliseconds (utils/cost.ts)
    assert.isBelow(costRatio(read(1000), read(100), 3), 40)
  })
})
