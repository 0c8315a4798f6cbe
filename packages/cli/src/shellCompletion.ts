/**
 * Tab completion in `conduit shell`: command words, options, and the server's names (tools, prompts, resource URIs)
 * and argument names (`--arg <name>=`), from the lists the shell keeps.
 *
 * @since 0.1.0
 */
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
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const emptyCatalog: Catalog = { tools: [], prompts: [], resources: [] }

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
  const words = line.split(/\s+/)
  const current = words.pop() ?? ""
  const before = words.filter((word) => word !== "")
  if (before[0] === "conduit") before.shift()
  const matching = (candidates: ReadonlyArray<string>, suffix = " ") =>
    [[...new Set(candidates)].filter(startsWith(current)).map((candidate) => `${candidate}${suffix}`), current] as const

  // the command words
  const path: Array<string> = []
  let command: Grammar.CommandSpec<unknown> | undefined
  for (const word of before) {
    if (command !== undefined) break
    const next = commands.filter((c) => c.path.length > path.length && path.every((w, i) => c.path[i] === w))
    if (!next.some((c) => c.path[path.length] === word)) return [[], current]
    path.push(word)
    command = commands.find((c) => sameCommand(c.path, path))
  }
  if (command === undefined) {
    const next = commands.filter((c) => c.path.length > path.length && path.every((w, i) => c.path[i] === w))
    return matching(next.map((c) => c.path[path.length]))
  }

  // options and their values, then positional arguments
  const options = command.options ?? []
  if (current.startsWith("-")) return matching(options.map((option) => `--${option.name}`), options.length > 0 ? " " : "")
  const rest = before.slice(path.length)
  const positionals: Array<string> = []
  let pendingOption: string | undefined
  for (const word of rest) {
    if (pendingOption !== undefined) {
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
  const key = path.join(" ")
  const item = positionals[0]
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
