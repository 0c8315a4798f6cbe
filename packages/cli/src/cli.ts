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
import * as Args from "@effect/cli/Args"
import type * as CliApp from "@effect/cli/CliApp"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Span from "@effect/cli/HelpDoc/Span"
import * as Options from "@effect/cli/Options"
import type * as ValidationError from "@effect/cli/ValidationError"
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as NodeStream from "@effect/platform-node/NodeStream"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Auth from "./auth.js"
import * as Connection from "./connection.js"
import * as DemoServer from "./demoServer.js"
import * as Elicitation from "./elicitation.js"
import * as HttpServer from "./httpServer.js"
import { type CliError, ExitCode, TimedOut, ToolFailed, UsageError } from "./errors.js"
import * as Output from "./output.js"
import * as Progress from "./progress.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const version = "0.1.0"

// ---------------------------------------------------------------------------------------------------------------
// Options shared by every client command

const connectionOptions = Options.all({
  stdio: Options.text("stdio").pipe(
    Options.withDescription("Run this command line as a stdio MCP server (split like a shell would, not run by one)"),
    Options.optional
  ),
  url: Options.text("url").pipe(Options.withDescription("Connect to this Streamable HTTP MCP server"), Options.optional),
  config: Options.text("config").pipe(
    Options.withDescription("A JSON file with an mcpServers map (command, args, env, url, headers); needs --server"),
    Options.optional
  ),
  server: Options.text("server").pipe(Options.withDescription("The entry of the --config file"), Options.optional),
  era: Options.choice("era", ["auto", "legacy", "modern"]).pipe(
    Options.withDescription("Protocol era: auto (probe, then fall back), legacy (2025 handshake), modern (2026-07-28)"),
    Options.optional
  ),
  protocolVersion: Options.text("protocol-version").pipe(
    Options.withDescription("Pin one protocol version, such as 2025-11-25 or 2026-07-28"),
    Options.optional
  ),
  header: Options.text("header").pipe(
    Options.withDescription("An HTTP header \"Name: value\" for --url servers (repeatable)"),
    Options.repeated
  ),
  timeout: Options.text("timeout").pipe(
    Options.withDescription("Give up after this long: 30s, 500ms, 2m (default: 60s per request)"),
    Options.optional
  ),
  json: Options.boolean("json").pipe(
    Options.withDescription("Print exactly the JSON result of the MCP call on stdout, and nothing else")
  )
})

const argOption = Options.text("arg").pipe(
  Options.withDescription("An argument as key=value (repeatable); merged over the JSON arguments"),
  Options.repeated
)

// ---------------------------------------------------------------------------------------------------------------
// Root

const exitCodes: ReadonlyArray<readonly [number, string]> = [
  [ExitCode.Success, "success"],
  [ExitCode.ToolError, "the tool answered with isError: true"],
  [ExitCode.Usage, "usage: bad options or arguments, unreadable config, feature not available"],
  [ExitCode.Connection, "connection or transport failure (the server would not start, closed, HTTP error)"],
  [ExitCode.Auth, "authorization required or refused (HTTP 401/403)"],
  [ExitCode.Protocol, "protocol or server error (a JSON-RPC error, an invalid answer, no shared version)"],
  [ExitCode.Timeout, "timed out"],
  [ExitCode.Interrupted, "interrupted (Ctrl-C); the in-flight request was cancelled"]
]

/**
 * The help footer: exit codes and examples.
 *
 * @since 0.1.0
 * @category help
 */
export const footer: HelpDoc.HelpDoc = HelpDoc.blocks([
  HelpDoc.h1("EXIT CODES"),
  HelpDoc.descriptionList([
    [Span.text(String(exitCodes[0][0])), HelpDoc.p(exitCodes[0][1])],
    ...exitCodes.slice(1).map(([code, text]): [Span.Span, HelpDoc.HelpDoc] => [
      Span.text(String(code)),
      HelpDoc.p(text)
    ])
  ]),
  HelpDoc.h1("EXAMPLES"),
  HelpDoc.p("conduit tools list                        (the embedded demo server)"),
  HelpDoc.p("conduit tools call echo '{\"text\":\"hi\"}'"),
  HelpDoc.p("conduit --stdio \"npx -y @modelcontextprotocol/server-everything\" probe"),
  HelpDoc.p("conduit --config mcp.json --server files resources list --json")
])

const root = Command.make("conduit", { connection: connectionOptions }, () =>
  new UsageError({ message: "give a command, for example `conduit tools list`; `conduit --help` lists them all" })).pipe(
    Command.withDescription(
      "A command-line MCP client. With no server option it talks to an embedded demo server, in-process."
    )
  )

// ---------------------------------------------------------------------------------------------------------------
// Running a command against a server

type Body = (
  client: McpClient.McpClientService,
  resolved: Connection.Resolved
) => Effect.Effect<void, CliError, Scope.Scope>

const printServerLogs = (client: McpClient.McpClientService) =>
  Effect.gen(function*() {
    const notifications = yield* client.subscribe
    const s = Output.styles(process.stderr)
    yield* notifications.pipe(
      Stream.filter((n) => n.method === "notifications/message"),
      Stream.runForEach((n) => {
        const params = typeof n.params === "object" && n.params !== null ? n.params : {}
        const level = "level" in params && typeof params.level === "string" ? params.level : "info"
        const logger = "logger" in params && typeof params.logger === "string" ? ` ${params.logger}` : ""
        const data = "data" in params ? params.data : undefined
        return Output.stderr(
          `${s.dim(`[server ${level}${logger}]`)} ${typeof data === "string" ? data : JSON.stringify(data)}`
        )
      }),
      Effect.forkScoped
    )
  })

const withClient = (leaf: Connection.ConnectionOptions, body: Body, options?: { readonly serverLogs?: boolean }) =>
  Effect.gen(function*() {
    const outer = yield* root
    const resolved = yield* Connection.resolve(Connection.merge(outer.connection, leaf))
    const layer = Connection.clientLayer(resolved, { interactive: Elicitation.isInteractive(), version })
    yield* Effect.scoped(
      Effect.gen(function*() {
        const connect = Layer.build(layer)
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
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// Arguments

const JsonObject = Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
const decodeJsonObject = Schema.decodeUnknownEither(JsonObject)

/**
 * Reads the optional `<json-arguments>` positional argument: a JSON object.
 *
 * @since 0.1.0
 * @category arguments
 */
export const parseJsonArguments = (
  text: Option.Option<string>
): Either.Either<Readonly<Record<string, unknown>>, UsageError> =>
  Option.match(text, {
    onNone: () => Either.right({}),
    onSome: (raw) =>
      Either.mapLeft(
        decodeJsonObject(raw),
        () => new UsageError({ message: `the arguments must be a JSON object, such as '{"text":"hi"}'; got ${raw}` })
      )
  })

/**
 * Reads `--arg key=value` options (the value may contain `=`).
 *
 * @since 0.1.0
 * @category arguments
 */
export const parseKeyValues = (
  list: ReadonlyArray<string>
): Either.Either<ReadonlyArray<readonly [string, string]>, UsageError> => {
  const pairs: Array<readonly [string, string]> = []
  for (const item of list) {
    const index = item.indexOf("=")
    if (index <= 0) return Either.left(new UsageError({ message: `--arg must be key=value, got ${JSON.stringify(item)}` }))
    pairs.push([item.slice(0, index), item.slice(index + 1)])
  }
  return Either.right(pairs)
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const parseJson = (text: string): Option.Option<unknown> => Option.liftThrowable(JSON.parse)(text)

/**
 * Turns the text of `--arg key=value` into the value the tool expects, by the type its input schema declares
 * for `key`: strings stay text, numbers and booleans are read, anything else is read as JSON when it parses.
 *
 * @since 0.1.0
 * @category arguments
 */
export const coerceArgument = (raw: string, property: unknown): unknown => {
  const types = isRecord(property)
    ? Array.isArray(property.type) ? property.type : typeof property.type === "string" ? [property.type] : []
    : []
  if (types.includes("string")) return raw
  if ((types.includes("number") || types.includes("integer")) && raw.trim() !== "" && Number.isFinite(Number(raw))) {
    return Number(raw)
  }
  if (types.includes("boolean") && (raw === "true" || raw === "false")) return raw === "true"
  return Option.getOrElse(parseJson(raw), () => raw)
}

const toolArguments = (
  client: McpClient.McpClientService,
  name: string,
  json: Option.Option<string>,
  args: ReadonlyArray<string>
) =>
  Effect.gen(function*() {
    const base = yield* parseJsonArguments(json)
    const pairs = yield* parseKeyValues(args)
    if (pairs.length === 0) return base
    // the schema says how to read each value; a tool the list does not show gets JSON-or-text
    const tools = yield* client.listTools()
    const tool = tools.find((candidate) => candidate.name === name)
    const properties = tool !== undefined && isRecord(tool.inputSchema.properties) ? tool.inputSchema.properties : {}
    const merged: Record<string, unknown> = { ...base }
    for (const [key, raw] of pairs) merged[key] = coerceArgument(raw, properties[key])
    return merged
  })

const stringArguments = (json: Option.Option<string>, args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const base = yield* parseJsonArguments(json)
    const pairs = yield* parseKeyValues(args)
    const merged: Record<string, string> = {}
    for (const [key, value] of Object.entries(base)) {
      merged[key] = typeof value === "string" ? value : JSON.stringify(value)
    }
    for (const [key, value] of pairs) merged[key] = value
    return merged
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

const probe = Command.make("probe", { connection: connectionOptions }, ({ connection }) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const session = yield* client.session
      const result = Output.probeResult(session)
      yield* resolved.json ? Output.json(result) : Output.stdout(Output.probe(result, session.transport.target))
    }))).pipe(
    Command.withDescription("Connect and show the era, protocol version, transport, server info and capabilities")
  )

const toolsList = Command.make("list", { connection: connectionOptions }, ({ connection }) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.listTools(),
      (tools) => resolved.json ? Output.json({ tools }) : Output.stdout(Output.tools(tools))
    ))).pipe(Command.withDescription("List the server's tools"))

const toolsCall = Command.make("call", {
  connection: connectionOptions,
  name: Args.text({ name: "name" }).pipe(Args.withDescription("The tool")),
  json: Args.text({ name: "json-arguments" }).pipe(
    Args.withDescription("The arguments as a JSON object"),
    Args.optional
  ),
  arg: argOption
}, ({ arg, connection, json, name }) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const args = yield* toolArguments(client, name, json, arg)
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
    }))).pipe(
    Command.withDescription("Call a tool; progress is shown on stderr; Ctrl-C cancels the call")
  )

const tools = Command.make("tools").pipe(
  Command.withDescription("List and call tools"),
  Command.withSubcommands([toolsList, toolsCall])
)

const resourcesList = Command.make("list", { connection: connectionOptions }, ({ connection }) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.listResources(),
      (resources) => resolved.json ? Output.json({ resources }) : Output.stdout(Output.resources(resources))
    ))).pipe(Command.withDescription("List the server's resources"))

const resourcesTemplates = Command.make("templates", { connection: connectionOptions }, ({ connection }) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.listResourceTemplates(),
      (resourceTemplates) =>
        resolved.json ? Output.json({ resourceTemplates }) : Output.stdout(Output.templates(resourceTemplates))
    ))).pipe(Command.withDescription("List the server's resource templates"))

const resourcesRead = Command.make("read", {
  connection: connectionOptions,
  uri: Args.text({ name: "uri" }).pipe(Args.withDescription("The resource URI"))
}, ({ connection, uri }) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.readResource(uri),
      (result) => resolved.json ? Output.json(result) : Output.stdout(Output.readResult(result))
    ))).pipe(Command.withDescription("Read a resource"))

const resources = Command.make("resources").pipe(
  Command.withDescription("List and read resources"),
  Command.withSubcommands([resourcesList, resourcesTemplates, resourcesRead])
)

const promptsList = Command.make("list", { connection: connectionOptions }, ({ connection }) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.listPrompts(),
      (prompts) => resolved.json ? Output.json({ prompts }) : Output.stdout(Output.prompts(prompts))
    ))).pipe(Command.withDescription("List the server's prompts"))

const promptsGet = Command.make("get", {
  connection: connectionOptions,
  name: Args.text({ name: "name" }).pipe(Args.withDescription("The prompt")),
  json: Args.text({ name: "json-arguments" }).pipe(
    Args.withDescription("The arguments as a JSON object of strings"),
    Args.optional
  ),
  arg: argOption
}, ({ arg, connection, json, name }) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const args = yield* stringArguments(json, arg)
      const result = yield* client.getPrompt({ name, arguments: args })
      yield* resolved.json ? Output.json(result) : Output.stdout(Output.promptResult(result))
    }))).pipe(Command.withDescription("Get a prompt with its arguments"))

const prompts = Command.make("prompts").pipe(
  Command.withDescription("List and get prompts"),
  Command.withSubcommands([promptsList, promptsGet])
)

const complete = Command.make("complete", {
  connection: connectionOptions,
  ref: Args.text({ name: "ref" }).pipe(
    Args.withDescription("prompt:<name> or resource:<uri-template> (a bare URI means a resource, a name a prompt)")
  ),
  argument: Args.text({ name: "argument" }).pipe(Args.withDescription("The argument or template variable")),
  value: Args.text({ name: "value" }).pipe(Args.withDescription("What was typed so far")),
  arg: Options.text("arg").pipe(
    Options.withDescription("An already chosen argument as key=value, sent as context (repeatable)"),
    Options.repeated
  )
}, ({ arg, argument, connection, ref, value }) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const context = yield* stringArguments(Option.none(), arg)
      const result = yield* client.complete({
        ref: parseReference(ref),
        argument: { name: argument, value },
        ...(Object.keys(context).length > 0 ? { context: { arguments: context } } : {})
      })
      yield* resolved.json ? Output.json(result) : Output.stdout(Output.completion(result))
    }))).pipe(Command.withDescription("Ask the server to complete a prompt argument or a template variable"))

const listMethods = {
  tools: "notifications/tools/list_changed",
  prompts: "notifications/prompts/list_changed",
  resources: "notifications/resources/list_changed",
  updated: "notifications/resources/updated"
} as const

const listen = Command.make("listen", {
  connection: connectionOptions,
  tools: Options.boolean("tools").pipe(Options.withDescription("Show tool list changes")),
  prompts: Options.boolean("prompts").pipe(Options.withDescription("Show prompt list changes")),
  resources: Options.boolean("resources").pipe(Options.withDescription("Show resource list changes")),
  uri: Options.text("uri").pipe(
    Options.withDescription("Subscribe to updates of this resource (repeatable)"),
    Options.repeated
  )
}, (options) =>
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
      const wanted = (notification: McpSchema.ServerNotification) => {
        if (methods.size === 0) return true
        if (!methods.has(notification.method)) return false
        if (notification.method !== listMethods.updated || options.uri.length === 0) return true
        const params = notification.params
        return isRecord(params) && typeof params.uri === "string" && options.uri.includes(params.uri)
      }
      yield* Output.stderr(
        `conduit: listening to ${Connection.describeTarget(resolved.target)}` +
          `${methods.size > 0 ? ` for ${[...methods].join(", ")}` : ""}; Ctrl-C stops`
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
          Stream.filter((n) => n.method !== "notifications/subscriptions/acknowledged"),
          Stream.catchTag("McpError", (error) =>
            Stream.fromEffect(
              Output.stderr(`conduit: the server refused subscriptions/listen (${error.message}); showing what it sends`)
            ).pipe(Stream.drain))
        )
        : Stream.empty
      yield* Stream.merge(notifications, listened).pipe(
        Stream.filter(wanted),
        Stream.runForEach((notification) =>
          resolved.json
            ? Output.stdout(JSON.stringify({ method: notification.method, params: notification.params }))
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
    }), { serverLogs: false })).pipe(
    Command.withDescription("Print server notifications until interrupted (all of them unless filtered)")
  )

const demoServer = Command.make("demo-server", {
  stdio: Options.boolean("stdio").pipe(Options.withDescription("Serve over stdin/stdout")),
  http: Options.integer("http").pipe(
    Options.withDescription("Serve Streamable HTTP at http://127.0.0.1:<port>/mcp (0 picks a free port)"),
    Options.optional
  ),
  era: Options.choice("era", ["auto", "legacy", "modern"]).pipe(
    Options.withDescription("Which era to speak: auto (both), legacy or modern"),
    Options.withDefault("auto")
  )
}, (options) =>
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
      const port = options.http.value
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        return yield* new UsageError({ message: `demo-server --http: not a port: ${port}` })
      }
      return yield* HttpServer.serve(server, { port }, (url) =>
        Effect.logInfo(`${DemoServer.name} ${DemoServer.version} serving ${eras} era(s) at ${url}`))
    }
    yield* Effect.logInfo(`${DemoServer.name} ${DemoServer.version} serving ${eras} era(s) over stdio`)
    yield* McpServer.serve(server, { input: NodeStream.stdin, output: NodeSink.stdout }).pipe(
      Effect.catchAll((error) => Effect.logError("stdio closed", error))
    )
  }).pipe(Logger.withMinimumLogLevel(LogLevel.Info))).pipe(
    Command.withDescription("Run the demo server for other clients (and for conduit --stdio)")
  )

// ---------------------------------------------------------------------------------------------------------------
// OAuth

const httpTarget = (leaf: Connection.ConnectionOptions, command: string) =>
  Effect.gen(function*() {
    const outer = yield* root
    const resolved = yield* Connection.resolve(Connection.merge(outer.connection, leaf))
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

const login = Command.make("login", {
  connection: connectionOptions,
  device: Options.boolean("device").pipe(
    Options.withDescription("Use the device grant: approve on another device with a code")
  ),
  noBrowser: Options.boolean("no-browser").pipe(
    Options.withDescription("Do not open a browser: show the URL and paste back the address it redirects to")
  ),
  scope: Options.text("scope").pipe(Options.withDescription("A scope to ask for (repeatable)"), Options.repeated)
}, (options) =>
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
  })).pipe(Command.withDescription("Sign in to an OAuth-protected HTTP server and store the token"))

const logout = Command.make("logout", { connection: connectionOptions }, ({ connection }) =>
  Effect.gen(function*() {
    const { url } = yield* httpTarget(connection, "logout")
    // `current` tells whether there was anything to forget
    const held = yield* withAuthorizer(undefined, url, (authorizer) =>
      Effect.flatMap(authorizer.current, (current) => Effect.as(authorizer.logout, Option.isSome(current))))
    yield* Output.stderr(held ? `Logged out of ${url.href}` : `No token was stored for ${url.href}`)
  })).pipe(Command.withDescription("Forget the stored token of an HTTP server"))

const whoami = Command.make("whoami", { connection: connectionOptions }, ({ connection }) =>
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
  })).pipe(Command.withDescription("Show the stored token of an HTTP server (never the token itself)"))

/**
 * The whole command tree.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = root.pipe(
  Command.withSubcommands([probe, tools, resources, prompts, complete, listen, login, logout, whoami, demoServer])
)

/**
 * Runs `conduit` on the given `process.argv`.
 *
 * @since 0.1.0
 * @category running
 */
export const run: (
  argv: ReadonlyArray<string>
) => Effect.Effect<
  void,
  CliError | ValidationError.ValidationError,
  CommandExecutor.CommandExecutor | CliApp.CliApp.Environment
> = Command.run(command, { name: "conduit", version, footer })
