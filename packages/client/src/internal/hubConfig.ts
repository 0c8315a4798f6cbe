/**
 * Reading `mcpServers` configurations (Claude Desktop, Cursor, Claude Code; VS Code's `servers`) into hub server
 * definitions. A bad entry becomes an invalid definition under its name, so the others still load.
 *
 * @internal
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import type * as HttpClient from "effect/http/HttpClient"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as HttpTransport from "../HttpTransport.js"
import type * as McpHub from "../McpHub.js"
import * as StdioTransport from "../StdioTransport.js"

const StringRecord = Schema.Record(Schema.String, Schema.String)

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

const decodeEntry = Schema.decodeUnknownResult(ServerEntry, { onExcessProperty: "ignore" })

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const STDIO_TYPES: ReadonlySet<string> = new Set(["stdio"])
const HTTP_TYPES: ReadonlySet<string> = new Set(["http", "streamable-http", "streamableHttp", "sse"])

const invalid = (name: string, problem: string): McpHub.InvalidServer => ({ name, problem })

/** One entry, already decoded, as a definition (or the reason it cannot be one). */
export const fromEntry = (
  name: string,
  entry: ServerEntry,
  extra: McpHub.DefinitionExtras
): McpHub.ServerSpec<ChildProcessSpawner.ChildProcessSpawner | HttpClient.HttpClient> => {
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
export type Parsed = Result.Result<
  ReadonlyArray<McpHub.ServerSpec<ChildProcessSpawner.ChildProcessSpawner | HttpClient.HttpClient>>,
  string
>

/**
 * The servers of a parsed configuration file: its `mcpServers` object and its `servers` object (VS Code). Fails
 * (with the reason) only when the document has neither; a name in both is kept once, as invalid.
 */
export const parse = (document: unknown, extras: (name: string) => McpHub.DefinitionExtras): Parsed => {
  if (!isRecord(document)) return Result.fail("the configuration is not a JSON object")
  const sections = (["mcpServers", "servers"] as const).filter((key) => document[key] !== undefined)
  if (sections.length === 0) return Result.fail(`the configuration has no "mcpServers" (or "servers") object`)
  const out: Array<McpHub.ServerSpec<ChildProcessSpawner.ChildProcessSpawner | HttpClient.HttpClient>> = []
  for (const section of sections) {
    const servers = document[section]
    if (!isRecord(servers)) return Result.fail(`"${section}" is not an object of servers`)
    for (const [name, raw] of Object.entries(servers)) {
      const decoded = decodeEntry(raw)
      if (Result.isFailure(decoded)) {
        const issues = formatIssues(decoded.failure.issue).issues
          .map((issue) => `${(issue.path ?? []).map(String).join(".")}: ${issue.message}`)
        out.push(invalid(name, `the entry is malformed: ${issues.join("; ")}`))
      } else if (decoded.success.disabled !== true) {
        out.push(fromEntry(name, decoded.success, extras(name)))
      }
    }
  }
  return Result.succeed(out)
}

/** Reads and parses a configuration file. */
export const read = (
  path: string,
  extras: (name: string) => McpHub.DefinitionExtras
): Effect.Effect<
  ReadonlyArray<McpHub.ServerSpec<ChildProcessSpawner.ChildProcessSpawner | HttpClient.HttpClient>>,
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
    return yield* Effect.fromResult(Result.mapError(parse(document, extras), (problem) => `${path}: ${problem}`))
  })

// `args` from a flat source (an environment variable) is one string, split on commas, as `Config.Array` reads it
const ConfigArgs = Schema.Union([
  Schema.String.pipe(
    Schema.decodeTo(Schema.Array(Schema.String), {
      decode: SchemaGetter.split(),
      encode: SchemaGetter.transform((args: ReadonlyArray<string>) => args.join(","))
    })
  ),
  Schema.Array(Schema.String)
])

// one nested table per server, with the fields of a configuration file's entry
const ConfigEntries = Schema.Record(Schema.String, ServerEntry.mapFields((fields) => ({ ...fields, args: Schema.optional(ConfigArgs) })))

/** The servers under `key` of the current `ConfigProvider`, one nested table per server. */
export const config = (
  key: string,
  extras: (name: string) => McpHub.DefinitionExtras
): Config.Config<ReadonlyArray<McpHub.ServerSpec<ChildProcessSpawner.ChildProcessSpawner | HttpClient.HttpClient>>> =>
  Config.map(
    Config.schema(ConfigEntries, key),
    (servers) =>
      Object.entries(servers)
        .filter(([, entry]) => entry.disabled !== true)
        .map(([name, entry]) => fromEntry(name, entry, extras(name)))
  )
