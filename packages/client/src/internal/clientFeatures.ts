/** @internal */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as ElicitationHandler from "../ElicitationHandler.js"
import type * as ExtensionHandler from "../ExtensionHandler.js"
import * as McpSchema from "../McpSchema.js"
import type * as RootsProvider from "../RootsProvider.js"
import * as SamplingHandler from "../SamplingHandler.js"
import * as UrlConsent from "./urlConsent.js"
import { printable } from "./printable.js"

/**
 * The handlers the application provided; each one present turns on its capability.
 *
 * @internal
 */
export interface Handlers {
  readonly elicitation: Option.Option<ElicitationHandler.Service>
  readonly sampling: Option.Option<SamplingHandler.Service>
  readonly roots: Option.Option<RootsProvider.Service>
  readonly extensions: Option.Option<ExtensionHandler.Service>
}

/**
 * The capabilities to declare at a protocol version: the configured ones merged with what the handlers offer.
 *
 * @internal
 */
export const capabilitiesFor = (
  handlers: Handlers,
  configured: McpSchema.ClientCapabilities,
  version: McpSchema.ProtocolVersion
): McpSchema.ClientCapabilities => {
  const out: Record<string, unknown> = { ...configured }
  const recent = version >= "2025-11-25"
  if (Option.isSome(handlers.elicitation) && version >= "2025-06-18") {
    const modes = handlers.elicitation.value.modes
    const form = modes.includes("form")
    const url = recent && modes.includes("url")
    // an empty object means form mode: a handler of no mode this revision knows declares nothing
    if (form || url) out.elicitation = recent ? { ...(form ? { form: {} } : {}), ...(url ? { url: {} } : {}) } : {}
  }
  if (Option.isSome(handlers.sampling)) {
    out.sampling = recent && handlers.sampling.value.tools === true ? { tools: {} } : {}
  }
  if (Option.isSome(handlers.roots)) {
    out.roots = McpSchema.isModernVersion(version) ? {} : { listChanged: true }
  }
  return out
}

/**
 * A failed fulfilment: the JSON-RPC error a legacy server receives; MRTR calls fail with it locally instead.
 *
 * @internal
 */
export interface InputFailure {
  readonly code: number
  readonly message: string
}

const failure = (code: number, message: string): Result.Result<never, InputFailure> =>
  Result.fail({ code, message })

const FormParams = Schema.Struct({
  mode: Schema.optional(Schema.Literal("form")),
  message: Schema.String,
  requestedSchema: Schema.Struct({
    type: Schema.optional(Schema.Literal("object")),
    properties: Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown)),
    required: Schema.optional(Schema.Array(Schema.String))
  })
})
const UrlParams = Schema.Struct({
  mode: Schema.Literal("url"),
  message: Schema.String,
  url: Schema.String,
  elicitationId: Schema.optional(Schema.String)
})
const decodeForm = Schema.decodeUnknownResult(FormParams)
const decodeUrl = Schema.decodeUnknownResult(UrlParams)
const decodeSampling = Schema.decodeUnknownResult(SamplingHandler.CreateMessageParams, McpSchema.preserve)

const isLoopback = (hostname: string) =>
  hostname === "localhost" || hostname === "[::1]" || hostname === "::1" || /^127\.\d+\.\d+\.\d+$/.test(hostname)

/**
 * Checks a URL-mode elicitation URL. Only https (and http on loopback) may reach a handler; the rest is refused.
 *
 * @internal
 */
export const inspectUrl = (
  raw: string,
  serverOrigin: string | undefined
): Result.Result<{ readonly origin: string; readonly warnings: ReadonlyArray<ElicitationHandler.UrlWarning> }, string> => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Result.fail("not a URL")
  }
  const warnings: Array<ElicitationHandler.UrlWarning> = []
  if (url.protocol === "http:") {
    if (!isLoopback(url.hostname)) return Result.fail("plain http is only allowed on loopback")
    warnings.push("insecure-loopback")
  } else if (url.protocol !== "https:") {
    return Result.fail(`the ${url.protocol} scheme is never opened`)
  }
  if (url.username !== "" || url.password !== "") return Result.fail("URLs with credentials are refused")
  if (serverOrigin === undefined) warnings.push("no-server-origin")
  else if (url.origin !== serverOrigin) warnings.push("cross-origin")
  if (url.hostname.split(".").some((label) => label.startsWith("xn--"))) warnings.push("punycode")
  return Result.succeed({ origin: url.origin, warnings })
}

/**
 * The default value of every field that declares one, to pre-fill a form.
 *
 * @internal
 */
export const formDefaults = (schema: ElicitationHandler.FormSchema): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [name, field] of Object.entries(schema.properties)) {
    if (field.default !== undefined) out[name] = field.default
  }
  return out
}

/**
 * Whether `ElicitResult` content can carry `value`: strings, finite numbers, booleans and (from 2025-11-25) lists of
 * strings. The normative TypeScript schema says `number`; the generated JSON schemas narrow it to integer, which
 * servers (and the conformance suite) do not follow, so fractional defaults are sent too.
 */
const isCarriable = (value: unknown): boolean =>
  typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value)) ||
  (Array.isArray(value) && value.every((item) => typeof item === "string"))

/** The defaults filled into fields the user left empty, when the result can carry them. */
const carriableDefaults = (schema: ElicitationHandler.FormSchema): Record<string, unknown> =>
  Object.fromEntries(Object.entries(formDefaults(schema)).filter(([, value]) => isCarriable(value)))

const enumValues = (field: ElicitationHandler.FieldSchema): ReadonlyArray<unknown> | undefined => {
  if (Array.isArray(field.enum)) return field.enum
  const options = field.oneOf ?? field.anyOf
  if (Array.isArray(options)) {
    return options.flatMap((o) => (typeof o === "object" && o !== null && "const" in o ? [o.const] : []))
  }
  return undefined
}

/**
 * Checks an accepted answer against the requested schema: required fields present, every value of its type and
 * within its bounds, enum members respected, no unknown field.
 *
 * @internal
 */
export const validateAnswer = (
  schema: ElicitationHandler.FormSchema,
  content: Readonly<Record<string, unknown>>
): string | undefined => {
  for (const name of schema.required ?? []) {
    if (content[name] === undefined) return `missing required field ${name}`
  }
  for (const [name, value] of Object.entries(content)) {
    const field = schema.properties[name]
    if (field === undefined) return `unknown field ${name}`
    const type = field.type
    if (type === "string") {
      if (typeof value !== "string") return `${name} must be a string`
      if (typeof field.minLength === "number" && value.length < field.minLength) return `${name} is too short`
      if (typeof field.maxLength === "number" && value.length > field.maxLength) return `${name} is too long`
      const allowed = enumValues(field)
      if (allowed !== undefined && !allowed.includes(value)) return `${name} must be one of ${allowed.join(", ")}`
    } else if (type === "number" || type === "integer") {
      if (typeof value !== "number" || Number.isNaN(value)) return `${name} must be a number`
      if (type === "integer" && !Number.isInteger(value)) return `${name} must be an integer`
      if (typeof field.minimum === "number" && value < field.minimum) return `${name} is below ${field.minimum}`
      if (typeof field.maximum === "number" && value > field.maximum) return `${name} is above ${field.maximum}`
    } else if (type === "boolean") {
      if (typeof value !== "boolean") return `${name} must be a boolean`
    } else if (type === "array") {
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) return `${name} must be a list`
      const items = field.items
      const allowed = typeof items === "object" && items !== null ? enumValues(items as ElicitationHandler.FieldSchema) : undefined
      if (allowed !== undefined && !value.every((v) => allowed.includes(v))) return `${name} has a value not offered`
      if (typeof field.minItems === "number" && value.length < field.minItems) return `${name} has too few items`
      if (typeof field.maxItems === "number" && value.length > field.maxItems) return `${name} has too many items`
    }
  }
  return undefined
}

/**
 * Where a server request comes from, for the handlers.
 *
 * @internal
 */
export interface RequestOrigin {
  readonly serverOrigin: string | undefined
  readonly serverName: string | undefined
  readonly related: McpSchema.RequestId | undefined
  /** The elicitation modes declared on this connection. */
  readonly declaredModes: ReadonlyArray<"form" | "url">
  /**
   * Told the id of every URL-mode elicitation shown to the handler (2025-11-25), to match its completion; answers
   * what forgets it again, run when the handler does not accept (its completion is then no longer expected).
   */
  readonly onUrlElicitation?: ((elicitationId: string) => () => void) | undefined
  /** The pages the user consented to during this call (2026-07-28 rounds): not shown again. */
  readonly urlConsent?: UrlConsent.UrlConsent | undefined
}

/**
 * Whether the path of a `file:` URI climbs: any segment of dots only (`..`, and `...` or `.. ` that Windows reads
 * as `..`), looked for in the path as written (the URL parser would resolve it away), after percent-decoding
 * (repeatedly: a server may decode again), with backslashes as separators, and before any query or fragment.
 */
const climbs = (uri: string): boolean => {
  let path = uri.replace(/^file:(?:[/\\]{2}[^/\\?#]*)?/i, "").split(/[?#]/)[0]
  for (let round = 0; round < 4; round++) {
    let decoded: string
    try {
      decoded = decodeURIComponent(path)
    } catch {
      return true // malformed percent-encoding: not a path anyone can vouch for
    }
    if (decoded === path) break
    path = decoded
  }
  return path.split(/[/\\]/).some((segment) => /^\.{2,}[\s.]*$/.test(segment))
}

/** A root the server may see: a `file://` URI without query or fragment whose path does not climb. */
const isValidRoot = (uri: string): boolean => {
  if (!URL.canParse(uri)) return false
  const url = new URL(uri)
  return url.protocol === "file:" && url.search === "" && url.hash === "" && !climbs(uri)
}

/**
 * Serves one server request (a legacy request, or one entry of a modern `inputRequests` map) with the
 * application's handlers. Never fails: a refusal is an `InputFailure`.
 *
 * @internal
 */
export const fulfil = (
  handlers: Handlers,
  method: string,
  params: unknown,
  origin: RequestOrigin
): Effect.Effect<Result.Result<unknown, InputFailure>> => {
  switch (method) {
    case "ping":
      return Effect.succeed(Result.succeed({}))
    case "roots/list":
      return Option.match(handlers.roots, {
        onNone: () => Effect.succeed(failure(McpSchema.ErrorCode.MethodNotFound, "roots are not supported")),
        onSome: (provider) =>
          Effect.flatMap(provider.roots, (roots) => {
            const [exposed, dropped] = Arr.partition(
              roots,
              (root) => isValidRoot(root.uri) ? Result.succeed(root) : Result.fail(root)
            )
            const answer = Result.succeed({
              // sent normalised (as the URL parser writes it), not as given
              roots: exposed.map((root) => {
                const uri = new URL(root.uri).href
                return root.name === undefined ? { uri } : { uri, name: root.name }
              })
            })
            if (dropped.length === 0) return Effect.succeed(answer)
            return Effect.as(
              Effect.logWarning(printable(`roots not exposed (a root is a file:// URI that does not climb with ..): ${
                dropped.map((root) => root.uri).join(", ")
              }`)).pipe(Effect.annotateLogs({ module: "McpClient", method: "roots/list" })),
              answer
            )
          })
      })
    case "sampling/createMessage":
      return Option.match(handlers.sampling, {
        onNone: () => Effect.succeed(failure(McpSchema.ErrorCode.MethodNotFound, "sampling is not supported")),
        onSome: (handler) => {
          const decoded = decodeSampling(params)
          if (Result.isFailure(decoded)) {
            return Effect.succeed(failure(McpSchema.ErrorCode.InvalidParams, "malformed sampling request"))
          }
          return handler.createMessage(decoded.success).pipe(
            Effect.map((result): Result.Result<unknown, InputFailure> => Result.succeed(result)),
            Effect.catchTag("SamplingRefused", (refused) => Effect.succeed(failure(-1, refused.reason)))
          )
        }
      })
    case "elicitation/create":
      return Option.match(handlers.elicitation, {
        onNone: () => Effect.succeed(failure(McpSchema.ErrorCode.MethodNotFound, "elicitation is not supported")),
        onSome: (handler) => elicit(handler, params, origin)
      })
    default:
      return extension(handlers.extensions, method, params, origin)
  }
}

/**
 * A method the client does not serve itself goes to the application's `ExtensionHandler`, when the client was
 * given one.
 */
const extension = (
  extensions: Option.Option<ExtensionHandler.Service>,
  method: string,
  params: unknown,
  origin: RequestOrigin
): Effect.Effect<Result.Result<unknown, InputFailure>> =>
  Effect.suspend(() => {
    const handler = Option.isSome(extensions) && Object.hasOwn(extensions.value.requests, method)
      ? extensions.value.requests[method]
      : undefined
    if (handler === undefined) {
      return Effect.succeed(failure(McpSchema.ErrorCode.MethodNotFound, `method not found: ${method}`))
    }
    return handler(params, { method, serverName: origin.serverName }).pipe(
      Effect.map((result): Result.Result<unknown, InputFailure> => Result.succeed(result)),
      Effect.catch((error) => Effect.succeed(failure(error.code, error.message)))
    )
  })

const elicit = (
  handler: ElicitationHandler.Service,
  params: unknown,
  origin: RequestOrigin
): Effect.Effect<Result.Result<unknown, InputFailure>> => {
  const context = { serverName: origin.serverName, relatedRequest: origin.related }
  const mode = typeof params === "object" && params !== null && "mode" in params ? params.mode : "form"
  if (mode === "url") {
    if (!origin.declaredModes.includes("url")) {
      return Effect.succeed(failure(McpSchema.ErrorCode.InvalidParams, "URL-mode elicitation was not declared"))
    }
    const decoded = decodeUrl(params)
    if (Result.isFailure(decoded)) {
      return Effect.succeed(failure(McpSchema.ErrorCode.InvalidParams, "malformed URL elicitation"))
    }
    const inspected = inspectUrl(decoded.success.url, origin.serverOrigin)
    if (Result.isFailure(inspected)) {
      return Effect.as(
        Effect.logWarning(printable(`refused a URL elicitation: ${inspected.failure}`)).pipe(
          Effect.annotateLogs({ module: "McpClient", method: "elicitation/create" })
        ),
        Result.succeed({ action: "decline" })
      )
    }
    const elicitationId = decoded.success.elicitationId
    const request: ElicitationHandler.UrlRequest = {
      mode: "url",
      message: decoded.success.message,
      url: decoded.success.url,
      urlOrigin: inspected.success.origin,
      serverOrigin: origin.serverOrigin,
      warnings: inspected.success.warnings,
      elicitationId
    }
    const consent = origin.urlConsent
    if (consent !== undefined && consent.accepted.has(request.url)) {
      // the same page again: the user already said yes to it; their manual controls (or a pause) decide
      return Effect.map(UrlConsent.again(handler, request, context, consent), (choice) =>
        choice === "retry"
          ? Result.succeed({ action: "accept" })
          : failure(McpSchema.ErrorCode.InvalidRequest, "the user cancelled the request waiting on a URL page"))
    }
    // known before the handler answers: the completion may come while the user is still in the browser
    const forget = elicitationId === undefined ? undefined : origin.onUrlElicitation?.(elicitationId)
    return Effect.map(
      handler.elicit(request, context).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            if (Exit.isFailure(exit) || exit.value.action !== "accept") forget?.()
          })
        )
      ),
      (result) => {
        if (result.action !== "accept") return Result.succeed({ action: result.action })
        consent?.accepted.add(request.url)
        return Result.succeed({ action: "accept" })
      }
    )
  }
  if (!origin.declaredModes.includes("form")) {
    return Effect.succeed(failure(McpSchema.ErrorCode.InvalidParams, "form elicitation was not declared"))
  }
  const decoded = decodeForm(params)
  if (Result.isFailure(decoded)) {
    return Effect.succeed(failure(McpSchema.ErrorCode.InvalidParams, "malformed form elicitation"))
  }
  const requestedSchema: ElicitationHandler.FormSchema = {
    type: "object",
    properties: decoded.success.requestedSchema.properties,
    required: decoded.success.requestedSchema.required
  }
  return Effect.map(
    handler.elicit(
      { mode: "form", message: decoded.success.message, requestedSchema, defaults: formDefaults(requestedSchema) },
      context
    ),
    (result): Result.Result<unknown, InputFailure> => {
      if (result.action !== "accept") return Result.succeed({ action: result.action })
      const content = { ...carriableDefaults(requestedSchema), ...result.content }
      const invalid = validateAnswer(requestedSchema, content)
      return invalid === undefined
        ? Result.succeed({ action: "accept", content })
        : failure(McpSchema.ErrorCode.InvalidParams, `the answer does not match the requested schema: ${invalid}`)
    }
  )
}
