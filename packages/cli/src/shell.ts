/**
 * `conduit shell` and `conduit run`: one connection kept across many commands. The commands are those of the
 * one-shot CLI without the server options (`tools call echo --arg text=hi`, `resources read demo://about`,
 * `--json` on any of them); `listen` runs in the background and prints notifications between prompts; `sleep`,
 * `unlisten`, `help` and `exit` are the shell's own.
 *
 * On a terminal, `conduit shell` is interactive (a prompt, history, Tab completion; Ctrl-C cancels the running
 * command, Ctrl-D leaves). `conduit run <file>`, or commands on stdin when it is not a terminal, run one line after
 * the other and stop at the first failure, with its exit code.
 *
 * @since 0.1.0
 */
import * as McpClient from "@conduit-mcp/client/McpClient"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as NodeStream from "node:stream"
import * as CommandTimeout from "./commandTimeout.js"
import * as Connection from "./connection.js"
import type * as Elicitation from "./elicitation.js"
import { type CliError, Reported, UsageError } from "./errors.js"
import * as Grammar from "./grammar.js"
import * as LineReader from "./lineReader.js"
import * as Output from "./output.js"
import * as Report from "./report.js"
import { SharedClient } from "./sharedClient.js"
import * as Completion from "./shellCompletion.js"
import * as ShellWords from "./shellWords.js"
import * as Text from "./terminalText.js"

type Run = (parsed: Grammar.Parsed<unknown>) => Effect.Effect<void, CliError, Connection.Platform>

type Body = (
  client: McpClient.McpClientService,
  resolved: Connection.Resolved
) => Effect.Effect<void, CliError, Scope.Scope | Connection.Platform>

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Every command of the CLI; those that talk to the connection are offered in the shell. */
  readonly commands: ReadonlyArray<Grammar.CommandSpec<Run>>
  /** `shell` (interactive on a terminal) or `run` (a script). */
  readonly mode: "shell" | "run"
  /** The script of `run`; stdin when none (or `-`). */
  readonly script: Option.Option<string>
  readonly json: boolean
  readonly version: string
  /** Connects once and runs `body` on the connection. */
  readonly connect: (
    body: Body,
    elicitation: { readonly interactive: boolean; readonly prompter?: Elicitation.Prompter | undefined }
  ) => Effect.Effect<void, CliError, Connection.Platform>
}

// commands that do not talk to the connection (or start another one)
const outside = new Set(["servers", "demo-server", "login", "logout", "whoami", "shell", "run"])

const jsonOption: Grammar.OptionSpec = { name: "json", description: "Print exactly the JSON result of the MCP call" }

const builtins: ReadonlyArray<Grammar.CommandSpec<Run>> = [
  { path: ["help"], description: "List the commands; help <command> describes one", run: () => Effect.void },
  {
    path: ["sleep"],
    description: "Wait, such as 2s or 500ms (in a script: give the server time to send notifications)",
    arguments: [{ name: "duration", description: "30s, 500ms, 2m" }],
    server: false,
    run: () => Effect.void
  },
  { path: ["unlisten"], description: "Stop the background listen", server: false, run: () => Effect.void },
  { path: ["exit"], description: "Leave the shell (Ctrl-D does too; quit is the same)", server: false, run: () => Effect.void }
]

/**
 * The commands of the shell: the CLI's own, without the server options, with `--json` on each.
 *
 * @since 0.1.0
 * @category commands
 */
export const shellCommands = (commands: ReadonlyArray<Grammar.CommandSpec<Run>>): ReadonlyArray<Grammar.CommandSpec<Run>> => [
  ...commands.filter((command) => !outside.has(command.path[0])).map((command) => ({
    ...command,
    server: false,
    options: [...(command.options ?? []), jsonOption, CommandTimeout.option]
  })),
  ...builtins
]

const helpStyle = (): Grammar.HelpStyle => {
  const columns = process.stdout.columns
  return {
    width: Math.min(typeof columns === "number" && columns > 40 ? columns : 100, 120),
    bold: Output.styles(process.stdout).bold
  }
}

const help = (path: ReadonlyArray<string>, commands: ReadonlyArray<Grammar.CommandSpec<Run>>): string => {
  const style = helpStyle()
  if (path.length > 0) {
    // one command, or a group: the CLI's help without the server options, which the shell does not take
    return Grammar.help(path, commands, [], { summary: "", footer: [] }, style)
      .replace(/ conduit (\[server options\] )?/, " ").trimEnd()
  }
  const rows = commands.map((command): readonly [string, string] => [
    [...command.path, ...(command.arguments ?? []).map((a) => a.optional === true ? `[<${a.name}>]` : `<${a.name}>`)].join(" "),
    command.path[0] === "listen" ? `${command.description}; in the shell it runs in the background` : command.description
  ])
  return [
    style.bold("Commands:"),
    ...Grammar.table(rows, style),
    "",
    ...Grammar.wrap(
      "Options go after the command (--json and --timeout on any of them). Tab completes commands, tool, prompt and resource " +
        "names, --arg names, and the values the server suggests for prompt arguments and resource template variables. Ctrl-C cancels the running command; Ctrl-D or exit leaves. <command> --help describes one.",
      style.width
    )
  ].join("\n")
}

interface Failed {
  readonly error: CliError
  readonly json: boolean
}

/**
 * Runs the shell (or a script) on one connection.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (options: Options): Effect.Effect<void, CliError, Connection.Platform> =>
  Effect.scoped(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const fromFile = Option.filter(options.script, (file) => file !== "-")
    const content = Option.isSome(fromFile)
      ? yield* fs.readFileString(fromFile.value).pipe(
        Effect.mapError((error) => new UsageError({ message: `cannot read the script ${fromFile.value}: ${error.message}` }))
      )
      : undefined
    const interactive = options.mode === "shell" && content === undefined && process.stdin.isTTY === true &&
      process.stderr.isTTY === true
    const commands = shellCommands(options.commands)
    let catalog = Completion.emptyCatalog
    // asks the server for argument values, once connected
    let suggest: ((question: Completion.ServerQuestion) => Effect.Effect<ReadonlyArray<string>>) | undefined
    const reader = yield* LineReader.make({
      input: content !== undefined ? NodeStream.Readable.from([content]) : process.stdin,
      interactive,
      completer: (line) => {
        const local = Completion.complete(line, commands, catalog)
        const question = Completion.serverQuestion(line, commands, catalog)
        if (question === undefined || suggest === undefined) return Effect.succeed(local)
        const word = question.word
        // the names the shell knows (resource URIs) come first, then what the server suggests (not the word as typed:
        // readline would find nothing to add)
        const known = local[1] === word ? local[0].filter((candidate) => candidate !== word) : []
        return Effect.map(suggest(question), (values) => [[...new Set([...known, ...values])], word] as const)
      },
      historyFile: interactive ? LineReader.historyFile() : undefined
    })
    const where = Option.getOrElse(fromFile, () => "stdin")

    yield* options.connect(
      (client, resolved) =>
        Effect.gen(function*() {
          if (interactive) {
            suggest = (question) =>
              client.complete(
                { ref: question.ref, argument: question.argument, ...(question.context ? { context: question.context } : {}) },
                { timeout: suggestionTimeout }
              ).pipe(
                // a slow or hostile server never holds the prompt for longer than this
                Effect.timeout(suggestionTimeout),
                Effect.map((result) => Completion.suggested(question, result.completion.values)),
                Effect.orElseSucceed((): ReadonlyArray<string> => [])
              )
            // the catalog is read with the client's listings (within their budget), at once and on each change,
            // coalesced: a server announcing a change before every answer is listed once a second at most
            const refresh = yield* McpClient.coalescedRefresh(
              Effect.gen(function*() {
                catalog = yield* readCatalog(client)
              }),
              McpClient.defaultMinRefreshInterval
            )
            yield* refresh
            const notifications = yield* client.subscribe
            yield* notifications.pipe(
              Stream.filter((n) => n.method.endsWith("/list_changed")),
              Stream.runForEach(() => refresh),
              Effect.forkScoped
            )
            const session = yield* client.session
            const info = session.serverInfo
            yield* Output.stderr(
              `Connected to ${Text.line(Connection.describeTarget(resolved.target))}` +
                `${info !== undefined ? ` (${Text.line(`${info.name} ${info.version}`)}, ${session.era} era)` : ""}. ` +
                "help lists the commands; Ctrl-D leaves."
            )
          }
          const shared = SharedClient.of({ client, resolved })
          let listener: Fiber.Fiber<void, never> | undefined
          // what prints the notifications the background listen has received by now: a command runs it before it
          // prints, so a notification the server sent before a result is printed before it, as it came (follow.ts)
          let catchUp: Effect.Effect<void> | undefined
          const follow = (given: Effect.Effect<void>) =>
            Effect.acquireRelease(Effect.sync(() => (catchUp = given)), () =>
              Effect.sync(() => {
                if (catchUp === given) catchUp = undefined
              }))
          const caughtUp = Effect.suspend(() => catchUp ?? Effect.void)
          let lineNumber = 0
          while (true) {
            const next = yield* reader.read("conduit> ")
            if (Option.isNone(next)) return
            lineNumber++
            const line = next.value.trim()
            if (line === "" || line.startsWith("#")) continue
            yield* reader.remember(next.value)
            const words = ShellWords.split(line)
            const outcome = yield* Result.match(words, {
              onFailure: (reason) =>
                Effect.succeed<"next" | "exit" | Failed>({
                  error: new UsageError({ message: `cannot split the line (${reason})` }),
                  json: resolved.json
                }),
              onSuccess: (list) =>
                Effect.gen(function*() {
                  const argv = list[0] === "conduit" ? list.slice(1) : list
                  const first = argv[0]
                  if (first === "exit" || first === "quit") return "exit" as const
                  if (first === "help") {
                    yield* Output.stdout(help(argv.slice(1), commands))
                    return "next" as const
                  }
                  if (first === "unlisten") {
                    if (listener === undefined) yield* Output.stderr("conduit: no listen is running")
                    else yield* Fiber.interrupt(listener)
                    listener = undefined
                    return "next" as const
                  }
                  const request = Grammar.parse(argv, commands, [jsonOption], "")
                  if (Result.isFailure(request)) return { error: request.failure, json: resolved.json || argv.includes("--json") }
                  const parsed = request.success
                  if (parsed._tag === "Help") {
                    yield* Output.stdout(help(parsed.path, commands))
                    return "next" as const
                  }
                  if (parsed._tag === "Version") {
                    yield* Output.stdout(options.version)
                    return "next" as const
                  }
                  const json = resolved.json || parsed.parsed.options.has("json")
                  const path = parsed.parsed.command.path
                  if (path[0] === "sleep") {
                    const duration = Connection.parseDuration(parsed.parsed.arguments[0] ?? "")
                    if (Result.isFailure(duration)) {
                      return { error: new UsageError({ message: `sleep: ${duration.failure}` }), json }
                    }
                    yield* reader.running(Effect.sleep(duration.success))
                    return "next" as const
                  }
                  // a command's own --timeout: its requests wait that long, and it ends by then
                  const ownTimeout = parsed.parsed.options.get("timeout")?.at(-1)
                  const deadline = ownTimeout === undefined ? undefined : Connection.parseDuration(ownTimeout)
                  if (deadline !== undefined && Result.isFailure(deadline)) {
                    return { error: new UsageError({ message: `--timeout: ${deadline.failure}` }), json }
                  }
                  const timeout = deadline === undefined ? undefined : deadline.success
                  const effect = timeout === undefined
                    ? Effect.provideService(parsed.parsed.command.run(parsed.parsed), SharedClient, shared)
                    : CommandTimeout.bounded(
                      Effect.provideService(parsed.parsed.command.run(parsed.parsed), SharedClient, {
                        client,
                        resolved: { ...resolved, timeout }
                      }).pipe(McpClient.withRequestTimeout(timeout)),
                      timeout
                    )
                  if (path[0] === "listen") {
                    // in the background: its notifications are printed between prompts; a new listen replaces it
                    if (listener !== undefined) yield* Fiber.interrupt(listener)
                    const listening = yield* Deferred.make<void>()
                    listener = yield* parsed.parsed.command.run(parsed.parsed).pipe(
                      Effect.provideService(SharedClient, {
                        ...shared,
                        listening: Deferred.complete(listening, Effect.void),
                        follow
                      }),
                      Effect.catch((error) => Effect.asVoid(Report.failure(error, json))),
                      Effect.ensuring(Deferred.complete(listening, Effect.void)),
                      Effect.forkScoped
                    )
                    // what the next command makes the server send is seen: go on once the subscriptions are in force
                    yield* Deferred.await(listening).pipe(Effect.timeout("5 seconds"), Effect.ignore)
                    return "next" as const
                  }
                  const exit = yield* reader.running(Effect.provideService(effect, Output.BeforeWrite, caughtUp))
                  if (Exit.isSuccess(exit)) return "next" as const
                  if (Cause.hasInterruptsOnly(exit.cause)) {
                    yield* Output.stderr("conduit: cancelled")
                    return "next" as const
                  }
                  const failure = Cause.findErrorOption(exit.cause)
                  if (Option.isSome(failure)) return { error: failure.value, json }
                  return yield* Effect.failCause(exit.cause)
                })
            })
            if (outcome === "exit") return
            if (outcome === "next") continue
            if (interactive) {
              yield* Effect.provideService(Report.failure(outcome.error, outcome.json), Output.BeforeWrite, caughtUp)
              continue
            }
            // a script stops at its first failure, with that failure's exit code
            yield* caughtUp
            yield* Output.stderr(`conduit: ${Text.line(where)}:${lineNumber}: stopped at: ${Text.line(line)}`)
            return yield* Effect.fail(new Reported({ exitCode: yield* Report.failure(outcome.error, outcome.json) }))
          }
        }),
      interactive
        ? { interactive: true, prompter: { ask: reader.read } }
        : content === undefined
        // stdin holds the script: nobody is there to answer a form
        ? { interactive: false }
        : { interactive: process.stdin.isTTY === true && process.stderr.isTTY === true }
    )
  }))

/** How long Tab waits for the server's suggestions before offering what the shell knows. */
const suggestionTimeout = Duration.millis(500)

const readCatalog = (client: McpClient.McpClientService): Effect.Effect<Completion.Catalog> =>
  Effect.gen(function*() {
    const session = yield* client.session
    const capabilities = session.capabilities
    const tools = capabilities.tools !== undefined ? yield* client.listTools() : []
    const prompts = capabilities.prompts !== undefined ? yield* client.listPrompts() : []
    const resources = capabilities.resources !== undefined ? yield* client.listResources() : []
    const templates = capabilities.resources !== undefined
      ? yield* Effect.orElseSucceed(client.listResourceTemplates(), () => [])
      : []
    const properties = (schema: unknown): ReadonlyArray<string> =>
      typeof schema === "object" && schema !== null && "properties" in schema && typeof schema.properties === "object" &&
        schema.properties !== null
        ? Object.keys(schema.properties)
        : []
    return {
      tools: tools.map((tool) => ({ name: tool.name, arguments: properties(tool.inputSchema) })),
      prompts: prompts.map((prompt) => ({ name: prompt.name, arguments: (prompt.arguments ?? []).map((a) => a.name) })),
      resources: resources.map((resource) => resource.uri),
      templates: templates.map((template) => template.uriTemplate)
    }
  }).pipe(Effect.orElseSucceed(() => Completion.emptyCatalog))
