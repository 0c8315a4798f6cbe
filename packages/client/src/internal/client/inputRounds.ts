/**
 * Modern `input_required` rounds: a call answered with input requests is fulfilled (through the handler services,
 * or the caller's own `answerInputs`) and sent again, a new id each round, up to `maxInputRounds`.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import * as Features from "../clientFeatures.js"
import * as UrlConsent from "../urlConsent.js"
import type * as Cache from "./cache.js"
import type * as Envelope from "./envelope.js"
import type { Session } from "./session.js"
import type * as McpMethods from "../mcpMethods.js"

const inputCapability: Readonly<Record<string, "elicitation" | "sampling" | "roots">> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots"
}
const InputRequiredResult = Schema.Struct({
  resultType: Schema.Literal("input_required"),
  inputRequests: Schema.optional(
    Schema.Record(Schema.String, Schema.Struct({ method: Schema.String, params: Schema.optional(Schema.Unknown) }))
  ),
  requestState: Schema.optional(Schema.String)
})
const decodeInputRequired = Schema.decodeUnknownResult(InputRequiredResult)

/**
 * One round of a call taken by the caller (`callToolRound`): an `input_required` answer as the caller sees it.
 *
 * @internal
 */
export const inputRequiredOf = (
  method: string,
  raw: unknown
): Result.Result<
  { readonly inputRequests: InputRequests; readonly requestState: string | undefined },
  McpError.ProtocolError
> =>
  Result.match(decodeInputRequired(raw), {
    onFailure: () => Result.fail(inputError(method, "an input_required result that is not well formed")),
    onSuccess: (result) =>
      result.inputRequests === undefined && result.requestState === undefined
        ? Result.fail(inputError(method, "input_required carries neither inputRequests nor requestState"))
        : Result.succeed({ inputRequests: result.inputRequests ?? {}, requestState: result.requestState })
  })

/**
 * Whether a raw result asks for input.
 *
 * @internal
 */
export const isInputRequired = (raw: unknown): boolean =>
  typeof raw === "object" && raw !== null && "resultType" in raw && raw.resultType === "input_required"

const inputError = (method: string, detail: string, reason: McpError.ProtocolError["reason"] = "InvalidResult") =>
  new McpError.ProtocolError({ reason, method, detail })

type InputRequests = Readonly<Record<string, { readonly method: string; readonly params?: unknown }>>

/**
 * The rounds after a first answer (`first`), until a complete result.
 *
 * @internal
 */
export type InputRounds = (
  method: string,
  params: Readonly<Record<string, unknown>> | undefined,
  options: McpClient.RequestOptions | undefined,
  first: readonly [unknown, Session]
) => Effect.Effect<unknown, McpError.McpClientError>

/**
 * Serves one round of input requests (an MRTR round, or a task's `input_required`) through the handlers.
 *
 * @internal
 */
export type Answerer = (
  method: string,
  session: Session,
  inputRequests: InputRequests,
  /** The URL pages consented to earlier in the same call, which are not shown again. */
  urlConsent?: UrlConsent.UrlConsent | undefined
) => Effect.Effect<Record<string, unknown>, McpError.ProtocolError>

/**
 * @internal
 */
export const makeAnswerer = (envelope: Envelope.Envelope): Answerer => (method, session, inputRequests, urlConsent) =>
    Effect.gen(function*() {
      const declared = envelope.capabilitiesFor(session.protocolVersion)
      const responses: Record<string, unknown> = {}
      for (const [key, input] of Object.entries(inputRequests)) {
        const capability = inputCapability[input.method]
        if (capability === undefined) {
          return yield* inputError(method, `the server asked for an unknown input method ${input.method}`)
        }
        if (declared[capability] === undefined) {
          return yield* inputError(method, `the server asked for ${input.method}, which this client did not declare`)
        }
        const outcome = yield* Features.fulfil(envelope.handlers, input.method, input.params ?? {}, {
          serverOrigin: session.transport.origin,
          serverName: session.serverInfo?.name,
          related: undefined,
          declaredModes: envelope.declaredModes(session.protocolVersion),
          urlConsent
        })
        if (Result.isFailure(outcome)) {
          return yield* inputError(method, `${input.method} failed: ${outcome.failure.message}`, "InputFailed")
        }
        responses[key] = outcome.success
      }
      return responses
    })

/**
 * @internal
 */
export const make = (
  leg: Cache.Leg,
  envelope: Envelope.Envelope,
  maxInputRounds: number,
  methods: McpMethods.Registry
): InputRounds => {
  const answerInputs = makeAnswerer(envelope)
  return (method, params, options, first) =>
    Effect.gen(function*() {
      // C4: a page the user consented to in one round is not shown again in the next
      const urlConsent = UrlConsent.make()
      let inputResponses: Record<string, unknown> | undefined
      let requestState: string | undefined
      for (let round = 1;; round++) {
        const legParams = inputResponses === undefined && requestState === undefined ? params : {
          ...params,
          ...(inputResponses !== undefined ? { inputResponses } : {}),
          ...(requestState !== undefined ? { requestState } : {})
        }
        const [raw, session] = round === 1 ? first : yield* leg(method, legParams, options)
        if (!isInputRequired(raw)) return raw
        if (methods.of(method)?.inputRounds !== true) {
          return yield* inputError(method, `input_required is not allowed in answer to ${method}`, "InvalidResultType")
        }
        const decoded = decodeInputRequired(raw)
        if (Result.isFailure(decoded)) {
          return yield* inputError(method, `malformed input_required result: ${decoded.failure.message}`)
        }
        const result = decoded.success
        if (result.inputRequests === undefined && result.requestState === undefined) {
          return yield* inputError(method, "input_required carries neither inputRequests nor requestState")
        }
        if (round > maxInputRounds) {
          return yield* new McpError.ProtocolError({
            reason: "InputRoundsExceeded",
            method,
            detail: `the server still needs input after ${maxInputRounds} rounds`,
            lastResult: raw
          })
        }
        requestState = result.requestState
        if (result.inputRequests === undefined || Object.keys(result.inputRequests).length === 0) {
          inputResponses = undefined
          yield* Effect.sleep(Duration.millis(250)) // state only: retry, but never in a tight loop
        } else {
          const answered = options?.answerInputs !== undefined
            ? yield* options.answerInputs(result.inputRequests, round)
            : yield* answerInputs(method, session, result.inputRequests, urlConsent)
          // every input MUST be answered before the retry
          const unanswered = Object.keys(result.inputRequests).filter((key) => !(key in answered))
          if (unanswered.length > 0) {
            return yield* inputError(method, `no answer for the input(s) ${unanswered.join(", ")}`, "InputFailed")
          }
          inputResponses = answered
        }
      }
    })
}
