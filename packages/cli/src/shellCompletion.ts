/**
 * Tab completion in `conduit shell`: command words, options, and the server's names (tools, prompts, resource URIs)
 * and argument names (`--arg <name>=`), from the lists the shell keeps; and argument values the server suggests
 * through `completion/complete` (a prompt's `--arg name=<value>`, the variable of a resource template), which the
 * shell asks for with a short deadline and shows only once made safe for a terminal.
 *
 * @since 0.1.0
 */
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as Grammar from "./grammar.js"

/**
 * What the server offers, as the shell last listed it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Catalog {
  readonly tools: ReadonlyArray<{ readonly name: string; readonly arguments: ReadonlyArray<string> }>
  readonly prompts: ReadonlyArray<{ readonly name: string; readonly arguments: ReadonlyArray<string> }>
  readonly resources: ReadonlyArray<string>
  /** The URI templates of the resource templates. */
  readonly templates?: ReadonlyArray<string> | undefined
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const emptyCatalog: Catalog = { tools: [], prompts: [], resources: [], templates: [] }

const startsWith = (word: string) => (candidate: string) => candidate.startsWith(word)

const sameCommand = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((word, index) => b[index] === word)

/**
 * The candidates for the word being typed at the end of `line`, and that word (readline's completer contract).
 *
 * @since 0.1.0
 * @category completion
 */
export const complete = (
  line: string,
  commands: ReadonlyArray<Grammar.CommandSpec<unknown>>,
  catalog: Catalog
): readonly [ReadonlyArray<string>, string] => {
  const read = position(line, commands)
  const current = read.current
  const matching = (candidates: ReadonlyArray<string>, suffix = " ") =>
    [[...new Set(candidates)].filter(startsWith(current)).map((candidate) => `${candidate}${suffix}`), current] as const
  switch (read._tag) {
    case "Nothing":
      return [[], current]
    case "CommandWord":
      return matching(read.words)
    case "Option":
      return matching(read.options, read.options.length > 0 ? " " : "")
    case "Argument": {
      const { item, key, pendingOption, positionals } = read
      if (pendingOption === "arg") {
        const owner = key === "prompts get"
          ? catalog.prompts.find((prompt) => prompt.name === item)
          : catalog.tools.find((tool) => tool.name === item)
        return matching((owner?.arguments ?? []).map((name) => `${name}=`), "")
      }
      if (pendingOption === "uri") return matching(catalog.resources)
      if (pendingOption !== undefined || positionals.length > 0) return [[], current]
      switch (key) {
        case "tools call":
        case "tools describe":
          return matching(catalog.tools.map((tool) => tool.name))
        case "prompts get":
          return matching(catalog.prompts.map((prompt) => prompt.name))
        case "resources read":
          return matching(catalog.resources)
        case "help":
          return matching([...new Set(commands.map((c) => c.path[0]))])
        default:
          return [[], current]
      }
    }
  }
}

type Position =
  | { readonly _tag: "Nothing"; readonly current: string }
  | { readonly _tag: "CommandWord"; readonly current: string; readonly words: ReadonlyArray<string> }
  | { readonly _tag: "Option"; readonly current: string; readonly options: ReadonlyArray<string> }
  | {
    readonly _tag: "Argument"
    readonly current: string
    /** The command's words joined (`prompts get`). */
    readonly key: string
    /** The first positional argument (the tool's or prompt's name). */
    readonly item: string | undefined
    readonly positionals: ReadonlyArray<string>
    /** The option whose value is being typed. */
    readonly pendingOption: string | undefined
    /** The `--arg key=value` pairs given before. */
    readonly given: Readonly<Record<string, string>>
  }

/** Where the word at the end of `line` stands in the command's grammar. */
const position = (line: string, commands: ReadonlyArray<Grammar.CommandSpec<unknown>>): Position => {
  const words = line.split(/\s+/)
  const current = words.pop() ?? ""
  const before = words.filter((word) => word !== "")
  if (before[0] === "conduit") before.shift()

  // the command words
  const path: Array<string> = []
  let command: Grammar.CommandSpec<unknown> | undefined
  for (const word of before) {
    if (command !== undefined) break
    const next = commands.filter((c) => c.path.length > path.length && path.every((w, i) => c.path[i] === w))
    if (!next.some((c) => c.path[path.length] === word)) return { _tag: "Nothing", current }
    path.push(word)
    command = commands.find((c) => sameCommand(c.path, path))
  }
  if (command === undefined) {
    const next = commands.filter((c) => c.path.length > path.length && path.every((w, i) => c.path[i] === w))
    return { _tag: "CommandWord", current, words: next.map((c) => c.path[path.length]) }
  }

  // options and their values, then positional arguments
  const options = command.options ?? []
  if (current.startsWith("-")) return { _tag: "Option", current, options: options.map((option) => `--${option.name}`) }
  const rest = before.slice(path.length)
  const positionals: Array<string> = []
  const given: Record<string, string> = {}
  let pendingOption: string | undefined
  for (const word of rest) {
    if (pendingOption !== undefined) {
      const equals = word.indexOf("=")
      if (pendingOption === "arg" && equals > 0) given[word.slice(0, equals)] = word.slice(equals + 1)
      pendingOption = undefined
      continue
    }
    if (word.startsWith("--")) {
      const spec = options.find((option) => option.name === word.slice(2))
      if (spec?.value !== undefined) pendingOption = spec.name
      continue
    }
    positionals.push(word)
  }
  return { _tag: "Argument", current, key: path.join(" "), item: positionals[0], positionals, pendingOption, given }
}

/**
 * A value the server may suggest for the word being typed: what to ask `completion/complete`, and how a value
 * becomes the word.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerQuestion {
  readonly ref: McpSchema.CompleteReference
  readonly argument: { readonly name: string; readonly value: string }
  readonly context: { readonly arguments: Readonly<Record<string, string>> } | undefined
  /** The word being typed, which the candidates replace. */
  readonly word: string
  /** The word a suggested value makes. */
  readonly candidate: (value: string) => string
}

/**
 * A word as the shell's line splitting reads it back: a backslash before every character that is not plainly part of
 * a word (quoting would change its start, and readline completes only words that start with what was typed).
 */
const escaped = (word: string): string => word.replace(/[^A-Za-z0-9_@%+=:,./-]/g, (char) => `\\${char}`)

/** A template whose only variable ends it (`demo://notes/{topic}`): its literal start and the variable's name. */
const trailingVariable = (template: string): { readonly prefix: string; readonly name: string } | undefined => {
  const match = /^([^{}]*)\{([A-Za-z0-9_]+)\}$/.exec(template)
  return match === null ? undefined : { prefix: match[1], name: match[2] }
}

/**
 * What to ask the server for the word at the end of `line`, if it is an argument value it can complete: a
 * prompt's `--arg name=<value>` (`prompts get <prompt>`), or the variable at the end of a resource template
 * (`resources read demo://notes/<value>`).
 *
 * @since 0.1.0
 * @category completion
 */
export const serverQuestion = (
  line: string,
  commands: ReadonlyArray<Grammar.CommandSpec<unknown>>,
  catalog: Catalog
): ServerQuestion | undefined => {
  const read = position(line, commands)
  if (read._tag !== "Argument") return undefined
  const current = read.current
  if (read.key === "prompts get" && read.pendingOption === "arg" && read.item !== undefined) {
    const equals = current.indexOf("=")
    const prompt = catalog.prompts.find((p) => p.name === read.item)
    if (equals <= 0 || prompt === undefined) return undefined
    const name = current.slice(0, equals)
    if (!prompt.arguments.includes(name)) return undefined
    const { [name]: _self, ...others } = read.given
    return {
      ref: { type: "ref/prompt", name: prompt.name },
      argument: { name, value: current.slice(equals + 1) },
      context: Object.keys(others).length > 0 ? { arguments: others } : undefined,
      word: current,
      candidate: (value) => `${escaped(`${name}=${value}`)} `
    }
  }
  const uriWord = read.key === "resources read" && read.pendingOption === undefined && read.positionals.length === 0
  if (uriWord || read.pendingOption === "uri") {
    for (const template of catalog.templates ?? []) {
      const variable = trailingVariable(template)
      if (variable === undefined || !current.startsWith(variable.prefix) || variable.prefix === "") continue
      return {
        ref: { type: "ref/resource", uri: template },
        argument: { name: variable.name, value: current.slice(variable.prefix.length) },
        context: undefined,
        word: current,
        candidate: (value) => `${escaped(`${variable.prefix}${value}`)} `
      }
    }
  }
  return undefined
}

// control characters (C0, DEL, C1) and the invisible ones terminalText escapes (format, default-ignorable, line and
// paragraph separators), with none kept: a candidate has a backslash before each character beyond ASCII, which
// would part a joiner or variation selector from the character it belongs to
const unsafe = /[\u0000-\u001f\u007f-\u009f\p{Cf}\p{DI}\p{Zl}\p{Zp}]/u

/** How many suggested values are shown at most, and how long one may be. */
export const maxSuggestions = 100
const maxValueLength = 200

/**
 * The candidates a server's suggested values make: only strings free of control and invisible characters, at
 * most 200 characters long, at most 100 of them, each escaped for the shell's line splitting where it needs it.
 *
 * @since 0.1.0
 * @category completion
 */
export const suggested = (question: ServerQuestion, values: ReadonlyArray<unknown>): ReadonlyArray<string> =>
  [...new Set(values)]
    .filter((value): value is string =>
      typeof value === "string" && value.length > 0 && value.length <= maxValueLength && !unsafe.test(value)
    )
    .slice(0, maxSuggestions)
    .map(question.candidate)
