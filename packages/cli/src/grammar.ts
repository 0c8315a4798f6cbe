/**
 * The command-line grammar of `conduit`: a table of commands and options, a parser that reads `argv` against it
 * (options may stand before or after the command words; an option a command does not take is an error that
 * names it), and the help text, plain unless the terminal takes colour.
 *
 * The parser is the project's own because the grammar is contextual (`demo-server --stdio` is a switch,
 * `--stdio "<command>"` elsewhere takes a value) and every message must name what was wrong.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import { UsageError } from "./errors.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface OptionSpec {
  readonly name: string
  readonly short?: string | undefined
  /** A value-taking option names its value (`<url>`); a switch has none. */
  readonly value?: string | undefined
  readonly choices?: ReadonlyArray<string> | undefined
  readonly repeatable?: boolean | undefined
  readonly description: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ArgumentSpec {
  readonly name: string
  readonly description: string
  readonly optional?: boolean | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CommandSpec<A> {
  /** The command words: `["tools", "call"]`. */
  readonly path: ReadonlyArray<string>
  readonly description: string
  readonly arguments?: ReadonlyArray<ArgumentSpec> | undefined
  readonly options?: ReadonlyArray<OptionSpec> | undefined
  /** False for commands that talk to no server (the server options are then refused). */
  readonly server?: boolean | undefined
  readonly run: A
}

/**
 * What the parser read.
 *
 * @since 0.1.0
 * @category models
 */
export interface Parsed<A> {
  readonly command: CommandSpec<A>
  readonly arguments: ReadonlyArray<string>
  /** Every option given, by name: switches as `"true"`, repeated options in order. */
  readonly options: ReadonlyMap<string, ReadonlyArray<string>>
}

/**
 * What a command line asks for: a command to run, or help, or the version.
 *
 * @since 0.1.0
 * @category models
 */
export type Request<A> =
  | { readonly _tag: "Run"; readonly parsed: Parsed<A> }
  | { readonly _tag: "Help"; readonly path: ReadonlyArray<string> }
  | { readonly _tag: "Version" }

const helpOption: OptionSpec = { name: "help", short: "h", description: "Show help (for a command: conduit <command> --help)" }
const versionOption: OptionSpec = { name: "version", description: "Print the version" }

const flag = (option: OptionSpec): string => `--${option.name}`

const usageOf = (option: OptionSpec): string =>
  `${option.short !== undefined ? `-${option.short}, ` : ""}${flag(option)}${
    option.value !== undefined ? ` ${option.value}` : ""
  }`

/**
 * Reads `argv` (without the node and script paths) against the commands and the options every server command
 * takes.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = <A>(
  argv: ReadonlyArray<string>,
  commands: ReadonlyArray<CommandSpec<A>>,
  serverOptions: ReadonlyArray<OptionSpec>,
  /** The program the words are given to: `conduit` on the command line, `""` in the shell (no program name). */
  program: string = "conduit"
): Result.Result<Request<A>, UsageError> => {
  const path: Array<string> = []
  const positionals: Array<string> = []
  const given = new Map<string, Array<string>>()
  let command: CommandSpec<A> | undefined
  let help = false
  let version = false
  let onlyPositionals = false
  const words = (more: ReadonlyArray<string>) => [program, ...more].filter((word) => word !== "").join(" ")
  const fail = (message: string) =>
    Result.fail(
      new UsageError({
        message: `${message} (${
          program === "" && path.length === 0 ? "help shows the commands" : `${words([...path, "--help"])} shows the usage`
        })`
      })
    )

  const children = (prefix: ReadonlyArray<string>) =>
    commands.filter((c) => c.path.length > prefix.length && prefix.every((word, i) => c.path[i] === word))
  const nextWords = (prefix: ReadonlyArray<string>) => [...new Set(children(prefix).map((c) => c.path[prefix.length]))]
  // options in force where the parser stands: the command's own first (they may shadow a server option)
  const lookup = (name: string, short: boolean): OptionSpec | undefined => {
    const pool = [...(command?.options ?? []), ...(command?.server === false ? [] : serverOptions), helpOption, versionOption]
    return pool.find((option) => short ? option.short === name : option.name === name)
  }

  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]
    if (onlyPositionals || !token.startsWith("-") || token === "-") {
      if (command === undefined) {
        const next = nextWords(path)
        if (!next.includes(token)) {
          const where = path.length === 0 && program === "" ? "" : ` for ${words(path)}`
          return fail(`unknown command ${JSON.stringify(token)}${where} (one of: ${next.join(", ")})`)
        }
        path.push(token)
        command = commands.find((c) => c.path.length === path.length && c.path.every((word, j) => word === path[j]))
        continue
      }
      positionals.push(token)
      continue
    }
    if (token === "--") {
      onlyPositionals = true
      continue
    }
    const long = token.startsWith("--")
    const equals = token.indexOf("=")
    const name = long ? token.slice(2, equals > 0 ? equals : undefined) : token.slice(1, 2)
    const option = lookup(name, !long)
    if (option === undefined) {
      const where = command !== undefined ? ` for conduit ${command.path.join(" ")}` : ""
      return fail(`unknown option ${long ? `--${name}` : `-${name}`}${where}`)
    }
    let value = "true"
    if (option.value !== undefined) {
      const inline = long ? (equals > 0 ? token.slice(equals + 1) : undefined) : token.length > 2 ? token.slice(2) : undefined
      const next = inline ?? argv[i + 1]
      if (next === undefined || (inline === undefined && next.startsWith("--"))) {
        return fail(`${flag(option)} needs a value: ${usageOf(option)}`)
      }
      if (inline === undefined) i++
      if (option.choices !== undefined && !option.choices.includes(next)) {
        return fail(`${flag(option)} must be one of ${option.choices.join(", ")}; got ${JSON.stringify(next)}`)
      }
      value = next
    } else if (long && equals > 0) {
      return fail(`${flag(option)} takes no value`)
    }
    if (option === helpOption) help = true
    else if (option === versionOption) version = true
    else {
      const list = given.get(option.name) ?? []
      if (list.length > 0 && option.repeatable !== true && option.value !== undefined) {
        return fail(`${flag(option)} was given twice`)
      }
      list.push(value)
      given.set(option.name, list)
    }
  }

  if (help) return Result.succeed({ _tag: "Help", path })
  if (version && path.length === 0) return Result.succeed({ _tag: "Version" })
  if (command === undefined) {
    if (path.length === 0) return fail("give a command, for example `conduit tools list`")
    return fail(`conduit ${path.join(" ")} needs a command: ${nextWords(path).join(", ")}`)
  }
  const specs = command.arguments ?? []
  const required = specs.filter((a) => a.optional !== true).length
  if (positionals.length < required) {
    const missing = specs[positionals.length]
    return fail(`conduit ${command.path.join(" ")} needs <${missing.name}> (${missing.description})`)
  }
  if (positionals.length > specs.length) {
    return fail(`unexpected argument ${JSON.stringify(positionals[specs.length])} for conduit ${command.path.join(" ")}`)
  }
  return Result.succeed({ _tag: "Run", parsed: { command, arguments: positionals, options: given } })
}

// ---------------------------------------------------------------------------------------------------------------
// Help

/**
 * How help is drawn: its width and whether it may use colour.
 *
 * @since 0.1.0
 * @category help
 */
export interface HelpStyle {
  readonly width: number
  readonly bold: (text: string) => string
}

/** Breaks `text` into lines of at most `width` columns (a longer word stands alone). */
export const wrap = (text: string, width: number): Array<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w.length > 0)) {
    if (line.length > 0 && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line.length === 0 ? word : `${line} ${word}`
    }
  }
  if (line.length > 0) lines.push(line)
  return lines
}

/**
 * Help rows: a name column, then its text wrapped to the width.
 *
 * @since 0.1.0
 * @category help
 */
export const table = (rows: ReadonlyArray<readonly [string, string]>, style: HelpStyle): Array<string> => {
  const left = Math.min(34, Math.max(...rows.map(([name]) => name.length)) + 2)
  const room = Math.max(20, style.width - left - 2)
  return rows.flatMap(([name, text]) => {
    const lines = wrap(text, room)
    const first = name.length + 2 > left ? [`  ${name}`, ...lines.map((l) => `  ${" ".repeat(left)}${l}`)] : [
      `  ${name.padEnd(left)}${lines[0] ?? ""}`,
      ...lines.slice(1).map((l) => `  ${" ".repeat(left)}${l}`)
    ]
    return first
  })
}

const argumentsUsage = (command: CommandSpec<unknown>): string =>
  (command.arguments ?? []).map((a) => a.optional === true ? `[<${a.name}>]` : `<${a.name}>`).join(" ")

const optionRow = (option: OptionSpec): readonly [string, string] => [
  usageOf(option),
  `${option.description}${option.repeatable === true ? " (repeatable)" : ""}`
]

/**
 * The help for `path`: the whole program, a group of commands (`tools`) or one command.
 *
 * @since 0.1.0
 * @category help
 */
export const help = <A>(
  path: ReadonlyArray<string>,
  commands: ReadonlyArray<CommandSpec<A>>,
  serverOptions: ReadonlyArray<OptionSpec>,
  program: { readonly summary: string; readonly footer: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, string]>]> },
  style: HelpStyle
): string => {
  const exact = commands.find((c) => c.path.length === path.length && c.path.every((w, i) => w === path[i]))
  const under = commands.filter((c) => path.every((w, i) => c.path[i] === w) && c.path.length > path.length)
  const out: Array<string> = []
  const section = (title: string) => out.push("", style.bold(title))
  if (exact !== undefined) {
    const serverPart = exact.server === false ? "" : "[server options] "
    const optionsPart = (exact.options ?? []).length > 0 ? " [options]" : ""
    out.push(`${style.bold("Usage:")} conduit ${serverPart}${exact.path.join(" ")} ${argumentsUsage(exact)}${optionsPart}`.trimEnd())
    out.push("", ...wrap(exact.description, style.width))
    if ((exact.arguments ?? []).length > 0) {
      section("Arguments:")
      out.push(...table((exact.arguments ?? []).map((a) => [`<${a.name}>`, `${a.description}${a.optional === true ? " (optional)" : ""}`]), style))
    }
    if ((exact.options ?? []).length > 0) {
      section("Options:")
      out.push(...table((exact.options ?? []).map(optionRow), style))
    }
    if (exact.server !== false) out.push("", "Server options (--stdio, --url, --config, --era, --timeout, --json, ...): conduit --help")
    return `${out.join("\n")}\n`
  }
  const rows = under.map((c): readonly [string, string] => [`${c.path.join(" ")} ${argumentsUsage(c)}`.trimEnd(), c.description])
  if (path.length === 0) {
    out.push(...wrap(program.summary, style.width), "")
    out.push(`${style.bold("Usage:")} conduit [server options] <command> [arguments] [options]`)
  } else {
    out.push(`${style.bold("Usage:")} conduit [server options] ${path.join(" ")} <command> [arguments] [options]`)
  }
  section("Commands:")
  out.push(...table(rows, style))
  if (path.length === 0) {
    section("Server options (before or after the command; none means the embedded demo server):")
    out.push(...table([...serverOptions, helpOption, versionOption].map(optionRow), style))
    for (const [title, entries] of program.footer) {
      section(title)
      out.push(...table(entries, style))
    }
  } else {
    out.push("", `conduit ${path.join(" ")} <command> --help describes one command.`)
  }
  return `${out.join("\n")}\n`
}
