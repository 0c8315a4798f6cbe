/**
 * A lenient parser of the `WWW-Authenticate` field (RFC 9110 section 11.6.1; the `Bearer` parameters of
 * RFC 6750 section 3 are ordinary auth-params):
 *
 * ```text
 * WWW-Authenticate = #challenge
 * challenge        = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
 * auth-param       = token BWS "=" BWS ( token / quoted-string )
 * token68          = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
 * ```
 *
 * Several challenges may share one field value (and repeated fields are joined with commas), so a comma ends
 * either a parameter or a challenge: what follows decides (`name =` is another parameter). Parameter names are
 * case-insensitive and reported in lower case; the first occurrence of a name wins. Malformed parts are skipped up
 * to the next comma; parsing never fails.
 *
 * @internal
 */
import type * as McpError from "../McpError.js"

const isTchar = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || // 0-9
  (c >= 0x41 && c <= 0x5a) || // A-Z
  (c >= 0x61 && c <= 0x7a) || // a-z
  c === 0x21 || // !
  (c >= 0x23 && c <= 0x27) || // # $ % & '
  c === 0x2a || // *
  c === 0x2b || // +
  c === 0x2d || // -
  c === 0x2e || // .
  c === 0x5e || // ^
  c === 0x5f || // _
  c === 0x60 || // `
  c === 0x7c || // |
  c === 0x7e // ~

const isToken68Char = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) ||
  (c >= 0x41 && c <= 0x5a) ||
  (c >= 0x61 && c <= 0x7a) ||
  c === 0x2d || // -
  c === 0x2e || // .
  c === 0x5f || // _
  c === 0x7e || // ~
  c === 0x2b || // +
  c === 0x2f // /

const SP = 0x20
const HTAB = 0x09
const COMMA = 0x2c
const EQUALS = 0x3d
const DQUOTE = 0x22
const BACKSLASH = 0x5c

const isValueDelimiter = (c: number): boolean => c === SP || c === HTAB || c === COMMA || c === DQUOTE

interface MutableChallenge {
  scheme: string
  params: Record<string, string>
  token68?: string
}

/**
 * Parses one field value (or several joined with commas) into its challenges, in order.
 *
 * @internal
 */
export const parse = (input: string): Array<McpError.Challenge> => {
  const s = input
  const n = s.length
  let i = 0
  const challenges: Array<MutableChallenge> = []

  const skipOws = (from: number): number => {
    let j = from
    while (j < n && (s.charCodeAt(j) === SP || s.charCodeAt(j) === HTAB)) j++
    return j
  }
  const tokenEnd = (from: number): number => {
    let j = from
    while (j < n && isTchar(s.charCodeAt(j))) j++
    return j
  }
  const skipToComma = () => {
    while (i < n && s.charCodeAt(i) !== COMMA) {
      if (s.charCodeAt(i) === DQUOTE) readQuoted()
      else i++
    }
  }
  const readQuoted = (): string => {
    // at the opening quote; an unterminated string runs to the end of the input
    i++
    let value = ""
    while (i < n) {
      const c = s.charCodeAt(i)
      if (c === BACKSLASH && i + 1 < n) {
        value += s[i + 1]
        i += 2
      } else if (c === DQUOTE) {
        i++
        return value
      } else {
        value += s[i]
        i++
      }
    }
    return value
  }
  // a token68 at `from` that makes up the whole rest of the list element: its end, else -1
  const token68End = (from: number): number => {
    let j = from
    while (j < n && isToken68Char(s.charCodeAt(j))) j++
    if (j === from) return -1
    while (j < n && s.charCodeAt(j) === EQUALS) j++
    const after = skipOws(j)
    return after >= n || s.charCodeAt(after) === COMMA ? j : -1
  }
  // after a comma: does a parameter (`name =`) follow, rather than a new challenge?
  const paramFollows = (from: number): boolean => {
    let j = from
    while (j < n && (s.charCodeAt(j) === COMMA || s.charCodeAt(j) === SP || s.charCodeAt(j) === HTAB)) j++
    const end = tokenEnd(j)
    if (end === j) return false
    const next = skipOws(end)
    return next < n && s.charCodeAt(next) === EQUALS
  }

  // Parses the auth-params of `challenge`; returns with `i` at the start of the next challenge (or the end).
  const readParams = (challenge: MutableChallenge) => {
    while (i < n) {
      const nameEnd = tokenEnd(i)
      if (nameEnd === i) {
        skipToComma()
        if (!paramFollows(i)) return
        i++
        i = skipOws(i)
        continue
      }
      const name = s.slice(i, nameEnd).toLowerCase()
      i = skipOws(nameEnd)
      if (i >= n || s.charCodeAt(i) !== EQUALS) {
        skipToComma()
        if (!paramFollows(i)) return
        i = skipOws(i + 1)
        continue
      }
      i = skipOws(i + 1)
      let value: string
      if (i < n && s.charCodeAt(i) === DQUOTE) {
        value = readQuoted()
      } else {
        // a token by the grammar; be lenient with unquoted values such as URLs and read up to the delimiter
        const start = i
        while (i < n && !isValueDelimiter(s.charCodeAt(i))) i++
        value = s.slice(start, i)
      }
      if (!Object.hasOwn(challenge.params, name)) challenge.params[name] = value
      i = skipOws(i)
      if (i < n && s.charCodeAt(i) !== COMMA) skipToComma()
      if (i >= n) return
      if (!paramFollows(i)) return
      while (i < n && (s.charCodeAt(i) === COMMA || s.charCodeAt(i) === SP || s.charCodeAt(i) === HTAB)) i++
    }
  }

  while (i < n) {
    while (i < n && (s.charCodeAt(i) === COMMA || s.charCodeAt(i) === SP || s.charCodeAt(i) === HTAB)) i++
    if (i >= n) break
    const schemeEnd = tokenEnd(i)
    if (schemeEnd === i) {
      skipToComma()
      continue
    }
    const challenge: MutableChallenge = { scheme: s.slice(i, schemeEnd), params: {} }
    challenges.push(challenge)
    i = skipOws(schemeEnd)
    if (i >= n || s.charCodeAt(i) === COMMA) continue
    if (i === schemeEnd) {
      // the scheme must be followed by a space before its credentials
      skipToComma()
      continue
    }
    const t68 = token68End(i)
    if (t68 !== -1) {
      challenge.token68 = s.slice(i, t68)
      i = skipOws(t68)
      continue
    }
    readParams(challenge)
  }
  return challenges
}

/**
 * Parses every `WWW-Authenticate` field of a response.
 *
 * @internal
 */
export const parseAll = (values: ReadonlyArray<string>): Array<McpError.Challenge> => values.flatMap(parse)
