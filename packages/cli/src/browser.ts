/**
 * Opening a URL in the user's browser, for `login` and for URL elicitations. The URL is always one argument of
 * a program started directly: no shell ever reads it, so `&`, `|`, `^`, `%VAR%` or `$(…)` in a URL chosen by a
 * server stay characters of the URL.
 *
 * `$BROWSER` (a command line, split into words without a shell, the URL appended) wins; otherwise `open` on
 * macOS, `rundll32 url.dll,FileProtocolHandler` on Windows (not `cmd /c start`, which re-parses its command
 * line) and `xdg-open` elsewhere.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import * as Either from "effect/Either"
import * as ShellWords from "./shellWords.js"

/**
 * The program and arguments that open `url`, the URL always the last one.
 *
 * @since 0.1.0
 * @category commands
 */
export const argv = (
  url: string,
  platform: NodeJS.Platform = process.platform,
  browser: string | undefined = process.env.BROWSER
): readonly [string, ...Array<string>] => {
  if (browser !== undefined && browser.trim() !== "") {
    const words = ShellWords.split(browser)
    if (Either.isRight(words) && words.right.length > 0) {
      const [command, ...args] = words.right
      return [command, ...args, url]
    }
  }
  return platform === "darwin"
    ? ["open", url]
    : platform === "win32"
    ? ["rundll32", "url.dll,FileProtocolHandler", url]
    : ["xdg-open", url]
}

/**
 * The command that opens `url`, never run in a shell.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = (url: string): Command.Command => {
  const [program, ...args] = argv(url)
  return Command.runInShell(Command.make(program, ...args), false)
}
