import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Frontmatter from "../src/internal/skillsFrontmatter.js"

const parsed = (text: string) => {
  const result = Frontmatter.parse(text)
  if (Either.isLeft(result)) assert.fail(`expected a mapping, got: ${result.left}`)
  return result.right
}

const refused = (text: string) => {
  const result = Frontmatter.parse(text)
  assert.isTrue(Either.isLeft(result), `expected ${JSON.stringify(text)} to be refused`)
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
})
