/**
 * How `conduit` answers a server's elicitation. On a terminal it asks: a form field by field (from the requested
 * schema), a URL with its origin shown and opened only when the user agrees. Anywhere else it declines and says
 * why on stderr.
 *
 * @since 0.1.0
 */
import * as ElicitationHandler from "@conduit-mcp/client/ElicitationHandler"
import * as JsonSchema from "@conduit-mcp/client/JsonSchema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Readline from "node:readline"
import * as Browser from "./browser.js"
import * as Output from "./output.js"
import * as Text from "./terminalText.js"

type Field = ElicitationHandler.FieldSchema

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

interface Choice {
  readonly value: string
  readonly label: string
}

/**
 * The values a field offers (`enum`, or `oneOf`/`anyOf` of `const` with titles), if it is a choice.
 *
 * @since 0.1.0
 * @category forms
 */
export const choices = (field: Readonly<Record<string, unknown>>): ReadonlyArray<Choice> | undefined => {
  if (Array.isArray(field.enum)) {
    const names = Array.isArray(field.enumNames) ? field.enumNames : []
    return field.enum.map((value, index) => ({
      value: String(value),
      label: typeof names[index] === "string" ? `${names[index]} (${String(value)})` : String(value)
    }))
  }
  const options = Array.isArray(field.oneOf) ? field.oneOf : Array.isArray(field.anyOf) ? field.anyOf : undefined
  if (options === undefined) return undefined
  return options.flatMap((option) =>
    isRecord(option) && option.const !== undefined
      ? [{
        value: String(option.const),
        label: typeof option.title === "string" ? `${option.title} (${String(option.const)})` : String(option.const)
      }]
      : []
  )
}

/**
 * Reads one answer of a field. `Left` holds the reason to ask again; an empty answer takes the default (or
 * leaves an optional field out).
 *
 * @since 0.1.0
 * @category forms
 */
export const parseAnswer = (
  field: Field,
  answer: string,
  required: boolean
): { readonly _tag: "Value"; readonly value: string | number | boolean | ReadonlyArray<string> } | {
  readonly _tag: "Skip"
} | { readonly _tag: "Retry"; readonly reason: string } => {
  const text = answer.trim()
  if (text === "") {
    if (field.default !== undefined) return { _tag: "Skip" } // the client fills in defaults
    return required ? { _tag: "Retry", reason: "this field is required" } : { _tag: "Skip" }
  }
  const type = field.type
  if (type === "boolean") {
    if (/^(y|yes|true|1)$/i.test(text)) return { _tag: "Value", value: true }
    if (/^(n|no|false|0)$/i.test(text)) return { _tag: "Value", value: false }
    return { _tag: "Retry", reason: "answer y or n" }
  }
  if (type === "number" || type === "integer") {
    const value = Number(text)
    if (!Number.isFinite(value)) return { _tag: "Retry", reason: "not a number" }
    if (type === "integer" && !Number.isInteger(value)) return { _tag: "Retry", reason: "not an integer" }
    if (typeof field.minimum === "number" && value < field.minimum) {
      return { _tag: "Retry", reason: `at least ${field.minimum}` }
    }
    if (typeof field.maximum === "number" && value > field.maximum) {
      return { _tag: "Retry", reason: `at most ${field.maximum}` }
    }
    return checked(field, value)
  }
  if (type === "array") {
    const offered = isRecord(field.items) ? choices(field.items) : undefined
    const picked: Array<string> = []
    for (const part of text.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
      const value = offered === undefined ? part : pick(offered, part)
      if (value === undefined) return { _tag: "Retry", reason: `${part} is not one of the choices` }
      picked.push(value)
    }
    if (typeof field.minItems === "number" && picked.length < field.minItems) {
      return { _tag: "Retry", reason: `pick at least ${field.minItems}` }
    }
    if (typeof field.maxItems === "number" && picked.length > field.maxItems) {
      return { _tag: "Retry", reason: `pick at most ${field.maxItems}` }
    }
    return { _tag: "Value", value: picked }
  }
  const offered = choices(field)
  if (offered !== undefined) {
    const value = pick(offered, text)
    return value === undefined ? { _tag: "Retry", reason: "pick one of the choices" } : { _tag: "Value", value }
  }
  if (typeof field.minLength === "number" && text.length < field.minLength) {
    return { _tag: "Retry", reason: `at least ${field.minLength} characters` }
  }
  if (typeof field.maxLength === "number" && text.length > field.maxLength) {
    return { _tag: "Retry", reason: `at most ${field.maxLength} characters` }
  }
  return checked(field, text)
}

// The field's whole schema, as JSON Schema with formats asserted: `format` (email, uri, date, date-time, ...),
// `pattern` (on the validator's linear-time engine, so a server's pattern cannot stall the terminal), enums and
// bounds. A schema the validator cannot read is left to the server, which checks the answer anyway.
const checked = (field: Field, value: string | number): { readonly _tag: "Value"; readonly value: string | number } | {
  readonly _tag: "Retry"
  readonly reason: string
} => {
  const result = JsonSchema.validate(field, value, { formats: "assert", maxSteps: 100_000 })
  if (Result.isSuccess(result) || result.failure._tag !== "JsonSchemaMismatch") return { _tag: "Value", value }
  const issue = result.failure.issues[0]
  if (issue === undefined) return { _tag: "Value", value }
  if (issue.keyword === "format" && typeof field.format === "string") {
    return { _tag: "Retry", reason: `not a valid ${Text.line(field.format)}` }
  }
  if (issue.keyword === "pattern" && typeof field.pattern === "string") {
    return { _tag: "Retry", reason: `must match ${Text.line(field.pattern)}` }
  }
  return { _tag: "Retry", reason: Text.line(issue.message) }
}

// a choice by its number in the list, or by its value
const pick = (offered: ReadonlyArray<Choice>, text: string): string | undefined => {
  const index = /^\d+$/.test(text) ? Number(text) - 1 : -1
  if (index >= 0 && index < offered.length) return offered[index].value
  return offered.find((choice) => choice.value === text || choice.value.toLowerCase() === text.toLowerCase())?.value
}

// ---------------------------------------------------------------------------------------------------------------
// Terminal I/O

/**
 * Asks one question on the terminal.
 *
 * @since 0.1.0
 * @category models
 */
export interface Prompter {
  /** `None` when the input ended (Ctrl-D). */
  readonly ask: (question: string) => Effect.Effect<Option.Option<string>>
}

/**
 * One line reader for the whole form (or a sampling reply). Lines typed (or pasted) ahead of their question are
 * kept for it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const openPrompter: Effect.Effect<Prompter, never, Scope.Scope> = Effect.gen(function*() {
  const lines = yield* Queue.unbounded<Option.Option<string>>()
  let closed = false
  const rl = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const rl = Readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true })
      rl.on("line", (line) => Queue.offerUnsafe(lines, Option.some(line)))
      rl.on("close", () => {
        closed = true
        Queue.offerUnsafe(lines, Option.none())
      })
      // the terminal is in raw mode while reading: hand Ctrl-C to the runtime, which interrupts the command
      rl.on("SIGINT", () => process.kill(process.pid, "SIGINT"))
      return rl
    }),
    (rl) => Effect.sync(() => rl.close())
  )
  return {
    ask: (question) =>
      Effect.suspend(() => {
        if (closed) return Effect.succeed(Option.none())
        rl.setPrompt(question)
        rl.prompt()
        return Queue.take(lines)
      })
  }
})

const cancelled: ElicitationHandler.ElicitResult = { action: "cancel" }

const fillForm = (
  prompter: Prompter,
  request: ElicitationHandler.FormRequest
): Effect.Effect<ElicitationHandler.ElicitResult> =>
  Effect.gen(function*() {
    const s = Output.styles(process.stderr)
    const schema = request.requestedSchema
    const required = schema.required ?? []
    yield* Output.stderr(
      `${s.dim("Empty answer: default, or leave out an optional field. Ctrl-D cancels, Ctrl-C aborts.")}`
    )
    const content: Record<string, string | number | boolean | Array<string>> = {}
    for (const [key, field] of Object.entries(schema.properties)) {
      const isRequired = required.includes(key)
      const offered = field.type === "array" ? (isRecord(field.items) ? choices(field.items) : undefined) : choices(field)
      const title = Text.line(field.title ?? key)
      const lines = [`${s.bold(title)}${isRequired ? s.red(" *") : ""} ${s.dim(Text.line(describeType(field)))}`]
      if (field.description !== undefined) lines.push(`  ${s.dim(Text.line(field.description))}`)
      if (offered !== undefined) {
        offered.forEach((choice, index) => lines.push(`  ${index + 1}) ${Text.line(choice.label)}`))
      }
      yield* Output.stderr(lines.join("\n"))
      const suffix = field.default !== undefined ? ` [${Text.line(formatDefault(field.default))}]` : ""
      while (true) {
        const answer = yield* prompter.ask(`${s.cyan(">")}${suffix} `)
        if (Option.isNone(answer)) return cancelled
        const parsed = parseAnswer(field, answer.value, isRequired)
        if (parsed._tag === "Retry") {
          yield* Output.stderr(s.yellow(`  ${Text.line(parsed.reason)}`))
          continue
        }
        if (parsed._tag === "Value") {
          content[key] = typeof parsed.value === "object" ? [...parsed.value] : parsed.value
        }
        break
      }
    }
    const send = yield* prompter.ask(`Send these answers? ${s.dim("[Y/n]")} `)
    if (Option.isNone(send)) return cancelled
    if (/^n(o)?$/i.test(send.value.trim())) return { action: "decline" } as const
    return { action: "accept", content } as const
  })

const describeType = (field: Field): string => {
  const format = typeof field.format === "string" ? ` (${field.format})` : ""
  if (field.type === "array") return "(comma-separated choices)"
  if (field.type === "boolean") return "(y/n)"
  const low = typeof field.minimum === "number" ? field.minimum : undefined
  const high = typeof field.maximum === "number" ? field.maximum : undefined
  const range = low !== undefined || high !== undefined ? `, ${low ?? ""}..${high ?? ""}` : ""
  return field.type !== undefined ? `(${field.type}${format}${range})` : ""
}

const formatDefault = (value: unknown): string =>
  typeof value === "boolean" ? (value ? "y" : "n") : Array.isArray(value) ? value.join(", ") : String(value)

const normalisedUrl = (raw: string): string => URL.canParse(raw) ? new URL(raw).href : raw

// a multi-line message keeps its lines, each marked as the server's so that none passes for conduit's own
const serverText = (text: string): string => Text.block(text).split("\n").join("\n  | ")

const openUrl = (
  prompter: Prompter,
  request: ElicitationHandler.UrlRequest,
  executor: ChildProcessSpawner.ChildProcessSpawner["Service"]
): Effect.Effect<ElicitationHandler.ElicitResult> =>
  Effect.gen(function*() {
    const s = Output.styles(process.stderr)
    const warnings = request.warnings.map((warning) => {
      switch (warning) {
        case "cross-origin":
          return `this URL is NOT on the server's origin (${Text.line(request.serverOrigin ?? "")})`
        case "no-server-origin":
          return "the server has no web origin to compare this URL with"
        case "insecure-loopback":
          return "plain http on this machine (loopback)"
        case "punycode":
          return "the host name uses punycode (xn--): check it carefully"
      }
    })
    // the URL as the browser will read it (normalised: punycode host, controls and spaces percent-encoded)
    const url = normalisedUrl(request.url)
    yield* Output.stderr([
      `  URL:    ${Text.line(url)}`,
      `  origin: ${s.bold(Text.line(request.urlOrigin))}`,
      ...warnings.map((warning) => s.yellow(`  warning: ${Text.line(warning)}`))
    ].join("\n"))
    const answer = yield* prompter.ask(`Open this URL in your browser? ${s.dim("[y/N]")} `)
    if (Option.isNone(answer)) return cancelled
    if (!/^y(es)?$/i.test(answer.value.trim())) return { action: "decline" } as const
    const opened = yield* Effect.provideService(Browser.open(url), ChildProcessSpawner.ChildProcessSpawner, executor)
      .pipe(Effect.option)
    if (Option.isNone(opened) || opened.value !== 0) {
      yield* Output.stderr(`Could not start a browser; open the URL yourself: ${Text.line(url)}`)
    }
    return { action: "accept" } as const
  })

const interactive = (
  executor: ChildProcessSpawner.ChildProcessSpawner["Service"],
  shared: Prompter | undefined
): ElicitationHandler.Service => ({
  modes: ["form", "url"],
  elicit: (request, context) =>
    Effect.scoped(Effect.gen(function*() {
      const s = Output.styles(process.stderr)
      const who = Text.line(context.serverName ?? "The server")
      yield* Output.stderr(
        `\n${s.bold(`${who} asks`)}${request.mode === "url" ? " you to open a page" : ""}: ${serverText(request.message)}`
      )
      // the shell's own line reader when there is one (two readers on one terminal would both take each key)
      const prompter = shared ?? (yield* openPrompter)
      return request.mode === "form" ? yield* fillForm(prompter, request) : yield* openUrl(prompter, request, executor)
    })),
  completed: (elicitationId) =>
    Output.stderr(`The server reports that elicitation ${Text.line(elicitationId)} completed.`),
  // the manual controls while a request waits on a page the user opened (the server's report, when it comes
  // first, interrupts the question)
  urlPending: (request) =>
    Effect.scoped(Effect.gen(function*() {
      const s = Output.styles(process.stderr)
      const prompter = shared ?? (yield* openPrompter)
      const answer = yield* prompter.ask(
        `Waiting for you to finish on ${Text.line(request.urlOrigin)}. Press Enter to retry, or type c to cancel: `
      )
      if (Option.isNone(answer) || /^c(ancel)?$/i.test(answer.value.trim())) {
        yield* Output.stderr(s.dim("cancelled"))
        return "cancel" as const
      }
      return "retry" as const
    }))
})

const declining: ElicitationHandler.Service = {
  modes: ["form", "url"],
  elicit: (request, context) =>
    Effect.as(
      Output.stderr(
        `conduit: ${Text.line(context.serverName ?? "the server")} asked for input (${Text.line(request.mode)}: ${
          Text.json(request.message)
        }); declined because this run is not interactive (stdin and stderr must be a terminal).`
      ),
      { action: "decline" } as const
    )
}

/**
 * Whether prompts can be shown and answered.
 *
 * @since 0.1.0
 * @category constructors
 */
export const isInteractive = (): boolean => process.stdin.isTTY === true && process.stderr.isTTY === true

/**
 * The elicitation handler: interactive on a terminal, declining otherwise.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: { readonly interactive: boolean; readonly prompter?: Prompter | undefined }): Layer.Layer<
  ElicitationHandler.ElicitationHandler,
  never,
  ChildProcessSpawner.ChildProcessSpawner
> =>
  Layer.effect(
    ElicitationHandler.ElicitationHandler,
    Effect.map(ChildProcessSpawner.ChildProcessSpawner, (executor) => options.interactive ? interactive(executor, options.prompter) : declining)
  )
