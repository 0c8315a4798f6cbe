/**
 * Approval of the servers a project's config file defines. A cloned repository's `.mcp.json` is someone else's
 * text: its command is run only once the user has seen it and said yes, and again only while it is unchanged.
 * Approvals are kept in the user's config directory (`$XDG_CONFIG_HOME/conduit/trusted-servers.json`, `~/.config`,
 * `~/Library/Application Support` on macOS, `%APPDATA%` on Windows; mode 0600 in a 0700 directory, written
 * atomically), one record per project file (its path where it was found, not where a link leads), server name
 * and digest of the server's definition (command, args, env, cwd, url, headers).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Crypto from "node:crypto"
import * as NodePath from "node:path"
import { UsageError } from "./errors.js"
import * as Output from "./output.js"
import * as ServerConfig from "./serverConfig.js"
import * as ShellWords from "./shellWords.js"
import * as Text from "./terminalText.js"

/**
 * Where approvals are kept.
 *
 * @since 0.1.0
 * @category constants
 */
export const storeFile = (): string =>
  NodePath.join(ServerConfig.conduitConfigDirectory(), "trusted-servers.json")

const Approval = Schema.Struct({ file: Schema.String, server: Schema.String, digest: Schema.String })
const Store = Schema.Struct({ version: Schema.Literal(1), approved: Schema.Array(Approval) })
type Store = typeof Store.Type

const sortedPairs = (record: Readonly<Record<string, string>> | undefined) =>
  record === undefined ? null : Object.keys(record).sort().map((key) => [key, record[key]])

/**
 * The digest of what a server's definition makes run or connect to: any change to it asks for a new approval.
 *
 * @since 0.1.0
 * @category approval
 */
export const digest = (entry: ServerConfig.ServerEntry): string =>
  "sha256:" + Crypto.createHash("sha256").update(JSON.stringify([
    entry.command ?? null,
    entry.args ?? null,
    sortedPairs(entry.env),
    entry.cwd ?? null,
    entry.url ?? null,
    sortedPairs(entry.headers)
  ])).digest("hex")

/**
 * A definition as the user is shown it before approving: one line per part, every part escaped.
 *
 * @since 0.1.0
 * @category approval
 */
export const describe = (entry: ServerConfig.ServerEntry): ReadonlyArray<string> => [
  ...(entry.command !== undefined
    ? [`  command: ${Text.line([entry.command, ...(entry.args ?? [])].map(ShellWords.quote).join(" "))}`]
    : []),
  ...Object.entries(entry.env ?? {}).map(([key, value]) => `  env:     ${Text.line(`${key}=${value}`)}`),
  ...(entry.cwd !== undefined ? [`  cwd:     ${Text.line(entry.cwd)}`] : []),
  ...(entry.url !== undefined ? [`  url:     ${Text.url(entry.url)}`] : []),
  ...Object.entries(entry.headers ?? {}).map(([key, value]) => `  header:  ${Text.line(`${key}: ${value}`)}`)
]

const readStore = (fs: FileSystem.FileSystem, path: string): Effect.Effect<Store, UsageError> =>
  Effect.gen(function*() {
    const exists = yield* Effect.orElseSucceed(fs.exists(path), () => false)
    if (!exists) return { version: 1, approved: [] } as const
    const text = yield* Effect.mapError(
      fs.readFileString(path),
      (error) => new UsageError({ message: `cannot read the approvals of project servers ${path}: ${error.message}` })
    )
    const json = Result.try(() => JSON.parse(text) as unknown)
    const store = Result.isSuccess(json) ? Schema.decodeUnknownResult(Store)(json.success) : undefined
    if (store === undefined || Result.isFailure(store)) {
      return yield* new UsageError({
        message: `the approvals of project servers ${path} cannot be read (not the JSON conduit writes); ` +
          "remove the file to approve again"
      })
    }
    return store.success
  })

/**
 * The key of a project file's approvals: its path where it was found, not where a symbolic link leads. A command
 * runs in the directory it was found in (a relative `./server.js`, `npx` or `uv run` take the project's own files
 * from there), so a cloned repository whose `.mcp.json` links to a file approved in another project is asked about.
 */
const fileKey = (path: string) => NodePath.resolve(path)

/**
 * Whether server `name` of the project file `file` was approved with this definition: `"approved"`, `"new"`
 * (never), or `"changed"` (approved with another definition).
 *
 * @since 0.1.0
 * @category approval
 */
export const status = (
  file: string,
  name: string,
  entry: ServerConfig.ServerEntry
): Effect.Effect<"approved" | "new" | "changed", UsageError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const store = yield* readStore(fs, storeFile())
    const key = fileKey(file)
    const record = store.approved.find((approval) => approval.file === key && approval.server === name)
    return record === undefined ? "new" : record.digest === digest(entry) ? "approved" : "changed"
  })

/**
 * Records the approval of server `name` of the project file `file` with this definition (replacing an earlier
 * one).
 *
 * @since 0.1.0
 * @category approval
 */
export const approve = (
  file: string,
  name: string,
  entry: ServerConfig.ServerEntry
): Effect.Effect<void, UsageError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = storeFile()
    const store = yield* readStore(fs, path)
    const key = fileKey(file)
    const approved = [
      ...store.approved.filter((approval) => !(approval.file === key && approval.server === name)),
      { file: key, server: name, digest: digest(entry) }
    ]
    const temporary = `${path}.${process.pid}.tmp`
    yield* Effect.gen(function*() {
      yield* fs.makeDirectory(NodePath.dirname(path), { recursive: true, mode: 0o700 })
      yield* fs.writeFileString(temporary, `${JSON.stringify({ version: 1, approved }, null, 2)}\n`, { mode: 0o600 })
      yield* fs.rename(temporary, path)
    }).pipe(
      Effect.mapError((error) => new UsageError({ message: `cannot record the approval in ${path}: ${error.message}` }))
    )
  })

/**
 * Asks one question on the terminal: `None` when the input ended.
 *
 * @since 0.1.0
 * @category models
 */
export type Ask = (question: string) => Effect.Effect<Option.Option<string>>

/**
 * Lets a project's server run only when it is approved: one approved with this definition goes on; otherwise,
 * with `ask` (a person at a terminal), its definition is shown and the answer decides (yes records the approval);
 * without, it is refused with its definition and the command that approves it.
 *
 * @since 0.1.0
 * @category approval
 */
export const ensureApproved = (
  file: string,
  name: string,
  entry: ServerConfig.ServerEntry,
  ask: Ask | undefined
): Effect.Effect<void, UsageError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const state = yield* status(file, name, entry)
    if (state === "approved") return
    const quoted = Text.line(JSON.stringify(name))
    const why = state === "new"
      ? `server ${quoted} comes from the project file ${Text.line(file)}, which you have not approved yet; ` +
        "it would run:"
      : `server ${quoted} of the project file ${Text.line(file)} changed since you approved it; it would now run:`
    const shown = [why, ...describe(entry)].join("\n")
    if (ask !== undefined) {
      yield* Output.stderr(shown)
      const answer = yield* ask("Run it, and remember that you approved it? [y/N] ")
      if (Option.isSome(answer) && /^y(es)?$/i.test(answer.value.trim())) return yield* approve(file, name, entry)
      return yield* new UsageError({ message: `server ${quoted} was not approved; nothing was run` })
    }
    return yield* new UsageError({
      message: `${shown}\nnothing was run; to approve it, run \`conduit servers --trust ${
        Text.line(ShellWords.quote(name))
      }\` in this directory (or answer yes at a terminal)`
    })
  })
