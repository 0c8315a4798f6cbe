/**
 * Reading `mcpServers` configurations (Claude Desktop, Cursor, Claude Code; VS Code's `servers`) into hub server
 * definitions. A bad entry becomes an invalid definition under its name, so the others still load.
 *
 * @internal
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as HttpTransport from "../HttpTransport.js"
import type * as McpHub from "../McpHub.js"
import * as StdioTransport from "../StdioTransport.js"

const StringRecord = Schema.Record({ key: Schema.String, value: Schema.String })

/** @internal */
export const ServerEntry = Schema.Struct({
  type: Schema.optional(Schema.String),
  command: Schema.optional(Schema.String),
  args: Schema.optional(Schema.Array(Schema.String)),
  env: Schema.optional(StringRecord),
  cwd: Schema.optional(Schema.String),
  url: Schema.optional(Schema.String),
  headers: Schema.optional(StringRecord),
  disabled: Schema.optional(Schema.Boolean)
})

/** @internal */
export type ServerEntry = typeof ServerEntry.Type

const decodeEntry = Schema.decodeUnknownEither(ServerEntry, { onExcessProperty: "ignore" })

const STDIO_TYPES: ReadonlySet<string> = new Set(["stdio"])
const HTTP_TYPES: ReadonlySet<string> = new Set(["http", "streamable-http", "streamableHttp", "sse"])

const invalid = (name: string, problem: string): McpHub.InvalidServer => ({ name, problem })

/** One entry, already decoded, as a definition (or the reason it cannot be one). */
export const fromEntry = (
  name: string,
  entry: ServerEntry,
  extra: McpHub.DefinitionExtras
): McpHub.ServerSpec<CommandExecutor.CommandExecutor | HttpClient.HttpClient> => {
  const { command, type, url } = entry
  if (type !== undefined && !STDIO_TYPES.has(type) && !HTTP_TYPES.has(type)) {
    return invalid(name, `unknown "type" ${JSON.stringify(type)} (expected "stdio", "http" or "sse")`)
  }
  if (command !== undefined && url !== undefined) return invalid(name, `the entry has both "command" and "url"`)
  if (command === undefined && url === undefined) return invalid(name, `the entry has neither "command" nor "url"`)
  if (command !== undefined) {
    if (type !== undefined && !STDIO_TYPES.has(type)) {
      return invalid(name, `"type" is ${type} but the entry has a "command"`)
    }
    if (command.trim() === "") return invalid(name, `"command" is empty`)
    return {
      name,
      transport: StdioTransport.layer({
        command,
        ...(entry.args !== undefined ? { args: entry.args } : {}),
        ...(entry.env !== undefined ? { env: entry.env } : {}),
        ...(entry.cwd !== undefined ? { cwd: entry.cwd } : {})
      }),
      ...extra
    }
  }
  if (type !== undefined && STDIO_TYPES.has(type)) return invalid(name, `"type" is stdio but the entry has a "url"`)
  if (!URL.canParse(url!)) return invalid(name, `"url" is not a URL: ${JSON.stringify(url)}`)
  return {
    name,
    transport: HttpTransport.layer({ url: url!, ...(entry.headers !== undefined ? { headers: entry.headers } : {}) }),
    ...extra
  }
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** @internal */
export type Parsed = Either.Either<
  ReadonlyArray<McpHub.ServerSpec<CommandExecutor.CommandExecutor | HttpClient.HttpClient>>,
  string
>

/**
 * The servers of a parsed configuration file: its `mcpServers` object and its `servers` object (VS Code). Fails
 * (with the reason) only when the document has neither; a name in both is kept once, as invalid.
 */
export const parse = (document: unknown, extras: (name: string) => McpHub.DefinitionExtras): Parsed => {
  if (!isRecord(document)) return Either.left("the configuration is not a JSON object")
  const sections = (["mcpServers", "servers"] as const).filter((key) => document[key] !== undefined)
  if (sections.length === 0) return Either.left(`the configuration has no "mcpServers" (or "servers") object`)
  const out: Array<McpHub.ServerSpec<CommandExecutor.CommandExecutor | HttpClient.HttpClient>> = []
  for (const section of sections) {
    const servers = document[section]
    if (!isRecord(servers)) return Either.left(`"${section}" is not an object of servers`)
    for (const [name, raw] of Object.entries(servers)) {
      const decoded = decodeEntry(raw)
      if (Either.isLeft(decoded)) {
        const issues = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
          .map((issue) => `${issue.path.join(".")}: ${issue.message}`)
        out.push(invalid(name, `the entry is malformed: ${issues.join("; ")}`))
      } else if (decoded.right.disabled !== true) {
        out.push(fromEntry(name, decoded.right, extras(name)))
      }
    }
  }
  return Either.right(out)
}

/** Reads and parses a configuration file. */
export const read = (
  path: string,
  extras: (name: string) => McpHub.DefinitionExtras
): Effect.Effect<
  ReadonlyArray<McpHub.ServerSpec<CommandExecutor.CommandExecutor | HttpClient.HttpClient>>,
  string,
  FileSystem.FileSystem
> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* Effect.mapError(fs.readFileString(path), (error) => `cannot read ${path}: ${error.message}`)
    const document = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (error) => `${path} is not JSON: ${error instanceof Error ? error.message : String(error)}`
    })
    return yield* Either.mapLeft(parse(document, extras), (problem) => `${path}: ${problem}`)
  })

const optional = <A>(config: Config.Config<A>): Config.Config<A | undefined> =>
  Config.map(Config.option(config), Option.getOrUndefined)

const toRecord = (map: HashMap.HashMap<string, string>): Record<string, string> =>
  Object.fromEntries(HashMap.toEntries(map))

const entryConfig: Config.Config<ServerEntry> = Config.map(
  Config.all({
    type: optional(Config.string("type")),
    command: optional(Config.string("command")),
    args: optional(Config.array(Config.string(), "args")),
    env: optional(Config.map(Config.hashMap(Config.string(), "env"), toRecord)),
    cwd: optional(Config.string("cwd")),
    url: optional(Config.string("url")),
    headers: optional(Config.map(Config.hashMap(Config.string(), "headers"), toRecord)),
    disabled: optional(Config.boolean("disabled"))
  }),
  (fields): ServerEntry => {
    const entry: { -readonly [K in keyof ServerEntry]: ServerEntry[K] } = {}
    for (const [key, value] of Object.entries(fields) as Array<[keyof ServerEntry, never]>) {
      if (value !== undefined) entry[key] = value
    }
    return entry
  }
)

/** The servers under `key` of the current `ConfigProvider`, one nested table per server. */
export const config = (
  key: string,
  extras: (name: string) => McpHub.DefinitionExtras
): Config.Config<ReadonlyArray<McpHub.ServerSpec<CommandExecutor.CommandExecutor | HttpClient.HttpClient>>> =>
  Config.map(
    Config.hashMap(entryConfig, key),
    (servers) =>
      HashMap.toEntries(servers)
        .filter(([, entry]) => entry.disabled !== true)
        .map(([name, entry]) => fromEntry(name, entry, extras(name)))
  )
