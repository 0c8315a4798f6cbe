/**
 * The command line's vocabulary: the program's version, the options every command that talks to a server takes
 * and how a command reads its parsed options and arguments, and what the program's help says about itself (its
 * summary, exit codes and examples) and how it is laid out.
 *
 * @since 0.1.0
 */
import type * as McpClient from "@conduit-mcp/client/McpClient"
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Connection from "./connection.js"
import { type CliError, ExitCode } from "./errors.js"
import type * as Grammar from "./grammar.js"
import * as Output from "./output.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const version = "1.0.0"

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

/**
 * The `--arg key=value` option of the commands that take arguments.
 *
 * @since 0.1.0
 * @category options
 */
export const argOption: Grammar.OptionSpec = {
  name: "arg",
  value: "key=value",
  repeatable: true,
  description: "One argument, read by the type the schema declares; merged over the JSON arguments"
}

// ---------------------------------------------------------------------------------------------------------------
// Reading a parsed command line

type Options = Grammar.Parsed<unknown>["options"]

/**
 * The last value of an option.
 *
 * @since 0.1.0
 * @category parsing
 */
export const text = (options: Options, name: string): Option.Option<string> =>
  Option.fromNullishOr(options.get(name)?.at(-1))

/**
 * Every value of a repeatable option.
 *
 * @since 0.1.0
 * @category parsing
 */
export const texts = (options: Options, name: string): ReadonlyArray<string> => options.get(name) ?? []

/**
 * Whether a flag was given.
 *
 * @since 0.1.0
 * @category parsing
 */
export const flag = (options: Options, name: string): boolean => options.has(name)

/**
 * The server options of a command line.
 *
 * @since 0.1.0
 * @category parsing
 */
export const connectionOf = (options: Options): Connection.ConnectionOptions => ({
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

/**
 * What a command runs.
 *
 * @since 0.1.0
 * @category commands
 */
export type Run = (parsed: Grammar.Parsed<unknown>) => Effect.Effect<void, CliError, Connection.Platform>

/**
 * A command of the table (checks its `run` against {@link Run}).
 *
 * @since 0.1.0
 * @category commands
 */
export const command = (spec: Grammar.CommandSpec<Run>): Grammar.CommandSpec<Run> => spec

/**
 * A positional argument (empty when missing: the grammar has checked the required ones).
 *
 * @since 0.1.0
 * @category parsing
 */
export const arg = (parsed: Grammar.Parsed<unknown>, index: number): string => parsed.arguments[index] ?? ""

/**
 * An optional positional argument.
 *
 * @since 0.1.0
 * @category parsing
 */
export const optionalArg = (parsed: Grammar.Parsed<unknown>, index: number): Option.Option<string> =>
  Option.fromNullishOr(parsed.arguments[index])

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
  [ExitCode.Interrupted, "interrupted (Ctrl-C); the in-flight request was cancelled"],
  [ExitCode.Terminated, "terminated (SIGTERM); the in-flight request was cancelled"]
]

/**
 * What the program's help says around its commands: the summary, the exit codes and examples.
 *
 * @since 0.1.0
 * @category help
 */
export const program = {
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

/**
 * The help's layout: the terminal's width (within limits) and bold when stdout is a terminal.
 *
 * @since 0.1.0
 * @category help
 */
export const helpStyle = (): Grammar.HelpStyle => {
  const columns = process.stdout.columns
  return {
    width: Math.min(typeof columns === "number" && columns > 40 ? columns : 100, 120),
    bold: Output.styles(process.stdout).bold
  }
}

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
