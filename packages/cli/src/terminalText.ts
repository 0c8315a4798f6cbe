/**
 * Text a server controls, made safe for a terminal. A server's strings (tool text, log lines, progress messages,
 * elicitation messages, URLs, names, error descriptions) may hold control characters: ESC starts sequences that
 * recolour, hide (`ESC[8m`), move the cursor, set the window title or make a hyperlink whose target differs from
 * its text (OSC 8); a carriage return or backspace overwrites what was printed; C1 controls (U+0080–U+009F) act
 * as ESC sequences on some terminals; bidirectional overrides reorder what is shown. They may hold invisible
 * characters too, which a terminal draws as nothing: a sentence in tag characters (U+E0000–U+E007F) after a
 * visible word, or a zero-width space that makes `ec\u200bho` look like `echo`. Each such character is shown as a
 * visible escape (`\x1b`, `\u202e`, `\u{e0041}` above U+FFFF) instead, so nothing reaches the terminal as a
 * control or unseen, and the user sees that something was there.
 *
 * Invisible means every format character (general category Cf: the zero-width space and joiners, the word joiner
 * and invisible operators, the byte order mark, the soft hyphen, the tag characters, the interlinear annotation
 * marks, the bidirectional controls, and the few visible ones such as the Arabic number signs, so that the rule
 * has no exceptions to trust), every default-ignorable code point (the Hangul fillers, the combining grapheme
 * joiner, the variation selectors, the reserved ones) and the line and paragraph separators (U+2028, U+2029), on
 * a line and in a block alike. Three kinds are kept where text needs them, in names as in prose, since escaping
 * them would garble emoji and whole scripts:
 *
 * - the zero-width joiner (U+200D) between two pictographs, the first maybe followed by VS16 or a skin tone: an
 *   emoji sequence such as woman, ZWJ, laptop (a woman technologist) or white flag, VS16, ZWJ, rainbow;
 * - the zero-width joiner and non-joiner (U+200C) right after a letter or mark of a script that joins its letters
 *   (Arabic, Syriac, N'Ko, Mongolian and their kin) or writes conjuncts with a virama (Devanagari to Khmer), as
 *   Persian, Hindi or Sinhala spelling needs them;
 * - a variation selector right after a character it is defined for: VS15 or VS16 (U+FE0E, U+FE0F) after an emoji
 *   character, VS1–VS14 after a mathematical symbol or a Han, Myanmar, Phags-pa or Manichaean character, an
 *   ideographic one (U+E0100–U+E01EF) after a Han character, a Mongolian free variation selector after a
 *   Mongolian letter.
 *
 * Anywhere else they are escaped (between Latin letters, at the start, after a space, after one another), so a
 * look-alike name shows its joiner and a message spelt in zero-width bits shows whole; what a kept one still
 * carries unseen is at most one such character after a letter of those scripts, a pictograph or a character with
 * variants. The tag characters are always escaped, also in the three subdivision flags that use them (England,
 * Scotland, Wales), which show as a black flag followed by escapes.
 *
 * @since 0.1.0
 */

const escapeCode = (code: number): string =>
  code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : code <= 0xffff
    ? `\\u${code.toString(16).padStart(4, "0")}`
    : `\\u{${code.toString(16)}}`

// the scripts in which a joiner or non-joiner shapes the text: those that join their letters, and those that write
// conjuncts with a virama
const scripts = (...names: ReadonlyArray<string>): string => names.map((name) => `\\p{scx=${name}}`).join("")
const JOINING = scripts("Arab", "Syrc", "Nkoo", "Mong", "Mand", "Mani", "Phlp", "Adlm", "Rohg", "Sogd", "Ougr", "Chrs")
const VIRAMA = scripts(
  "Deva", "Beng", "Guru", "Gujr", "Orya", "Taml", "Telu", "Knda", "Mlym", "Sinh", "Tibt", "Mymr", "Khmr", "Bali",
  "Java", "Sund", "Lana"
)

// where an invisible character is part of the text, each tested at its index (sticky), looking at its neighbours;
// a neighbour looked at is never a character that is escaped, so escaped text filtered again stays as it is
const KEPT: ReadonlyArray<RegExp> = [
  /(?<=\p{Extended_Pictographic}[\ufe0f\u{1f3fb}-\u{1f3ff}]?)\u200d(?=\p{Extended_Pictographic})/uy,
  new RegExp(`(?<=[\\p{L}\\p{M}])(?<!\\p{DI})(?<=[${JOINING}${VIRAMA}])[\\u200c\\u200d]`, "uy"),
  // (after an ASCII character only as a keycap: 1, VS16, U+20E3)
  /(?<=[\p{Emoji}\p{Extended_Pictographic}])(?<![\u0000-\u007f])[\ufe0e\ufe0f]/uy,
  /(?<=[0-9#*])\ufe0f(?=\u20e3)/uy,
  /(?<=[\p{Sm}\p{scx=Hani}\p{scx=Mymr}\p{scx=Phag}\p{scx=Mani}])(?<!\p{DI})[\ufe00-\ufe0d]/uy,
  /(?<=\p{scx=Hani})(?<!\p{DI})[\u{e0100}-\u{e01ef}]/uy,
  /(?<=\p{L})(?<!\p{DI})(?<=\p{scx=Mong})[\u180b-\u180d\u180f]/uy
]

// the characters KEPT may keep, so that the others are escaped without looking at their neighbours
const KEEPABLE = /[\u180b-\u180d\u180f\u200c\u200d\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/uy

const kept = (text: string, index: number): boolean => {
  KEEPABLE.lastIndex = index
  return KEEPABLE.test(text) && KEPT.some((context) => {
    context.lastIndex = index
    return context.test(text)
  })
}

// C0 (but tab and newline, handled per mode), DEL, C1, and the invisible characters: format (Cf, which holds the
// bidirectional controls), default-ignorable, line and paragraph separators
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}\p{DI}\p{Zl}\p{Zp}]/gu
const LINE_CONTROLS = /[\u0000-\u001f\u007f-\u009f\p{Cf}\p{DI}\p{Zl}\p{Zp}]/gu

/**
 * Server text shown over several lines: newlines and tabs stay (a CR-LF pair is a newline), every other control
 * character is escaped, and every invisible one where the text does not need it.
 *
 * @since 0.1.0
 * @category sanitizing
 */
export const block = (text: string): string =>
  text.replace(/\r\n/g, "\n").replace(
    CONTROLS,
    (char: string, index: number, whole: string) => kept(whole, index) ? char : escapeCode(char.codePointAt(0)!)
  )

/**
 * Server text shown on one line (a log line, a name, a table cell, a URL): newlines and tabs are escaped too, so
 * the text cannot start a line of its own that looks like conduit's.
 *
 * @since 0.1.0
 * @category sanitizing
 */
export const line = (text: string): string =>
  text.replace(LINE_CONTROLS, (char: string, index: number) => {
    const code = char.codePointAt(0)!
    if (code === 0x0a) return "\\n"
    if (code === 0x09) return "\\t"
    if (code === 0x0d) return "\\r"
    return kept(text, index) ? char : escapeCode(code)
  })

/**
 * A URL as shown to the user: its normalised form (the host in ASCII, so punycode is visible, and control and
 * space characters percent-encoded), or the escaped raw text when it does not parse.
 *
 * @since 0.1.0
 * @category sanitizing
 */
export const url = (raw: string): string => URL.canParse(raw) ? line(new URL(raw).href) : line(raw)

// what conduit itself writes: its styles (bold, dim, red, green, yellow, cyan and their resets), and erasing the
// line it redraws (progress); nothing that hides, moves the cursor or links
const OWN_SEQUENCE = /^\u001b\[(?:(?:1|2|22|31|32|33|36|39)m|2K)/

/**
 * The last line of defence, applied to everything conduit writes: any control character that is not a newline,
 * a tab, a carriage return (when `carriageReturn` allows it) or the start of one of conduit's own sequences (its
 * colours, erasing a line) is escaped, and any invisible one where the text does not need it, as `line` does.
 *
 * @since 0.1.0
 * @category sanitizing
 */
export const filter = (text: string, carriageReturn: boolean): string => {
  let out = ""
  let start = 0
  const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}\p{DI}\p{Zl}\p{Zp}]/gu
  for (let match = controls.exec(text); match !== null; match = controls.exec(text)) {
    const index = match.index
    const code = text.charCodeAt(index)
    if ((code === 0x0d && carriageReturn) || kept(text, index)) continue
    if (code === 0x1b) {
      const own = OWN_SEQUENCE.exec(text.slice(index, index + 16))
      if (own !== null) {
        controls.lastIndex = index + own[0].length
        continue
      }
    }
    out += text.slice(start, index) + escapeCode(match[0].codePointAt(0)!)
    start = index + match[0].length
  }
  return start === 0 ? text : out + text.slice(start)
}

// what JSON.stringify leaves raw in a string but a terminal may act on or not show: DEL, C1, and the invisible
// characters (kept where text needs them, as on a line)
const JSON_RAW = /[\u007f-\u009f\p{Cf}\p{DI}\p{Zl}\p{Zp}]/gu

// each UTF-16 unit as `\uXXXX`, a code point above U+FFFF as its surrogate pair
const jsonEscape = (char: string): string => {
  let out = ""
  for (let index = 0; index < char.length; index++) out += `\\u${char.charCodeAt(index).toString(16).padStart(4, "0")}`
  return out
}

// the text between the characters escaped is written by JSON.stringify; whether one is kept is read from the
// text itself, not from JSON.stringify's escapes around it
const jsonString = (text: string): string => {
  let out = "\""
  let start = 0
  for (const match of text.matchAll(JSON_RAW)) {
    if (kept(text, match.index)) continue
    if (match.index > start) out += JSON.stringify(text.slice(start, match.index)).slice(1, -1)
    out += jsonEscape(match[0])
    start = match.index + match[0].length
  }
  return start === 0 ? JSON.stringify(text) : `${out}${JSON.stringify(text.slice(start)).slice(1, -1)}"`
}

interface Frame {
  readonly close: string
  readonly items: ReadonlyArray<readonly [string | undefined, unknown]>
  readonly depth: number
  index: number
}

const omitted = (value: unknown) => value === undefined || typeof value === "function" || typeof value === "symbol"

/**
 * `JSON.stringify(value, null, indent)` for server data, written without recursion (JSON.stringify overflows the
 * stack on a value nested some thousands deep, which JSON.parse builds without complaint), with the characters
 * JSON leaves raw but a terminal may act on or not show (C1 controls, bidirectional overrides, the invisible
 * characters where `line` escapes them) escaped as `\uXXXX`, a surrogate pair above U+FFFF. Still valid JSON,
 * meaning the same value; levels deeper than 64 are written without indentation.
 *
 * @since 0.1.0
 * @category sanitizing
 */
export const json = (value: unknown, indent = 0): string => {
  const out: Array<string> = []
  const stack: Array<Frame> = []
  // indentation grows with depth, so a deep value would print quadratically: past 64 levels it is compact
  const newline = (depth: number) => indent > 0 && depth <= 64 ? `\n${" ".repeat(indent * depth)}` : ""
  const write = (raw: unknown, depth: number): void => {
    const item = typeof raw === "object" && raw !== null && "toJSON" in raw && typeof raw.toJSON === "function"
      ? raw.toJSON()
      : raw
    if (typeof item === "string") out.push(jsonString(item))
    else if (typeof item === "number") out.push(Number.isFinite(item) ? String(item) : "null")
    else if (typeof item === "boolean") out.push(String(item))
    else if (typeof item !== "object" || item === null) out.push("null")
    else {
      const array = Array.isArray(item)
      const items: ReadonlyArray<readonly [string | undefined, unknown]> = array
        ? item.map((element: unknown) => [undefined, element] as const)
        : Object.entries(item).filter(([, member]) => !omitted(member))
      if (items.length === 0) out.push(array ? "[]" : "{}")
      else {
        out.push(array ? "[" : "{")
        stack.push({ close: array ? "]" : "}", items, depth, index: 0 })
      }
    }
  }
  write(value, 0)
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]
    if (frame.index === frame.items.length) {
      out.push(newline(frame.depth), frame.close)
      stack.pop()
      continue
    }
    const [key, item] = frame.items[frame.index]
    out.push(frame.index > 0 ? "," : "", newline(frame.depth + 1))
    if (key !== undefined) out.push(jsonString(key), indent > 0 ? ": " : ":")
    frame.index++
    write(item, frame.depth + 1)
  }
  return out.join("")
}
