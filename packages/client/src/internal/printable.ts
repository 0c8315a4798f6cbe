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

/**
 * A URL a server gave, as it is shown to a user: its normalised form (the host in ASCII, so punycode is visible;
 * controls and spaces percent-encoded), made printable. `undefined` for what is no http(s) URL or carries
 * credentials (`https://trusted.example@evil.example/` reads as the first host): such an address is not shown as
 * one to visit.
 *
 * @internal
 */
export const printableUrl = (raw: string): string | undefined => {
  if (!URL.canParse(raw)) return undefined
  const url = new URL(raw)
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined
  if (url.username !== "" || url.password !== "") return undefined
  return printable(url.href)
}

/**
 * What a user is told of a device authorization (RFC 8628): the first of `urls` that is an http(s) URL without
 * credentials, normalised, and the user code, every part printable; when none of them is, that there is no address
 * to visit.
 *
 * @internal
 */
export const deviceCodeText = (userCode: string, urls: ReadonlyArray<string | undefined>): string => {
  const shown = urls.flatMap((url) => {
    const printed = url === undefined ? undefined : printableUrl(url)
    return printed === undefined ? [] : [printed]
  })[0]
  return shown === undefined
    ? `To authorize, enter the code ${printable(userCode)}: the authorization server gave no address to visit ` +
      "that is an http(s) URL without credentials"
    : `To authorize, visit ${shown} and enter the code ${printable(userCode)}`
}
