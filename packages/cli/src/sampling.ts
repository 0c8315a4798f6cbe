/**
 * How `conduit` answers a server's sampling request (`sampling/createMessage`): on a terminal it shows the request
 * (the system prompt, each message, the token limit) and the user types the reply, or declines with an empty line;
 * anywhere else it declines and says why on stderr. The client declares the sampling capability either way, so
 * servers show the tools that need it.
 *
 * @since 0.1.0
 */
import * as SamplingHandler from "@conduit-mcp/client/SamplingHandler"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Elicitation from "./elicitation.js"
import * as Output from "./output.js"
import * as Text from "./terminalText.js"

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The model name conduit answers with: the reply was typed by a person.
 *
 * @since 0.1.0
 * @category constants
 */
export const model = "human (conduit)"

// one content block of a message, as text a terminal can show
const block = (content: unknown): string => {
  if (!isRecord(content)) return Text.json(content)
  if (content.type === "text" && typeof content.text === "string") return Text.block(content.text)
  if ((content.type === "image" || content.type === "audio") && typeof content.data === "string") {
    const mimeType = typeof content.mimeType === "string" ? Text.line(content.mimeType) : "?"
    return `[${content.type} ${mimeType}, ${Math.floor((content.data.length * 3) / 4)} bytes]`
  }
  return Text.json(content)
}

/**
 * The request as it is shown before the question: the system prompt, then each message marked with its role,
 * every line of the server's text marked as the server's.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describeRequest = (params: SamplingHandler.CreateMessageParams): string => {
  const s = Output.styles(process.stderr)
  const marked = (text: string) => text.split("\n").join("\n  | ")
  const lines: Array<string> = []
  if (params.systemPrompt !== undefined) lines.push(`  ${s.dim("system:")} ${marked(Text.block(params.systemPrompt))}`)
  for (const message of params.messages) {
    const contents = Array.isArray(message.content) ? message.content : [message.content]
    lines.push(`  ${s.bold(`[${message.role}]`)} ${marked(contents.map(block).join("\n"))}`)
  }
  return lines.join("\n")
}

const interactive = (shared: Elicitation.Prompter | undefined): SamplingHandler.Service => ({
  createMessage: (params) =>
    Effect.scoped(Effect.gen(function*() {
      const s = Output.styles(process.stderr)
      const limit = typeof params.maxTokens === "number" ? ` (up to ${params.maxTokens} tokens)` : ""
      yield* Output.stderr(
        `\n${s.bold("The server asks for a completion")}${limit}; you are the model. The request:\n${describeRequest(params)}`
      )
      yield* Output.stderr(s.dim("Type the reply on one line; an empty line or Ctrl-D declines."))
      const prompter = shared ?? (yield* Elicitation.openPrompter)
      const answer = yield* prompter.ask(`${s.cyan("reply>")} `)
      const text = Option.getOrElse(answer, () => "").trim()
      if (text === "") return yield* new SamplingHandler.SamplingRefused({ reason: "the user declined" })
      return { role: "assistant", content: { type: "text", text }, model, stopReason: "endTurn" } as const
    }))
})

const declining: SamplingHandler.Service = {
  createMessage: () =>
    Effect.andThen(
      Output.stderr(
        "conduit: the server asked for a completion (sampling); declined because this run is not interactive " +
          "(stdin and stderr must be a terminal)."
      ),
      new SamplingHandler.SamplingRefused({ reason: "not interactive: nobody to answer" })
    )
}

/**
 * The sampling handler: a person answers on a terminal; declined otherwise.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: {
  readonly interactive: boolean
  readonly prompter?: Elicitation.Prompter | undefined
}): Layer.Layer<SamplingHandler.SamplingHandler> =>
  SamplingHandler.layer(options.interactive ? interactive(options.prompter) : declining)
