/**
 * Text a server controls, made safe for a terminal. A server's strings (tool text, log lines, progress messages,
 * elicitation messages, URLs, names, error descriptions) may hold control characters: ESC starts sequences that
 * recolour, hide (`ESC[8m`), move the cursor, set the window title or make a hyperlink whose target differs from
 * its text (OSC 8); a carriage return or backspace overwrites what was printed; C1 controls (U+0080–U+009F) act
 * as ESC sequences on some terminals; bidirectional overrides reorder what is shown. Each such character is shown
 * as a visible escape (`\x1b`, `\u202e`) instead, so nothing reaches the terminal as a control and the user
 * sees that something was there.
 *
 * @since 0.1.0
 */

const escapeCode = (code: number): string =>
  code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`

// C0 (but tab and newline, handled per mode), DEL, C1, and the bidirectional formatting characters
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g
const LINE_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]/g

/**
 * Server text shown over several lines: newlines and tabs stay (a CR-LF pair is a newline), every other control
 * character is escaped.
 *
 * @since 0.1.0
 * @category sanitizing
 */
export const block = (text: string): string =>
  text.replace(/\r\n/g, "\n").replace(CONTROLS, (char) => escapeCode(char.charCodeAt(0)))

/**
 * Server text shown on one line (a log line, a name, a table cell, a URL): newlines and tabs are escaped too, so
 * the text cannot start a line of its own that looks like conduit's.
 *
 * @since 0.1.0
 * @category sanitizing
 */
export const line = (text: string): string =>
  text.replace(LINE_CONTROLS, (char) => {
    const code = char.charCodeAt(0)
    return code === 0x0a ? "\\n" : code === 0x09 ? "\\t" : code === 0x0d ? "\\r" : escapeCode(code)
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
 * colours, erasing a line) is escaped.
 *
 * @since 0.1.0
 * @category sanitizing
 */
export const filter = (text: string, carriageReturn: boolean): string => {
  let out = ""
  let start = 0
  const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g
  for (let match = controls.exec(text); match !== null; match = controls.exec(text)) {
    const index = match.index
    const code = text.charCodeAt(index)
    if (code === 0x0d && carriageReturn) continue
    if (code === 0x1b) {
      const own = OWN_SEQUENCE.exec(text.slice(index, index + 16))
      if (own !== null) {
        controls.lastIndex = index + own[0].length
        continue
      }
    }
    out += text.slice(start, index) + escapeCode(code)
    start = index + 1
  }
  return start === 0 ? text : out + text.slice(start)
}

// what JSON.stringify leaves raw in a string but a terminal may act on: DEL, C1, line and paragraph
// separators, and the bidirectional formatting characters
const JSON_RAW = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const jsonString = (text: string): string =>
  JSON.stringify(text).replace(JSON_RAW, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)

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
 * JSON leaves raw but a terminal may act on (C1 controls, bidirectional overrides) escaped as `\uXXXX`. Still
 * valid JSON, meaning the same value; levels deeper than 64 are written without indentation.
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
