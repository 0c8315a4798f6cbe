/** @internal */

// C0 and C1 controls, DEL, and what a terminal draws as nothing or in another order: format characters (the
// bidirectional controls, zero-width characters, tag characters), default-ignorable code points, line and
// paragraph separators
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\p{Cf}\p{DI}\p{Zl}\p{Zp}]/gu

const escapeCode = (code: number): string =>
  code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : code <= 0xffff
    ? `\\u${code.toString(16).padStart(4, "0")}`
    : `\\u{${code.toString(16)}}`

/**
 * Text a server controls, made fit for a log line: every control character and every invisible one is written as
 * a visible escape (`\x1b`, `\u202e`, `\u{e0041}`), so a log printed to a terminal never carries an escape
 * sequence, a carriage return, a bidirectional override or hidden text from a server. (Emoji sequences lose their
 * joiners to escapes too: a log line is read for what it says, not for how it looks.)
 *
 * @internal
 */
export const printable = (text: string): string =>
  text.replace(UNPRINTABLE, (char) => escapeCode(char.codePointAt(0)!))
