/**
 * The line reader of `conduit shell` and `conduit run`: one `node:readline` interface for the whole session, read
 * through Effect. On a terminal it shows a prompt, keeps a history (persisted to a file) and completes with Tab; Ctrl-C
 * cancels the running command (or clears the line being typed), Ctrl-D ends the input. Anywhere else it reads lines
 * and shows nothing.
 *
 * While a prompt is shown, whatever conduit prints (a notification of a background `listen`, a server's log line)
 * clears the prompt line first and draws the prompt again after it, so the two never share a line.
 *
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as Readline from "node:readline"
import type * as Stream from "node:stream"
import * as Output from "./output.js"
import * as TaskStoreFile from "./taskStore.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface LineReader {
  /** Whether prompts, history and completion are on (stdin and stderr are a terminal). */
  readonly interactive: boolean
  /**
   * Shows `prompt` and reads one line. `None` when the input ended (Ctrl-D, the end of a file), or, for a question
   * asked while a command runs (a form), when Ctrl-C cancelled that command.
   */
  readonly read: (prompt: string) => Effect.Effect<Option.Option<string>>
  /** Runs a command; Ctrl-C interrupts it (and nothing else) while it runs. */
  readonly running: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<Exit.Exit<A, E>, never, R>
  /** Adds a command line to the history file (never a form's answer). */
  readonly remember: (line: string) => Effect.Effect<void>
}

/**
 * What Tab offers: the candidates for the word under the cursor, and that word. It may ask the server, so it is an
 * effect; readline waits for it (the shell bounds it with a short deadline), and a failure offers nothing.
 *
 * @since 0.1.0
 * @category models
 */
export type Completer = (line: string) => Effect.Effect<readonly [ReadonlyArray<string>, string]>

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly input: Stream.Readable
  readonly interactive: boolean
  readonly completer?: Completer | undefined
  /** The history file; none is kept when undefined. */
  readonly historyFile?: string | undefined
}

const historySize = 1000

/**
 * Where the shell keeps its history: `$CONDUIT_HISTORY_FILE`, else `$XDG_STATE_HOME/conduit/history`
 * (`~/.local/state`; `~/Library/Application Support` on macOS, `%LOCALAPPDATA%` on Windows).
 *
 * @since 0.1.0
 * @category history
 */
export const historyFile = (): string => {
  const explicit = process.env.CONDUIT_HISTORY_FILE
  if (explicit !== undefined && explicit !== "") return explicit
  return NodePath.join(TaskStoreFile.stateDirectory(), "history")
}

// the last lines of the file, newest first (readline's order); a missing or unreadable file is an empty history
const loadHistory = (file: string): Array<string> => {
  try {
    const lines = Fs.readFileSync(file, "utf8").split("\n").filter((line) => line.trim() !== "")
    return lines.slice(-historySize).reverse()
  } catch {
    return []
  }
}

const appendHistory = (file: string, line: string): void => {
  try {
    Fs.mkdirSync(NodePath.dirname(file), { recursive: true, mode: 0o700 })
    // command lines may hold secrets (an --arg token=...): only the user reads the file
    Fs.appendFileSync(file, `${line}\n`, { mode: 0o600 })
  } catch {
    // a history that cannot be written is not worth failing a command for
  }
}

/**
 * Opens the reader; it is closed (and the terminal given back) with the Scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<LineReader, never, Scope.Scope> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<never>()
    const interactive = options.interactive
    const typedAhead: Array<string> = []
    let waiting: Deferred.Deferred<Option.Option<string>> | undefined
    let ended = false
    let prompting = false
    let command: Fiber.Fiber<unknown, unknown> | undefined

    const settle = (value: Option.Option<string>) => {
      const deferred = waiting
      waiting = undefined
      prompting = false
      // called from readline's events: completes the waiting read without running an effect here
      if (deferred !== undefined) Deferred.doneUnsafe(deferred, Effect.succeed(value))
      return deferred !== undefined
    }

    const completer = options.completer
    const rl = yield* Effect.acquireRelease(
      Effect.sync(() =>
        Readline.createInterface({
          input: options.input,
          output: interactive ? process.stderr : undefined,
          terminal: interactive,
          ...(interactive
            ? {
              history: options.historyFile !== undefined ? loadHistory(options.historyFile) : [],
              historySize,
              removeHistoryDuplicates: true
            }
            : {}),
          ...(interactive && completer !== undefined
            ? {
              completer: (
                line: string,
                callback: (error: null | Error, result: [Array<string>, string]) => void
              ): void => {
                Effect.runCallbackWith(context)(completer(line), {
                  onExit: (exit) =>
                    callback(null, exit._tag === "Success" ? [[...exit.value[0]], exit.value[1]] : [[], ""])
                })
              }
            }
            : {})
        })
      ),
      (rl) =>
        Effect.sync(() => {
          rl.close()
          // what follows (the shell's exit, the next prompt of the user's own shell) starts on a line of its own
          if (interactive) process.stderr.write("\n")
        })
    )
    rl.on("line", (line) => {
      if (!settle(Option.some(line))) typedAhead.push(line)
    })
    rl.on("close", () => {
      ended = true
      settle(Option.none())
    })
    rl.on("SIGINT", () => {
      if (command !== undefined) {
        // a question of the running command (a form) is cancelled with it
        settle(Option.none())
        Effect.runForkWith(context)(Fiber.interrupt(command))
        return
      }
      // at the prompt: drop what was typed and ask again, as a shell does
      process.stderr.write("^C\n")
      rl.write(null, { ctrl: true, name: "e" })
      rl.write(null, { ctrl: true, name: "u" })
      rl.prompt()
    })

    // conduit's own output while a prompt is shown: clear the prompt line, print, draw the prompt again
    yield* Output.guardWrites({
      before: () => {
        if (prompting) process.stderr.write("\r\u001b[2K")
      },
      after: () => {
        if (prompting) rl.prompt(true)
      }
    })

    const read = (prompt: string): Effect.Effect<Option.Option<string>> =>
      Effect.suspend(() => {
        const ahead = typedAhead.shift()
        if (ahead !== undefined) return Effect.succeed(Option.some(ahead))
        if (ended) return Effect.succeed(Option.none())
        return Effect.flatMap(Deferred.make<Option.Option<string>>(), (deferred) => {
          waiting = deferred
          if (interactive) {
            rl.setPrompt(prompt)
            rl.prompt()
            prompting = true
          }
          return Effect.ensuring(Deferred.await(deferred), Effect.sync(() => {
            if (waiting === deferred) {
              waiting = undefined
              prompting = false
            }
          }))
        })
      })

    const running = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Exit.Exit<A, E>, never, R> =>
      Effect.flatMap(Effect.forkChild(effect), (fiber) => {
        command = fiber
        return Effect.ensuring(Fiber.await(fiber), Effect.sync(() => {
          command = undefined
        }))
      })

    const remember = (line: string) =>
      Effect.sync(() => {
        // like a shell's ignorespace: a line typed with a leading space is not kept
        if (options.historyFile !== undefined && interactive && !line.startsWith(" ") && line.trim() !== "") {
          appendHistory(options.historyFile, line.trim())
        }
      })

    return { interactive, read, running, remember }
  })
