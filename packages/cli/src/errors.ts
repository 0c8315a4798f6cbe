/**
 * What can go wrong in a `conduit` run, and the exit code of each kind.
 *
 * @since 0.1.0
 */
import type * as McpError from "@conduit-mcp/client/McpError"
import type * as OAuth from "@conduit-mcp/client/OAuth"
import * as Data from "effect/Data"
import * as ShellWords from "./shellWords.js"
import * as Text from "./terminalText.js"

/**
 * The documented exit codes.
 *
 * @since 0.1.0
 * @category constants
 */
export const ExitCode = {
  Success: 0,
  ToolError: 1,
  Usage: 2,
  Connection: 3,
  Auth: 4,
  Protocol: 5,
  /** A task was cancelled, expired, or is unknown to the server. */
  Task: 6,
  /** A defect in conduit itself (EX_SOFTWARE). */
  Internal: 70,
  Timeout: 124,
  /** Ctrl-C (SIGINT): 128 + 2. */
  Interrupted: 130,
  /** SIGTERM: 128 + 15. */
  Terminated: 143
} as const

/**
 * The command line or a file it names is wrong (exit code 2).
 *
 * @since 0.1.0
 * @category errors
 */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/**
 * The tool answered with `isError: true` (exit code 1). The result was already printed.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolFailed extends Data.TaggedError("ToolFailed")<{ readonly tool: string }> {
  override get message(): string {
    return `tool ${this.tool} reported an error`
  }
}

/**
 * The whole command took longer than `--timeout` (exit code 124).
 *
 * @since 0.1.0
 * @category errors
 */
export class TimedOut extends Data.TaggedError("TimedOut")<{ readonly message: string }> {}

/**
 * A local I/O failure that is not the server's fault, such as an unreadable config file (exit code 2) or a
 * listening socket that cannot be opened (exit code 3).
 *
 * @since 0.1.0
 * @category errors
 */
export class SystemFailure extends Data.TaggedError("SystemFailure")<{
  readonly message: string
  readonly exitCode: number
}> {}

/**
 * An HTTP server refused the request for want of authorization (exit code 4): the client's `AuthError`, with the
 * server's URL for the hint to sign in. Under `--json` its tag is still `AuthError`.
 *
 * @since 0.1.0
 * @category errors
 */
export class LoginNeeded extends Data.TaggedError("LoginNeeded")<{
  readonly error: McpError.AuthError
  readonly url: string
}> {
  override get message(): string {
    return this.error.message
  }
}

/**
 * A failure already reported where it happened (a command of a `conduit run` script, under its own `--json` or
 * not): only its exit code is left to give.
 *
 * @since 0.1.0
 * @category errors
 */
export class Reported extends Data.TaggedError("Reported")<{ readonly exitCode: number }> {
  override get message(): string {
    return `failed with exit code ${this.exitCode}`
  }
}

/**
 * Every failure a command can end with.
 *
 * @since 0.1.0
 * @category errors
 */
export type CliError =
  | McpError.McpClientError
  | McpError.TaskError
  | McpError.InvalidOption
  | OAuth.OAuthError
  | UsageError
  | ToolFailed
  | TimedOut
  | SystemFailure
  | Reported
  | LoginNeeded

/**
 * @since 0.1.0
 * @category exit codes
 */
export const exitCodeOf = (error: CliError): number => {
  switch (error._tag) {
    case "ToolFailed":
      return ExitCode.ToolError
    case "UsageError":
    case "InvalidOption":
      return ExitCode.Usage
    case "TransportError":
      return error.reason === "Timeout" ? ExitCode.Timeout : ExitCode.Connection
    case "SessionExpired":
      return ExitCode.Connection
    case "AuthError":
    case "OAuthError":
    case "LoginNeeded":
      return ExitCode.Auth
    case "McpError":
    case "ProtocolError":
    case "ResourceNotFound":
    case "UrlElicitationRequired":
    case "MissingClientCapability":
    case "UnsupportedProtocolVersion":
      return ExitCode.Protocol
    case "RequestTimeout":
    case "TimedOut":
      return ExitCode.Timeout
    case "SystemFailure":
    case "Reported":
      return error.exitCode
    case "TaskError":
      // a tool or server that does not run tasks is a usage error (`--detach` on a plain tool)
      return error.reason === "Unsupported" ? ExitCode.Usage : ExitCode.Task
  }
}

const authText = (error: McpError.AuthError, url: string): string =>
  `${error.message}${
    error.challenges.length > 0 ? `\n  challenges: ${error.challenges.map((c) => Text.line(c.scheme)).join(", ")}` : ""
  }\n  to sign in, run: conduit login --url ${Text.line(url)}`

/**
 * One line (or a few) for stderr.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describe = (error: CliError): string => {
  switch (error._tag) {
    case "McpError":
      return `server error ${error.code}${error.method !== undefined ? ` in ${error.method}` : ""}: ${error.message}` +
        (error.data !== undefined ? `\n  data: ${Text.json(error.data)}` : "")
    case "AuthError":
      return authText(error, "<the server URL>")
    case "LoginNeeded":
      return authText(error.error, ShellWords.quote(error.url))
    case "TransportError":
      if (error.reason === "HttpStatus" && error.status !== undefined) {
        // a 404 is a URL where nothing serves MCP (a session the server forgot is SessionExpired, not this)
        if (error.status === 404) return "the server answered HTTP 404: nothing serves MCP at this URL (check its path)"
        // the first line of what the server said, cut short, as the explanation; a web page's markup explains nothing
        const html = (error.contentType ?? "").toLowerCase().includes("html")
        const said = html ? undefined : (error.body ?? "").split("\n").map((line) => line.trim()).find((line) =>
          line.length > 0
        )
        // escape sequences (CSI, OSC) whole, then any other control character
        const plain = said?.replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g, "")
          .replace(/[\u0000-\u001f\u007f-\u009f]/g, "").slice(0, 200)
        return `the server answered HTTP ${error.status}${plain !== undefined && plain !== "" ? `: ${plain}` : ""}`
      }
      return error.message
    default:
      return error.message
  }
}
