/**
 * Property tests over the parsers that read what servers and authorization servers send: the frame decoder, the
 * SSE parser, the JSON Schema validator, the skills frontmatter reader and the WWW-Authenticate parser. For any
 * input: no exception (no defect), and bounded time per input. Inputs mix random text with the shapes that broke
 * parsers before (deep nesting, long runs of one character, control characters).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import * as Pagination from "../src/internal/client/pagination.js"
import * as codec from "../src/internal/codec.js"
import * as Frontmatter from "../src/internal/skillsFrontmatter.js"
import * as Sse from "../src/internal/sse.js"
import * as WwwAuthenticate from "../src/internal/wwwAuthenticate.js"
import * as JsonSchema from "../src/JsonSchema.js"
import { leastMillis } from "./utils/cost.js"

/** Milliseconds one input may take, generously above the slowest seen on an idle machine. */
const PER_INPUT = 500

/**
 * A frame as costly as the largest inputs below: a JSON-RPC message carrying a 4 MB string (the deep prefixes the
 * inputs hold are refused by the frame scan before JSON.parse, so a flat frame of their size is the costlier).
 * A loaded machine stretches every run, so an input over PER_INPUT is compared with it instead, measured at the same
 * moment: more than REFERENCE_RATIO times its cost is a blow-up whatever the load (utils/cost.ts).
 */
const referenceFrame = JSON.stringify({ jsonrpc: "2.0", method: "x", params: { text: "x".repeat(4_000_000) } })
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

describe("fuzz: a listing stays within its budget", () => {
  interface FuzzPage {
    readonly items: ReadonlyArray<{ readonly name: string }>
    readonly nextCursor: string | undefined
  }
  /** Pages of tools with names of random lengths; cursors from a small set (so they repeat) or unique. */
  const pages = FastCheck.array(
    FastCheck.record({
      sizes: FastCheck.array(FastCheck.integer({ min: 0, max: 400 }), { maxLength: 12 }),
      cursor: FastCheck.oneof(FastCheck.constantFrom("a", "b", "c", "d", ""), FastCheck.string({ maxLength: 8 }))
    }),
    { minLength: 1, maxLength: 30 }
  ).map((specs) =>
    specs.map(({ cursor, sizes }, index): FuzzPage => ({
      items: sizes.map((size) => ({ name: "x".repeat(size) })),
      // the last page ends the listing
      nextCursor: index === specs.length - 1 ? undefined : cursor
    }))
  )
  const budget = FastCheck.record({
    maxPages: FastCheck.integer({ min: 1, max: 40 }),
    maxItems: FastCheck.integer({ min: 1, max: 200 }),
    maxBytes: FastCheck.integer({ min: 1, max: 40_000 })
  })
  /** What the budget charges for a page: its items as JSON (the names need no escape) and its cursor. */
  const charge = (page: FuzzPage) => JSON.stringify(page.items).length + (page.nextCursor?.length ?? 0)
  const sum = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0)

  it("the listing returns every page within budget, or fails with the budget it would pass, never fetching more", () => {
    FastCheck.assert(
      FastCheck.property(pages, budget, (served, limits) => {
        const pagination = Pagination.make(limits, {})
        let fetched = 0
        const fetchPage = () => Effect.sync(() => served[Math.min(fetched++, served.length - 1)]!)
        const result = Effect.runSync(Effect.result(
          pagination.collect((refused) => pagination.paginate("tools/list", fetchPage, refused), "tools/list")
        ))
        const seen = served.slice(0, fetched)
        assert.isAtMost(fetched, limits.maxPages)
        if (Result.isSuccess(result)) {
          assert.strictEqual(fetched, served.length)
          assert.deepStrictEqual(result.success, served.flatMap((page) => page.items))
          assert.isAtMost(result.success.length, limits.maxItems)
          assert.isAtMost(sum(served.map(charge)), limits.maxBytes)
          const cursors = served.flatMap((page) => page.nextCursor === undefined ? [] : [page.nextCursor])
          assert.strictEqual(new Set(cursors).size, cursors.length)
          return
        }
        const error = result.failure
        assert.strictEqual(error._tag, "ProtocolError")
        if (error._tag !== "ProtocolError") return
        const last = seen[seen.length - 1]!
        const before = seen.slice(0, -1)
        switch (error.reason) {
          case "ListingBudgetExceeded": {
            const limit = { maxPages: limits.maxPages, maxListItems: limits.maxItems, maxListBytes: limits.maxBytes }
            assert.strictEqual(error.limit, limit[error.budget!])
            if (error.budget === "maxListItems") {
              assert.isAbove(sum(seen.map((page) => page.items.length)), limits.maxItems)
            }
            if (error.budget === "maxListBytes") assert.isAbove(sum(seen.map(charge)), limits.maxBytes)
            if (error.budget === "maxPages") assert.strictEqual(fetched, limits.maxPages)
            break
          }
          case "RepeatedCursor":
            assert.include(before.map((page) => page.nextCursor), last.nextCursor)
            break
          default:
            assert.fail(`unexpected reason ${error.reason}`)
        }
      }),
      runs
    )
  })

  it("the measure is the JSON length of values needing no escape, a lower bound of any, and stops past its limit", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.jsonValue(), FastCheck.integer({ min: 0, max: 2_000 }), (value, limit) => {
        const whole = Pagination.measure(value, Infinity)
        const text = JSON.stringify(value)
        assert.isAtMost(whole, text.length)
        // (JSON.stringify writes a backslash for every escape)
        if (!text.includes("\\")) assert.strictEqual(whole, text.length)
        const cut = Pagination.measure(value, limit)
        assert.strictEqual(cut > limit, whole > limit)
        if (whole <= limit) assert.strictEqual(cut, whole)
      }),
      runs
    )
  })
})

/** A string JSON would have to escape or a scan could mistake for structure: brackets, quotes, backslashes. */
const trickyString = FastCheck.array(
  FastCheck.oneof(
    FastCheck.constantFrom("[", "]", "{", "}", ",", ":", "\"", "\\", "\\\"", "\\\\", "\\u005b", "\n", "\u0000", "é", "😀"),
    FastCheck.string({ maxLength: 5 })
  ),
  { maxLength: 8 }
).map((pieces) => pieces.join(""))

/** JSON values nested up to 40 deep: arrays, objects (tricky keys), strings with brackets and escapes. */
const { value: jsonTree } = FastCheck.letrec<{ value: unknown }>((tie) => ({
  value: FastCheck.oneof(
    { depthSize: "small", maxDepth: 40 },
    trickyString,
    FastCheck.integer(),
    FastCheck.constantFrom(null, true, false, 1.5e300),
    FastCheck.array(tie("value"), { maxLength: 4 }),
    FastCheck.dictionary(trickyString, tie("value"), { maxKeys: 3 })
  )
}))

/** The depth and the count of values a scan must find, computed from what JSON.parse built, without recursion. */
const parsedShape = (root: unknown) => {
  let depth = 0
  let values = 0
  const stack: Array<readonly [unknown, number]> = [[root, 0]]
  while (stack.length > 0) {
    const [value, level] = stack.pop()!
    if (typeof value !== "object" || value === null) continue
    const children = Array.isArray(value) ? value : Object.values(value)
    depth = Math.max(depth, level + 1)
    // the container itself, and one comma between each two of its elements or members
    values += 1 + Math.max(children.length - 1, 0)
    for (const child of children) stack.push([child, level + 1])
  }
  return { depth, values }
}

describe("fuzz: the frame scan agrees with JSON.parse", () => {
  it("its verdict is the one the depth and values of the parsed value give, whatever the whitespace", () => {
    FastCheck.assert(
      FastCheck.property(
        jsonTree,
        FastCheck.constantFrom(undefined, 0, 1, "\t", " \r\n"),
        FastCheck.nat(45),
        FastCheck.nat(200),
        (value, space, maxDepth, maxValues) => {
          const text = JSON.stringify(value, null, space)
          const actual = parsedShape(JSON.parse(text))
          const refusal = codec.scanFrame(text, { maxDepth, maxValues })
          const tooDeep = actual.depth > maxDepth
          const tooMany = actual.values > maxValues
          assert.strictEqual(refusal !== undefined, tooDeep || tooMany, text)
          if (tooDeep && !tooMany) assert.strictEqual(refusal?.limit, "maxFrameDepth", text)
          if (tooMany && !tooDeep) assert.strictEqual(refusal?.limit, "maxFrameValues", text)
          // at the limits found, the frame passes
          assert.isUndefined(codec.scanFrame(text, { maxDepth: actual.depth, maxValues: actual.values }), text)
        }
      ),
      { numRuns: 1000 }
    )
  })

  it("never throws on any text, and refuses what is deeper than the limit", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.oneof(hostileText, deepJson, FastCheck.string({ unit: "binary", maxLength: 200 })),
        FastCheck.nat(100),
        (text, maxDepth) => {
          const refusal = bounded(() => codec.scanFrame(text, { maxDepth, maxValues: 1_000 }))
          if (refusal !== undefined) assert.isAtMost(refusal.at, text.length - 1)
          // (the deepest texts are JSON.parse's to build, not this test's)
          if (text.length > 10_000) return
          let parsed: unknown
          try {
            parsed = JSON.parse(text)
          } catch {
            return
          }
          const actual = parsedShape(parsed)
          if (actual.depth > maxDepth) assert.isDefined(refusal, text.slice(0, 200))
        }
      ),
      runs
    )
  })
})
