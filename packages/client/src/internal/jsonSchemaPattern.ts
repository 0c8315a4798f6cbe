/**
 * `pattern` and `patternProperties` in bounded time. A schema comes from a server, and a backtracking engine
 * (the native `RegExp`) takes exponential time on patterns such as `^(a+)+$`; so patterns run on RE2JS, an
 * automaton engine whose matching time is linear in the input times the size of the compiled program.
 *
 * The native `RegExp` still decides what is a valid pattern (ECMA-262, Unicode mode first, then the legacy
 * syntax), so a pattern is valid or invalid exactly as before. A valid pattern is translated into RE2 syntax with
 * the ECMA-262 meaning of `.`, `\s`, `\uXXXX`, `\cX`, long Unicode property names and named groups. What an
 * automaton cannot match (lookahead, lookbehind, backreferences) and Unicode properties RE2 does not know are
 * refused: the schema cannot be used, rather than checked with unbounded time.
 *
 * Known differences: `\S` inside a class is RE2's (ASCII) complement, and legacy (non-Unicode) patterns match by
 * code point, not by UTF-16 unit.
 *
 * @internal
 */
import * as Result from "effect/Result"
import { RE2JS } from "re2js"

/** @internal */
export interface Pattern {
  readonly source: string
  /** The size of the compiled program: matching costs at most this much per character of input. */
  readonly size: number
  readonly test: (text: string) => boolean
}

/** @internal */
export interface Refusal {
  readonly reason: "InvalidSchema" | "UnsupportedKeyword" | "BudgetExceeded"
  readonly detail: string
}

/**
 * Program units (input characters times program size) charged as one validation step. With the default
 * budget of a million steps, the patterns of one validation run cost at most 16 million units: about half a
 * second where RE2's automaton cannot be cached and it falls back to simulating every state.
 *
 * @internal
 */
export const UNITS_PER_STEP = 16

/**
 * The steps one test of `pattern` against `text` costs.
 *
 * @internal
 */
export const cost = (pattern: Pattern, text: string): number => 1 + Math.floor((text.length * pattern.size) / UNITS_PER_STEP)

const hex = (code: number): string => `\\x{${code.toString(16)}}`

const literal = (code: number): string => /[A-Za-z0-9_]/.test(String.fromCodePoint(code)) ? String.fromCodePoint(code) : hex(code)

// ECMA-262 WhiteSpace and LineTerminator, what `\s` matches
const SPACE = "\\x{9}-\\x{d}\\x{20}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}"
// what `.` matches without the `s` flag: anything but a line terminator
const DOT = "[^\\x{a}\\x{d}\\x{2028}\\x{2029}]"
const ANY = "\\x{0}-\\x{10ffff}"

const CATEGORIES: Readonly<Record<string, string>> = {
  Letter: "L",
  Cased_Letter: "LC",
  Uppercase_Letter: "Lu",
  Lowercase_Letter: "Ll",
  Titlecase_Letter: "Lt",
  Modifier_Letter: "Lm",
  Other_Letter: "Lo",
  Mark: "M",
  Combining_Mark: "M",
  Nonspacing_Mark: "Mn",
  Spacing_Mark: "Mc",
  Enclosing_Mark: "Me",
  Number: "N",
  Decimal_Number: "Nd",
  digit: "Nd",
  Letter_Number: "Nl",
  Other_Number: "No",
  Punctuation: "P",
  punct: "P",
  Connector_Punctuation: "Pc",
  Dash_Punctuation: "Pd",
  Open_Punctuation: "Ps",
  Close_Punctuation: "Pe",
  Initial_Punctuation: "Pi",
  Final_Punctuation: "Pf",
  Other_Punctuation: "Po",
  Symbol: "S",
  Math_Symbol: "Sm",
  Currency_Symbol: "Sc",
  Modifier_Symbol: "Sk",
  Other_Symbol: "So",
  Separator: "Z",
  Space_Separator: "Zs",
  Line_Separator: "Zl",
  Paragraph_Separator: "Zp",
  Other: "C",
  Control: "Cc",
  cntrl: "Cc",
  Format: "Cf",
  Surrogate: "Cs",
  Private_Use: "Co",
  Unassigned: "Cn"
}

// `\p{…}` in RE2 syntax: general categories by short name, scripts by name
const property = (body: string, negated: boolean, inClass: boolean): string => {
  const equals = body.indexOf("=")
  const key = equals < 0 ? undefined : body.slice(0, equals)
  const value = equals < 0 ? body : body.slice(equals + 1)
  if (equals < 0 && (value === "Any" || value === "ASCII")) {
    const range = value === "Any" ? ANY : "\\x{0}-\\x{7f}"
    if (inClass && !negated) return range
    return negated ? `[^${range}]` : `[${range}]`
  }
  const name = key === undefined || key === "General_Category" || key === "gc"
    ? CATEGORIES[value] ?? value
    : value // Script, sc, Script_Extensions, scx: RE2 knows scripts by name (extensions read as the script)
  return `\\${negated ? "P" : "p"}{${name}}`
}

const isHex = (text: string) => /^[0-9A-Fa-f]+$/.test(text)

interface Cursor {
  readonly source: string
  readonly unicode: boolean
  index: number
}

const next = (cursor: Cursor): number => {
  const code = cursor.unicode ? cursor.source.codePointAt(cursor.index)! : cursor.source.charCodeAt(cursor.index)
  cursor.index += code > 0xffff ? 2 : 1
  return code
}

// `\uXXXX`, `\u{X…}`, and in Unicode mode a surrogate pair written as two escapes; undefined if malformed
const unicodeEscape = (cursor: Cursor): number | undefined => {
  const { source } = cursor
  if (source[cursor.index] === "{" && cursor.unicode) {
    const end = source.indexOf("}", cursor.index)
    const digits = source.slice(cursor.index + 1, end)
    if (end < 0 || !isHex(digits)) return undefined
    cursor.index = end + 1
    return parseInt(digits, 16)
  }
  const digits = source.slice(cursor.index, cursor.index + 4)
  if (digits.length !== 4 || !isHex(digits)) return undefined
  cursor.index += 4
  const code = parseInt(digits, 16)
  const low = source.slice(cursor.index, cursor.index + 6)
  if (cursor.unicode && code >= 0xd800 && code <= 0xdbff && /^\\u[dD][c-fC-F][0-9a-fA-F]{2}$/.test(low)) {
    cursor.index += 6
    return 0x10000 + ((code - 0xd800) << 10) + (parseInt(low.slice(2), 16) - 0xdc00)
  }
  return code
}

/** One escape, the backslash already read. */
const escape = (cursor: Cursor, inClass: boolean): Result.Result<string, string> => {
  const { source } = cursor
  if (cursor.index >= source.length) return Result.succeed(hex(0x5c))
  const code = next(cursor)
  const char = String.fromCodePoint(code)
  switch (char) {
    case "d":
    case "D":
    case "w":
    case "W":
      return Result.succeed(`\\${char}`)
    case "b":
      return Result.succeed(inClass ? hex(8) : "\\b")
    case "B":
      return Result.succeed(inClass ? "B" : "\\B")
    case "s":
      return Result.succeed(inClass ? SPACE : `[${SPACE}]`)
    case "S":
      return Result.succeed(inClass ? "\\S" : `[^${SPACE}]`)
    case "n":
      return Result.succeed(hex(10))
    case "r":
      return Result.succeed(hex(13))
    case "t":
      return Result.succeed(hex(9))
    case "f":
      return Result.succeed(hex(12))
    case "v":
      return Result.succeed(hex(11))
    case "c": {
      const letter = source[cursor.index] ?? ""
      if (!/[A-Za-z]/.test(letter)) return Result.succeed(`${hex(0x5c)}c`)
      cursor.index++
      return Result.succeed(hex(letter.charCodeAt(0) % 32))
    }
    case "x": {
      const digits = source.slice(cursor.index, cursor.index + 2)
      if (digits.length !== 2 || !isHex(digits)) return Result.succeed("x")
      cursor.index += 2
      return Result.succeed(hex(parseInt(digits, 16)))
    }
    case "u": {
      const value = unicodeEscape(cursor)
      return Result.succeed(value === undefined ? "u" : hex(value))
    }
    case "p":
    case "P": {
      if (!cursor.unicode || source[cursor.index] !== "{") return Result.succeed(char)
      const end = source.indexOf("}", cursor.index)
      const body = source.slice(cursor.index + 1, end)
      cursor.index = end + 1
      return Result.succeed(property(body, char === "P", inClass))
    }
    case "k":
      return source[cursor.index] === "<" ? Result.fail("a backreference") : Result.succeed("k")
    case "0":
      return /[0-9]/.test(source[cursor.index] ?? "") ? Result.fail("an octal escape") : Result.succeed(hex(0))
    default:
      if (/[1-9]/.test(char)) return Result.fail("a backreference")
      return Result.succeed(literal(code))
  }
}

/** A class, `[` already read. */
const characterClass = (cursor: Cursor): Result.Result<string, string> => {
  const { source } = cursor
  let negated = false
  if (source[cursor.index] === "^") {
    negated = true
    cursor.index++
  }
  if (source[cursor.index] === "]") {
    cursor.index++
    return Result.succeed(negated ? `[${ANY}]` : `[^${ANY}]`)
  }
  let body = ""
  while (cursor.index < source.length && source[cursor.index] !== "]") {
    const code = next(cursor)
    if (code === 0x5c) {
      const escaped = escape(cursor, true)
      if (Result.isFailure(escaped)) return escaped
      body += escaped.success
    } else {
      body += code === 0x2d ? "-" : literal(code)
    }
  }
  cursor.index++
  return Result.succeed(`[${negated ? "^" : ""}${body}]`)
}

/**
 * The pattern in RE2 syntax, or what it uses that RE2 cannot match. `unicode` says whether the pattern is read
 * in Unicode mode (it compiles with the `u` flag) or with the legacy syntax.
 *
 * @internal
 */
export const translate = (source: string, unicode: boolean): Result.Result<string, string> => {
  const cursor: Cursor = { source, unicode, index: 0 }
  let out = ""
  while (cursor.index < source.length) {
    const code = next(cursor)
    const char = String.fromCodePoint(code)
    if (char === "\\") {
      const escaped = escape(cursor, false)
      if (Result.isFailure(escaped)) return escaped
      out += escaped.success
    } else if (char === "[") {
      const body = characterClass(cursor)
      if (Result.isFailure(body)) return body
      out += body.success
    } else if (char === ".") {
      out += DOT
    } else if (char === "(") {
      if (source[cursor.index] !== "?") {
        out += "(?:" // captures are never read: a test needs none
      } else if (source.startsWith("?:", cursor.index)) {
        cursor.index += 2
        out += "(?:"
      } else if (/^\?(=|!|<=|<!)/.test(source.slice(cursor.index, cursor.index + 3))) {
        return Result.fail("a lookaround assertion")
      } else if (source.startsWith("?<", cursor.index)) {
        cursor.index = source.indexOf(">", cursor.index) + 1
        out += "(?:"
      } else {
        return Result.fail("a group modifier")
      }
    } else if (char === "{") {
      const quantifier = /^\d+(?:,\d*)?\}/.exec(source.slice(cursor.index))
      if (quantifier === null) {
        out += literal(code) // legacy syntax: a brace that starts no quantifier is itself
      } else {
        out += `{${quantifier[0]}`
        cursor.index += quantifier[0].length
      }
    } else if ("|)*+?^$".includes(char)) {
      out += char
    } else {
      out += literal(code)
    }
  }
  return Result.succeed(out)
}

const nativeMode = (source: string): "unicode" | "legacy" | undefined => {
  if (Result.isSuccess(Result.try(() => new RegExp(source, "u")))) return "unicode"
  if (Result.isSuccess(Result.try(() => new RegExp(source)))) return "legacy"
  return undefined
}

/**
 * A bound on the size of the program RE2 compiles from `source` (RE2 syntax), read without compiling it: every
 * counted repetition multiplies what it repeats (`.{1000}` is a thousand copies of `.`), so a pattern of a few
 * thousand characters can compile to a million units, about a second of compiling. It errs on the large side
 * (a class or an escape as two units, every group as two more, an optional copy as twice its part), and is
 * written without recursion.
 *
 * @internal
 */
export const estimateSize = (source: string): number => {
  const frames: Array<{ total: number; last: number }> = [{ total: 0, last: 0 }]
  let top = frames[0]!
  const add = (units: number) => {
    top.total = Math.min(CAP, top.total + units)
    top.last = units
  }
  const closeGroup = () => {
    const group = frames.pop()!
    top = frames[frames.length - 1]!
    add(group.total + 2)
  }
  let i = 0
  while (i < source.length) {
    const char = source[i]
    if (char === "\\") {
      const next = source[i + 1]
      i += 2
      if ((next === "x" || next === "p" || next === "P") && source[i] === "{") {
        const close = source.indexOf("}", i)
        i = close === -1 ? source.length : close + 1
      } else if (next === "p" || next === "P") {
        i += 1
      }
      add(2)
    } else if (char === "[") {
      i += source[i + 1] === "^" ? 2 : 1
      if (source[i] === "]") i++
      while (i < source.length && source[i] !== "]") {
        if (source[i] === "\\") i += 2
        else if (source[i] === "[" && source[i + 1] === ":") i = Math.max(i + 2, source.indexOf(":]", i + 2) + 2)
        else i++
      }
      i++
      add(2)
    } else if (char === "(") {
      i++
      if (source[i] === "?") {
        while (i < source.length && source[i] !== ":" && source[i] !== ")" && source[i] !== ">") i++
        if (source[i] !== ")") i++
      }
      top = { total: 0, last: 0 }
      frames.push(top)
    } else if (char === ")") {
      i++
      if (frames.length > 1) closeGroup()
    } else if (char === "{") {
      const counted = REPEAT.exec(source.slice(i, i + 24))
      if (counted === null) {
        i++
        add(1)
        continue
      }
      i += counted[0].length
      const min = Number(counted[1])
      const max = counted[2] === undefined ? min : counted[3] === "" ? min + 1 : Number(counted[3])
      // a required copy is the part once, an optional one the part and a choice
      const copies = Math.max(1, min + 2 * (max - min))
      top.total = Math.min(CAP, top.total - top.last + top.last * copies)
      top.last = Math.min(CAP, top.last * copies)
      if (source[i] === "?") i++
    } else if (char === "*" || char === "+" || char === "?") {
      i += source[i + 1] === "?" ? 2 : 1
      top.total = Math.min(CAP, top.total + 1)
      top.last += 1
    } else {
      i++
      if (char === "|") {
        top.total = Math.min(CAP, top.total + 1)
        top.last = 0
      } else {
        add(1)
      }
    }
  }
  while (frames.length > 1) closeGroup()
  // (and the program's own frame: its start, the capture of the whole match, the match)
  return frames[0]!.total + 8
}

const CAP = 1e15
const REPEAT = /^\{(\d{1,9})(,(\d{0,9}))?\}/

/**
 * Compiles a schema's pattern for bounded-time matching. `maxSize`: the most program units it may compile to;
 * a pattern whose estimate ({@link estimateSize}) is more than that is refused before compiling.
 *
 * @internal
 */
export const compile = (source: string, maxSize: number = Infinity): Result.Result<Pattern, Refusal> => {
  const quoted = JSON.stringify(source)
  const mode = nativeMode(source)
  if (mode === undefined) {
    return Result.fail({ reason: "InvalidSchema", detail: `pattern ${quoted} is not a valid regular expression` })
  }
  const unsupported = (what: string): Result.Result<Pattern, Refusal> =>
    Result.fail({
      reason: "UnsupportedKeyword",
      detail: `pattern ${quoted} uses ${what}, which cannot be matched in bounded time`
    })
  const translated = translate(source, mode === "unicode")
  if (Result.isFailure(translated)) return unsupported(translated.failure)
  const estimate = estimateSize(translated.success)
  if (estimate > maxSize) {
    const shown = quoted.length > 80 ? `${quoted.slice(0, 80)}…` : quoted
    return Result.fail({
      reason: "BudgetExceeded",
      detail: `pattern ${shown} is estimated at ${estimate} program units, more than the ${maxSize} left`
    })
  }
  const compiled = Result.try(() => RE2JS.compile(translated.success))
  if (Result.isFailure(compiled)) {
    const reason = compiled.failure instanceof Error ? compiled.failure.message.replace(/^error parsing regexp: /, "") : ""
    return unsupported(`a construct the bounded-time engine refuses (${reason})`)
  }
  const re = compiled.success
  return Result.succeed({ source, size: Math.max(1, re.programSize()), test: (text) => re.test(text) })
}
