/**
 * Calls as users make them: the session awaited, the request sent through the core send (a read lost with its
 * stream issued once more), through the result cache when it applies, its `input_required` rounds served, the
 * result decoded, all in the call's span and metrics.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import { isMcpMethod } from "../../McpMethod.js"
import type * as McpMethod from "../../McpMethod.js"
import * as McpMethods from "../mcpMethods.js"
import * as CapabilityGate from "./capabilityGate.js"
import * as Negotiation from "../negotiation.js"
import type * as Cache from "./cache.js"
import type * as Connection from "./connection.js"
import type * as Envelope from "./envelope.js"
import * as InputRounds from "./inputRounds.js"
import * as SpecErrors from "./specErrors.js"
import * as UrlConsent from "../urlConsent.js"
import type * as Requester from "./requester.js"
import type * as ServerRequests from "./serverRequests.js"
import type * as Telemetry from "./telemetry.js"
import * as Options from "./options.js"
import * as RequestDefaults from "./requestDefaults.js"
import type { Session } from "./session.js"
import { printable } from "../printable.js"

/**
 * Decodes a raw result: as an effect, or synchronously (a {@link SyncDecoder}; a `Result` is not an effect).
 *
 * @internal
 */
export type Decoder<A> = (
  method: string,
  raw: unknown
) => Effect.Effect<A, McpError.ProtocolError> | Result.Result<A, McpError.ProtocolError>

/**
 * A decoder's outcome as an effect.
 *
 * @internal
 */
export const decodeWith = <A>(decode: Decoder<A>, method: string, raw: unknown): Effect.Effect<A, McpError.ProtocolError> => {
  const decoded = decode(method, raw)
  return Result.isResult(decoded) ? Effect.fromResult(decoded) : decoded
}

/**
 * Decodes a raw result synchronously.
 *
 * @internal
 */
export type SyncDecoder<A> = (method: string, raw: unknown) => Result.Result<A, McpError.ProtocolError>

/**
 * A complete result (no `resultType`, or `complete`) or a ProtocolError.
 *
 * @internal
 */
export const checkResultType = (method: string, result: unknown): Result.Result<object, McpError.ProtocolError> => {
  if (typeof result !== "object" || result === null) {
    return Result.fail(
      new McpError.ProtocolError({ reason: "InvalidResult", method, detail: "the result is not an object" })
    )
  }
  const resultType = "resultType" in result ? result.resultType : undefined
  if (resultType === undefined || resultType === "complete") return Result.succeed(result)
  return Result.fail(
    new McpError.ProtocolError({
      reason: "InvalidResultType",
      method,
      detail: `unknown resultType ${String(resultType)}`
    })
  )
}

/**
 * Decodes a result with any schema.
 *
 * @internal
 */
export const decodeResult = <A, I>(method: string, schema: Schema.Codec<A, I>, raw: unknown) =>
  Result.match(checkResultType(method, raw), {
    onFailure: (error): Effect.Effect<A, McpError.ProtocolError> => Effect.fail(error),
    onSuccess: (result) =>
      Effect.mapError(
        Schema.decodeUnknownEffect(schema, McpSchema.preserve)(result),
        (cause) => new McpError.ProtocolError({ reason: "InvalidResult", method, detail: cause.message, cause })
      )
  })

/**
 * Decodes a result with one of the library's schemas (synchronous ones); `quick` may recognise the usual shape and
 * build the same value by hand, else the schema decodes it.
 *
 * @internal
 */
export const resultDecoder = <A, I>(schema: Schema.Codec<A, I>, quick?: (raw: unknown) => A | undefined) => {
  const decodeEither = Schema.decodeUnknownResult(schema, McpSchema.preserve)
  return (method: string, raw: unknown): Result.Result<A, McpError.ProtocolError> =>
    Result.flatMap(checkResultType(method, raw), (result) => {
      const value = quick?.(result)
      if (value !== undefined) return Result.succeed(value)
      return Result.mapError(decodeEither(result), (cause) =>
        new McpError.ProtocolError({ reason: "InvalidResult", method, detail: cause.message, cause }))
    })
}

/** Decodes a result with a user's schema, with its default parse options. */
const definedDecoder = <A, I>(schema: Schema.Codec<A, I>): SyncDecoder<A> => {
  const decodeEither = Schema.decodeUnknownResult(schema)
  return (method, raw) =>
    Result.flatMap(checkResultType(method, raw), (result) =>
      Result.mapError(decodeEither(result), (cause) =>
        new McpError.ProtocolError({ reason: "InvalidResult", method, detail: cause.message, cause })))
}

/** Who learns the ids of the requests made with an options object (see `observingIds`). */
const idObservers = new WeakMap<McpClient.RequestOptions, (id: McpSchema.RequestId) => void>()

/**
 * The same options, with `onId` told the id of each request sent with them (before it is sent; a request sent
 * again gets a new id). A 2025-11-25 task keeps the progress token of the request that created it, its id.
 *
 * @internal
 */
export const observingIds = (
  options: McpClient.RequestOptions,
  onId: (id: McpSchema.RequestId) => void
): McpClient.RequestOptions => {
  const copy = { ...options }
  idObservers.set(copy, onId)
  return copy
}

/** The merged options keep who observes the ids of the options they were made from. */
const carryObservers = (
  original: McpClient.RequestOptions | undefined,
  merged: McpClient.RequestOptions
): McpClient.RequestOptions => {
  const onId = original === undefined ? undefined : idObservers.get(original)
  if (onId !== undefined) idObservers.set(merged, onId)
  return merged
}

/**
 * A call's options under the request defaults of the fiber that makes it (`McpClient.withRequestDefaults`).
 *
 * @internal
 */
export const underDefaults = (
  fiber: Pick<Fiber.Fiber<unknown, unknown>, "getRef">,
  options: McpClient.RequestOptions | undefined
): McpClient.RequestOptions | undefined =>
  RequestDefaults.apply(fiber.getRef(RequestDefaults.Current), options, carryObservers)

/**
 * @internal
 */
export interface Calls {
  /** The send options of a call. */
  readonly sendOptions: (options: Cache.LegOptions | undefined) => Requester.SendOptions
  /** One request, no cache, no rounds. */
  readonly raw: Cache.Leg
  readonly inputRounds: InputRounds.InputRounds
  /** One call: the request (its rounds, through the result cache when it applies), decoded, instrumented. */
  readonly call: <A>(
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    decode: Decoder<A>,
    options: McpClient.RequestOptions | undefined,
    tool?: string | undefined,
    /** `return`: an `input_required` answer goes to `decode` as it is, instead of the rounds' loop. */
    rounds?: "answer" | "return"
  ) => Effect.Effect<A, McpError.McpClientError>
  /** The same, without a new negotiation after a curable `-32022`. */
  readonly callOnce: <A>(
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    decode: Decoder<A>,
    options: McpClient.RequestOptions | undefined,
    tool?: string | undefined
  ) => Effect.Effect<A, McpError.McpClientError>
  readonly request: <A, I>(
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    schema: Schema.Codec<A, I>,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<A, McpError.McpClientError>
  /** A request of the specification's methods, its result decoded by the method's entry in the registry. */
  readonly send: <M extends McpMethods.MethodName>(
    method: M,
    params: Readonly<Record<string, unknown>> | undefined,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<McpMethods.ResultOf<M>, McpError.McpClientError>
  /** `McpClient.request`: by a method's definition (its facts learnt, its params encoded), or as `request`. */
  readonly requestAny: McpClient.Request
  readonly notify: (
    method: string,
    params?: Readonly<Record<string, unknown>> | undefined
  ) => Effect.Effect<void, McpError.McpClientError>
  /** Whether strict capability gating keeps this request from the wire (it must go through `call`). */
  readonly gated: (method: string, session: Session) => boolean
  /**
   * After a call failed: when the error is a `-32022` that a new negotiation can cure, the effect that negotiates
   * again and then runs `retry`; when it is a `-32042`, the effect that runs its URL elicitations and then `retry`
   * (else undefined).
   */
  readonly recover: <A>(
    error: McpError.McpClientError,
    retry: Effect.Effect<A, McpError.McpClientError>
  ) => Effect.Effect<A, McpError.McpClientError> | undefined
}

/**
 * What the calls need of the client.
 *
 * @internal
 */
export interface Deps {
  readonly status: Connection.Status
  readonly requester: Requester.Requester
  readonly envelope: Envelope.Envelope
  readonly cache: Cache.Cache
  readonly telemetry: Telemetry.Telemetry
  readonly requestTimeout: number
  readonly maxInputRounds: number
  /** The protocol versions this client speaks. */
  readonly supported: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly kind: McpError.TransportKind
  /** Capability gating: requests for features the server did not declare are not sent. */
  readonly strict: boolean
  /** Whether the connection reconnects (a new negotiation needs a new connection). */
  readonly reconnects: boolean
  /** Runs the URL elicitations of a `-32042`. */
  readonly serverRequests?: ServerRequests.ServerRequests | undefined
}

/**
 * @internal
 */
export const make = (deps: Deps): Calls => {
  const { cache, requestTimeout, requester, status, telemetry } = deps
  const sendOptions = makeSendOptions(requestTimeout)
  const recover = makeRecover(deps)

  /**
   * Sends one request. A request that only reads, lost with its response stream (`StreamEnded`: the answer can
   * no longer come), is issued once more as a new request, with a new id; any other stays lost, with its error.
   */
  const raw: Cache.Leg = (method, params, given) =>
    Effect.withFiber((fiber) => rawUnder(method, params, underDefaults(fiber, given)))
  const rawUnder: Cache.Leg = (method, params, options) => {
    const send = sendOptions(options)
    const once = Effect.flatMap(status.awaitSession(send.timeoutMillis, method), (session) => {
      const verdict = deps.strict ? CapabilityGate.check(method, session.capabilities) : undefined
      if (verdict !== undefined) {
        return verdict._tag === "Empty"
          ? Effect.succeed([verdict.result, session] as const)
          : Effect.fail(verdict.error)
      }
      return Effect.map(requester.send(session.wire, method, params, send), (result) => [result, session] as const)
    })
    if (requester.methods.of(method)?.idempotent !== true) return once
    return Effect.catchIf(
      once,
      (error): error is McpError.TransportError => error._tag === "TransportError" && error.reason === "StreamEnded",
      (error) => Effect.andThen(Effect.logDebug(printable(`${error.message}; issuing ${method} again`)), once)
    )
  }

  /** The first leg of a call, through the result cache when there is one and the method is cacheable. */
  const firstLeg = cache.wrap(
    raw,
    (options, method) => status.awaitSession(sendOptions(options).timeoutMillis, method),
    sendOptions
  )
  const inputRounds = InputRounds.make(raw, deps.envelope, deps.maxInputRounds, requester.methods)

  const callOnce = <A>(
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    decode: Decoder<A>,
    options: McpClient.RequestOptions | undefined,
    tool?: string | undefined,
    rounds: "answer" | "return" = "answer"
  ): Effect.Effect<A, McpError.McpClientError> =>
    telemetry.instrument(
      method,
      tool,
      Effect.flatMap(
        // the first round, which is usually the only one, runs without the rounds' loop
        Effect.flatMap(firstLeg(method, params, options), (first) =>
          rounds === "answer" && InputRounds.isInputRequired(first[0])
            ? inputRounds(method, params, options, first)
            : Effect.succeed(first[0])),
        (result) => decodeWith(decode, method, result)
      ).pipe(Effect.catchCause((cause) =>
        Effect.failCause(SpecErrors.typedCause(cause, method, params))
      ))
    )

  const call = <A>(
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    decode: Decoder<A>,
    options: McpClient.RequestOptions | undefined,
    tool?: string | undefined,
    rounds: "answer" | "return" = "answer"
  ): Effect.Effect<A, McpError.McpClientError> =>
    Effect.catch(
      callOnce(method, params, decode, options, tool, rounds),
      (error) => recover(error, callOnce(method, params, decode, options, tool, rounds)) ?? Effect.fail(error)
    )

  const request = <A, I>(
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    schema: Schema.Codec<A, I>,
    options?: McpClient.RequestOptions
  ): Effect.Effect<A, McpError.McpClientError> =>
    call(method, params, (m, result) => decodeResult(m, schema, result), options)

  const requestDefined = <P, A>(
    definition: McpMethod.McpMethod<string, P, A>,
    params: P,
    options?: McpClient.RequestOptions
  ): Effect.Effect<A, McpError.McpClientError> => {
    const codecs = codecsOf(definition)
    const encoded = codecs.encode(params)
    if (Result.isFailure(encoded)) {
      return Effect.fail(
        new McpError.ProtocolError({
          reason: "InvalidParams",
          method: definition.method,
          detail: encoded.failure.message,
          cause: encoded.failure
        })
      )
    }
    requester.methods.define(definition)
    return call(definition.method, encoded.success, codecs.decode, options)
  }

  const notify = makeNotify(status, requestTimeout)

  const gated = (method: string, session: Session): boolean =>
    deps.strict && CapabilityGate.check(method, session.capabilities) !== undefined

  const send = <M extends McpMethods.MethodName>(
    method: M,
    params: Readonly<Record<string, unknown>> | undefined,
    options?: McpClient.RequestOptions
  ): Effect.Effect<McpMethods.ResultOf<M>, McpError.McpClientError> =>
    request(method, params, McpMethods.methods[method].result as Schema.Codec<McpMethods.ResultOf<M>, unknown>, options)

  const requestAny = ((
    method: string | McpMethod.Any,
    params: unknown,
    schemaOrOptions?: unknown,
    options?: McpClient.RequestOptions
  ) =>
    isMcpMethod(method)
      ? requestDefined(method, params, schemaOrOptions as McpClient.RequestOptions | undefined)
      : request(
        method,
        params as Readonly<Record<string, unknown>> | undefined,
        schemaOrOptions as Schema.Codec<unknown, unknown>,
        options
      )) as McpClient.Request

  return { sendOptions, raw, inputRounds, call, callOnce, request, send, requestAny, notify, recover, gated }
}

/** A definition's parameter encoder and result decoder, made once per definition. */
const codecs = new WeakMap<McpMethod.Any, {
  readonly encode: (params: unknown) => Result.Result<McpMethod.WireParams, Schema.SchemaError>
  readonly decode: SyncDecoder<unknown>
}>()
const codecsOf = <P, A>(definition: McpMethod.McpMethod<string, P, A>): {
  readonly encode: (params: P) => Result.Result<McpMethod.WireParams, Schema.SchemaError>
  readonly decode: SyncDecoder<A>
} => {
  let made = codecs.get(definition)
  if (made === undefined) {
    made = {
      encode: Schema.encodeUnknownResult(definition.params),
      // (the definition's schema as its author wrote it: members it does not name are left out)
      decode: definedDecoder(definition.result)
    }
    codecs.set(definition, made)
  }
  return made as never
}

/** The send options of a call: the shared defaults when it has no options, else its own. */
const makeSendOptions = (requestTimeout: number): Calls["sendOptions"] => {
  const defaults: Requester.SendOptions = {
    timeoutMillis: requestTimeout,
    resetOnProgress: false,
    maxTotalMillis: undefined,
    onProgress: undefined,
    meta: undefined,
    cancellable: true,
    probe: false
  }
  return (options) => {
    if (options === undefined) return defaults
    if (options.shared === true) {
      // a request several callers wait on: each waits under their own deadline, and it ends with the last of them
      return { ...defaults, timeoutMillis: undefined, onProgress: options.onProgress, meta: options.meta }
    }
    const onId = idObservers.get(options)
    return {
      timeoutMillis: options.timeout === undefined ? requestTimeout : Options.toMillis(options.timeout),
      resetOnProgress: options.resetTimeoutOnProgress ?? false,
      maxTotalMillis: options.maxTotalTimeout === undefined ? undefined : Options.toMillis(options.maxTotalTimeout),
      onProgress: options.onProgress,
      meta: options.meta,
      cancellable: true,
      probe: false,
      ...(onId !== undefined ? { onId } : {})
    }
  }
}

/** A notification, in the session (its protocol version in `_meta` in the 2026-07-28 era). */
const makeNotify = (status: Connection.Status, requestTimeout: number): Calls["notify"] => (method, params) =>
  Effect.flatMap(status.awaitSession(requestTimeout, method), (session) => {
    const withMeta = session.era === "modern"
      ? {
        ...params,
        _meta: {
          [McpSchema.MetaKeys.protocolVersion]: session.protocolVersion,
          ...(typeof params?._meta === "object" ? params._meta : undefined)
        }
      }
      : params
    return session.connection.notify(
      withMeta === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params: withMeta }
    )
  })

/** What a failed call can recover from: a new negotiation after `-32022`, the URL elicitations of `-32042`. */
const makeRecover = (deps: Deps): Calls["recover"] => {
  const { requestTimeout, status } = deps

  /**
   * `-32022` naming a version both sides speak, while the session speaks another (the server changed since the
   * negotiation): the connection negotiates again, and the call is sent once more in the new session. Otherwise
   * undefined, and the error is the caller's.
   */
  const recover = <A>(
    error: McpError.McpClientError,
    retry: Effect.Effect<A, McpError.McpClientError>
  ): Effect.Effect<A, McpError.McpClientError> | undefined => {
    if (error._tag === "UrlElicitationRequired") return urlElicited(error, retry)
    // (a client that never reconnects keeps its connection, and the caller gets the error)
    if (error._tag !== "UnsupportedProtocolVersion" || !deps.reconnects) return undefined
    const session = status.current()
    if (session === undefined || error.supported.includes(session.protocolVersion)) return undefined
    const shared = Negotiation.newestShared(deps.supported, error.supported)
    if (shared === undefined) return undefined
    const closed = new McpError.TransportError({
      transport: deps.kind,
      reason: "Closed",
      detail: `the server no longer speaks protocol version ${session.protocolVersion} (it offers ${
        error.supported.join(", ")
      }): negotiating again`
    })
    return Effect.andThen(
      Effect.andThen(Effect.logInfo(printable(closed.detail ?? "")), status.renegotiate(session, closed)),
      retry
    )
  }

  /**
   * `-32042` (2025-11-25): the URL elicitations the request needs go through the elicitation handler (when it
   * takes URL mode); once the user accepted them all, the request is sent once more when the server reports them
   * complete, or when the user says so through the handler's manual controls (`urlPending`: retry or cancel).
   * Without controls, a report that never comes is waited for up to the request timeout. Declined or cancelled:
   * the caller gets the error. A page the user already consented to during this call is not shown again: a
   * `-32042` naming only such pages goes to the controls (without any, to the caller), at most `maxInputRounds`
   * times.
   */
  const urlElicited = <A>(
    error: McpError.UrlElicitationRequired,
    retry: Effect.Effect<A, McpError.McpClientError>,
    consent: UrlConsent.UrlConsent = UrlConsent.make(),
    round = 1
  ): Effect.Effect<A, McpError.McpClientError> | undefined => {
    const session = status.current()
    const serverRequests = deps.serverRequests
    if (serverRequests === undefined || session === undefined || round > deps.maxInputRounds) return undefined
    if (!deps.envelope.declaredModes(session.protocolVersion).includes("url")) return undefined
    const fresh = error.elicitations.filter((e) => !consent.accepted.has(e.elicitationId))
    const manual = serverRequests.urlPending(session, error.elicitations)
    if (fresh.length === 0 && manual === undefined) return undefined
    const consented = fresh.length === 0 ? Effect.succeed(true) : serverRequests.elicitUrls(session, fresh)
    return Effect.flatMap(consented, (accepted) => {
      if (!accepted) return Effect.fail(error)
      for (const { elicitationId } of fresh) consent.accepted.add(elicitationId)
      // the server's report on the pages just shown retries on its own (pages shown before are not reported again)
      const reported = fresh.length === 0
        ? Effect.never
        : serverRequests.awaitCompleted(fresh.map((e) => e.elicitationId), manual === undefined ? requestTimeout : undefined)
      const decided = manual === undefined
        ? Effect.as(reported, "retry" as const)
        : Effect.raceFirst(Effect.as(reported, "retry" as const), manual)
      return Effect.flatMap(decided, (choice) =>
        choice === "cancel" ? Effect.fail(error) : Effect.catchIf(
          retry,
          (again): again is McpError.UrlElicitationRequired => again._tag === "UrlElicitationRequired",
          (again) => urlElicited(again, retry, consent, round + 1) ?? Effect.fail(again)
        ))
    })
  }

  return recover
}

/**
 * Runs a call that reports progress as a Stream of progress events ending with the result. Progress reports to a
 * slow reader: the oldest are dropped (each report carries the whole progress so far); the result, offered last,
 * never is. Ending the stream early interrupts the call, which cancels it.
 *
 * @internal
 */
export const progressEvents = <A, E = McpError.McpClientError>(
  bufferSize: number,
  run: (onProgress: (progress: McpSchema.Progress) => Effect.Effect<void>) => Effect.Effect<A, E>
): Stream.Stream<McpClient.CallEvent<A>, E> =>
  Stream.unwrap(Effect.gen(function*() {
    const events = yield* Queue.make<McpClient.CallEvent<A>, E | Cause.Done>({
      capacity: bufferSize,
      strategy: "sliding"
    })
    yield* run((progress) => Effect.sync(() => Queue.offerUnsafe(events, { _tag: "Progress", progress }))).pipe(
      Effect.flatMap((result) => Queue.offer(events, { _tag: "Result", result })),
      Queue.into(events),
      Effect.forkScoped
    )
    return Stream.fromQueue(events)
  }))
