/**
 * The JSON-RPC 2.0 envelope of MCP messages and its decoding (re-exported by `McpSchema`).
 *
 * @internal
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

/**
 * A JSON-RPC request id: a string or an integer, never null.
 *
 * @since 0.1.0
 * @category models
 */
export const RequestId = Schema.Union([Schema.String, Schema.Int])

/**
 * @since 0.1.0
 * @category models
 */
export type RequestId = typeof RequestId.Type

/**
 * @since 0.1.0
 * @category models
 */
export const ProgressToken = Schema.Union([Schema.String, Schema.Number])

/**
 * @since 0.1.0
 * @category models
 */
export type ProgressToken = typeof ProgressToken.Type

const jsonrpc = Schema.Literal("2.0")

/**
 * @since 0.1.0
 * @category models
 */
export const JsonRpcRequest = Schema.Struct({
  jsonrpc,
  id: RequestId,
  method: Schema.String,
  params: Schema.optional(Schema.Unknown)
})

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcRequest = typeof JsonRpcRequest.Type

/**
 * @since 0.1.0
 * @category models
 */
export const JsonRpcNotification = Schema.Struct({
  jsonrpc,
  method: Schema.String,
  params: Schema.optional(Schema.Unknown)
})

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcNotification = typeof JsonRpcNotification.Type

/**
 * @since 0.1.0
 * @category models
 */
export const JsonRpcSuccess = Schema.Struct({
  jsonrpc,
  id: RequestId,
  result: Schema.Unknown
})

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcSuccess = typeof JsonRpcSuccess.Type

/**
 * @since 0.1.0
 * @category models
 */
export const JsonRpcErrorObject = Schema.Struct({
  code: Schema.Number,
  message: Schema.String,
  data: Schema.optional(Schema.Unknown)
})

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcErrorObject = typeof JsonRpcErrorObject.Type

/**
 * @since 0.1.0
 * @category models
 */
export const JsonRpcFailure = Schema.Struct({
  jsonrpc,
  id: Schema.NullOr(RequestId),
  error: JsonRpcErrorObject
})

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcFailure = typeof JsonRpcFailure.Type

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure

/**
 * Any single JSON-RPC message.
 *
 * @since 0.1.0
 * @category models
 */
export const JsonRpcMessage = Schema.Union([JsonRpcRequest, JsonRpcSuccess, JsonRpcFailure, JsonRpcNotification])

/**
 * @since 0.1.0
 * @category models
 */
export type JsonRpcMessage = typeof JsonRpcMessage.Type

const decodeRequest = Schema.decodeUnknownResult(JsonRpcRequest)
const decodeNotification = Schema.decodeUnknownResult(JsonRpcNotification)
const decodeSuccess = Schema.decodeUnknownResult(JsonRpcSuccess)
const decodeFailure = Schema.decodeUnknownResult(JsonRpcFailure)

const notAMessage = (input: unknown) =>
  Result.fail(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: "not a JSON-RPC 2.0 message" }, input)))

/**
 * Decodes one parsed JSON value as a JSON-RPC message. The shape picks the one member schema that applies
 * (request, notification, success, failure), so the hot path decodes the envelope once; `params` and `result`
 * stay `unknown` until the method that owns them decodes them.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeMessage = (input: unknown): Result.Result<JsonRpcMessage, Schema.SchemaError> => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return notAMessage(input)
  // The usual envelopes are checked by hand, to the same result as their schemas (members in schema order, other
  // members dropped); anything else, valid or not, goes through the schemas.
  const valid = "jsonrpc" in input && input.jsonrpc === "2.0"
  if ("method" in input) {
    if (valid && typeof input.method === "string") {
      const method = input.method
      const params = hasOwn(input, "params") ? { params: "params" in input ? input.params : undefined } : {}
      if (!("id" in input)) return Result.succeed({ jsonrpc: "2.0", method, ...params })
      const id = input.id
      if (isRequestId(id) && hasOwn(input, "id")) return Result.succeed({ jsonrpc: "2.0", id, method, ...params })
    }
    return "id" in input ? decodeRequest(own(input)) : decodeNotification(own(input))
  }
  if ("result" in input) {
    if (valid && "id" in input && isRequestId(input.id) && hasOwn(input, "id") && hasOwn(input, "result")) {
      return Result.succeed({ jsonrpc: "2.0", id: input.id, result: input.result })
    }
    return decodeSuccess(own(input))
  }
  if ("error" in input) return decodeFailure(own(input))
  return notAMessage(input)
}

const hasOwn = (input: object, key: string): boolean => Object.prototype.hasOwnProperty.call(input, key)

/**
 * The members a message has are its own, as JSON.parse makes them. Effect 4's struct decoding also reads inherited
 * members, so an object with another prototype is decoded through a copy of its own members.
 */
const own = (input: object): object => Object.getPrototypeOf(input) === Object.prototype ? input : { ...input }

const isRequestId = (id: unknown): id is RequestId =>
  typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id))

/**
 * @since 0.1.0
 * @category guards
 */
export const isRequest = (message: JsonRpcMessage): message is JsonRpcRequest => "method" in message && "id" in message

/**
 * @since 0.1.0
 * @category guards
 */
export const isNotification = (message: JsonRpcMessage): message is JsonRpcNotification =>
  "method" in message && !("id" in message)

/**
 * @since 0.1.0
 * @category guards
 */
export const isResponse = (message: JsonRpcMessage): message is JsonRpcResponse => !("method" in message)
