/**
 * The `conduit` program: runs the command line, reports failures on stderr and exits with the documented code.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Cli from "./cli.js"
import { ExitCode } from "./errors.js"
import * as Output from "./output.js"
import * as Report from "./report.js"
import * as Text from "./terminalText.js"

// stdout carries results (and JSON-RPC for `demo-server --stdio`): every log line goes to stderr, as logfmt, with
// any control character a server slipped into a message escaped
const StderrLogger = Logger.layer([
  Logger.map(Logger.formatLogFmt, (line) => {
    process.stderr.write(`${Text.filter(line, false)}\n`)
  })
])

const argv = process.argv.slice(2)
// `--json` asks for JSON on stdout, failures included (before any `--`, which ends the options)
const jsonOutput = argv.slice(0, argv.includes("--") ? argv.indexOf("--") : undefined).includes("--json")

const program: Effect.Effect<number> = Cli.run(argv).pipe(
  Effect.as(ExitCode.Success),
  Effect.catch((error) => Report.failure(error, jsonOutput)),
  Effect.catchDefect((defect) =>
    Effect.as(
      Output.stderr(`conduit: internal error: ${Text.block(Cause.pretty(Cause.die(defect)))}`),
      ExitCode.Internal
    )
  ),
  Effect.provideService(References.MinimumLogLevel, "Warn"),
  Effect.provide(StderrLogger),
  Effect.provide(NodeServices.layer)
)

// `conduit ... | head -1`: a reader that goes away is not an error of ours
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(ExitCode.Success)
})

// runMain interrupts the program on SIGINT and on SIGTERM alike; which one came decides the exit code (listened to
// before runMain's own listener, which is removed at teardown: this one only notes the signal)
let terminated = false
process.on("SIGTERM", () => {
  terminated = true
})

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit)) onExit(typeof exit.value === "number" ? exit.value : ExitCode.Success)
    else if (Cause.hasInterruptsOnly(exit.cause)) {
      // Ctrl-C: the call was cancelled the era's way; say so on a line of its own (a prompt may have left the cursor
      // mid-line on a terminal)
      process.stderr.write(`${process.stderr.isTTY === true ? "\n" : ""}conduit: ${terminated ? "terminated" : "cancelled"}\n`)
      onExit(terminated ? ExitCode.Terminated : ExitCode.Interrupted)
    } else onExit(ExitCode.Internal)
  }
})
