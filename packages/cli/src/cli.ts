/**
 * The `conduit` commands.
 *
 * @since 0.1.0
 */
import * as McpClient from "@conduit-mcp/client/McpClient"
import * as McpError from "@conduit-mcp/client/McpError"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as McpServer from "@conduit-mcp/server/McpServer"
import * as OAuth from "@conduit-mcp/client/OAuth"
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Arguments from "./arguments.js"
import * as Auth from "./auth.js"
import * as Connection from "./connection.js"
import * as DemoServer from "./demoServer.js"
import * as Describe from "./describe.js"
import * as Elicitation from "./elicitation.js"
import * as Grammar from "./grammar.js"
import * as HttpServer from "./httpServer.js"
import { type CliError, ExitCode, LoginNeeded, SystemFailure, TimedOut, ToolFailed, UsageError } from "./errors.js"
import * as Output from "./output.js"
import * as Progress from "./progress.js"
import * as ResourceOutput from "./resourceOutput.js"
import * as ServerConfig from "./serverConfig.js"
import { SharedClient } from "./sharedClient.js"
import * as Shell from "./shell.js"
import * as Tasks from "./tasks.js"
import * as Text from "./terminalText.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const version = "0.1.0"

// ---------------------------------------------------------------------------------------------------------------
// Options shared by every client command

/**
 * The options of every command that talks to a server.
 *
 * @since 0.1.0
 * @category options
 */
export const serverOptions: ReadonlyArray<Grammar.OptionSpec> = [
  {
    name: "stdio",
    value: "\"<command line>\"",
    description: "Start this server as a child process and talk over stdin/stdout (split like a shell would; no shell runs it)"
  },
  { name: "url", value: "<url>", description: "A Streamable HTTP server (either era; falls back to HTTP+SSE)" },
  { name: "config", value: "<file>", description: "A JSON file with an mcpServers map (command, args, env, cwd, or url, headers); with --server" },
  { name: "server", value: "<name>", description: "The entry of the --config file to use" },
  {
    name: "era",
    value: "<era>",
    choices: ["auto", "legacy", "modern"],
    description: "auto (probe, then fall back; the default), legacy (the 2025 handshake) or modern (2026-07-28)"
  },
  { name: "protocol-version", value: "<version>", description: "Pin one protocol version, such as 2025-11-25 or 2026-07-28" },
  { name: "header", value: "\"Name: value\"", repeatable: true, description: "An extra HTTP header for --url servers" },
  {
    name: "env",
    short: "e",
    value: "KEY=VALUE",
    repeatable: true,
    description: "A variable for a stdio server; it gets only PATH, HOME, USER, SHELL, TERM and the like otherwise"
  },
  { name: "cwd", value: "<dir>", description: "The working directory of a stdio server" },
  {
    name: "timeout",
    value: "<duration>",
    description: "Per request and for connecting: 30s, 500ms, 2m (a bare number is seconds; default 60s per request)"
  },
  {
    name: "root",
    value: "<dir>",
    repeatable: true,
    description: "Show this directory to the server as a root (servers such as server-filesystem work inside their roots)"
  },
  { name: "json", description: "Print exactly the JSON result of the MCP call on stdout, and nothing else" },
  {
    name: "verbose",
    short: "v",
    description: "Show the client's log on stderr (warnings, retries, lines a server wrote that were not MCP) and what a " +
      "stdio server writes to its stderr"
  },
  {
    name: "trace",
    description: "Print every JSON-RPC message sent (→) and received (←) on stderr, values of keys such as token, " +
      "password or secret redacted"
  }
]

const argOption: Grammar.OptionSpec = {
  name: "arg",
  value: "key=value",
  repeatable: true,
  description: "One argument, read by the type the schema declares; merged over the JSON arguments"
}

type Options = Grammar.Parsed<unknown>["options"]

const text = (options: Options, name: string): Option.Option<string> =>
  Option.fromNullable(options.get(name)?.at(-1))

const texts = (options: Options, name: string): ReadonlyArray<string> => options.get(name) ?? []

const flag = (options: Options, name: string): boolean => options.has(name)

const connectionOf = (options: Options): Connection.ConnectionOptions => ({
  stdio: text(options, "stdio"),
  url: text(options, "url"),
  config: text(options, "config"),
  server: text(options, "server"),
  era: text(options, "era") as Option.Option<McpClient.EraOption>,
  protocolVersion: text(options, "protocol-version"),
  header: texts(options, "header"),
  env: texts(options, "env"),
  cwd: text(options, "cwd"),
  timeout: text(options, "timeout"),
  json: flag(options, "json"),
  root: texts(options, "root"),
  trace: flag(options, "trace"),
  verbose: flag(options, "verbose")
})

// ---------------------------------------------------------------------------------------------------------------
// Help

const exitCodes: ReadonlyArray<readonly [number, string]> = [
  [ExitCode.Success, "success"],
  [ExitCode.ToolError, "the tool answered with isError: true"],
  [ExitCode.Usage, "usage: bad options or arguments, unreadable config, feature not available"],
  [ExitCode.Connection, "connection or transport failure (the server would not start, closed, HTTP error)"],
  [ExitCode.Auth, "authorization required or refused (HTTP 401/403)"],
  [ExitCode.Protocol, "protocol or server error (a JSON-RPC error, an invalid answer, no shared version)"],
  [ExitCode.Task, "the task was cancelled, expired, or is unknown to the server"],
  [ExitCode.Timeout, "timed out"],
  [ExitCode.Interrupted, "interrupted (Ctrl-C); the in-flight request was cancelled"]
]

const program = {
  summary: "conduit, a command-line MCP client. With no server option it talks to an embedded demo server, in-process.",
  footer: [
    ["Exit codes:", exitCodes.map(([code, meaning]): readonly [string, string] => [String(code), meaning])],
    ["Examples:", [
      ["conduit tools list", "the embedded demo server"],
      ["conduit tools call echo '{\"text\":\"hi\"}'", "call a tool with JSON arguments"],
      ["conduit --stdio \"npx -y @modelcontextprotocol/server-everything\" probe", "a server started as a child"],
      ["conduit --config mcp.json --server files resources list --json", "an entry of a config file, as JSON"]
    ]]
  ] as const
}

// ---------------------------------------------------------------------------------------------------------------
// Running a command against a server

type Body = (
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

interface WithClientOptions {
  readonly serverLogs?: boolean
  /** How forms are answered (the shell's line reader asks them); on a terminal, with a reader of their own, otherwise. */
  readonly elicitation?: { readonly interactive: boolean; readonly prompter?: Elicitation.Prompter | undefined }
}

const withClient = (connection: Connection.ConnectionOptions, body: Body, options?: WithClientOptions) =>
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
    const resolved = yield* Connection.resolve(connection)
    const layer = Connection.clientLayer(resolved, {
      interactive: options?.elicitation?.interactive ?? Elicitation.isInteractive(),
      prompter: options?.elicitation?.prompter,
      version
    })
    yield* Effect.scoped(
      Effect.gen(function*() {
        const connect = Layer.build(layer).pipe(Effect.mapError((error) => explainConnect(resolved, error)))
        const timeout = resolved.timeout
        const context = yield* timeout === undefined ? connect : connect.pipe(
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () =>
              new TimedOut({
                message: `timed out connecting to ${Connection.describeTarget(resolved.target)} (--timeout ${
                  Duration.format(timeout)
                })`
              })
          })
        )
        const client = Context.get(context, McpClient.McpClient)

        if (options?.serverLogs !== false) yield* printServerLogs(client)
        yield* body(client, resolved)
      })
    ).pipe(Effect.mapError(loginHint(resolved)))
  })

// ---------------------------------------------------------------------------------------------------------------
// Arguments

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const nameList = (names: ReadonlyArray<string>): string =>
  names.length === 0 ? "none" : names.length > 12 ? `${names.slice(0, 12).join(", ")}, ...` : names.join(", ")

// The tool, from the list (also what lets the client check the tool's structured output against its schema).
const findTool = (client: McpClient.McpClientService, name: string) =>
  Effect.flatMap(client.listTools(), (tools) => {
    const tool = tools.find((candidate) => candidate.name === name)
    return tool !== undefined
      ? Effect.succeed(tool)
      : Effect.fail(new UsageError({ message: `unknown tool ${JSON.stringify(name)} (tools: ${nameList(tools.map((t) => t.name))})` }))
  })

const findPrompt = (client: McpClient.McpClientService, name: string) =>
  Effect.flatMap(client.listPrompts(), (prompts) => {
    const prompt = prompts.find((candidate) => candidate.name === name)
    return prompt !== undefined
      ? Effect.succeed(prompt)
      : Effect.fail(
        new UsageError({ message: `unknown prompt ${JSON.stringify(name)} (prompts: ${nameList(prompts.map((p) => p.name))})` })
      )
  })

/**
 * Reads the `<ref>` of `complete`: `prompt:<name>`, `resource:<uri-template>`, a bare URI (a resource) or a
 * bare name (a prompt).
 *
 * @since 0.1.0
 * @category arguments
 */
export const parseReference = (text: string): McpSchema.CompleteReference => {
  const match = /^(?:ref\/)?(prompt|resource):(.*)$/.exec(text)
  if (match !== null && !match[2].startsWith("//")) {
    return match[1] === "prompt" ? { type: "ref/prompt", name: match[2] } : { type: "ref/resource", uri: match[2] }
  }
  return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(text) ? { type: "ref/resource", uri: text } : { type: "ref/prompt", name: text }
}

// ---------------------------------------------------------------------------------------------------------------
// Commands

const probe = (connection: Connection.ConnectionOptions) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const session = yield* client.session
      const result = Output.probeResult(session)
      yield* resolved.json ? Output.json(result) : Output.stdout(Output.probe(result, session.transport.target))
    }))

const toolsList = (connection: Connection.ConnectionOptions) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.listTools(),
      (tools) => resolved.json ? Output.json({ tools }) : Output.stdout(Output.tools(tools))
    ))

const toolsCall = (
  connection: Connection.ConnectionOptions,
  name: string,
  json: Option.Option<string>,
  arg: ReadonlyArray<string>,
  detach = false
) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const tool = yield* findTool(client, name)
      const args = yield* Arguments.toolArguments(tool, json, arg)
      // a tool that runs as a task (or --detach): the task's status on stderr, or its id
      const asTask = yield* Tasks.callTool(client, tool, args, { detach, json: resolved.json })
      if (Option.isSome(asTask)) return
      const progress = yield* Progress.make({ quiet: false })
      const result = yield* client.callTool({ name, arguments: args }, {
        onProgress: progress.onProgress,
        // a tool that keeps reporting progress is still working: each report restarts the timeout
        resetTimeoutOnProgress: true
      }).pipe(
        Effect.ensuring(progress.clear)
      )
      yield* resolved.json ? Output.json(result) : Output.stdout(Output.callResult(result))
      if (result.isError === true) return yield* new ToolFailed({ tool: name })
    }))

const toolsDescribe = (connection: Connection.ConnectionOptions, name: string) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      findTool(client, name),
      (tool) => resolved.json ? Output.json(tool) : Output.stdout(Describe.tool(tool))
    ))

const servers = (connection: Connection.ConnectionOptions) =>
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
          ? `(no servers in ${connection.config.value})`
          : `(no config file found; looked in ${ServerConfig.knownLocations().join(", ")})`
      )
    }
    yield* Output.stdout(Output.table(["NAME", "KIND", "COMMAND OR URL", "FILE"], rows.map((r) => [r.name, r.kind, r.target, r.file])))
  })

const resourcesList = (connection: Connection.ConnectionOptions) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.listResources(),
      (resources) => resolved.json ? Output.json({ resources }) : Output.stdout(Output.resources(resources))
    ))

const resourcesTemplates = (connection: Connection.ConnectionOptions) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.listResourceTemplates(),
      (resourceTemplates) =>
        resolved.json ? Output.json({ resourceTemplates }) : Output.stdout(Output.templates(resourceTemplates))
    ))

const resourcesRead = (connection: Connection.ConnectionOptions, uri: string, output: Option.Option<string>) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const result = yield* client.readResource(uri)
      if (Option.isSome(output)) return yield* ResourceOutput.toFile(uri, result, output.value, resolved.json)
      if (resolved.json) return yield* Output.json(result)
      // a file or a pipe gets a binary resource's bytes as they are
      if (process.stdout.isTTY !== true && ResourceOutput.hasBlob(result)) {
        return yield* ResourceOutput.toStdout(ResourceOutput.bytes(result))
      }
      yield* Output.stdout(Output.readResult(result))
    }))

const promptsList = (connection: Connection.ConnectionOptions) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.listPrompts(),
      (prompts) => resolved.json ? Output.json({ prompts }) : Output.stdout(Output.prompts(prompts))
    ))

const promptsGet = (
  connection: Connection.ConnectionOptions,
  name: string,
  json: Option.Option<string>,
  arg: ReadonlyArray<string>
) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const prompt = yield* findPrompt(client, name)
      const args = yield* Arguments.promptArguments(prompt, json, arg)
      const result = yield* client.getPrompt({ name, arguments: args })
      yield* resolved.json ? Output.json(result) : Output.stdout(Output.promptResult(result))
    }))

const complete = (
  connection: Connection.ConnectionOptions,
  ref: string,
  argument: string,
  value: string,
  arg: ReadonlyArray<string>
) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const context = Object.fromEntries(yield* Arguments.parseKeyValues(arg))
      const result = yield* client.complete({
        ref: parseReference(ref),
        argument: { name: argument, value },
        ...(Object.keys(context).length > 0 ? { context: { arguments: context } } : {})
      })
      yield* resolved.json ? Output.json(result) : Output.stdout(Output.completion(result))
    }))

const listMethods = {
  tools: "notifications/tools/list_changed",
  prompts: "notifications/prompts/list_changed",
  resources: "notifications/resources/list_changed",
  updated: "notifications/resources/updated"
} as const

interface ListenOptions {
  readonly connection: Connection.ConnectionOptions
  readonly tools: boolean
  readonly prompts: boolean
  readonly resources: boolean
  readonly uri: ReadonlyArray<string>
}

const listen = (options: ListenOptions) =>
  withClient(options.connection, (client, resolved) =>
    Effect.gen(function*() {
      const notifications = yield* client.subscribe
      const session = yield* client.session
      for (const uri of options.uri) {
        if (session.era === "modern") continue // subscriptions/listen below asks for it
        if (session.capabilities.resources?.subscribe === true) {
          yield* client.request("resources/subscribe", { uri }, McpSchema.EmptyResult)
        } else {
          yield* Output.stderr(
            `conduit: the server does not offer resource subscriptions (${session.era} era); ` +
              `showing any update of ${uri} it sends`
          )
        }
      }
      const methods = new Set<string>()
      if (options.tools) methods.add(listMethods.tools)
      if (options.prompts) methods.add(listMethods.prompts)
      if (options.resources) methods.add(listMethods.resources)
      if (options.uri.length > 0) methods.add(listMethods.updated)
      const shared = yield* Effect.serviceOption(SharedClient)
      const shell = Option.isSome(shared)
      // in the shell, listen runs in the background: the shell goes on once the subscriptions are in force
      const listening = Option.isSome(shared) && shared.value.listening !== undefined ? shared.value.listening : Effect.void
      const wanted = (notification: McpSchema.ServerNotification) => {
        // the shell prints the server's log messages already
        if (methods.size === 0) return !(shell && notification.method === "notifications/message")
        if (!methods.has(notification.method)) return false
        if (notification.method !== listMethods.updated || options.uri.length === 0) return true
        const params = notification.params
        return isRecord(params) && typeof params.uri === "string" && options.uri.includes(params.uri)
      }
      yield* Output.stderr(
        `conduit: listening to ${Connection.describeTarget(resolved.target)}` +
          `${methods.size > 0 ? ` for ${[...methods].join(", ")}` : ""}; ${shell ? "unlisten" : "Ctrl-C"} stops`
      )
      // A modern server sends list changes and resource updates only on a subscriptions/listen stream.
      const everything = methods.size === 0
      const listened = session.era === "modern"
        ? client.listen({
          toolsListChanged: everything || options.tools,
          promptsListChanged: everything || options.prompts,
          resourcesListChanged: everything || options.resources,
          resourceSubscriptions: options.uri
        }).pipe(
          Stream.tap((n) => n.method === "notifications/subscriptions/acknowledged" ? listening : Effect.void),
          Stream.filter((n) => n.method !== "notifications/subscriptions/acknowledged"),
          Stream.catchTag("McpError", (error) =>
            Stream.fromEffect(
              Output.stderr(`conduit: the server refused subscriptions/listen (${error.message}); showing what it sends`)
            ).pipe(Stream.zipRight(Stream.fromEffect(listening)), Stream.drain))
        )
        : Stream.fromEffect(listening).pipe(Stream.drain)
      yield* Stream.merge(notifications, listened).pipe(
        Stream.filter(wanted),
        Stream.runForEach((notification) =>
          resolved.json
            ? Output.stdout(Text.json({ method: notification.method, params: notification.params }))
            : Output.stdout(Output.notification(notification))
        )
      )
      const state = yield* client.state
      return yield* state._tag === "Closed" && state.error !== undefined
        ? Effect.fail(state.error)
        : Effect.fail(
          new McpError.TransportError({
            transport: resolved.target._tag === "Stdio" ? "stdio" : resolved.target._tag === "Http" ? "http" : "in-process",
            reason: "Closed",
            detail: "the connection closed while listening"
          })
        )
    }), { serverLogs: false })

interface DemoServerOptions {
  readonly stdio: boolean
  readonly http: Option.Option<string>
  readonly era: "auto" | "legacy" | "modern"
}

const demoServer = (options: DemoServerOptions) =>
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
        Effect.logInfo(`${DemoServer.name} ${DemoServer.version} serving ${eras} era(s) at ${url}`))
    }
    yield* Effect.logInfo(`${DemoServer.name} ${DemoServer.version} serving ${eras} era(s) over stdio`)
    yield* McpServer.serve(server, { input: NodeStream.stdin, output: NodeSink.stdout }).pipe(
      Effect.catchAll((error) => Effect.logError("stdio closed", error))
    )
  }).pipe(Logger.withMinimumLogLevel(LogLevel.Info))

// ---------------------------------------------------------------------------------------------------------------
// OAuth

const httpTarget = (connection: Connection.ConnectionOptions, command: string) =>
  Effect.gen(function*() {
    const resolved = yield* Connection.resolve(connection)
    if (resolved.target._tag !== "Http") {
      return yield* new UsageError({
        message: `${command} is for HTTP servers: give --url <url> (or a --config entry with a "url")`
      })
    }
    return { url: resolved.target.url, json: resolved.json }
  })

const withAuthorizer = <A>(
  mode: Auth.LoginMode | undefined,
  url: URL,
  use: (authorizer: OAuth.Authorizer) => Effect.Effect<A, CliError>
) =>
  Effect.flatMap(OAuth.OAuth, (oauth) => Effect.flatMap(oauth.authorizer(url), use)).pipe(
    Effect.provide(Auth.layer(mode))
  )

interface LoginOptions {
  readonly connection: Connection.ConnectionOptions
  readonly device: boolean
  readonly noBrowser: boolean
  readonly scope: ReadonlyArray<string>
}

const login = (options: LoginOptions) =>
  Effect.gen(function*() {
    const { json, url } = yield* httpTarget(options.connection, "login")
    const mode: Auth.LoginMode = options.device ? "device" : options.noBrowser ? "no-browser" : "browser"
    const info = yield* withAuthorizer(
      mode,
      url,
      (authorizer) => authorizer.authorize(options.scope.length > 0 ? { scope: options.scope } : undefined)
    )
    yield* json
      ? Output.json(Auth.tokenJson(info))
      : Output.stdout(`Logged in; the token is stored in ${Auth.tokenFile()}\n${Auth.describeToken(info)}`)
  })

const logout = (connection: Connection.ConnectionOptions) =>
  Effect.gen(function*() {
    const { url } = yield* httpTarget(connection, "logout")
    // `current` tells whether there was anything to forget
    const held = yield* withAuthorizer(undefined, url, (authorizer) =>
      Effect.flatMap(authorizer.current, (current) => Effect.as(authorizer.logout, Option.isSome(current))))
    yield* Output.stderr(held ? `Logged out of ${url.href}` : `No token was stored for ${url.href}`)
  })

const whoami = (connection: Connection.ConnectionOptions) =>
  Effect.gen(function*() {
    const { json, url } = yield* httpTarget(connection, "whoami")
    const current = yield* withAuthorizer(undefined, url, (authorizer) => authorizer.current)
    if (Option.isNone(current)) {
      return yield* new McpError.AuthError({
        status: 401,
        challenges: [],
        detail: `not logged in to ${url.href}`
      })
    }
    yield* json ? Output.json(Auth.tokenJson(current.value)) : Output.stdout(Auth.describeToken(current.value))
  })

// ---------------------------------------------------------------------------------------------------------------
// The shell

const shell = (connection: Connection.ConnectionOptions, mode: "shell" | "run", script: Option.Option<string>) =>
  Shell.run({
    commands,
    mode,
    script,
    json: connection.json,
    version,
    connect: (body, elicitation) => withClient(connection, body, { elicitation })
  })

// ---------------------------------------------------------------------------------------------------------------
// The command table

type Run = (parsed: Grammar.Parsed<unknown>) => Effect.Effect<void, CliError, Connection.Platform>

const command = (spec: Grammar.CommandSpec<Run>): Grammar.CommandSpec<Run> => spec

const arg = (parsed: Grammar.Parsed<unknown>, index: number): string => parsed.arguments[index] ?? ""

const optionalArg = (parsed: Grammar.Parsed<unknown>, index: number): Option.Option<string> =>
  Option.fromNullable(parsed.arguments[index])

/**
 * Every command, in the order help lists them.
 *
 * @since 0.1.0
 * @category commands
 */
export const commands: ReadonlyArray<Grammar.CommandSpec<Run>> = [
  command({
    path: ["servers"],
    description: "List the servers of a --config file, or of the config files of Claude Desktop, Cursor, VS Code and " +
      "the project (.mcp.json); --server <name> alone picks from those",
    run: (p) => servers(connectionOf(p.options))
  }),
  command({
    path: ["probe"],
    description: "Connect and show the era, protocol version, transport, server info and capabilities",
    run: (p) => probe(connectionOf(p.options))
  }),
  command({ path: ["tools", "list"], description: "List the server's tools", run: (p) => toolsList(connectionOf(p.options)) }),
  command({
    path: ["tools", "call"],
    description: "Call a tool; progress is shown on stderr; Ctrl-C cancels the call",
    arguments: [
      { name: "name", description: "The tool" },
      { name: "json-arguments", description: "The arguments as a JSON object, such as '{\"text\":\"hi\"}'", optional: true }
    ],
    options: [argOption, {
      name: "detach",
      description: "Run the tool as a task and print its id at once (see tasks get|result|cancel)"
    }],
    run: (p) =>
      toolsCall(connectionOf(p.options), arg(p, 0), optionalArg(p, 1), texts(p.options, "arg"), flag(p.options, "detach"))
  }),
  command({
    path: ["tools", "describe"],
    description: "Show one tool: its description, annotations, and its arguments and result as readable text",
    arguments: [{ name: "name", description: "The tool" }],
    run: (p) => toolsDescribe(connectionOf(p.options), arg(p, 0))
  }),
  ...Tasks.commands((connection, body) => withClient(connection, body), (p) => connectionOf(p.options)),
  command({
    path: ["resources", "list"],
    description: "List the server's resources",
    run: (p) => resourcesList(connectionOf(p.options))
  }),
  command({
    path: ["resources", "templates"],
    description: "List the server's resource templates",
    run: (p) => resourcesTemplates(connectionOf(p.options))
  }),
  command({
    path: ["resources", "read"],
    description: "Read a resource: text on a terminal; the bytes as they are to a file, a pipe or --output",
    arguments: [{ name: "uri", description: "The resource URI" }],
    options: [{
      name: "output",
      short: "o",
      value: "<file>",
      description: "Write the contents to this file (text as UTF-8, binary as its bytes)"
    }],
    run: (p) => resourcesRead(connectionOf(p.options), arg(p, 0), text(p.options, "output"))
  }),
  command({ path: ["prompts", "list"], description: "List the server's prompts", run: (p) => promptsList(connectionOf(p.options)) }),
  command({
    path: ["prompts", "get"],
    description: "Get a prompt with its arguments",
    arguments: [
      { name: "name", description: "The prompt" },
      { name: "json-arguments", description: "The arguments as a JSON object of strings", optional: true }
    ],
    options: [{ ...argOption, description: "One argument (prompt arguments are strings); merged over the JSON arguments" }],
    run: (p) => promptsGet(connectionOf(p.options), arg(p, 0), optionalArg(p, 1), texts(p.options, "arg"))
  }),
  command({
    path: ["complete"],
    description: "Ask the server to complete a prompt argument or a template variable",
    arguments: [
      { name: "ref", description: "prompt:<name> or resource:<uri-template> (a bare URI means a resource, a name a prompt)" },
      { name: "argument", description: "The argument or template variable" },
      { name: "value", description: "What was typed so far" }
    ],
    options: [{ ...argOption, description: "An argument already chosen, sent as context" }],
    run: (p) => complete(connectionOf(p.options), arg(p, 0), arg(p, 1), arg(p, 2), texts(p.options, "arg"))
  }),
  command({
    path: ["listen"],
    description: "Print server notifications until interrupted (all of them unless filtered)",
    options: [
      { name: "tools", description: "Show tool list changes" },
      { name: "prompts", description: "Show prompt list changes" },
      { name: "resources", description: "Show resource list changes" },
      { name: "uri", value: "<uri>", repeatable: true, description: "Subscribe to updates of this resource" }
    ],
    run: (p) =>
      listen({
        connection: connectionOf(p.options),
        tools: flag(p.options, "tools"),
        prompts: flag(p.options, "prompts"),
        resources: flag(p.options, "resources"),
        uri: texts(p.options, "uri")
      })
  }),
  command({
    path: ["login"],
    description: "Sign in to an OAuth-protected HTTP server (--url) and store the token",
    options: [
      { name: "device", description: "Use the device grant: approve on another device with a code" },
      { name: "no-browser", description: "Do not open a browser: show the URL and paste back the address it redirects to" },
      { name: "scope", value: "<scope>", repeatable: true, description: "A scope to ask for" }
    ],
    run: (p) =>
      login({
        connection: connectionOf(p.options),
        device: flag(p.options, "device"),
        noBrowser: flag(p.options, "no-browser"),
        scope: texts(p.options, "scope")
      })
  }),
  command({ path: ["logout"], description: "Forget the stored token of an HTTP server", run: (p) => logout(connectionOf(p.options)) }),
  command({
    path: ["whoami"],
    description: "Show the stored token's issuer, scope and expiry (never the token itself)",
    run: (p) => whoami(connectionOf(p.options))
  }),
  command({
    path: ["shell"],
    description: "Keep one connection and type commands on it (tools call ..., listen in the background, help); " +
      "history, Tab completion; Ctrl-C cancels a command, Ctrl-D leaves. Reads commands from stdin when it is not a terminal",
    run: (p) => shell(connectionOf(p.options), "shell", Option.none())
  }),
  command({
    path: ["run"],
    description: "Run the commands of a file (or of stdin) one after the other on one connection; stops at the first failure",
    arguments: [{ name: "file", description: "One shell command per line (# starts a comment); - or none: stdin", optional: true }],
    run: (p) => shell(connectionOf(p.options), "run", optionalArg(p, 0))
  }),
  command({
    path: ["demo-server"],
    description: "Serve the demo server to other clients (and to conduit --stdio)",
    server: false,
    options: [
      { name: "stdio", description: "Serve over stdin/stdout" },
      { name: "http", value: "<port>", description: "Serve Streamable HTTP at http://127.0.0.1:<port>/mcp (0 picks a free port)" },
      { name: "era", value: "<era>", choices: ["auto", "legacy", "modern"], description: "auto (both eras; the default), legacy or modern" }
    ],
    run: (p) =>
      demoServer({
        stdio: flag(p.options, "stdio"),
        http: text(p.options, "http"),
        era: Option.getOrElse(text(p.options, "era"), () => "auto") as DemoServerOptions["era"]
      })
  })
]

const helpStyle = (): Grammar.HelpStyle => {
  const columns = process.stdout.columns
  return {
    width: Math.min(typeof columns === "number" && columns > 40 ? columns : 100, 120),
    bold: Output.styles(process.stdout).bold
  }
}

/**
 * The help text for a command path (empty: the whole program).
 *
 * @since 0.1.0
 * @category help
 */
export const helpText = (path: ReadonlyArray<string>): string =>
  Grammar.help(path, commands, serverOptions, program, helpStyle())

/**
 * Runs `conduit` on the given arguments (`process.argv` without the node and script paths).
 *
 * @since 0.1.0
 * @category running
 */
export const run = (
  argv: ReadonlyArray<string>
): Effect.Effect<void, CliError, Connection.Platform> =>
  Effect.flatMap(Grammar.parse(argv, commands, serverOptions), (request) => {
    switch (request._tag) {
      case "Help":
        return Output.stdout(helpText(request.path).trimEnd())
      case "Version":
        return Output.stdout(version)
      case "Run":
        return (request.parsed.command.run as Run)(request.parsed).pipe(
          // a failure is reported once, as a sentence; the log's own lines are for --verbose
          request.parsed.command.server !== false
            ? Logger.withMinimumLogLevel(request.parsed.options.has("verbose") ? LogLevel.Debug : LogLevel.Error)
            : (effect) => effect
        )
    }
  })
