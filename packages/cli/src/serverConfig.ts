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
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { UsageError } from "./errors.js"

/**
 * @since 0.1.0
 * @category models
 */
export const ServerEntry = Schema.Struct({
  command: Schema.optional(Schema.String),
  args: Schema.optional(Schema.Array(Schema.String)),
  env: Schema.optional(Schema.Record(Schema.String, Schema.String)),
  cwd: Schema.optional(Schema.String),
  url: Schema.optional(Schema.String),
  headers: Schema.optional(Schema.Record(Schema.String, Schema.String)),
  type: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ServerEntry = typeof ServerEntry.Type

const ConfigFile = Schema.Struct({
  mcpServers: Schema.optional(Schema.Record(Schema.String, ServerEntry)),
  servers: Schema.optional(Schema.Record(Schema.String, ServerEntry))
})

const decodeConfig = Schema.decodeUnknownEffect(ConfigFile)

/**
 * Every server of the config file at `path`, by name. An unreadable file, text that is not JSON, and JSON that is
 * not an mcpServers file are each one usage error whose first line says which.
 *
 * @since 0.1.0
 * @category loading
 */
export const readAll = (
  path: string
): Effect.Effect<Readonly<Record<string, ServerEntry>>, UsageError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((error) =>
        new UsageError({
          message: `cannot read config file ${path}: ${
            error.reason._tag === "NotFound"
              ? "no such file"
              : error.reason._tag === "PermissionDenied"
              ? "permission denied"
              : error.reason._tag === "BadResource"
              ? "not a file"
              : error.message
          }`
        })
      )
    )
    const json = Result.try({ try: () => JSON.parse(text) as unknown, catch: (error) => String(error) })
    if (Result.isFailure(json)) {
      return yield* new UsageError({ message: `config file ${path} is not JSON: ${json.failure.split("\n")[0]}` })
    }
    const config = yield* decodeConfig(json.success).pipe(
      Effect.mapError((error) => {
        const detail = error.message.split("\n")
        return new UsageError({
          message: `config file ${path} is not an mcpServers file (each entry needs "command" or "url")` +
            `\n${detail.slice(0, 8).join("\n")}${detail.length > 8 ? "\n…" : ""}`
        })
      })
    )
    return { ...config.servers, ...config.mcpServers }
  })

/**
 * Who wrote a config file: the user (their own host configuration, in their home) or the project in the working
 * directory (a cloned repository's `.mcp.json`, whose commands nobody has looked at yet).
 *
 * @since 0.1.0
 * @category models
 */
export type Origin = "user" | "project"

/**
 * A config file's path and who wrote it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Location {
  readonly path: string
  readonly origin: Origin
}

/**
 * `$XDG_CONFIG_HOME` when it is an absolute path; the XDG spec has an empty or relative value ignored, and taken as
 * it is it would name a directory under the working directory, which a cloned repository controls.
 *
 * @since 0.1.0
 * @category discovery
 */
export const xdgConfigHome = (): string | undefined => {
  const value = process.env.XDG_CONFIG_HOME
  return value !== undefined && NodePath.isAbsolute(value) ? value : undefined
}

/**
 * The directory of conduit's own files (its tokens, its approvals of project servers): `$XDG_CONFIG_HOME` when it
 * is an absolute path, else `~/Library/Application Support` on macOS, `%APPDATA%` on Windows, `~/.config`
 * elsewhere; `conduit` under it.
 *
 * @since 0.1.0
 * @category discovery
 */
export const conduitConfigDirectory = (): string => {
  const home = Os.homedir()
  const base = xdgConfigHome() ??
    (process.platform === "darwin"
      ? NodePath.join(home, "Library", "Application Support")
      : process.platform === "win32"
      ? process.env.APPDATA ?? NodePath.join(home, "AppData", "Roaming")
      : NodePath.join(home, ".config"))
  return NodePath.join(base, "conduit")
}

/**
 * Where MCP hosts keep their server lists, in the order a bare `--server <name>` searches them: the user's files
 * first (Claude Desktop, Cursor, VS Code) for this platform, then the project's in the working directory
 * (`.mcp.json`, `.cursor/mcp.json`, `.vscode/mcp.json`), so that a project cannot replace a server of the user's
 * by giving its name. A project path that is one of the user's (the working directory is the home) is the user's.
 *
 * @since 0.1.0
 * @category discovery
 */
export const locations = (
  home: string = Os.homedir(),
  cwd: string = process.cwd(),
  platform: NodeJS.Platform = process.platform,
  appData: string | undefined = process.env.APPDATA
): ReadonlyArray<Location> => {
  const join = NodePath.join
  const userConfig = platform === "darwin"
    ? join(home, "Library", "Application Support")
    : platform === "win32"
    ? appData ?? join(home, "AppData", "Roaming")
    : xdgConfigHome() ?? join(home, ".config")
  const user = [
    join(userConfig, "Claude", "claude_desktop_config.json"),
    join(home, ".cursor", "mcp.json"),
    join(userConfig, "Code", "User", "mcp.json")
  ].map((path): Location => ({ path, origin: "user" }))
  const isUsers = new Set(user.map((location) => NodePath.resolve(location.path)))
  const project = [join(cwd, ".mcp.json"), join(cwd, ".cursor", "mcp.json"), join(cwd, ".vscode", "mcp.json")]
    .filter((path) => !isUsers.has(NodePath.resolve(path)))
    .map((path): Location => ({ path, origin: "project" }))
  return [...user, ...project]
}

/**
 * The paths of {@link locations}, in the same order.
 *
 * @since 0.1.0
 * @category discovery
 */
export const knownLocations = (
  home: string = Os.homedir(),
  cwd: string = process.cwd(),
  platform: NodeJS.Platform = process.platform,
  appData: string | undefined = process.env.APPDATA
): ReadonlyArray<string> => locations(home, cwd, platform, appData).map((location) => location.path)

/**
 * A known config file that exists, with its servers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Found extends Location {
  readonly servers: Readonly<Record<string, ServerEntry>>
}

/**
 * The known config files that exist, with their servers (files that cannot be read are passed over).
 *
 * @since 0.1.0
 * @category discovery
 */
export const discover = (
  known: ReadonlyArray<Location> = locations()
): Effect.Effect<ReadonlyArray<Found>, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const found: Array<Found> = []
    for (const location of known) {
      const exists = yield* Effect.orElseSucceed(fs.exists(location.path), () => false)
      if (!exists) continue
      const servers = yield* Effect.option(readAll(location.path))
      if (servers._tag === "Some") found.push({ ...location, servers: servers.value })
    }
    return found
  })

/**
 * Where a bare `--server <name>` finds its entry: the first file that names it (the user's before the project's),
 * and the other files that name it too, which it shadows.
 *
 * @since 0.1.0
 * @category discovery
 */
export const pick = (
  found: ReadonlyArray<Found>,
  name: string
): { readonly chosen: Found; readonly shadowed: ReadonlyArray<Found> } | undefined => {
  const naming = found.filter((file) => Object.hasOwn(file.servers, name))
  return naming.length === 0 ? undefined : { chosen: naming[0], shadowed: naming.slice(1) }
}

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
    const servers = yield* readAll(path)
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
