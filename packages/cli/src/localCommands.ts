/**
 * The commands that talk to no server of the command line: `servers` (the entries of the config files) and
 * `demo-server` (the embedded demo server, served over stdio or Streamable HTTP).
 *
 * @since 0.1.0
 */
import * as McpServer from "@conduit-mcp/server/McpServer"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Stdio from "effect/Stdio"
import type * as Connection from "./connection.js"
import * as DemoServer from "./demoServer.js"
import { UsageError } from "./errors.js"
import * as HttpServer from "./httpServer.js"
import * as Output from "./output.js"
import * as ProjectTrust from "./projectTrust.js"
import * as ServerConfig from "./serverConfig.js"
import * as ShellWords from "./shellWords.js"
import * as Text from "./terminalText.js"

// a file listed: one the user named with --config, or a known one
interface Listed {
  readonly path: string
  readonly origin: ServerConfig.Origin | "config"
  readonly servers: Readonly<Record<string, ServerConfig.ServerEntry>>
}

const targetOf = (entry: ServerConfig.ServerEntry) =>
  entry.url ?? [entry.command ?? "", ...(entry.args ?? [])].map(ShellWords.quote).join(" ")

/**
 * `servers`: the servers of a --config file, or of the config files found, each with the file it comes from and
 * who wrote that file (the user, or the project, with its approval); a project's entry that a user's shadows is
 * listed as ignored. `--trust <name>` approves a project's server after showing what it runs.
 *
 * @since 0.1.0
 * @category commands
 */
export const servers = (connection: Connection.ConnectionOptions, trust: Option.Option<string> = Option.none()) =>
  Effect.gen(function*() {
    if (Option.isSome(trust)) return yield* trustServer(trust.value)
    const config = Option.getOrUndefined(connection.config)
    const files: ReadonlyArray<Listed> = config !== undefined
      ? [{ path: config, origin: "config", servers: yield* ServerConfig.readAll(config) }]
      : yield* ServerConfig.discover()
    const rows = yield* Effect.forEach(files.flatMap((file) =>
      Object.entries(file.servers).map(([name, entry]) => ({ name, entry, file }))
    ), ({ entry, file, name }) =>
      Effect.gen(function*() {
        // the file a bare --server <name> takes it from
        const first = files.find((other) => Object.hasOwn(other.servers, name))
        const approval = file.origin === "project" ? yield* ProjectTrust.status(file.path, name, entry) : undefined
        return {
          name,
          kind: entry.url !== undefined ? "http" : "stdio",
          target: targetOf(entry),
          file: file.path,
          origin: file.origin,
          ...(approval !== undefined ? { approval } : {}),
          ...(first !== undefined && first !== file ? { shadowedBy: first.path } : {})
        }
      }))
    if (connection.json) return yield* Output.json({ servers: rows })
    if (rows.length === 0) {
      return yield* Output.stdout(
        Option.isSome(connection.config)
          ? `(no servers in ${Text.line(connection.config.value)})`
          : `(no config file found; looked in ${Text.line(ServerConfig.knownLocations().join(", "))})`
      )
    }
    const from = (row: (typeof rows)[number]) =>
      row.shadowedBy !== undefined
        ? `${row.origin}, ignored (shadowed)`
        : row.approval === "new"
        ? "project, not approved"
        : row.approval === "changed"
        ? "project, changed since approved"
        : row.approval === "approved"
        ? "project, approved"
        : row.origin
    yield* Output.stdout(
      Output.table(
        ["NAME", "KIND", "COMMAND OR URL", "FROM", "FILE"],
        rows.map((r) => [r.name, r.kind, r.target, from(r), r.file])
      )
    )
  })

// `servers --trust <name>`: the project's entry of that name, shown, then approved
const trustServer = (name: string) =>
  Effect.gen(function*() {
    const found = yield* ServerConfig.discover()
    const project = found.find((file) => file.origin === "project" && Object.hasOwn(file.servers, name))
    const user = found.find((file) => file.origin === "user" && Object.hasOwn(file.servers, name))
    const quoted = Text.line(JSON.stringify(name))
    if (project === undefined) {
      return yield* new UsageError({
        message: user !== undefined
          ? `server ${quoted} comes from your own config file ${Text.line(user.path)}: it needs no approval`
          : `no project config file here defines a server ${quoted} (conduit servers lists them)`
      })
    }
    const entry = yield* ServerConfig.load(project.path, name)
    yield* ProjectTrust.approve(project.path, name, entry)
    yield* Output.stdout(
      [
        `approved server ${quoted} of ${Text.line(project.path)}; it runs until its definition changes:`,
        ...ProjectTrust.describe(entry),
        ...(user !== undefined
          ? [`(your own ${Text.line(user.path)} also defines ${quoted}: that one is used, this one is ignored)`]
          : [])
      ].join("\n")
    )
  })

/**
 * How `demo-server` serves.
 *
 * @since 0.1.0
 * @category models
 */
export interface DemoServerOptions {
  readonly stdio: boolean
  readonly http: Option.Option<string>
  readonly era: "auto" | "legacy" | "modern"
}

/**
 * `demo-server`.
 *
 * @since 0.1.0
 * @category commands
 */
export const demoServer = (options: DemoServerOptions) =>
  Effect.gen(function*() {
    const eras: McpServer.Eras = options.era === "auto" ? "both" : options.era
    if (options.stdio && Option.isSome(options.http)) {
      return yield* new UsageError({ message: "demo-server: choose --stdio or --http <port>, not both" })
    }
    if (!options.stdio && Option.isNone(options.http)) {
      return yield* new UsageError({ message: "demo-server: choose --stdio or --http <port>" })
    }
    const server = yield* DemoServer.make(eras)
    if (Option.isSome(options.http)) {
      const port = /^\d+$/.test(options.http.value) ? Number(options.http.value) : Number.NaN
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        return yield* new UsageError({ message: `demo-server --http: not a port: ${options.http.value}` })
      }
      return yield* HttpServer.serve(server, { port }, (url) =>
        Effect.logInfo(`${DemoServer.name} ${DemoServer.version} serving ${eras} era(s) at ${Text.line(url)}`))
    }
    yield* Effect.logInfo(`${DemoServer.name} ${DemoServer.version} serving ${eras} era(s) over stdio`)
    const stdio = yield* Stdio.Stdio
    yield* McpServer.serve(server, { input: stdio.stdin, output: stdio.stdout() }).pipe(
      Effect.catch((error) => Effect.logError("stdio closed", error))
    )
  }).pipe(Effect.provideService(References.MinimumLogLevel, "Info"))
