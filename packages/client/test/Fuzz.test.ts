/**
 * Property tests over the parsers that read what servers and authorization servers send: the frame decoder, the
 * SSE parser, the JSON Schema validator, the skills frontmatter reader and the WWW-Authenticate parser. For any
 * input: no exception (no defect), and bounded time per input. Inputs mix random text with the shapes that broke
 * parsers before (deep nesting, long runs of one character, control characters).
 */
import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as codec from "../src/internal/codec.js"
import * as Frontmatter from "../src/internal/skillsFrontmatter.js"
import * as Sse from "../src/internal/sse.js"
import * as WwwAuthenticate from "../src/internal/wwwAuthenticate.js"
import * as JsonSchema from "../src/JsonSchema.js"
import { leastMillis } from "./utils/cost.js"

/** Milliseconds one input may take, generously above the slowest seen on an idle machine. */
const PER_INPUT = 500

/**
 * The costliest shape the inputs below take at their largest: a JSON-RPC prefix nested 100,000 deep, never closed.
 * A loaded machine stretches every run, so an input over PER_INPUT is compared with it instead, measured at the same
 * moment: more than REFERENCE_RATIO times its cost is a blow-up whatever the load (utils/cost.ts).
 */
const referenceFrame = "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":".repeat(100_000) + "1"
const reference = () => codec.decodeFrame(referenceFrame)
const REFERENCE_RATIO = 5
let limit: number | undefined
const measureLimit = () => (limit = Math.max(PER_INPUT, REFERENCE_RATIO * leastMillis(reference, 3)))

const bounded = <A>(f: () => A): A => {
  const start = performance.now()
  const result = f()
  const millis = performance.now() - start
  if (millis > PER_INPUT && millis > (limit ?? measureLimit())) {
    // before failing: the input's least of three more runs, against the reference measured again now
    const least = leastMillis(f, 3)
    if (least > measureLimit()) throw new Error(`took ${least.toFixed(0)} ms, over ${limit!.toFixed(0)} ms`)
  }
  return result
}

const runs = { numRuns: 200 }

/** Text built from pieces that stress parsers: brackets, quotes, separators, runs, controls. */
const hostileText = FastCheck.array(
  FastCheck.oneof(
    FastCheck.string({ maxLength: 20 }),
    FastCheck.constantFrom("[", "]", "{", "}", "\"", "'", ":", ",", "\\", "\n", "\r", "\t", " ", "#", "-", "|", ">", "=",
      "\u0000", "\u001b[31m", "\u009b", "\ufeff", "data:", "event:", "id:", "retry:", "Bearer", "realm=", "__proto__"),
    FastCheck.tuple(FastCheck.constantFrom("[", "{\"a\":", " ", "a", "- ", "  "), FastCheck.integer({ min: 1, max: 3000 }))
      .map(([piece, times]) => piece.repeat(times))
  ),
  { maxLength: 30 }
).map((pieces) => pieces.join(""))

/** Deeply nested JSON text, well-formed or cut short. */
const deepJson = FastCheck.tuple(
  FastCheck.constantFrom("[", "{\"a\":", "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":"),
  FastCheck.integer({ min: 1, max: 100_000 }),
  FastCheck.boolean()
).map(([open, depth, closed]) => {
  const close = open === "[" ? "]" : "}"
  return open.repeat(depth) + "1" + (closed ? close.repeat(depth) : "")
})

describe("fuzz: parsers of hostile input never throw and finish in bounded time", () => {
  it("codec.decodeFrame", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.oneof(hostileText, deepJson, FastCheck.json()), (text) => {
        const decoded = bounded(() => codec.decodeFrame(text))
        assert.isArray(decoded.messages)
        for (const line of decoded.invalid) assert.isAtMost(line.length, 300)
      }),
      runs
    )
  })

  it("SSE parser, in chunks of any size", () => {
    FastCheck.assert(
      FastCheck.property(hostileText, FastCheck.integer({ min: 1, max: 64 }), (text, size) => {
        const bytes = new TextEncoder().encode(text)
        const parser = Sse.makeParser({ maxEventBytes: 4096 })
        bounded(() => {
          for (let i = 0; i < bytes.length; i += size) {
            const result = parser.push(bytes.subarray(i, i + size))
            if (result.tooLarge !== undefined) break
          }
        })
      }),
      runs
    )
  })

  it("JSON Schema: random schemas (patterns included) against random values", () => {
    const pattern = FastCheck.oneof(
      FastCheck.constantFrom("^(a+)+$", "(a|aa)*b", "^(\\w+\\s?)*$", "[", "a(?=b)", "(a)\\1", "^\\p{L}+$", ".*.*.*x"),
      FastCheck.string({ maxLength: 12 })
    )
    const schema = FastCheck.letrec<{ schema: unknown }>((tie) => ({
      schema: FastCheck.oneof(
        { depthSize: "small", maxDepth: 4 },
        FastCheck.boolean(),
        FastCheck.record({ type: FastCheck.constantFrom("string", "object", "array", "number") }),
        pattern.map((p) => ({ pattern: p })),
        FastCheck.dictionary(pattern, tie("schema"), { maxKeys: 2 }).map((map) => ({ patternProperties: map })),
        FastCheck.array(tie("schema"), { maxLength: 3 }).map((all) => ({ anyOf: all })),
        tie("schema").map((items) => ({ items })),
        FastCheck.json().map((value) => ({ const: value, $ref: "#" }))
      )
    })).schema
    const value = FastCheck.oneof(
      FastCheck.jsonValue(),
      FastCheck.integer({ min: 1, max: 5000 }).map((n) => "a".repeat(n) + "!"),
      FastCheck.integer({ min: 1, max: 5000 }).map((n) => {
        let deep: unknown = "a"
        for (let i = 0; i < n; i++) deep = [deep]
        return deep
      })
    )
    FastCheck.assert(
      FastCheck.property(schema, value, (s, v) => {
        bounded(() => JsonSchema.validate(s, v))
      }),
      runs
    )
  })

  it("skills frontmatter", () => {
    FastCheck.assert(
      FastCheck.property(hostileText, (text) => {
        bounded(() => Frontmatter.parse(text))
        bounded(() => Frontmatter.split(`---\n${text}\n---\nbody`))
      }),
      runs
    )
  })

  it("WWW-Authenticate", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(hostileText, { maxLength: 3 }), (values) => {
        const challenges = bounded(() => WwwAuthenticate.parseAll(values))
        assert.isArray(challenges)
      }),
      runs
    )
  })
})
