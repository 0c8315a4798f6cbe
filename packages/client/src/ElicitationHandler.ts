/**
 * Elicitation: how the application asks its user for information a server requests, in form mode (a flat
 * schema of primitive fields) or URL mode (an out-of-band page the user opens). Give a handler to the client
 * (`McpClient.make({ elicitation: handler })`, or `elicitation: ElicitationHandler.ElicitationHandler` and this
 * module's `layer`) and it declares the elicitation capability; without one, none is declared. One handler serves both eras:
 * legacy `elicitation/create` requests and modern `input_required` rounds.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as McpSchema from "./McpSchema.js"

/**
 * One primitive field of a form.
 *
 * @since 0.1.0
 * @category models
 */
export type FieldSchema = Readonly<Record<string, unknown>> & {
  readonly type?: string
  readonly title?: string
  readonly description?: string
  readonly default?: unknown
}

/**
 * The restricted JSON Schema of a form: top-level primitive properties only.
 *
 * @since 0.1.0
 * @category models
 */
export interface FormSchema {
  readonly type: "object"
  readonly properties: Readonly<Record<string, FieldSchema>>
  readonly required?: ReadonlyArray<string> | undefined
}

/**
 * A form to fill in. `defaults` holds the schema's default values, to pre-fill the form.
 *
 * @since 0.1.0
 * @category models
 */
export interface FormRequest {
  readonly mode: "form"
  readonly message: string
  readonly requestedSchema: FormSchema
  readonly defaults: Readonly<Record<string, unknown>>
}

/**
 * Why a URL deserves the user's attention before it is opened.
 *
 * @since 0.1.0
 * @category models
 */
export type UrlWarning = "cross-origin" | "no-server-origin" | "insecure-loopback" | "punycode"

/**
 * A page the user is asked to open. The client never opens it: consent stays with the handler, which should
 * show the full URL and its origin, and highlight `warnings`. URLs that are not https (loopback http excepted)
 * never reach a handler.
 *
 * @since 0.1.0
 * @category models
 */
export interface UrlRequest {
  readonly mode: "url"
  readonly message: string
  readonly url: string
  /** The origin of `url` (`https://host[:port]`). */
  readonly urlOrigin: string
  /** The connected server's origin, when the transport has one (HTTP). */
  readonly serverOrigin: string | undefined
  readonly warnings: ReadonlyArray<UrlWarning>
  /** 2025-11-25 only: the id a `notifications/elicitation/complete` will name. */
  readonly elicitationId: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type ElicitationRequest = FormRequest | UrlRequest

/**
 * What the user answered (the `elicitation/create` result).
 *
 * @since 0.1.0
 * @category models
 */
export const ElicitResult = McpSchema.ElicitResult

/**
 * @since 0.1.0
 * @category models
 */
export type ElicitResult = McpSchema.ElicitResult

/**
 * What a handler knows about who is asking.
 *
 * @since 0.1.0
 * @category models
 */
export interface ElicitationContext {
  /** The server's self-reported name (display only). */
  readonly serverName: string | undefined
  /** The client request this elicitation belongs to, when known. */
  readonly relatedRequest: string | number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The modes this handler supports; the capability declares them. */
  readonly modes: ReadonlyArray<"form" | "url">
  readonly elicit: (request: ElicitationRequest, context: ElicitationContext) => Effect.Effect<ElicitResult>
  /**
   * 2025-11-25: the server reports that a URL-mode elicitation finished. It runs where the connection reads; a
   * failure, a defect or a throw of it is logged and goes no further.
   */
  readonly completed?: ((elicitationId: string) => Effect.Effect<void>) | undefined
  /**
   * URL mode, the manual controls: the user consented to a page, and the request that needs it waits while the
   * interaction happens in the browser. Answer `"retry"` when the user says they are done (the request is sent
   * again now) or `"cancel"` to give the request up (the caller gets the error). The user is asked only once per
   * page and call; this is asked instead whenever the server needs the same page again.
   *
   * - 2025-11-25 (`-32042`): it runs from the consent on, next to the wait for the server's completion report,
   *   which interrupts it when it comes first. Without it, the client waits for that report (up to the request
   *   timeout) and sends the request once more.
   * - 2026-07-28 (`input_required` rounds): the first retry follows the consent at once; when the server asks for
   *   the same page again (the interaction is not finished), this decides. Without it, the client retries after a
   *   growing pause (1 s, doubling, at most 30 s) within the call's round limit, without asking the user again.
   */
  readonly urlPending?:
    | ((request: UrlRequest, context: ElicitationContext) => Effect.Effect<"retry" | "cancel">)
    | undefined
}

/**
 * @since 0.1.0
 * @category tags
 */
export class ElicitationHandler extends Context.Service<ElicitationHandler, Service>()(
  "@conduit-mcp/client/ElicitationHandler"
) {}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (service: Service): Layer.Layer<ElicitationHandler> => Layer.succeed(ElicitationHandler, service)
