/**
 * Input from the client, the parts both eras share: whether a client can be asked (its capabilities, the
 * revision), the params as each revision spells them, and the 2026-07-28 MRTR round state (`requestState`) that
 * carries the answers a handler already used from one round to the next.
 *
 * @internal
 */
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as model from "./serverModel.js"

type JsonObject = model.JsonObject

const record = (value: unknown): JsonObject | undefined => Predicate.isObject(value) ? value : undefined

/** The modern requests that may answer `input_required` (2026-07-28 MRTR). */
export const INPUT_REQUESTS: ReadonlySet<string> = new Set(["tools/call", "prompts/get", "resources/read"])

export const INPUT_KEYS: Readonly<Record<model.InputMethod, string>> = {
  "elicitation/create": "elicit",
  "sampling/createMessage": "sample",
  "roots/list": "roots"
}

export const Answers = Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))

/**
 * What `requestState` carries between rounds: the answers the handler already used, bound to the request they
 * belong to. It is opaque to the client (base64url JSON); the client is trusted with it no more than with the
 * answers themselves, which it gave.
 */
export const RequestState = Schema.Struct({
  v: Schema.Literal(1),
  method: Schema.String,
  target: Schema.String,
  answers: Answers
})
export type RequestState = typeof RequestState.Type

// the state is the client's text: parsed like its messages, so no `__proto__` member of it reaches a Record's copy
const PrototypeSafeJson = Schema.String.pipe(Schema.decodeTo(Schema.Unknown, {
  decode: SchemaGetter.transformEffect((text: string) =>
    Effect.try({
      try: () => McpSchema.parseJson(text),
      catch: () => new SchemaIssue.InvalidValue({ message: "not JSON" }, text)
    })
  ),
  encode: SchemaGetter.transformEffect((value: unknown) =>
    Effect.try({
      try: () => JSON.stringify(value),
      catch: () => new SchemaIssue.InvalidValue({ message: "not serializable" }, value)
    })
  )
}))
export const decodeRequestState = Schema.decodeUnknownResult(
  Schema.StringFromBase64Url.pipe(Schema.decodeTo(PrototypeSafeJson), Schema.decodeTo(RequestState))
)
export const decodeAnswers = Schema.decodeUnknownResult(Answers)
export const encodeRequestState = (state: RequestState): string => Base64Url.encode(JSON.stringify(state))

/** FNV-1a of a string, so the state names the call it belongs to without copying its arguments. */
export const fingerprint = (text: string): string => {
  let hash = 0x811c9dc5
  for (let index = 0; index < text.length; index++) {
    hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193) >>> 0
  }
  return hash.toString(16).padStart(8, "0")
}

export const targetOf = (params: JsonObject): string =>
  fingerprint(JSON.stringify([params.name ?? null, params.uri ?? null, params.arguments ?? null]))

/** One run of a modern handler: the answers it may use, and what it asked for that nobody answered yet. */
export interface InputRound {
  readonly known: ReadonlyMap<string, JsonObject>
  readonly used: Record<string, JsonObject>
  readonly needed: Record<string, { readonly method: model.InputMethod; readonly params: JsonObject }>
  /** Completed when the handler waits for input it does not have. */
  readonly blocked: Deferred.Deferred<void>
  calls: number
}

/** Why the client cannot be asked for this input on this request, if it cannot. */
export const inputProblem = (
  method: model.InputMethod,
  params: JsonObject,
  version: McpSchema.ProtocolVersion,
  capabilities: JsonObject
): model.InputError | undefined => {
  const missing = (capability: string, requiredCapabilities: JsonObject) =>
    new model.InputError({
      method,
      reason: "CapabilityMissing",
      detail: `the client did not declare the ${capability} capability`,
      requiredCapabilities
    })
  const unsupported = (feature: string, since: string) =>
    new model.InputError({
      method,
      reason: "Unsupported",
      detail: `${feature} needs protocol ${since} or later; this request speaks ${version}`
    })
  switch (method) {
    case "elicitation/create": {
      const url = params.mode === "url"
      if (version < "2025-06-18") return unsupported("elicitation", "2025-06-18")
      if (url && version < "2025-11-25") return unsupported("URL-mode elicitation", "2025-11-25")
      const declared = record(capabilities.elicitation)
      const recent = version >= "2025-11-25"
      if (url) {
        return declared?.url !== undefined ? undefined : missing("elicitation.url", { elicitation: { url: {} } })
      }
      // An empty elicitation capability means form mode.
      const form = declared !== undefined && (declared.form !== undefined || declared.url === undefined)
      return form ? undefined : missing("elicitation", { elicitation: recent ? { form: {} } : {} })
    }
    case "sampling/createMessage": {
      const declared = record(capabilities.sampling)
      if (declared === undefined) return missing("sampling", { sampling: {} })
      return params.tools !== undefined && declared.tools === undefined
        ? missing("sampling.tools", { sampling: { tools: {} } })
        : undefined
    }
    case "roots/list":
      return record(capabilities.roots) === undefined ? missing("roots", { roots: {} }) : undefined
  }
}

/** The params as the revision spells them: `mode` from 2025-11-25, `elicitationId` only in legacy URL mode. */
export const inputParams = (
  method: model.InputMethod,
  params: JsonObject,
  version: McpSchema.ProtocolVersion,
  elicitationId: () => string
): JsonObject => {
  if (method !== "elicitation/create") return params
  if (version < "2025-11-25") {
    return Object.fromEntries(Object.entries(params).filter(([key]) => key !== "mode"))
  }
  if (params.mode !== "url") return params
  if (McpSchema.isModernVersion(version)) {
    return Object.fromEntries(Object.entries(params).filter(([key]) => key !== "elicitationId"))
  }
  return typeof params.elicitationId === "string" ? params : { ...params, elicitationId: elicitationId() }
}
