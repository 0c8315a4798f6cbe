/**
 * The `conduit` commands: the command table (in the order help lists it), the help, and running a command line.
 * The commands' bodies live in modules of their own: the options and help text in `commandLine.ts`, connecting in
 * `withClient.ts`, the commands by group in `featureCommands.ts`, `listenCommand.ts`, `loginCommands.ts`,
 * `localCommands.ts`, `tasks.ts` and `shell.ts`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as References from "effect/References"
import {
  arg,
  argOption,
  command,
  connectionOf,
  flag,
  helpStyle,
  optionalArg,
  program,
  type Run,
  serverOptions,
  text,
  texts,
  version
} from "./commandLine.js"
import type * as Connection from "./connection.js"
import type { CliError } from "./errors.js"
import * as Grammar from "./grammar.js"
import type { DemoServerOptions } from "./localCommands.js"
import * as Output from "./output.js"
import type * as Tasks from "./tasks.js"

// The commands' bodies are loaded when a command runs, each group's module on its first use: `--version`, `--help`
// and a command line that does not parse load none of them, nor the client, the server and the HTTP stack they
// import (the bundle made by scripts/bundle.mjs evaluates a module imported this way on its first import only).
const load = <A>(module: () => Promise<A>): Effect.Effect<A> => Effect.promise(module)
const Features = load(() => import("./featureCommands.js"))
const Listen = load(() => import("./listenCommand.js"))
const Local = load(() => import("./localCommands.js"))
const Login = load(() => import("./loginCommands.js"))
const Shell = load(() => import("./shell.js"))
const TaskCommands = load(() => import("./tasks.js"))
const WithClient = load(() => import("./withClient.js"))

const withClient: Tasks.WithClient = (connection, body) =>
  Effect.flatMap(WithClient, (module) => module.withClient(connection, body))

// The version and the server options are defined with the rest of the command line's vocabulary, and
// parseReference with the commands that use it; they are re-exported here as they are.

/**
 * @since 0.1.0
 */
export { parseReference, serverOptions, version } from "./commandLine.js"

// ---------------------------------------------------------------------------------------------------------------
// The shell

const shell = (connection: Connection.ConnectionOptions, mode: "shell" | "run", script: Option.Option<string>) =>
  Effect.flatMap(Effect.all([Shell, WithClient]), ([Shell, WithClient]) =>
    Shell.run({
      commands,
      mode,
      script,
      json: connection.json,
      version,
      connect: (body, elicitation) => WithClient.withClient(connection, body, { elicitation })
    }))

// ---------------------------------------------------------------------------------------------------------------
// The command table

const taskIdArgument: Grammar.ArgumentSpec = { name: "task-id", description: "The task's id (as tools call --detach printed it)" }

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
      "the project (.mcp.json), with the file each comes from; --server <name> alone picks from those, the user's " +
      "files first, and runs a project's server only once approved",
    options: [{
      name: "trust",
      value: "<name>",
      description: "Approve the project's server <name> (its command, args, env, cwd, url and headers are shown); a " +
        "change to its definition asks again"
    }],
    run: (p) => Effect.flatMap(Local, (Local) => Local.servers(connectionOf(p.options), text(p.options, "trust")))
  }),
  command({
    path: ["probe"],
    description: "Connect and show the era, protocol version, transport, server info and capabilities",
    run: (p) => Effect.flatMap(Features, (Features) => Features.probe(connectionOf(p.options)))
  }),
  command({
    path: ["tools", "list"],
    description: "List the server's tools",
    run: (p) => Effect.flatMap(Features, (Features) => Features.toolsList(connectionOf(p.options)))
  }),
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
      Effect.flatMap(Features, (Features) =>
        Features.toolsCall(
          connectionOf(p.options),
          arg(p, 0),
          optionalArg(p, 1),
          texts(p.options, "arg"),
          flag(p.options, "detach")
        ))
  }),
  command({
    path: ["tools", "describe"],
    description: "Show one tool: its description, annotations, and its arguments and result as readable text",
    arguments: [{ name: "name", description: "The tool" }],
    run: (p) => Effect.flatMap(Features, (Features) => Features.toolsDescribe(connectionOf(p.options), arg(p, 0)))
  }),
  command({
    path: ["tasks", "list"],
    description: "List the server's tasks (2025-11-25 servers that offer tasks/list); for any other server, the " +
      "tasks conduit started there and keeps on disk",
    run: (p) => Effect.flatMap(TaskCommands, (Tasks) => Tasks.list(withClient, connectionOf(p.options)))
  }),
  command({
    path: ["tasks", "get"],
    description: "Show a task's status",
    arguments: [taskIdArgument],
    run: (p) => Effect.flatMap(TaskCommands, (Tasks) => Tasks.get(withClient, connectionOf(p.options), arg(p, 0)))
  }),
  command({
    path: ["tasks", "result"],
    description: "Wait for a task's result (its status on stderr) and print it; Ctrl-C stops waiting, the task goes on",
    arguments: [taskIdArgument],
    run: (p) => Effect.flatMap(TaskCommands, (Tasks) => Tasks.result(withClient, connectionOf(p.options), arg(p, 0)))
  }),
  command({
    path: ["tasks", "cancel"],
    description: "Ask the server to cancel a task",
    arguments: [taskIdArgument],
    run: (p) => Effect.flatMap(TaskCommands, (Tasks) => Tasks.cancel(withClient, connectionOf(p.options), arg(p, 0)))
  }),
  command({
    path: ["resources", "list"],
    description: "List the server's resources",
    run: (p) => Effect.flatMap(Features, (Features) => Features.resourcesList(connectionOf(p.options)))
  }),
  command({
    path: ["resources", "templates"],
    description: "List the server's resource templates",
    run: (p) => Effect.flatMap(Features, (Features) => Features.resourcesTemplates(connectionOf(p.options)))
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
    run: (p) =>
      Effect.flatMap(Features, (Features) =>
        Features.resourcesRead(connectionOf(p.options), arg(p, 0), text(p.options, "output")))
  }),
  command({
    path: ["prompts", "list"],
    description: "List the server's prompts",
    run: (p) => Effect.flatMap(Features, (Features) => Features.promptsList(connectionOf(p.options)))
  }),
  command({
    path: ["prompts", "get"],
    description: "Get a prompt with its arguments",
    arguments: [
      { name: "name", description: "The prompt" },
      { name: "json-arguments", description: "The arguments as a JSON object of strings", optional: true }
    ],
    options: [{ ...argOption, description: "One argument (prompt arguments are strings); merged over the JSON arguments" }],
    run: (p) =>
      Effect.flatMap(Features, (Features) =>
        Features.promptsGet(connectionOf(p.options), arg(p, 0), optionalArg(p, 1), texts(p.options, "arg")))
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
    run: (p) =>
      Effect.flatMap(Features, (Features) =>
        Features.complete(connectionOf(p.options), arg(p, 0), arg(p, 1), arg(p, 2), texts(p.options, "arg")))
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
      Effect.flatMap(Listen, (Listen) =>
        Listen.listen({
          connection: connectionOf(p.options),
          tools: flag(p.options, "tools"),
          prompts: flag(p.options, "prompts"),
          resources: flag(p.options, "resources"),
          uri: texts(p.options, "uri")
        }))
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
      Effect.flatMap(Login, (Login) =>
        Login.login({
          connection: connectionOf(p.options),
          device: flag(p.options, "device"),
          noBrowser: flag(p.options, "no-browser"),
          scope: texts(p.options, "scope")
        }))
  }),
  command({
    path: ["logout"],
    description: "Forget the stored token of an HTTP server",
    run: (p) => Effect.flatMap(Login, (Login) => Login.logout(connectionOf(p.options)))
  }),
  command({
    path: ["whoami"],
    description: "Show the stored token's issuer, scope and expiry (never the token itself)",
    run: (p) => Effect.flatMap(Login, (Login) => Login.whoami(connectionOf(p.options)))
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
      Effect.flatMap(Local, (Local) =>
        Local.demoServer({
          stdio: flag(p.options, "stdio"),
          http: text(p.options, "http"),
          era: Option.getOrElse(text(p.options, "era"), () => "auto") as DemoServerOptions["era"]
        }))
  })
]

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
  Effect.flatMap(Effect.fromResult(Grammar.parse(argv, commands, serverOptions)), (request) => {
    switch (request._tag) {
      case "Help":
        return Output.stdout(helpText(request.path).trimEnd())
      case "Version":
        return Output.stdout(version)
      case "Run":
        return (request.parsed.command.run as Run)(request.parsed).pipe(
          // a failure is reported once, as a sentence; the log's own lines are for --verbose
          request.parsed.command.server !== false
            ? Effect.provideService(References.MinimumLogLevel, request.parsed.options.has("verbose") ? "Debug" : "Error")
            : (effect) => effect
        )
    }
  })
