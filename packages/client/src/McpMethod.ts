/**
 * Request methods as definitions: a method's name, the schemas of its parameters and of its result, and the facts
 * the client needs to send it well. The client knows the methods of the specification this way (one definition
 * each, inside the package); an application defines the methods of an MCP extension its servers serve, and sends
 * them with `McpClient.request(definition, params)` or `McpPromiseClient.request`. The client then treats them as
 * its own:
 *
 * - `idempotent`: a request lost with its response stream is issued once more, and the HTTP transport sends it
 *   again when its connection closed before any answer;
 * - `inputRounds`: a 2026-07-28 server may answer it with `input_required` rounds, which the client's handlers
 *   serve (elicitation, sampling, roots) before the result arrives;
 * - `nameField`: the body field the `Mcp-Name` header mirrors over 2026-07-28 HTTP, so that a gateway can route it.
 *
 * Parameters are encoded with `params` before they are sent (a value the schema refuses fails the call with a
 * `ProtocolError` `InvalidParams`, and nothing is sent); the result is decoded with `result` (a result it refuses
 * fails with `InvalidResult`). A definition that names a method of the specification keeps the client's facts for
 * it: only its schemas are the definition's.
 *
 * @example
 * import * as McpClient from "@conduit-mcp/client/McpClient"
 * import * as McpMethod from "@conduit-mcp/client/McpMethod"
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 *
 * // a method an extension adds; servers that serve it answer { results: [...] }
 * const Search = McpMethod.make("acme/search", {
 *   params: Schema.Struct({ query: Schema.String }),
 *   result: Schema.Struct({ results: Schema.Array(Schema.String) }),
 *   idempotent: true,
 *   nameField: "query"
 * })
 *
 * export const search = (query: string) =>
 *   Effect.gen(function*() {
 *     const client = yield* McpClient.McpClient
 *     const { results } = yield* client.request(Search, { query })
 *     return results
 *   })
 *
 * @since 1.0.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 1.0.0
 * @category type ids
 */
export const TypeId: "~@conduit-mcp/client/McpMethod" = "~@conduit-mcp/client/McpMethod"

/**
 * @since 1.0.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * The parameters of a request as they travel: a JSON object, or none.
 *
 * @since 1.0.0
 * @category models
 */
export type WireParams = Readonly<Record<string, unknown>> | undefined

/**
 * A request method's definition.
 *
 * @since 1.0.0
 * @category models
 */
export interface McpMethod<out Name extends string, out Params, out Result> {
  readonly [TypeId]: TypeId
  readonly method: Name
  /** Encodes the parameters for the wire. */
  readonly params: Schema.Codec<Params, WireParams>
  /** Decodes the result. */
  readonly result: Schema.Codec<Result, unknown>
  /** Only reads: a server may receive it twice with no harm (see the module's description). */
  readonly idempotent: boolean
  /** A 2026-07-28 server may answer it with `input_required` rounds. */
  readonly inputRounds: boolean
  /** The body field the `Mcp-Name` header mirrors over 2026-07-28 HTTP (a string field of the parameters). */
  readonly nameField: string | undefined
}

/**
 * Any definition, whatever its types (`any`: a definition's parameters are read where they are written, so no one
 * definition type is a supertype of all of them otherwise).
 *
 * @since 1.0.0
 * @category models
 */
export interface Any extends McpMethod<string, any, any> {}

/**
 * The parameters a definition's method takes.
 *
 * @since 1.0.0
 * @category type-level
 */
export type Params<M extends Any> = M extends McpMethod<string, infer P, unknown> ? P : never

/**
 * What a definition's method answers, decoded.
 *
 * @since 1.0.0
 * @category type-level
 */
export type Result<M extends Any> = M extends McpMethod<string, unknown, infer A> ? A : never

/**
 * @since 1.0.0
 * @category guards
 */
export const isMcpMethod = (u: unknown): u is Any => typeof u === "object" && u !== null && TypeId in u

/**
 * What {@link make} takes besides the name: the schemas, and the facts (each `false` or absent when not given).
 *
 * @since 1.0.0
 * @category models
 */
export interface MakeOptions<Params, ParamsEncoded extends WireParams, Result, ResultEncoded> {
  /** The parameters' schema; its encoded side is what is sent. Absent: the method takes no parameters. */
  readonly params?: Schema.Codec<Params, ParamsEncoded> | undefined
  readonly result: Schema.Codec<Result, ResultEncoded>
  readonly idempotent?: boolean | undefined
  readonly inputRounds?: boolean | undefined
  /** A string field of the encoded parameters. */
  readonly nameField?: (keyof ParamsEncoded & string) | undefined
}

const NoParams: Schema.Codec<void, WireParams> = Schema.Undefined as unknown as Schema.Codec<void, WireParams>

/**
 * Defines a request method.
 *
 * @since 1.0.0
 * @category constructors
 */
export const make: {
  <const Name extends string, Result, ResultEncoded>(
    method: Name,
    options: MakeOptions<void, undefined, Result, ResultEncoded> & { readonly params?: undefined }
  ): McpMethod<Name, void, Result>
  <const Name extends string, Params, ParamsEncoded extends WireParams, Result, ResultEncoded>(
    method: Name,
    options: MakeOptions<Params, ParamsEncoded, Result, ResultEncoded> & {
      readonly params: Schema.Codec<Params, ParamsEncoded>
    }
  ): McpMethod<Name, Params, Result>
} = (
  method: string,
  options: MakeOptions<unknown, Readonly<Record<string, unknown>>, unknown, unknown>
): McpMethod<string, any, unknown> => ({ // (`any`: the one body serves both signatures' parameter types)
  [TypeId]: TypeId,
  method,
  params: options.params ?? NoParams,
  result: options.result,
  idempotent: options.idempotent === true,
  inputRounds: options.inputRounds === true,
  nameField: options.nameField
})
