/**
 * Drives a program in a real terminal: a private tmux server (its own socket) running one window, whose screen
 * the test reads and whose keyboard it types on.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as Scope from "effect/Scope"
import * as ShellWords from "../../src/shellWords.js"

export interface Terminal {
  /** The whole screen and its scrollback, as text. */
  readonly screen: Effect.Effect<string>
  /** Types keys (tmux key names such as `Enter`, or literal text). */
  readonly sendKeys: (...keys: ReadonlyArray<string>) => Effect.Effect<void>
  /** Waits until the screen matches, and returns it; dies after `timeout` (default 30 s) with the screen. */
  readonly waitFor: (pattern: RegExp, timeout?: Duration.Input) => Effect.Effect<string>
}

/**
 * Runs `argv` in a terminal of `columns` × `rows`. When it exits, `[exit <code>]` is printed and the window
 * stays open. The tmux server is killed with the Scope.
 */
/** How often `waitFor` reads the screen: what it sees may be this late. */
export const pollInterval = Duration.millis(100)

export const open = (
  argv: ReadonlyArray<string>,
  options: { readonly columns?: number; readonly rows?: number; readonly env?: Readonly<Record<string, string>> } = {}
): Effect.Effect<Terminal, never, Scope.Scope | ChildProcessSpawner.ChildProcessSpawner> =>
  Effect.gen(function*() {
    const socket = `conduit-test-${process.pid}-${Math.random().toString(36).slice(2, 10)}`
    const tmux = (...args: ReadonlyArray<string>) => ChildProcess.make("tmux", ["-L", socket, "-f", "/dev/null", ...args])
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const env = Object.entries({ NO_COLOR: "1", ...options.env }).map(([key, value]) =>
      `${key}=${ShellWords.quote(value)}`
    ).join(" ")
    const script = `${env} ${argv.map(ShellWords.quote).join(" ")}; echo "[exit $?]"; sleep 600`
    yield* Effect.acquireRelease(
      spawner.exitCode(
        tmux(
          "new-session",
          "-d",
          "-s",
          "main",
          "-x",
          String(options.columns ?? 120),
          "-y",
          String(options.rows ?? 40),
          script
        )
      ).pipe(
        Effect.orDie,
        Effect.filterOrElse((code) => code === 0, () => Effect.die(new Error("tmux new-session failed (is tmux installed?)")))
      ),
      () => Effect.ignore(spawner.exitCode(tmux("kill-server")))
    )
    const run = Effect.orDie
    const screen = run(spawner.string(tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "main")))
    const poll = (pattern: RegExp): Effect.Effect<string> =>
      Effect.flatMap(screen, (text) =>
        pattern.test(text) ? Effect.succeed(text) : Effect.andThen(Effect.sleep(pollInterval), poll(pattern)))
    return {
      screen,
      sendKeys: (...keys) => Effect.asVoid(run(spawner.exitCode(tmux("send-keys", "-t", "main", ...keys)))),
      waitFor: (pattern, timeout = "30 seconds") =>
        poll(pattern).pipe(
          Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail("timeout" as const) }),
          Effect.catch(() =>
            Effect.flatMap(screen, (text) => Effect.die(new Error(`the screen never matched ${pattern}:\n${text}`)))
          )
        )
    } satisfies Terminal
  })
