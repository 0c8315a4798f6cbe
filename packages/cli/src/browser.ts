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
import * as Effect from "effect/Effect"
import type * as PlatformError from "effect/PlatformError"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Result from "effect/Result"
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
    if (Result.isSuccess(words) && words.success.length > 0) {
      const [command, ...args] = words.success
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
export const command = (url: string): ChildProcess.StandardCommand => {
  const [program, ...args] = argv(url)
  // its output is never read (nor shown): ignored, so that a chatty opener cannot fill a pipe and block
  return ChildProcess.make(program, args, { shell: false, stdin: "ignore", stdout: "ignore", stderr: "ignore" })
}

/**
 * Runs the {@link command} that opens `url` and answers with its exit code.
 *
 * The opener (`xdg-open`, `open`) may start the browser in its own process group and exit with 0. The spawner
 * signals that group when it releases a child started detached, so the handle is unreferenced first: a browser
 * it started keeps running.
 *
 * @since 0.1.0
 * @category commands
 */
export const open = (
  url: string
): Effect.Effect<number, PlatformError.PlatformError, ChildProcessSpawner.ChildProcessSpawner> =>
  Effect.scoped(Effect.gen(function*() {
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const handle = yield* spawner.spawn(command(url))
    yield* handle.unref
    return Number(yield* handle.exitCode)
  }))
