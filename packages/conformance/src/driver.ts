/**
 * The conformance driver ("everything client"): the harness runs it with the scenario in
 * `MCP_CONFORMANCE_SCENARIO`, the revision in `MCP_CONFORMANCE_PROTOCOL_VERSION`, scenario data in
 * `MCP_CONFORMANCE_CONTEXT` and the server URL as the last argument. It logs every protocol step to stderr.
 *
 * Exit status: 0 the scenario's flow completed; 1 it failed; 2 unknown scenario or bad input; 3 the client
 * refused and stopped the way a refusal scenario expects (the harness accepts a non-zero exit there, and the
 * runner checks that it is this one).
 *
 * @since 0.0.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Client from "./Client.js"
import * as Environment from "./Environment.js"
import { scenarios } from "./Scenarios.js"

/**
 * Exit statuses.
 *
 * @since 0.0.0
 * @category constants
 */
export const ExitCode = { completed: 0, failed: 1, usage: 2, refused: 3 } as const

const started = Date.now()

const write = (line: string) => process.stderr.write(`[driver +${Date.now() - started}ms] ${line}\n`)

const render = (message: unknown): string =>
  Array.isArray(message) ? message.map(render).join(" ") : typeof message === "string" ? message : String(message)

/** Every log line of the driver and the library, with its annotations, on stderr. */
const stderrLogger = Logger.make(({ fiber, logLevel, message }) => {
  const annotations = fiber.getRef(References.CurrentLogAnnotations)
  const module = annotations["module"]
  const method = annotations["method"]
  const where = [module, method].filter((part) => part !== undefined).map(String).join(".")
  const extra = Object.entries(annotations)
    .filter(([key]) => key !== "module" && key !== "method")
    .map(([key, value]) => `${key}=${render(value)}`)
  // the innermost log span comes first
  const span = fiber.getRef(References.CurrentLogSpans)[0]
  // levels are mixed-case strings ("Warn"); the upper-case form is the label these lines have always carried
  write(
    `${logLevel.toUpperCase().padEnd(5)} ${where.length > 0 ? `${where}: ` : ""}${render(message)}` +
      `${extra.length > 0 ? ` {${extra.join(", ")}}` : ""}${span !== undefined ? ` <${span[0]}>` : ""}`
  )
})

const describe = (error: unknown): string => {
  if (typeof error !== "object" || error === null) return String(error)
  const tag = "_tag" in error ? String(error._tag) : "Error"
  const message = "message" in error && typeof error.message === "string" ? error.message : ""
  const cause = "cause" in error && error.cause !== undefined ? ` <- ${describe(error.cause)}` : ""
  return `${tag}: ${message}${cause}`
}

const main = Effect.gen(function*() {
  const environment = yield* Environment.read(process.env, process.argv.slice(2))
  const scenario = scenarios[environment.scenario]
  write(`scenario ${environment.scenario} at ${environment.protocolVersion} against ${environment.url.href}`)
  if (scenario === undefined) {
    write(`unknown scenario ${JSON.stringify(environment.scenario)}: the driver implements none of that name`)
    return ExitCode.usage
  }
  const setup = yield* scenario.setup(environment)
  const program = scenario.run(environment).pipe(
    Effect.provide(Client.layer(environment.url, environment.protocolVersion, setup))
  )
  const exit = yield* Effect.exit(program)
  if (Exit.isSuccess(exit)) {
    if (scenario.refusal !== undefined) {
      write("FAILED: the flow completed, but this scenario expects the client to refuse")
      return ExitCode.failed
    }
    write("completed")
    return ExitCode.completed
  }
  const failure = Cause.squash(exit.cause)
  const refused = scenario.refusal?.(failure)
  if (refused !== undefined) {
    write(`refused as expected: ${refused}`)
    return ExitCode.refused
  }
  write(`FAILED: ${describe(failure)}`)
  // anything but a single typed failure (a defect, an interruption, several reasons) is printed in full
  const single = exit.cause.reasons.length === 1 ? exit.cause.reasons[0] : undefined
  if (single === undefined || !Cause.isFailReason(single)) write(Cause.pretty(exit.cause))
  return ExitCode.failed
}).pipe(
  Effect.catchTag("InputError", (error) => Effect.sync(() => {
    write(`bad input: ${error.message}`)
    return ExitCode.usage
  })),
  // the default logger is replaced; the tracer logger (log lines as span events) stays, as before
  Effect.provide(Logger.layer([stderrLogger, Logger.tracerLogger])),
  Effect.provideService(References.MinimumLogLevel, "Debug")
)

// the process exits as soon as the scenario is settled, whatever sockets or timers are still open
Effect.runPromise(main).then(
  (code) => process.exit(code),
  (defect) => {
    write(`driver crashed: ${String(defect)}`)
    process.exit(ExitCode.failed)
  }
)
