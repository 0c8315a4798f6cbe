/**
 * The YAML frontmatter of a `SKILL.md`: the block between a leading `---` line and the next `---` line, read
 * with the subset of YAML that skill frontmatter uses (block mappings and sequences, plain, quoted and block
 * scalars, flow sequences and mappings of scalars, comments). Anything outside that subset is an error, never a
 * guess: the caller refuses a skill whose frontmatter it cannot read.
 *
 * The text comes from a server, so the reader is bounded: collections nest at most {@link MAX_DEPTH} levels
 * (deeper is an error, not a stack overflow), no step is quadratic in a line's length or in the number of lines,
 * mappings are null-prototype objects, and the keys `__proto__`, `constructor` and `prototype` are refused.
 *
 * @internal
 */
import * as Result from "effect/Result"

/** @internal */
export type Yaml = null | boolean | number | string | ReadonlyArray<Yaml> | { readonly [key: string]: Yaml }

/**
 * How deeply collections may nest, block and flow levels together.
 *
 * @internal
 */
export const MAX_DEPTH = 64

/** Keys that would reach an object's prototype, or be mistaken for its machinery. */
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"])

const emptyMapping = (): Record<string, Yaml> => Object.create(null)

/** @internal */
export interface Split {
  /** The frontmatter text, without the `---` lines. */
  readonly frontmatter: string
  /** Everything after the closing `---` line. */
  readonly body: string
}

/**
 * Splits a `SKILL.md` into frontmatter and body; `undefined` when it does not start with a frontmatter block.
 *
 * @internal
 */
export const split = (text: string): Split | undefined => {
  const source = text.startsWith("\ufeff") ? text.slice(1) : text
  const lines = source.split(/\r?\n/)
  if (lines[0]?.trimEnd() !== "---") return undefined
  for (let i = 1; i < lines.length; i++) {
    if (lines[i].trimEnd() === "---") {
      return { frontmatter: lines.slice(1, i).join("\n"), body: lines.slice(i + 1).join("\n") }
    }
  }
  return undefined
}

interface Line {
  readonly indent: number
  readonly text: string
  readonly number: number
}

class Failure {
  constructor(readonly message: string) {}
}

/** A parse step: a value, or the reason the text is outside the supported subset. */
type Step<A> = A | Failure

const isFailure = (value: unknown): value is Failure => value instanceof Failure

const stripComment = (text: string): string => {
  // a comment starts at a `#` preceded by whitespace, outside quotes
  let quote: string | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quote !== undefined) {
      if (c === quote) {
        if (quote === "'" && text[i + 1] === "'") i++
        else quote = undefined
      } else if (c === "\\" && quote === "\"") i++
    } else if (c === "'" || c === "\"") {
      if (i === 0 || /[\s:[{,-]/.test(text[i - 1])) quote = c
    } else if (c === "#" && (i === 0 || /\s/.test(text[i - 1]))) {
      return text.slice(0, i).trimEnd()
    }
  }
  return text.trimEnd()
}

const plainScalar = (text: string): Yaml => {
  if (text === "" || text === "~" || text === "null" || text === "Null" || text === "NULL") return null
  if (text === "true" || text === "True" || text === "TRUE") return true
  if (text === "false" || text === "False" || text === "FALSE") return false
  if (/^[-+]?\d+$/.test(text)) return Number(text)
  if (/^0x[0-9a-fA-F]+$/.test(text)) return Number.parseInt(text.slice(2), 16)
  if (/^0o[0-7]+$/.test(text)) return Number.parseInt(text.slice(2), 8)
  if (/^[-+]?(\.\d+|\d+(\.\d*)?)([eE][-+]?\d+)?$/.test(text)) return Number(text)
  if (/^[-+]?\.(inf|Inf|INF)$/.test(text)) return text.startsWith("-") ? -Infinity : Infinity
  if (/^\.(nan|NaN|NAN)$/.test(text)) return Number.NaN
  return text
}

const escapes: Readonly<Record<string, string>> = {
  "0": "\0",
  a: "\x07",
  b: "\b",
  t: "\t",
  "\t": "\t",
  n: "\n",
  v: "\v",
  f: "\f",
  r: "\r",
  e: "\x1b",
  " ": " ",
  "\"": "\"",
  "/": "/",
  "\\": "\\",
  N: "\u0085",
  _: "\u00a0",
  L: "\u2028",
  P: "\u2029"
}

/** A quoted scalar at the start of `text`: its value and the rest of the text. */
const quoted = (text: string): Step<{ readonly value: string; readonly rest: string }> => {
  const quote = text[0]
  let out = ""
  for (let i = 1; i < text.length; i++) {
    const c = text[i]
    if (quote === "'") {
      if (c === "'") {
        if (text[i + 1] === "'") {
          out += "'"
          i++
          continue
        }
        return { value: out, rest: text.slice(i + 1) }
      }
      out += c
      continue
    }
    if (c === "\"") return { value: out, rest: text.slice(i + 1) }
    if (c !== "\\") {
      out += c
      continue
    }
    const next = text[i + 1]
    if (next === undefined) return new Failure("a double-quoted scalar ends with a backslash")
    const width = next === "x" ? 2 : next === "u" ? 4 : next === "U" ? 8 : 0
    if (width > 0) {
      const hex = text.slice(i + 2, i + 2 + width)
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== width) return new Failure("an invalid escape sequence")
      out += String.fromCodePoint(Number.parseInt(hex, 16))
      i += 1 + width
      continue
    }
    const escaped = escapes[next]
    if (escaped === undefined) return new Failure(`an unknown escape \\${next}`)
    out += escaped
    i++
  }
  return new Failure("an unterminated quoted scalar")
}

/** Splits the inside of a flow collection at top-level commas. */
const flowItems = (inside: string): Step<Array<string>> => {
  const items: Array<string> = []
  let depth = 0
  let quote: string | undefined
  let start = 0
  for (let i = 0; i < inside.length; i++) {
    const c = inside[i]
    if (quote !== undefined) {
      if (c === "\\" && quote === "\"") i++
      else if (c === quote) quote = undefined
      continue
    }
    if (c === "'" || c === "\"") quote = c
    else if (c === "[" || c === "{") depth++
    else if (c === "]" || c === "}") depth--
    else if (c === "," && depth === 0) {
      items.push(inside.slice(start, i).trim())
      start = i + 1
    }
  }
  if (quote !== undefined || depth !== 0) return new Failure("an unbalanced flow collection")
  const last = inside.slice(start).trim()
  if (last.length > 0 || items.length > 0) items.push(last)
  if (items.length > 0 && items[items.length - 1] === "") items.pop()
  return items.some((item) => item === "") ? new Failure("an empty entry in a flow collection") : items
}

const tooDeep = () => new Failure(`collections nested deeper than ${MAX_DEPTH} levels`)

const keyFailure = (key: string): Failure | undefined =>
  FORBIDDEN_KEYS.has(key) ? new Failure(`the key ${key} is not allowed`) : undefined

/** A scalar or flow collection written on one line, `depth` levels deep. */
const inlineValue = (text: string, depth: number): Step<Yaml> => {
  if (text.startsWith("\"") || text.startsWith("'")) {
    const result = quoted(text)
    if (isFailure(result)) return result
    if (result.rest.trim().length > 0) return new Failure("text after a quoted scalar")
    return result.value
  }
  if ((text.startsWith("[") || text.startsWith("{")) && depth >= MAX_DEPTH) return tooDeep()
  if (text.startsWith("[")) {
    if (!text.endsWith("]")) return new Failure("an unterminated flow sequence")
    const items = flowItems(text.slice(1, -1))
    if (isFailure(items)) return items
    const values: Array<Yaml> = []
    for (const item of items) {
      const value = inlineValue(item, depth + 1)
      if (isFailure(value)) return value
      values.push(value)
    }
    return values
  }
  if (text.startsWith("{")) {
    if (!text.endsWith("}")) return new Failure("an unterminated flow mapping")
    const items = flowItems(text.slice(1, -1))
    if (isFailure(items)) return items
    const out = emptyMapping()
    for (const item of items) {
      const entry = keyValue(item)
      if (isFailure(entry) || entry === undefined) return new Failure("a flow mapping entry without a key")
      const forbidden = keyFailure(entry.key)
      if (forbidden !== undefined) return forbidden
      const value = inlineValue(entry.rest, depth + 1)
      if (isFailure(value)) return value
      if (Object.hasOwn(out, entry.key)) return new Failure(`the key ${entry.key} appears twice`)
      out[entry.key] = value
    }
    return out
  }
  if (/^[&*!|>%@`]/.test(text)) return new Failure(`unsupported YAML syntax: ${text.slice(0, 1)}`)
  // in block context a plain scalar never holds ": " (YAML reads it as a misplaced mapping)
  if (/:(\s|$)/.test(text)) return new Failure(`a mapping value is not allowed here: ${text.slice(0, 40)}`)
  return plainScalar(text)
}

/** `key: rest` at the start of a line; `undefined` when the line is not a mapping entry. */
const keyValue = (text: string): Step<{ readonly key: string; readonly rest: string } | undefined> => {
  if (text.startsWith("\"") || text.startsWith("'")) {
    const key = quoted(text)
    if (isFailure(key)) return key
    const after = key.rest.trimStart()
    if (!after.startsWith(":")) return undefined
    return { key: key.value, rest: after.slice(1).trim() }
  }
  // the key runs to the first colon, which must end the line or be followed by whitespace (a scan, not a
  // backtracking expression: the latter took seconds on a long line of spaces)
  const colon = text.indexOf(":")
  if (colon <= 0 || /[\s:#[\]{},]/.test(text[0])) return undefined
  const after = text.slice(colon + 1)
  if (after.length > 0 && !/^\s/.test(after)) return undefined
  return { key: text.slice(0, colon).trimEnd(), rest: after.trim() }
}

class Parser {
  private position = 0
  private readonly lines: Array<Line>
  constructor(lines: ReadonlyArray<Line>) {
    this.lines = [...lines]
  }

  private peek(): Line | undefined {
    return this.lines[this.position]
  }

  /** Any node whose lines are indented by at least `indent`, `depth` collections deep. */
  block(indent: number, depth: number): Step<Yaml> {
    const line = this.peek()
    if (line === undefined || line.indent < indent) return null
    if (line.text === "-" || line.text.startsWith("- ")) return this.sequence(line.indent, depth)
    const entry = keyValue(line.text)
    if (isFailure(entry)) return entry
    if (entry !== undefined) return this.mapping(line.indent, depth)
    return this.plain(line.indent, depth)
  }

  /** A multi-line plain scalar (its lines folded with spaces). */
  private plain(indent: number, depth: number): Step<Yaml> {
    const parts: Array<string> = []
    let line = this.peek()
    while (line !== undefined && line.indent >= indent) {
      parts.push(line.text)
      this.position++
      line = this.peek()
    }
    return inlineValue(parts.join(" "), depth)
  }

  private mapping(indent: number, depth: number): Step<Yaml> {
    if (depth >= MAX_DEPTH) return tooDeep()
    const out = emptyMapping()
    let line = this.peek()
    while (line !== undefined && line.indent === indent) {
      const entry = keyValue(line.text)
      if (isFailure(entry)) return entry
      if (entry === undefined) return new Failure(`line ${line.number}: expected "key: value"`)
      if (Object.hasOwn(out, entry.key)) return new Failure(`line ${line.number}: the key ${entry.key} appears twice`)
      const forbidden = keyFailure(entry.key)
      if (forbidden !== undefined) return new Failure(`line ${line.number}: ${forbidden.message}`)
      this.position++
      const value = this.value(entry.rest, indent, true, depth + 1)
      if (isFailure(value)) return value
      out[entry.key] = value
      line = this.peek()
    }
    if (line !== undefined && line.indent > indent) return new Failure(`line ${line.number}: unexpected indentation`)
    return out
  }

  private sequence(indent: number, depth: number): Step<Yaml> {
    if (depth >= MAX_DEPTH) return tooDeep()
    const out: Array<Yaml> = []
    let line = this.peek()
    while (line !== undefined && line.indent === indent && (line.text === "-" || line.text.startsWith("- "))) {
      const rest = line.text.slice(1).trim()
      this.position++
      if (rest.length > 0 && keyValue(rest) !== undefined && !isFailure(keyValue(rest))) {
        // a mapping that starts on the dash line: re-read that line as one indented past the dash (in place: the
        // line is consumed either way)
        const offset = line.text.length - line.text.slice(1).trimStart().length
        this.position--
        this.lines[this.position] = { indent: indent + offset, text: rest, number: line.number }
        const value = this.mapping(indent + offset, depth + 1)
        if (isFailure(value)) return value
        out.push(value)
      } else {
        const value = this.value(rest, indent, false, depth + 1)
        if (isFailure(value)) return value
        out.push(value)
      }
      line = this.peek()
    }
    if (line !== undefined && line.indent > indent) return new Failure(`line ${line.number}: unexpected indentation`)
    return out
  }

  /** The value after `key:` or `-`: inline, a block scalar, or a nested block. */
  private value(rest: string, indent: number, inMapping: boolean, depth: number): Step<Yaml> {
    if (rest.startsWith("|") || rest.startsWith(">")) return this.blockScalar(rest, indent)
    if (rest.length > 0) {
      const next = this.peek()
      if (next !== undefined && next.indent > indent && !rest.startsWith("\"") && !rest.startsWith("'")) {
        // a plain scalar continued on more-indented lines
        const parts = [rest]
        let line = this.peek()
        while (line !== undefined && line.indent > indent) {
          parts.push(line.text)
          this.position++
          line = this.peek()
        }
        return inlineValue(parts.join(" "), depth)
      }
      return inlineValue(rest, depth)
    }
    const next = this.peek()
    if (next === undefined) return null
    // a sequence may sit at the key's own indentation
    if (inMapping && next.indent === indent && (next.text === "-" || next.text.startsWith("- "))) {
      return this.sequence(indent, depth)
    }
    if (next.indent <= indent) return null
    return this.block(next.indent, depth)
  }

  private blockScalar(header: string, indent: number): Step<Yaml> {
    const match = /^([|>])([-+]?)$/.exec(header)
    if (match === null) return new Failure(`unsupported block scalar header ${header}`)
    const raw: Array<{ readonly indent: number; readonly text: string }> = []
    while (true) {
      const line = this.peek()
      if (line === undefined || (line.indent <= indent && line.text.length > 0)) break
      raw.push(line)
      this.position++
    }
    // a loop, not Math.min(...lines): spreading a 300,000-line scalar as arguments overflows the stack
    let contentIndent = Infinity
    for (const l of raw) if (l.text.length > 0 && l.indent < contentIndent) contentIndent = l.indent
    const texts = raw.map((l) => l.text.length === 0 ? "" : " ".repeat(l.indent - contentIndent) + l.text)
    let body: string
    if (match[1] === "|") {
      body = texts.join("\n")
    } else {
      body = ""
      for (let i = 0; i < texts.length; i++) {
        const text = texts[i]
        if (i === 0) body = text
        else if (text === "" || texts[i - 1] === "") body += "\n" + text
        else body += " " + text
      }
    }
    const trimmed = body.replace(/\n+$/, "")
    if (match[2] === "-") return trimmed
    if (match[2] === "+") return body + "\n"
    return trimmed.length === 0 ? "" : trimmed + "\n"
  }

  rest(): Line | undefined {
    return this.peek()
  }
}

/**
 * Reads frontmatter text as a YAML mapping.
 *
 * @internal
 */
export const parse = (text: string): Result.Result<{ readonly [key: string]: Yaml }, string> => {
  const lines: Array<Line> = []
  const source = text.split(/\r?\n/)
  for (let i = 0; i < source.length; i++) {
    const raw = source[i]
    const indentation = /^[ \t]*/.exec(raw)?.[0] ?? ""
    if (indentation.includes("\t") && raw.trim().length > 0) return Result.fail(`line ${i + 1}: tab indentation`)
    const content = raw.slice(indentation.length)
    const text = stripComment(content)
    // blank and comment-only lines are kept empty so that block scalars see them
    lines.push({ indent: text.length === 0 ? 0 : indentation.length, text, number: i + 1 })
  }
  // blank lines matter inside block scalars only; elsewhere they are dropped
  const significant = keepBlankLinesInBlockScalars(lines)
  const parser = new Parser(significant)
  const first = significant[0]
  if (first === undefined) return Result.succeed({})
  if (first.text === "---" || first.text === "...") return Result.fail("multiple YAML documents")
  const value = parser.block(first.indent, 0)
  if (isFailure(value)) return Result.fail(value.message)
  const left = parser.rest()
  if (left !== undefined) return Result.fail(`line ${left.number}: unexpected content`)
  return isMapping(value) ? Result.succeed(value) : Result.fail("the frontmatter is not a mapping")
}

const isMapping = (value: Yaml): value is { readonly [key: string]: Yaml } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Drops blank lines, except those inside a block scalar (after a `|` or `>` header). */
const keepBlankLinesInBlockScalars = (lines: ReadonlyArray<Line>): Array<Line> => {
  const out: Array<Line> = []
  let scalarIndent: number | undefined
  for (const line of lines) {
    if (scalarIndent !== undefined) {
      if (line.text.length === 0 || line.indent > scalarIndent) {
        out.push(line)
        continue
      }
      scalarIndent = undefined
    }
    if (line.text.length === 0) continue
    out.push(line)
    if (/(?:^|:\s|^-\s)\s*[|>][-+]?$/.test(line.text) || /^-\s+[|>][-+]?$/.test(line.text)) scalarIndent = line.indent
  }
  // trailing blank lines of a block scalar at the end keep no meaning
  while (out.length > 0 && out[out.length - 1].text.length === 0) out.pop()
  return out
}

/**
 * Deep equality of two JSON/YAML values (object key order ignored).
 *
 * @internal
 */
export const equal = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a === "number" && typeof b === "number") return Number.isNaN(a) && Number.isNaN(b)
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((item, i) => equal(item, b[i]))
  }
  const keysA = Object.keys(a)
  const keysB = Object.keys(b)
  if (keysA.length !== keysB.length) return false
  const recordA: Record<string, unknown> = { ...a }
  const recordB: Record<string, unknown> = { ...b }
  return keysA.every((key) => Object.hasOwn(recordB, key) && equal(recordA[key], recordB[key]))
}
