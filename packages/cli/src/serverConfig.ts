/**
 * Reads a server from a config file in the common `mcpServers` layout (Claude Desktop, Cursor, ...), also
 * accepting the `servers` key some editors use:
 *
 * ```json
 * { "mcpServers": {
 *     "files": { "command": "npx", "args": ["-y", "some-server"], "env": { "ROOT": "/tmp" } },
 *     "remote": { "url": "https://example.com/mcp", "headers": { "X-Team": "a" } } } }
 * ```
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { UsageError } from "./errors.js"

/**
 * @since 0.1.0
 * @category models
 */
export const ServerEntry = Schema.Struct({
  command: Schema.optional(Schema.String),
  args: Schema.optional(Schema.Array(Schema.String)),
  env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  cwd: Schema.optional(Schema.String),
  url: Schema.optional(Schema.String),
  headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  type: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ServerEntry = typeof ServerEntry.Type

const ConfigFile = Schema.Struct({
  mcpServers: Schema.optional(Schema.Record({ key: Schema.String, value: ServerEntry })),
  servers: Schema.optional(Schema.Record({ key: Schema.String, value: ServerEntry }))
})

const decode = Schema.decodeUnknown(Schema.parseJson(ConfigFile))

/**
 * Loads server `name` from `path`.
 *
 * @since 0.1.0
 * @category loading
 */
export const load = (
  path: string,
  name: string
): Effect.Effect<ServerEntry, UsageError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((error) => new UsageError({ message: `cannot read config file ${path}: ${error.message}` }))
    )
    const config = yield* decode(text).pipe(
      Effect.mapError((error) =>
        new UsageError({
          message: `config file ${path} is not a valid mcpServers file:\n${ParseResult.TreeFormatter.formatErrorSync(error)}`
        })
      )
    )
    const servers = { ...config.servers, ...config.mcpServers }
    const entry = Object.hasOwn(servers, name) ? servers[name] : undefined
    if (entry === undefined) {
      const known = Object.keys(servers)
      return yield* new UsageError({
        message: `no server named ${JSON.stringify(name)} in ${path}` +
          (known.length > 0 ? ` (it has: ${known.join(", ")})` : " (it lists no servers)")
      })
    }
    if (entry.command === undefined && entry.url === undefined) {
      return yield* new UsageError({ message: `server ${name} in ${path} has neither "command" nor "url"` })
    }
    if (entry.command !== undefined && entry.url !== undefined) {
      return yield* new UsageError({ message: `server ${name} in ${path} has both "command" and "url"` })
    }
    return entry
  })
