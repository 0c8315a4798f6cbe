/**
 * Sampling: how the application runs an LLM completion a server asks for. Give a handler to the client
 * (`McpClient.make({ sampling: handler })`, or `sampling: SamplingHandler.SamplingHandler` and this module's
 * `layer`) and it declares the sampling capability. One handler serves legacy `sampling/createMessage` requests and
 * modern `input_required` rounds. The handler should keep a human in the loop.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as McpSchema from "./McpSchema.js"

/**
 * The `sampling/createMessage` request's parameters (extra members pass through).
 *
 * @since 0.1.0
 * @category models
 */
export const CreateMessageParams = McpSchema.CreateMessageParams

/**
 * @since 0.1.0
 * @category models
 */
export type CreateMessageParams = McpSchema.CreateMessageParams

/**
 * The reply to a `sampling/createMessage` request.
 *
 * @since 0.1.0
 * @category models
 */
export const CreateMessageResult = McpSchema.CreateMessageResult

/**
 * @since 0.1.0
 * @category models
 */
export type CreateMessageResult = McpSchema.CreateMessageResult

/**
 * The user (or policy) refused the request; legacy servers receive JSON-RPC error -1.
 *
 * @since 0.1.0
 * @category errors
 */
export class SamplingRefused extends Schema.TaggedError<SamplingRefused>("@conduit-mcp/client/SamplingRefused")(
  "SamplingRefused",
  { reason: Schema.String }
) {}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Whether tool use in sampling is supported (declares `sampling.tools`). */
  readonly tools?: boolean | undefined
  readonly createMessage: (params: CreateMessageParams) => Effect.Effect<CreateMessageResult, SamplingRefused>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class SamplingHandler extends Context.Service<SamplingHandler, Service>()("@conduit-mcp/client/SamplingHandler") {}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (service: Service): Layer.Layer<SamplingHandler> => Layer.succeed(SamplingHandler, service)
