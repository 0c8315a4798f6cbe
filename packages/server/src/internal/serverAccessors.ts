/**
 * What a handler calls while it runs, re-exported by `McpServer` as it is: progress, logs and changes on its
 * request, and input from the client (elicitation, sampling, roots), decoded and checked.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as ElicitationHandler from "@conduit-mcp/client/ElicitationHandler"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import type * as RootsProvider from "@conduit-mcp/client/RootsProvider"
import * as model from "./serverModel.js"

type JsonObject = model.JsonObject
type Change = model.Change
type InputMethod = model.InputMethod
type InputError = model.InputError
type RequestContext = model.RequestContext
const InputError = model.InputError
const RequestContext = model.RequestContext

// ---------------------------------------------------------------------------------------------------------------
// The current request

/**
 * Reports progress on the current request.
 *
 * @since 0.1.0
 * @category accessors
 */
export const progress = (
  value: number,
  options?: { readonly total?: number | undefined; readonly message?: string | undefined }
): Effect.Effect<void, never, RequestContext> =>
  RequestContext.use((context) => context.progress(value, options))

/**
 * Tells every connected client that asked about it that a list changed or a resource was updated.
 *
 * @since 0.1.0
 * @category accessors
 */
export const publish = (change: Change): Effect.Effect<void, never, RequestContext> =>
  RequestContext.use((context) => context.publish(change))

/**
 * Sends a log message to the client of the current request.
 *
 * @since 0.1.0
 * @category accessors
 */
export const log = (
  level: McpSchema.LoggingLevel,
  data: unknown,
  logger?: string
): Effect.Effect<void, never, RequestContext> =>
  RequestContext.use((context) => context.log(level, data, logger))

// ---------------------------------------------------------------------------------------------------------------
// Input from the client

/**
 * A form to show the user: a flat object schema of primitive fields.
 *
 * @since 0.1.0
 * @category models
 */
export interface ElicitParams {
  readonly message: string
  readonly requestedSchema: ElicitationHandler.FormSchema
}

/**
 * A page the user is asked to open (2025-11-25 and later).
 *
 * @since 0.1.0
 * @category models
 */
export interface ElicitUrlParams {
  readonly message: string
  readonly url: string
  /** Legacy (2025-11-25) only: the id a later `notifications/elicitation/complete` names; generated if unset. */
  readonly elicitationId?: string | undefined
}

/**
 * The user's answer: `accept` (with `content` for a form), `decline` or `cancel`.
 *
 * @since 0.1.0
 * @category models
 */
export type ElicitResult = McpSchema.ElicitResult

/**
 * What `sampling/createMessage` sends: `messages`, `maxTokens`, and any other field of the revision.
 *
 * @since 0.1.0
 * @category models
 */
export type CreateMessageParams = McpSchema.CreateMessageParams

/**
 * @since 0.1.0
 * @category models
 */
export type CreateMessageResult = McpSchema.CreateMessageResult

/**
 * @since 0.1.0
 * @category models
 */
export type Root = RootsProvider.Root

const ListRootsResult = Schema.Struct({
  roots: Schema.Array(Schema.Struct({ uri: Schema.String, name: Schema.optional(Schema.String) }))
})

const decodeAnswer = <A, I>(method: InputMethod, schema: Schema.Codec<A, I>) => {
  const decode = Schema.decodeUnknownEffect(schema)
  return (answer: JsonObject): Effect.Effect<A, InputError> =>
    decode(answer).pipe(
      Effect.mapError((error) =>
        new InputError({
          method,
          reason: "InvalidResponse",
          detail: `the client's answer is not valid: ${error.message}`
        })
      )
    )
}

const decodeElicitResult = decodeAnswer("elicitation/create", McpSchema.ElicitResult)
const decodeCreateMessageResult = decodeAnswer("sampling/createMessage", McpSchema.CreateMessageResult)
const decodeListRootsResult = decodeAnswer("roots/list", ListRootsResult)

/**
 * Asks the user to fill in a form (`elicitation/create`, form mode) and returns the answer. Needs the client's
 * `elicitation` capability (form mode). In the modern era the handler runs again once the client answers: keep
 * the work before this call free of side effects, or make it idempotent.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 * import * as McpServer from "@conduit-mcp/server/McpServer"
 *
 * const deploy = McpServer.tool({
 *   name: "deploy",
 *   parameters: Schema.Struct({ service: Schema.String }),
 *   handler: ({ service }) =>
 *     Effect.gen(function*() {
 *       const answer = yield* McpServer.elicit({
 *         message: `Deploy ${service} to production?`,
 *         requestedSchema: { type: "object", properties: { approve: { type: "boolean" } }, required: ["approve"] }
 *       })
 *       return answer.action === "accept" && answer.content?.approve === true ? "deployed" : "not deployed"
 *     })
 * })
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const elicit = (params: ElicitParams): Effect.Effect<ElicitResult, InputError, RequestContext> =>
  RequestContext.use(
    (context) =>
      Effect.flatMap(
        context.input("elicitation/create", {
          mode: "form",
          message: params.message,
          requestedSchema: params.requestedSchema
        }),
        decodeElicitResult
      )
  )

/**
 * Asks the user to open a page (`elicitation/create`, URL mode; 2025-11-25 and later) and returns whether they
 * agreed. `accept` only means the user agreed to open it, not that the out-of-band step finished.
 *
 * @since 0.1.0
 * @category accessors
 */
export const elicitUrl = (params: ElicitUrlParams): Effect.Effect<ElicitResult, InputError, RequestContext> =>
  RequestContext.use(
    (context) =>
      Effect.flatMap(
        context.input("elicitation/create", {
          mode: "url",
          message: params.message,
          url: params.url,
          ...(params.elicitationId !== undefined ? { elicitationId: params.elicitationId } : {})
        }),
        decodeElicitResult
      )
  )

/**
 * Asks the client to run an LLM completion (`sampling/createMessage`). Needs the `sampling` capability
 * (`sampling.tools` when `params` carries `tools`).
 *
 * @since 0.1.0
 * @category accessors
 */
export const sample = (
  params: CreateMessageParams
): Effect.Effect<CreateMessageResult, InputError, RequestContext> =>
  RequestContext.use(
    (context) => Effect.flatMap(context.input("sampling/createMessage", params), decodeCreateMessageResult)
  )

/**
 * Asks the client for its roots (`roots/list`). Needs the `roots` capability.
 *
 * @since 0.1.0
 * @category accessors
 */
export const listRoots: Effect.Effect<ReadonlyArray<Root>, InputError, RequestContext> = RequestContext.use(
  (context) =>
    Effect.flatMap(context.input("roots/list", {}), decodeListRootsResult).pipe(
      Effect.map(({ roots }) =>
        roots.map((root): Root => root.name === undefined ? { uri: root.uri } : { uri: root.uri, name: root.name })
      )
    )
)
