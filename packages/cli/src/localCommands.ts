/**
 * The commands that talk to no server of the command line: `servers` (the entries of the config files) and
 * `demo-server` (the embedded demo server, served over stdio or Streamable HTTP).
 *
 * @since 0.1.0
 */
import * as McpServer from "@conduit-mcp/server/McpServer"
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import type * as Connection from "./connection.js"
import * as DemoServer from "./demoServer.js"
import { UsageError } from "./errors.js"
import * as HttpServer from "./httpServer.js"
import * as Output from "./output.js"
import * as ServerConfig from "./serverConfig.js"
import * as Text from "./terminalText.js"

/**
 * `servers`: the servers of a --config file, or of the config files found.
 *
 * @since 0.1.0
 * @category commands
 */
export const servers = (connection: Connection.ConnectionOptions) =>
  Effect.gen(function*() {
    const files = Option.isSome(connection.config)
      ? [{ path: connection.config.value, servers: yield* ServerConfig.readAll(connection.config.value) }]
      : yield* ServerConfig.discover()
    const rows = files.flatMap((file) =>
      Object.entries(file.servers).map(([name, entry]) => ({
        name,
        kind: entry.url !== undefined ? "http" : "stdio",
        target: entry.url ?? [entry.command ?? "", ...(entry.args ?? [])].join(" "),
        file: file.path
      }))
    )
    if (connection.json) return yield* Output.json({ servers: rows })
    if (rows.length === 0) {
      return yield* Output.stdout(
        Option.isSome(connection.config)
          ? `(no servers in ${Text.line(connection.config.value)})`
          : `(no config file found; looked in ${Text.line(ServerConfig.knownLocations().join(", "))})`
      )
    }
    yield* Output.stdout(Output.table(["NAME", "KIND", "COMMAND OR URL", "FILE"], rows.map((r) => [r.name, r.kind, r.target, r.file])))
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
    yield* McpServer.serve(server, { input: NodeStream.stdin, output: NodeSink.stdout }).pipe(
      Effect.catchAll((error) => Effect.logError("stdio closed", error))
    )
  }).pipe(Logger.withMinimumLogLevel(LogLevel.Info))
