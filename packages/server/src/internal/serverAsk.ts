/**
 * How a handler's request for input reaches the client, in each era. Legacy: a request to the client on the
 * handler's connection, awaited, and the client's response matched back to it. Modern (2026-07-28 MRTR): the
 * answer from this round or an earlier one, or the request stops and answers `input_required` with what it still
 * needs and the `requestState` the client sends back.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import type * as McpError from "@conduit-mcp/client/McpError"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as McpServer from "../McpServer.js"
import * as Input from "./serverInput.js"
import * as model from "./serverModel.js"
import { invalidParams, record, type RequestInfo } from "./serverRequest.js"

type JsonObject = model.JsonObject

/** How a handler asks the client for input. */
type Ask = (method: model.InputMethod, params: JsonObject) => Effect.Effect<JsonObject, model.InputError>

// ---------------------------------------------------------------------------------------------------------------
// Legacy: requests to the client

/**
 * The legacy requests one connection sends its client: `askClient` sends one and awaits its answer,
 * `answerFromClient` hands the client's response to the request waiting for it.
 *
 * @internal
 */
export interface Outgoing {
  readonly askClient: (request: RequestInfo) => Ask
  readonly answerFromClient: (message: McpSchema.JsonRpcResponse) => Effect.Effect<void>
}

/** @internal */
export const makeOutgoing = (deps: {
  readonly info: McpSchema.Implementation
  readonly connection: number
  readonly send: McpServer.Send
  readonly notify: (method: string, params: JsonObject) => Effect.Effect<void>
}): Outgoing => {
  const { connection, info, notify, send } = deps
  // Legacy requests this connection sent the client, awaiting its answer.
  const outgoing = new Map<McpSchema.RequestId, {
    readonly method: model.InputMethod
    readonly answer: Deferred.Deferred<JsonObject, model.InputError>
  }>()
  let outgoingIds = 0

  /** Legacy: a request to the client, awaited; interrupting the handler cancels it. */
  const askClient = (request: RequestInfo) => (method: model.InputMethod, params: JsonObject) =>
    Effect.suspend(() => {
      const problem = Input.inputProblem(method, params, request.version, request.clientCapabilities)
      if (problem !== undefined) return Effect.fail(problem)
      return Effect.acquireUseRelease(
        Effect.map(Deferred.make<JsonObject, model.InputError>(), (answer) => {
          const id = ++outgoingIds
          outgoing.set(id, { method, answer })
          return { id, answer }
        }),
        ({ answer, id }) =>
          Effect.andThen(
            send({
              jsonrpc: "2.0",
              id,
              method,
              params: Input.inputParams(method, params, request.version, () => `${info.name}-${connection}-${id}`)
            }),
            Deferred.await(answer)
          ),
        ({ id }, exit) =>
          Effect.suspend(() => {
            outgoing.delete(id)
            return Exit.hasInterrupts(exit)
              ? notify("notifications/cancelled", { requestId: id, reason: "The request was cancelled" })
              : Effect.void
          })
      )
    })

  const answerFromClient = (message: McpSchema.JsonRpcResponse): Effect.Effect<void> => {
    if (message.id === null) return Effect.void
    const waiting = outgoing.get(message.id)
    if (waiting === undefined) return Effect.void
    outgoing.delete(message.id)
    const { answer, method } = waiting
    if ("error" in message) {
      return Deferred.fail(
        answer,
        new model.InputError({
          method,
          reason: "Refused",
          detail: `the client answered with error ${message.error.code}: ${message.error.message}`,
          code: message.error.code
        })
      )
    }
    const result = record(message.result)
    return result !== undefined ? Deferred.succeed(answer, result) : Deferred.fail(
      answer,
      new model.InputError({
        method,
        reason: "InvalidResponse",
        detail: "the client's answer is not an object"
      })
    )
  }

  return { askClient, answerFromClient }
}

// ---------------------------------------------------------------------------------------------------------------
// Modern: rounds (MRTR)

/**
 * Modern: the answer from this round or an earlier one, or stop the handler and ask (MRTR).
 *
 * @internal
 */
export const askInRound = (request: RequestInfo, round: Input.InputRound | undefined): Ask =>
(
  method: model.InputMethod,
  params: JsonObject
): Effect.Effect<JsonObject, model.InputError> =>
  Effect.suspend(() => {
    if (round === undefined) {
      return Effect.fail(
        new model.InputError({
          method,
          reason: "Unsupported",
          detail: `a modern ${request.method} request cannot ask the client for input (only tools/call, ` +
            "prompts/get and resources/read can)"
        })
      )
    }
    // Keys follow the order of the handler's calls, which is the same on every run.
    const key = `${Input.INPUT_KEYS[method]}_${++round.calls}`
    const known = round.known.get(key)
    if (known !== undefined) {
      round.used[key] = known
      return Effect.succeed(known)
    }
    const problem = Input.inputProblem(method, params, request.version, request.clientCapabilities)
    if (problem !== undefined) return Effect.fail(problem)
    round.needed[key] = { method, params: Input.inputParams(method, params, request.version, () => key) }
    return Effect.andThen(Deferred.succeed(round.blocked, undefined), Effect.never)
  })

/**
 * The round of a modern request that may need input: what the client answered so far.
 *
 * @internal
 */
export const startRound = (request: RequestInfo): Effect.Effect<Input.InputRound | undefined, McpError.McpError> =>
  Effect.gen(function*() {
    if (request.era !== "modern" || !Input.INPUT_REQUESTS.has(request.method)) return undefined
    const known = new Map<string, JsonObject>()
    const target = Input.targetOf(request.params)
    if (request.params.requestState !== undefined) {
      const state = Input.decodeRequestState(request.params.requestState)
      if (Result.isFailure(state)) return yield* invalidParams("Invalid requestState")
      if (state.success.method !== request.method || state.success.target !== target) {
        return yield* invalidParams("The requestState belongs to another request")
      }
      for (const [key, answer] of Object.entries(state.success.answers)) known.set(key, answer)
    }
    if (request.params.inputResponses !== undefined) {
      const responses = Input.decodeAnswers(request.params.inputResponses)
      if (Result.isFailure(responses)) return yield* invalidParams("Invalid inputResponses")
      for (const [key, answer] of Object.entries(responses.success)) known.set(key, answer)
    }
    return { known, used: {}, needed: {}, blocked: yield* Deferred.make<void>(), calls: 0 }
  })

/**
 * The `input_required` result of a round: what the handler still needs, and the answers it used so far.
 *
 * @internal
 */
export const inputRequired = (
  info: McpSchema.Implementation,
  request: RequestInfo,
  round: Input.InputRound
): JsonObject => ({
  resultType: "input_required",
  inputRequests: { ...round.needed },
  requestState: Input.encodeRequestState({
    v: 1,
    method: request.method,
    target: Input.targetOf(request.params),
    answers: { ...round.used }
  }),
  _meta: { [McpSchema.MetaKeys.serverInfo]: info }
})
