/**
 * Running a command against a server: connecting to the server the command line names (or, in `conduit shell`,
 * using the session's connection), within the --timeout, with the server's log on stderr; and the failures of a
 * connection said in words, with the exit code they map to (a server that cannot be started, a server that does
 * not speak the era asked for, an authorization to get with `conduit login`).
 *
 * @since 0.1.0
 */
import * as McpClient from "@conduit-mcp/client/McpClient"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { version } from "./commandLine.js"
import * as Connection from "./connection.js"
import * as Elicitation from "./elicitation.js"
import { type CliError, ExitCode, LoginNeeded, SystemFailure, TimedOut } from "./errors.js"
import * as Output from "./output.js"
import type * as ProjectTrust from "./projectTrust.js"
import { SharedClient } from "./sharedClient.js"
import * as Text from "./terminalText.js"

/**
 * What a command does with its connection.
 *
 * @since 0.1.0
 * @category models
 */
export type Body = (
  client: McpClient.McpClientService,
  resolved: Connection.Resolved
) => Effect.Effect<void, CliError, Scope.Scope | Connection.Platform>

const printServerLogs = (client: McpClient.McpClientService) =>
  Effect.gen(function*() {
    const notifications = yield* client.subscribe
    const s = Output.styles(process.stderr)
    yield* notifications.pipe(
      Stream.filter((n) => n.method === "notifications/message"),
      Stream.runForEach((n) => {
        const params = typeof n.params === "object" && n.params !== null ? n.params : {}
        const level = "level" in params && typeof params.level === "string" ? Text.line(params.level) : "info"
        const logger = "logger" in params && typeof params.logger === "string" ? ` ${Text.line(params.logger)}` : ""
        const data = "data" in params ? params.data : undefined
        return Output.stderr(
          `${s.dim(`[server ${level}${logger}]`)} ${typeof data === "string" ? Text.line(data) : Text.json(data)}`
        )
      }),
      Effect.forkScoped
    )
  })

// Why a connection could not be made, said in words: a server that cannot be started (`cannot start "x": command
// not found`), or a server that does not speak the era asked for with --era (the same exit code on every transport)
const explainConnect = (resolved: Connection.Resolved, error: CliError): CliError => {
  const target = resolved.target
  if (target._tag === "Stdio" && error._tag === "TransportError" && error.reason === "Spawn") {
    const detail = error.detail ?? ""
    const why = /ENOENT|NotFound/.test(detail)
      ? "command not found"
      : /EACCES|PermissionDenied/.test(detail)
      ? "permission denied"
      : detail
    return new SystemFailure({ message: `cannot start ${JSON.stringify(target.command)}: ${why}`, exitCode: ExitCode.Connection })
  }
  const refusedModern = resolved.era === "modern" && (
    (error._tag === "McpError" && error.code === McpSchema.ErrorCode.MethodNotFound) ||
    (error._tag === "TransportError" && error.reason === "HttpStatus" && [400, 404, 405].includes(error.status ?? 0))
  )
  if (refusedModern) {
    return new SystemFailure({
      message: `${Connection.describeTarget(target)} does not speak the 2026-07-28 protocol asked for with --era modern ` +
        `(it answered server/discover with ${error._tag === "McpError" ? `error ${error.code}` : `HTTP ${error.status}`}); ` +
        "it may speak only the 2025 protocol: try --era legacy, or leave --era out",
      exitCode: ExitCode.Protocol
    })
  }
  return error
}

/**
 * How a command connects: whether the server's log is printed, and how forms are answered.
 *
 * @since 0.1.0
 * @category models
 */
export interface WithClientOptions {
  readonly serverLogs?: boolean
  /** How forms are answered (the shell's line reader asks them); on a terminal, with a reader of their own, otherwise. */
  readonly elicitation?: { readonly interactive: boolean; readonly prompter?: Elicitation.Prompter | undefined }
}

/**
 * Runs a command body against the server the command line names, or against the shell's connection.
 *
 * @since 0.1.0
 * @category running
 */
export const withClient = (connection: Connection.ConnectionOptions, body: Body, options?: WithClientOptions) =>
  Effect.flatMap(Effect.serviceOption(SharedClient), (shared) =>
    Option.isSome(shared)
      // in `conduit shell`: the session's connection (its server logs are printed already)
      ? Effect.scoped(body(shared.value.client, { ...shared.value.resolved, json: shared.value.resolved.json || connection.json }))
        .pipe(Effect.mapError(loginHint(shared.value.resolved)))
      : connect(connection, body, options))

// a refused authorization names the server in its hint (`conduit login --url <this URL>`)
const loginHint = (resolved: Connection.Resolved) => (error: CliError): CliError =>
  error._tag === "AuthError" && resolved.target._tag === "Http"
    ? new LoginNeeded({ error, url: resolved.target.url.href })
    : error

const connect = (connection: Connection.ConnectionOptions, body: Body, options?: WithClientOptions) =>
  Effect.gen(function*() {
    const interactive = options?.elicitation?.interactive ?? Elicitation.isInteractive()
    // a project's server not yet approved is shown, and the person at the terminal answers
    const prompter = options?.elicitation?.prompter
    const ask: ProjectTrust.Ask | undefined = !interactive
      ? undefined
      : prompter !== undefined
      ? prompter.ask
      : (question) => Effect.scoped(Effect.flatMap(Elicitation.openPrompter, (opened) => opened.ask(question)))
    const resolved = yield* Connection.resolve(connection, ask)
    const layer = Connection.clientLayer(resolved, {
      interactive,
      prompter: options?.elicitation?.prompter,
      version
    })
    yield* Effect.scoped(
      Effect.gen(function*() {
        const connect = Layer.build(layer).pipe(Effect.mapError((error) => explainConnect(resolved, error)))
        const timeout = resolved.timeout
        const context = yield* timeout === undefined ? connect : connect.pipe(
          Effect.timeoutOrElse({
            duration: timeout,
            orElse: () =>
              Effect.fail(
                new TimedOut({
                  message: `timed out connecting to ${Connection.describeTarget(resolved.target)} (--timeout ${
                    Duration.format(timeout)
                  })`
                })
              )
          })
        )
        const client = Context.get(context, McpClient.McpClient)

        if (options?.serverLogs !== false) yield* printServerLogs(client)
        yield* body(client, resolved)
      })
    ).pipe(Effect.mapError(loginHint(resolved)))
  })
