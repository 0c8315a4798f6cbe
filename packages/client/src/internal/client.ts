/** @internal */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberMap from "effect/FiberMap"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as LogLevel from "effect/LogLevel"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import type * as MetricKeyType from "effect/MetricKeyType"
import type * as MetricState from "effect/MetricState"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Tracer from "effect/Tracer"
import type * as McpClient from "../McpClient.js"
import * as McpError from "../McpError.js"
import * as McpSchema from "../McpSchema.js"
import * as Transport from "../Transport.js"
import * as ElicitationHandler from "../ElicitationHandler.js"
import * as JsonSchema from "../JsonSchema.js"
import * as ResultCache from "../ResultCache.js"
import * as RootsProvider from "../RootsProvider.js"
import * as SamplingHandler from "../SamplingHandler.js"
import * as Features from "./clientFeatures.js"
import * as Idempotent from "./idempotent.js"
import { fingerprint } from "./oauthCrypto.js"
import * as codec from "./codec.js"
import * as Negotiation from "./negotiation.js"
import * as Tracing from "./tracing.js"
import * as NotificationHub from "./client/notificationHub.js"
import * as RequestTable from "./client/requestTable.js"

const VERSION = "0.1.0"

type Session = McpClient.ServerSession & {
  readonly connection: Transport.TransportConnection
  readonly attempt: Attempt
  /** What requests of this session are sent with. */
  readonly wire: Wire
}

/**
 * Sends a request through the transport's synchronous path when it has one and it takes the request now. A
 * transport's throw counts as not sent: its `request` then runs, where a failure is the call's.
 */
const sentAtOnce = (
  connection: Transport.TransportConnection,
  message: McpSchema.JsonRpcRequest,
  options: Transport.WireOptions
): boolean => {
  const unsafeRequest = connection.unsafeRequest
  if (unsafeRequest === undefined) return false
  try {
    return unsafeRequest(message, options)
  } catch {
    return false
  }
}

interface Attempt {
  readonly closed: Deferred.Deferred<McpError.TransportError>
  /** Set as soon as the transport reports it closed, so no request is registered on a dead connection. */
  closedError: McpError.TransportError | undefined
  connection: Transport.TransportConnection | undefined
  era: McpSchema.Era | undefined
  inbound: number
  readonly scope: Scope.Scope
  /** A legacy re-initialization after the server forgot the session, while one runs. */
  reinitializing: boolean
  version: McpSchema.ProtocolVersion | undefined
  serverName: string | undefined
}

/** Internal signal: the child went away during the probe, so restart it and speak legacy. */
class RestartAsLegacy {
  readonly _tag = "RestartAsLegacy"
}

/** Internal signal: the cached legacy verdict proved wrong, so probe again. */
class Reprobe {
  readonly _tag = "Reprobe"
}

type Negotiated = Omit<Session, "transport" | "connection" | "attempt" | "wire">

type AttemptError = McpError.ConnectError | RestartAsLegacy | Reprobe

interface Wire {
  readonly attempt: Attempt
  readonly connection: Transport.TransportConnection
  readonly era: McpSchema.Era | "probe"
  readonly version: McpSchema.ProtocolVersion
}

interface SendOptions {
  readonly timeoutMillis: number | undefined
  readonly resetOnProgress: boolean
  readonly maxTotalMillis: number | undefined
  readonly onProgress: ((progress: McpSchema.Progress) => Effect.Effect<void>) | undefined
  readonly meta: Readonly<Record<string, unknown>> | undefined
  readonly cancellable: boolean
  readonly probe: boolean
  readonly id?: string | undefined
  /** Told the request id before the request is sent (a listen routes its notifications by it). */
  readonly onId?: ((id: McpSchema.RequestId) => void) | undefined
}

const decodeProgress = Schema.decodeUnknownEither(McpSchema.ProgressParams)
const decodeImplementation = Schema.decodeUnknownEither(McpSchema.Implementation, McpSchema.preserve)
const CancelledParams = Schema.Struct({ requestId: McpSchema.RequestId })
const decodeCancelled = Schema.decodeUnknownEither(CancelledParams)

const inputMethods = new Set(["tools/call", "resources/read", "prompts/get"])
const inputCapability: Readonly<Record<string, "elicitation" | "sampling" | "roots">> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots"
}
const InputRequiredResult = Schema.Struct({
  resultType: Schema.Literal("input_required"),
  inputRequests: Schema.optional(
    Schema.Record({
      key: Schema.String,
      value: Schema.Struct({ method: Schema.String, params: Schema.optional(Schema.Unknown) })
    })
  ),
  requestState: Schema.optional(Schema.String)
})
const decodeInputRequired = Schema.decodeUnknownEither(InputRequiredResult)
const isInputRequired = (raw: unknown): boolean =>
  typeof raw === "object" && raw !== null && "resultType" in raw && raw.resultType === "input_required"

const relistenSchedule = Schedule.exponential("250 millis", 2).pipe(
  Schedule.union(Schedule.spaced("30 seconds")),
  Schedule.jittered
)

const SubscriptionMeta = Schema.Struct({
  _meta: Schema.Struct({ [McpSchema.MetaKeys.subscriptionId]: McpSchema.RequestId })
})
const decodeSubscriptionMeta = Schema.decodeUnknownEither(SubscriptionMeta)
const subscriptionIdOf = (params: unknown): McpSchema.RequestId | undefined => {
  if (typeof params !== "object" || params === null || !("_meta" in params)) return undefined
  return Either.getOrUndefined(
    Either.map(decodeSubscriptionMeta(params), (p) => p._meta[McpSchema.MetaKeys.subscriptionId])
  )
}

const Acknowledged = Schema.Struct({
  notifications: Schema.optional(Schema.Struct({
    toolsListChanged: Schema.optional(Schema.Boolean),
    promptsListChanged: Schema.optional(Schema.Boolean),
    resourcesListChanged: Schema.optional(Schema.Boolean),
    resourceSubscriptions: Schema.optional(Schema.Array(Schema.String))
  }))
})
const decodeAcknowledged = Schema.decodeUnknownEither(Acknowledged)

/** What a listen asked for and its acknowledgement left out. */
const unacknowledged = (
  asked: {
    readonly toolsListChanged?: boolean
    readonly promptsListChanged?: boolean
    readonly resourcesListChanged?: boolean
    readonly resourceSubscriptions?: ReadonlyArray<string>
  },
  params: unknown
): ReadonlyArray<string> => {
  const honoured = Either.getOrUndefined(decodeAcknowledged(params))?.notifications ?? {}
  const missing: Array<string> = []
  if (asked.toolsListChanged === true && honoured.toolsListChanged !== true) missing.push("toolsListChanged")
  if (asked.promptsListChanged === true && honoured.promptsListChanged !== true) missing.push("promptsListChanged")
  if (asked.resourcesListChanged === true && honoured.resourcesListChanged !== true) {
    missing.push("resourcesListChanged")
  }
  for (const uri of asked.resourceSubscriptions ?? []) {
    if (!(honoured.resourceSubscriptions ?? []).includes(uri)) missing.push(uri)
  }
  return missing
}

const decodeLogMessage = Schema.decodeUnknownEither(McpSchema.LoggingMessageParams)
const logLevels: Readonly<Record<McpSchema.LoggingLevel, LogLevel.LogLevel>> = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  notice: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  critical: LogLevel.Error,
  alert: LogLevel.Error,
  emergency: LogLevel.Fatal
}

/**
 * Request latency in milliseconds, tagged by method and transport: the histogram `Metric.timer` makes (same name,
 * boundaries and `time_unit` label), built so that each method's labels are one constant set, which the metric
 * registry looks up once instead of at every update.
 */
const requestDuration = Metric.histogram(
  "mcp_client_request_duration",
  MetricBoundaries.exponential({ start: 0.5, factor: 2, count: 35 }),
  "time from sending a request to its result"
)
const timeUnit = MetricLabel.make("time_unit", "milliseconds")
/** Failed requests, tagged by method, transport and error tag. */
const requestErrors = Metric.counter("mcp_client_request_errors", {
  description: "requests that failed, by error tag",
  incremental: true
})

interface MethodMetrics {
  readonly duration: Metric.Metric<MetricKeyType.MetricKeyType.Histogram, number, MetricState.MetricState.Histogram>
  readonly errorsBy: (errorTag: string) => Metric.Metric.Counter<number>
}

const isInvalidating = (method: string): boolean =>
  method === "notifications/tools/list_changed" || method === "notifications/prompts/list_changed" ||
  method === "notifications/resources/list_changed" || method === "notifications/resources/updated"

const toMillis = (input: Duration.DurationInput): number => Duration.toMillis(Duration.decode(input))

const optionMillis = (
  name: string,
  input: Duration.DurationInput | undefined,
  fallback: number
): Effect.Effect<number, McpError.InvalidOption> =>
  Effect.suspend(() => {
    if (input === undefined) return Effect.succeed(fallback)
    const decoded = Duration.decodeUnknown(input)
    if (Option.isNone(decoded)) {
      return Effect.fail(new McpError.InvalidOption({ option: name, detail: "not a duration" }))
    }
    const millis = Duration.toMillis(decoded.value)
    return millis > 0
      ? Effect.succeed(millis)
      : Effect.fail(new McpError.InvalidOption({ option: name, detail: "must be a positive duration" }))
  })

const optionCount = (
  name: string,
  input: number | undefined,
  fallback: number
): Effect.Effect<number, McpError.InvalidOption> =>
  input === undefined
    ? Effect.succeed(fallback)
    : Number.isInteger(input) && input >= 1
    ? Effect.succeed(input)
    : Effect.fail(new McpError.InvalidOption({ option: name, detail: "must be a positive integer" }))

/** The parent a new span gets: the current span, unless it (or its ancestry) turned propagation off. */
const propagatedParent = (span: Option.Option<Tracer.AnySpan>): Option.Option<Tracer.AnySpan> =>
  Option.flatMap(span, (s) =>
    Context.get(s.context, Tracer.DisablePropagation)
      ? s._tag === "Span" ? propagatedParent(s.parent) : Option.none()
      : Option.some(s))

const TRACE_ID = /^(?!0{32}$)[0-9a-f]{32}$/
const SPAN_ID = /^(?!0{16}$)[0-9a-f]{16}$/

/**
 * The W3C `traceparent` of a span, so a server can join the caller's trace; none for a span whose ids W3C calls
 * invalid (not lowercase hex of the right length, or all zeros: an invalid span context of OpenTelemetry).
 */
const traceContext = (
  span: { readonly traceId: string; readonly spanId: string; readonly sampled: boolean } | undefined
): string | undefined =>
  span !== undefined && TRACE_ID.test(span.traceId) && SPAN_ID.test(span.spanId)
    ? `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`
    : undefined

const defaultReconnect: Schedule.Schedule<unknown, McpError.ConnectError> = Schedule.exponential("200 millis", 2).pipe(
  Schedule.union(Schedule.spaced("10 seconds")),
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(20))
)

/** @internal */
export const make = (
  options: McpClient.McpClientOptions = {}
): Effect.Effect<
  McpClient.McpClientService,
  McpError.ConnectError | McpError.InvalidOption,
  Transport.Transport | Scope.Scope
> =>
  Effect.gen(function*() {
    const transport = yield* Transport.Transport
    const kind = transport.kind

    // --- options, checked before any I/O
    const probeTimeout = yield* optionMillis(
      "probeTimeout",
      options.probeTimeout,
      Transport.defaultProbeTimeoutMillis(kind)
    )
    const initializeTimeout = yield* optionMillis("initializeTimeout", options.initializeTimeout, 30_000)
    const requestTimeout = yield* optionMillis("requestTimeout", options.requestTimeout, 60_000)
    const healthTimeout = yield* optionMillis("healthCheckTimeout", options.healthCheckTimeout, 10_000)
    const healthInterval = options.healthCheckInterval === false
      ? undefined
      : yield* optionMillis("healthCheckInterval", options.healthCheckInterval, 30_000)
    const maxPages = yield* optionCount("maxPages", options.maxPages, 100)
    const bufferSize = yield* optionCount("notificationBufferSize", options.notificationBufferSize, 1_000)
    const maxServerRequests = yield* optionCount("maxServerRequests", options.maxServerRequests, 32)
    const eraOption = options.era ?? "auto"
    const pinned = options.protocolVersion
    if (pinned !== undefined && !McpSchema.isLegacyVersion(pinned) && !McpSchema.isModernVersion(pinned)) {
      return yield* new McpError.InvalidOption({ option: "protocolVersion", detail: `unknown version ${pinned}` })
    }
    if (pinned !== undefined && eraOption !== "auto" && McpSchema.eraOf(pinned) !== eraOption) {
      return yield* new McpError.InvalidOption({
        option: "protocolVersion",
        detail: `${pinned} does not belong to the ${eraOption} era`
      })
    }
    const supported: ReadonlyArray<McpSchema.ProtocolVersion> = pinned !== undefined
      ? [pinned]
      : eraOption === "legacy"
      ? McpSchema.LEGACY_VERSIONS
      : eraOption === "modern"
      ? McpSchema.MODERN_VERSIONS
      : [...McpSchema.LEGACY_VERSIONS, ...McpSchema.MODERN_VERSIONS]
    const supportedLegacy = supported.filter(McpSchema.isLegacyVersion)
    const supportedModern = supported.filter(McpSchema.isModernVersion)
    const clientInfo: McpSchema.Implementation = options.clientInfo ?? { name: "conduit", version: VERSION }
    const configuredCapabilities: McpSchema.ClientCapabilities = options.capabilities ?? {}
    const handlers: Features.Handlers = {
      elicitation: yield* Effect.serviceOption(ElicitationHandler.ElicitationHandler),
      sampling: yield* Effect.serviceOption(SamplingHandler.SamplingHandler),
      roots: yield* Effect.serviceOption(RootsProvider.RootsProvider)
    }
    const capabilityCache = new Map<McpSchema.ProtocolVersion, McpSchema.ClientCapabilities>()
    const capabilitiesFor = (version: McpSchema.ProtocolVersion): McpSchema.ClientCapabilities => {
      let caps = capabilityCache.get(version)
      if (caps === undefined) {
        caps = Features.capabilitiesFor(handlers, configuredCapabilities, version)
        capabilityCache.set(version, caps)
      }
      return caps
    }
    const declaredModes = (version: McpSchema.ProtocolVersion): ReadonlyArray<"form" | "url"> => {
      const elicitation = capabilitiesFor(version).elicitation
      if (elicitation === undefined) return []
      const modes: Array<"form" | "url"> = []
      if ("form" in elicitation || !("url" in elicitation)) modes.push("form")
      if ("url" in elicitation) modes.push("url")
      return modes
    }
    const maxInputRounds = options.maxInputRounds ?? 10
    const cache = yield* Effect.serviceOption(ResultCache.ResultCache)
    // Metric keys tagged by method and transport, built once per method.
    const metricCache = new Map<string, MethodMetrics>()
    const metricsFor = (method: string): MethodMetrics => {
      let metrics = metricCache.get(method)
      if (metrics === undefined) {
        const byTag = new Map<string, Metric.Metric.Counter<number>>()
        metrics = {
          duration: Metric.taggedWithLabels(requestDuration, [
            timeUnit,
            MetricLabel.make("method", method),
            MetricLabel.make("transport", kind)
          ]),
          errorsBy: (errorTag) => {
            let counter = byTag.get(errorTag)
            if (counter === undefined) {
              counter = requestErrors.pipe(
                Metric.tagged("method", method),
                Metric.tagged("transport", kind),
                Metric.tagged("error", errorTag)
              )
              byTag.set(errorTag, counter)
            }
            return counter
          }
        }
        metricCache.set(method, metrics)
      }
      return metrics
    }
    // swapped by `setAuth`; read when a cache key is built. Without an explicit id, the transport's own
    // credentials key the partition (none: the anonymous one).
    let credentialId = options.credentialId ??
      (transport.credentialPartition === undefined ? undefined : yield* transport.credentialPartition)
    let authChanges = 0
    const reconnect = options.reconnect === false ? Schedule.stop : options.reconnect ?? defaultReconnect
    const spanAttributes = { "rpc.system": "jsonrpc", "mcp.transport": kind, ...options.spanAttributes }

    // --- state owned by this client
    const requests = yield* RequestTable.make
    let probeCount = 0
    let verdict: McpSchema.Era | undefined = pinned !== undefined
      ? McpSchema.eraOf(pinned)
      : eraOption === "auto"
      ? undefined
      : eraOption
    let logLevel: McpSchema.LoggingLevel | undefined
    let current = yield* Deferred.make<Session, McpError.McpClientError>()
    /** The session `current` succeeded with, while `current` is that Deferred: calls read it without waiting. */
    let connected: Session | undefined
    /** The attempt whose session `current` holds, while it is alive. */
    let published: Attempt | undefined
    const notifications = NotificationHub.makeHub(bufferSize)
    /** Modern listens by request id: their tagged notifications go to them alone. */
    const listeners = new Map<McpSchema.RequestId, (notification: McpSchema.ServerNotification) => Effect.Effect<void>>()
    /** Legacy resource subscriptions (uri → how many listens want it), restored on every new session. */
    const legacySubscriptions = new Map<string, number>()
    /** URL-mode elicitations shown to the handler and not yet reported complete. */
    const openUrlElicitations = new Set<string>()
    /** False until a first session existed: only later sessions have state to restore. */
    let restoreOnConnect = false
    const state = yield* SubscriptionRef.make<McpClient.ConnectionState>({ _tag: "Connecting" })
    const serverRequests = yield* FiberMap.make<McpSchema.RequestId>()

    const setState = (next: McpClient.ConnectionState) => SubscriptionRef.set(state, next)

    const failAll = (error: McpError.McpClientError) => Effect.sync(() => requests.failAll(error))

    // --- inbound routing
    const onResponse = (message: McpSchema.JsonRpcResponse): Effect.Effect<void> => {
      const entry = requests.get(message.id)
      if (entry === undefined) {
        return Effect.logDebug("dropped a response to an unknown or abandoned request").pipe(
          Effect.annotateLogs({ module: "McpClient", id: String(message.id) })
        )
      }
      requests.settleResponse(message, entry)
      return Effect.void
    }

    const onProgress = (params: unknown): Effect.Effect<void> => {
      const decoded = decodeProgress(params)
      if (Either.isLeft(decoded)) return Effect.logDebug("dropped a malformed progress notification")
      const entry = requests.get(decoded.right.progressToken)
      if (entry === undefined) return Effect.void
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        entry.lastActivity = now
        const onProgress = entry.onProgress
        // the caller's callback may throw as well as fail: neither reaches the connection
        return onProgress === undefined ? Effect.void : Effect.catchAllCause(
          Effect.suspend(() => onProgress(decoded.right)),
          (cause) => Effect.logWarning("a progress callback failed", cause)
        )
      })
    }

    const onNotification = (message: McpSchema.JsonRpcNotification): Effect.Effect<void> => {
      if (message.method === "notifications/progress") return onProgress(message.params)
      const notification = { method: message.method, params: message.params }
      if (isInvalidating(message.method)) {
        return Effect.zipRight(invalidateCache(notification), dispatchNotification(message, notification))
      }
      return dispatchNotification(message, notification)
    }

    const dispatchNotification = (
      message: McpSchema.JsonRpcNotification,
      notification: McpSchema.ServerNotification
    ): Effect.Effect<void> => {
      const subscription = subscriptionIdOf(message.params)
      if (subscription !== undefined) {
        const listener = listeners.get(subscription)
        if (listener !== undefined) {
          return message.method === "notifications/cancelled" ? endListen(subscription) : listener(notification)
        }
      }
      const published = notifications.publish(notification)
      if (message.method === "notifications/elicitation/complete") {
        return Effect.zipRight(elicitationCompleted(message.params), published)
      }
      if (message.method === "notifications/message" && options.serverLogs === "logger") {
        return Effect.zipRight(forwardLog(message.params), published)
      }
      if (message.method === "notifications/cancelled") {
        const decoded = decodeCancelled(message.params)
        if (Either.isRight(decoded)) {
          const id = decoded.right.requestId
          // On stdio a server ends a listen by cancelling it.
          if (listeners.has(id)) return endListen(id)
          return Effect.zipRight(FiberMap.remove(serverRequests, id), published)
        }
      }
      return published
    }

    /** 2025-11-25: a URL-mode elicitation finished; unknown or already finished ids are ignored. */
    const elicitationCompleted = (params: unknown): Effect.Effect<void> => {
      const id = typeof params === "object" && params !== null && "elicitationId" in params
        ? params.elicitationId
        : undefined
      if (typeof id !== "string" || !openUrlElicitations.delete(id)) return Effect.void
      const completed = Option.getOrUndefined(handlers.elicitation)?.completed
      if (completed === undefined) return Effect.void
      return Effect.catchAllCause(
        Effect.suspend(() => completed(id)),
        (cause) => Effect.logWarning("the elicitation completion callback failed", cause)
      )
    }

    const forwardLog = (params: unknown): Effect.Effect<void> => {
      const decoded = decodeLogMessage(params)
      if (Either.isLeft(decoded)) return Effect.void
      const { data, level, logger } = decoded.right
      const text = typeof data === "string" ? data : JSON.stringify(data)
      return Effect.logWithLevel(logLevels[level], text).pipe(
        Effect.annotateLogs({ module: "McpServer", server: published?.serverName ?? "unknown", logger: logger ?? "" })
      )
    }

    /** The server ended a listen: its request completes as if answered. */
    const endListen = (id: McpSchema.RequestId): Effect.Effect<void> =>
      Effect.sync(() => requests.succeed(id, { resultType: "complete" }))

    const respondError = (
      connection: Transport.TransportConnection,
      id: McpSchema.RequestId,
      code: number,
      message: string
    ) => connection.respond({ jsonrpc: "2.0", id, error: { code, message } })

    const onServerRequest = (
      attempt: Attempt,
      message: McpSchema.JsonRpcRequest,
      related: McpSchema.RequestId | undefined
    ): Effect.Effect<void> => {
      const connection = attempt.connection
      if (connection === undefined) return Effect.logDebug("dropped a server request that came before connecting")
      if (attempt.era === "modern") {
        // Modern servers send no requests and modern clients write no responses.
        return Effect.logWarning(`dropped a ${message.method} request from a modern server`)
      }
      const version = attempt.version ?? supportedLegacy[supportedLegacy.length - 1] ?? "2025-11-25"
      return Effect.flatMap(FiberMap.size(serverRequests), (running) => {
        if (running < maxServerRequests) {
          refusing = false
          return answerServerRequest(connection, attempt, version, message, related)
        }
        // Refused here, in the transport's delivery: a server that does not read its answers is held back by
        // the transport's bounded outbox instead of piling up work.
        const refusal = respondError(
          connection,
          message.id,
          McpSchema.ErrorCode.InternalError,
          `too many requests in progress (at most ${maxServerRequests})`
        )
        if (refusing) return Effect.ignore(refusal)
        refusing = true
        return Effect.zipRight(
          Effect.logWarning(
            `the server sends more than ${maxServerRequests} requests at once; refusing the excess with -32603`
          ).pipe(Effect.annotateLogs({ module: "McpClient", method: message.method })),
          Effect.ignore(refusal)
        )
      })
    }

    /** Set while server requests are being refused, so that a run of refusals is logged once. */
    let refusing = false

    const answerServerRequest = (
      connection: Transport.TransportConnection,
      attempt: Attempt,
      version: McpSchema.ProtocolVersion,
      message: McpSchema.JsonRpcRequest,
      related: McpSchema.RequestId | undefined
    ): Effect.Effect<void> => {
      const answer = Effect.flatMap(
        Features.fulfil(handlers, message.method, message.params, {
          serverOrigin: connection.info.origin,
          serverName: attempt.serverName,
          related,
          declaredModes: declaredModes(version),
          onUrlElicitation: (elicitationId) => {
            openUrlElicitations.add(elicitationId)
            return () => openUrlElicitations.delete(elicitationId)
          }
        }),
        Either.match({
          onLeft: (failure) => respondError(connection, message.id, failure.code, failure.message),
          onRight: (result) => connection.respond({ jsonrpc: "2.0", id: message.id, result })
        })
      )
      return FiberMap.run(
        serverRequests,
        message.id,
        answer.pipe(
          // a handler that died (or a reply that could not be written): the server still gets an answer, unless the
          // request was cancelled
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.zipRight(
              Effect.logWarning(`could not answer ${message.method}`, cause),
              Effect.ignore(respondError(
                connection,
                message.id,
                McpSchema.ErrorCode.InternalError,
                `the client failed to handle ${message.method}`
              ))
            )
          ),
          Effect.annotateLogs({ module: "McpClient", method: message.method })
        )
      ).pipe(Effect.asVoid)
    }

    const closeAttempt = (attempt: Attempt, error: McpError.TransportError) =>
      Effect.suspend(() => {
        attempt.closedError ??= error
        if (published === attempt) {
          // Callers arriving from now on wait for the next session instead of using this dead one.
          published = undefined
          connected = undefined
          current = Deferred.unsafeMake(FiberId.none)
        }
        return Effect.zipRight(Deferred.succeed(attempt.closed, error), failAll(error))
      })

    const makeEmit = (attempt: Attempt): Transport.Emit => {
      // A defect while handling a message (a bug, here or in a callback) drops that message: it must not kill the
      // transport's reader, whose death would leave every pending request waiting.
      const emit = (event: Transport.TransportEvent) =>
        Effect.catchAllDefect(
          Effect.suspend(() => {
            attempt.inbound++
            return route(attempt, event)
          }),
          (defect) =>
            Effect.logError(`an inbound ${event._tag} could not be handled and was dropped`, Cause.die(defect))
        )
      // the answer to a pending request settles it at once: nothing else to run
      const unsafeEmit = (event: Transport.TransportEvent): boolean => {
        if (event._tag !== "Response") return false
        const entry = requests.get(event.message.id)
        if (entry === undefined) return false
        attempt.inbound++
        requests.settleResponse(event.message, entry)
        return true
      }
      return Object.assign(emit, { unsafeEmit })
    }

    const route = (attempt: Attempt, event: Transport.TransportEvent): Effect.Effect<void> => {
      switch (event._tag) {
        case "Response":
          return onResponse(event.message)
        case "RequestFailed":
          return Effect.sync(() => requests.fail(event.id, event.error))
        case "Notification":
          return onNotification(event.message)
        case "ServerRequest":
          return onServerRequest(attempt, event.message, event.related)
        case "SessionExpired":
          return reinitialize(attempt)
        case "Closed":
          return closeAttempt(attempt, event.error)
      }
    }

    // --- sending requests
    const buildParams = (
      wire: Wire,
      id: McpSchema.RequestId,
      params: Readonly<Record<string, unknown>> | undefined,
      send: SendOptions,
      traceparent: string | undefined
    ): Record<string, unknown> | undefined => {
      const callerMeta = params?._meta
      const extraMeta = typeof callerMeta === "object" && callerMeta !== null ? callerMeta : undefined
      // Progress tokens are the client's (the request's id, routed to its caller): one a caller put in `_meta`
      // could name another request, whose caller would then get this one's progress.
      const callerToken = (extraMeta !== undefined && "progressToken" in extraMeta) ||
        (send.meta !== undefined && "progressToken" in send.meta)
      if (wire.era === "legacy") {
        const wantsProgress = send.onProgress !== undefined || send.resetOnProgress
        if (!wantsProgress && send.meta === undefined && !callerToken) return params
        const legacyMeta: Record<string, unknown> = { ...extraMeta, ...send.meta }
        if (wantsProgress) legacyMeta.progressToken = id
        else delete legacyMeta.progressToken
        return { ...params, _meta: legacyMeta }
      }
      // (the usual request has no `_meta` of its own: no spreads then)
      const meta: Record<string, unknown> = extraMeta === undefined && send.meta === undefined
        ? {}
        : { ...extraMeta, ...send.meta }
      if (callerToken) delete meta.progressToken
      meta[McpSchema.MetaKeys.protocolVersion] = wire.version
      meta[McpSchema.MetaKeys.clientInfo] = clientInfo
      meta[McpSchema.MetaKeys.clientCapabilities] = capabilitiesFor(wire.version)
      if (logLevel !== undefined && wire.era === "modern") meta[McpSchema.MetaKeys.logLevel] = logLevel
      // A token only when the caller wants progress, or an idle timeout needs it.
      if (send.onProgress !== undefined || send.resetOnProgress) meta.progressToken = id
      if (traceparent !== undefined) meta.traceparent = traceparent
      return { ...params, _meta: meta }
    }

    /** The request's own span, when it is a span of this process whose trace a server can join. */
    const propagatedSpan = (span: Tracer.AnySpan | undefined) =>
      span !== undefined && span._tag === "Span" ? span : undefined

    /** A request registered (its id taken, its entry pending) and its message built: `sent` sends it. */
    interface Registered {
      readonly id: McpSchema.RequestId
      readonly entry: RequestTable.Entry
      /** The transport's send, still to run; undefined when the request went out at once. */
      readonly sent: Effect.Effect<void, McpError.TransportFailure> | undefined
    }

    /**
     * What precedes every send. `span` is the request's span (the current span when undefined): its trace context
     * goes in `_meta` on modern requests.
     */
    const register = (
      fiber: Fiber.RuntimeFiber<unknown, unknown>,
      wire: Wire,
      method: string,
      params: Readonly<Record<string, unknown>> | undefined,
      send: SendOptions,
      span: Tracer.Span | undefined
    ): Registered => {
      const now = Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeMillis()
      const timeout = send.timeoutMillis
      const entry = requests.register(method, now, send, send.onProgress, send.id)
      const id = entry.id
      send.onId?.(id)
      const budget = send.resetOnProgress ? send.maxTotalMillis : timeout
      const finalParams = buildParams(
        wire,
        id,
        params,
        send,
        wire.era === "legacy" ? undefined : traceContext(span ?? propagatedSpan(fiber.currentSpan))
      )
      const message: McpSchema.JsonRpcRequest = finalParams === undefined
        ? { jsonrpc: "2.0", id, method }
        : { jsonrpc: "2.0", id, method, params: finalParams }
      const options: Transport.WireOptions = {
        probe: send.probe,
        deadline: budget === undefined ? undefined : now + budget,
        listen: method === "subscriptions/listen"
      }
      const connection = wire.connection
      const sent = sentAtOnce(connection, message, options) ? undefined : connection.request(message, options)
      return { id, entry, sent }
    }

    /**
     * Sends a registered request (unless it went out at once) and waits for its outcome; `around` runs the
     * transport's part.
     */
    const transmit = (
      registered: Registered,
      around: (<A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>) | undefined
    ): RequestTable.Reply => {
      const sent = registered.sent
      if (sent === undefined) return requests.await(registered.entry)
      return Effect.flatMap(around === undefined ? sent : around(sent), () => requests.await(registered.entry))
    }

    /** A request answered: its entry is dropped. */
    const completed = (registered: Registered): void => requests.completed(registered.entry)

    /**
     * A request that did not succeed is dropped; one given up (timed out, or its caller interrupted) is cancelled
     * when `send.cancellable`: the effect that cancels it, if any.
     */
    const abandoned = (
      wire: Wire,
      registered: Registered,
      send: SendOptions,
      cause: Cause.Cause<McpError.McpClientError>
    ): Effect.Effect<void> | undefined => {
      if (!requests.abandon(registered.entry) || !send.cancellable) return undefined
      const timedOut = Option.exists(Cause.failureOption(cause), (e) => e._tag === "RequestTimeout")
      if (!timedOut && !Cause.isInterrupted(cause)) return undefined
      return wire.connection.cancel(registered.id, timedOut ? "timeout" : "interrupted")
    }

    /**
     * Sends one request and waits for its outcome. The request is registered (and its deadline set) before it is
     * sent and dropped whatever the outcome; a request given up (timed out, or its caller interrupted) is cancelled
     * when `send.cancellable`.
     */
    const sendRequest = (
      wire: Wire,
      method: string,
      params: Readonly<Record<string, unknown>> | undefined,
      send: SendOptions
    ): RequestTable.Reply =>
      Effect.uninterruptibleMask((restore) =>
        Effect.withFiberRuntime<unknown, McpError.McpClientError>((fiber) => {
          if (wire.attempt.closedError !== undefined) return Effect.fail(wire.attempt.closedError)
          const registered = register(fiber, wire, method, params, send, undefined)
          return Effect.matchCauseEffect(restore(transmit(registered, undefined)), {
            onFailure: (cause) => {
              const cancel = abandoned(wire, registered, send, cause)
              return cancel === undefined ? Effect.failCause(cause) : Effect.zipRight(cancel, Effect.failCause(cause))
            },
            onSuccess: (value) => {
              completed(registered)
              return Effect.succeed(value)
            }
          })
        })
      )

    const invalidResult = (method: string, detail: string) =>
      new McpError.ProtocolError({ reason: "InvalidResult", method, detail })

    /** A complete result (no `resultType`, or `complete`) or a ProtocolError. */
    const checkResultType = (method: string, result: unknown): Either.Either<object, McpError.ProtocolError> => {
      if (typeof result !== "object" || result === null) {
        return Either.left(invalidResult(method, "the result is not an object"))
      }
      const resultType = "resultType" in result ? result.resultType : undefined
      if (resultType === undefined || resultType === "complete") return Either.right(result)
      return Either.left(
        new McpError.ProtocolError({
          reason: "InvalidResultType",
          method,
          detail: `unknown resultType ${String(resultType)}`
        })
      )
    }

    const decodeResult = <A, I>(method: string, schema: Schema.Schema<A, I>, raw: unknown) =>
      Either.match(checkResultType(method, raw), {
        onLeft: (error): Effect.Effect<A, McpError.ProtocolError> => Effect.fail(error),
        onRight: (result) =>
          Effect.mapError(
            Schema.decodeUnknown(schema, McpSchema.preserve)(result),
            (cause) => new McpError.ProtocolError({ reason: "InvalidResult", method, detail: cause.message, cause })
          )
      })

    // --- negotiation
    const internalSend = (timeoutMillis: number, extra?: Partial<SendOptions>): SendOptions => ({
      timeoutMillis,
      resetOnProgress: false,
      maxTotalMillis: undefined,
      onProgress: undefined,
      meta: undefined,
      cancellable: false,
      probe: false,
      ...extra
    })

    const initialize = (
      attempt: Attempt,
      connection: Transport.TransportConnection,
      version: McpSchema.LegacyVersion | undefined
    ): Effect.Effect<Negotiated, AttemptError> =>
      Effect.gen(function*() {
        const offered = version ?? supportedLegacy[supportedLegacy.length - 1]
        if (offered === undefined) {
          return yield* new McpError.ProtocolError({
            reason: "UnsupportedVersion",
            method: "initialize",
            detail: "the server speaks only legacy revisions and this client is pinned to the modern era"
          })
        }
        const wire: Wire = { attempt, connection, era: "legacy", version: offered }
        const raw = yield* sendRequest(
          wire,
          "initialize",
          { protocolVersion: offered, capabilities: capabilitiesFor(offered), clientInfo },
          internalSend(initializeTimeout)
        ).pipe(
          Effect.catchTag("McpError", (error): Effect.Effect<never, McpError.McpError | Reprobe> =>
            // (legacy by this client's verdict, or by the one its transport kept for the server)
            (connection.info.era ?? verdict) === "legacy" && eraOption === "auto" && pinned === undefined &&
              Negotiation.initializeNamesOnlyModern(error)
              ? Effect.fail(new Reprobe())
              : Effect.fail(error))
        )
        const result = yield* decodeResult("initialize", McpSchema.InitializeResult, raw)
        const agreed = result.protocolVersion
        if (!McpSchema.isLegacyVersion(agreed) || !supportedLegacy.includes(agreed)) {
          return yield* new McpError.ProtocolError({
            reason: "UnsupportedVersion",
            method: "initialize",
            detail: `the server answered with protocol version ${agreed}; this client supports ${
              supportedLegacy.join(", ")
            }`
          })
        }
        attempt.era = "legacy"
        yield* connection.notify({ jsonrpc: "2.0", method: "notifications/initialized" })
        return {
          era: "legacy" as const,
          protocolVersion: agreed,
          serverInfo: result.serverInfo,
          capabilities: result.capabilities,
          instructions: result.instructions
        }
      })

    const discover = (
      attempt: Attempt,
      connection: Transport.TransportConnection,
      version: McpSchema.ProtocolVersion,
      timeoutMillis: number
    ) =>
      sendRequest(
        { attempt, connection, era: "probe", version },
        "server/discover",
        undefined,
        internalSend(timeoutMillis, { probe: true, id: `conduit-probe-${++probeCount}` })
      )

    const modernSession = (
      attempt: Attempt,
      version: McpSchema.ModernVersion,
      result: McpSchema.DiscoverResult
    ): Negotiated => {
      attempt.era = "modern"
      const serverInfo = decodeImplementation(result._meta?.[McpSchema.MetaKeys.serverInfo])
      return {
        era: "modern",
        protocolVersion: version,
        serverInfo: Either.getOrUndefined(serverInfo),
        capabilities: result.capabilities,
        instructions: result.instructions
      }
    }

    const probe = (
      attempt: Attempt,
      connection: Transport.TransportConnection
    ): Effect.Effect<Negotiated, AttemptError> =>
      Effect.gen(function*() {
        let version: McpSchema.ModernVersion = supportedModern[supportedModern.length - 1] ?? "2026-07-28"
        let retried = false
        while (true) {
          const outcome = yield* Effect.either(discover(attempt, connection, version, probeTimeout))
          let verdictNow: Negotiation.ProbeVerdict
          if (Either.isRight(outcome)) {
            verdictNow = Negotiation.classifyProbeResult(outcome.right, supported)
          } else {
            const error = outcome.left
            switch (error._tag) {
              case "McpError":
                verdictNow = Negotiation.classifyProbeError(error, supported, retried)
                break
              case "RequestTimeout":
                // On HTTP silence is an outage; and a server known to be modern is never quietly downgraded.
                if (kind === "http" || verdict === "modern") {
                  return yield* new McpError.TransportError({
                    transport: kind,
                    reason: "Timeout",
                    detail: "the server did not answer the era probe"
                  })
                }
                verdictNow = { _tag: "Legacy", version: undefined }
                break
              case "TransportError":
                if (kind !== "http" && verdict !== "modern" && (yield* Deferred.isDone(attempt.closed))) {
                  // Some legacy servers quit on any request before initialize: restart and speak legacy.
                  return yield* Effect.fail(new RestartAsLegacy())
                }
                verdictNow = Negotiation.classifyProbeFailure(kind, error, supported, retried)
                break
              case "ProtocolError":
                return yield* Effect.fail(error)
              default:
                verdictNow = Negotiation.classifyProbeFailure(kind, error, supported, retried)
            }
          }
          switch (verdictNow._tag) {
            case "Modern":
              verdict = "modern"
              return modernSession(attempt, verdictNow.version, verdictNow.discover)
            case "RetryModern":
              version = verdictNow.version
              retried = true
              continue
            case "Legacy":
              if (supportedLegacy.length === 0) {
                return yield* new McpError.ProtocolError({
                  reason: "UnsupportedVersion",
                  method: "server/discover",
                  detail: "the server is not a modern server and this client is pinned to the modern era"
                })
              }
              verdict = "legacy"
              return yield* initialize(attempt, connection, verdictNow.version)
            case "Fail":
              return yield* Effect.fail(verdictNow.error)
          }
        }
      })

    const negotiate = (
      attempt: Attempt,
      connection: Transport.TransportConnection
    ): Effect.Effect<Negotiated, AttemptError> => {
      const known = connection.info.era ?? verdict
      if (known === "legacy") return initialize(attempt, connection, undefined)
      if (known === "modern" && eraOption !== "auto") {
        // Pinned to modern: discover for capabilities; a modern server must answer it.
        return Effect.flatMap(
          discover(attempt, connection, supportedModern[supportedModern.length - 1]!, probeTimeout),
          (raw) => {
            const verdictNow = Negotiation.classifyProbeResult(raw, supported)
            return verdictNow._tag === "Modern"
              ? Effect.succeed(modernSession(attempt, verdictNow.version, verdictNow.discover))
              : Effect.fail(
                new McpError.ProtocolError({
                  reason: "Negotiation",
                  method: "server/discover",
                  detail: "the server did not answer server/discover like a modern server"
                })
              )
          }
        )
      }
      return Effect.zipRight(setState({ _tag: "Probing" }), probe(attempt, connection))
    }

    const sessionOf = (
      negotiated: Negotiated,
      attempt: Attempt,
      connection: Transport.TransportConnection
    ): Session => ({
      ...negotiated,
      transport: connection.info,
      connection,
      attempt,
      wire: { attempt, connection, era: negotiated.era, version: negotiated.protocolVersion }
    })

    // --- legacy session expiry: a new session on the same transport, nothing failed; the transport re-sends
    const reinitialize = (attempt: Attempt): Effect.Effect<void> =>
      Effect.suspend(() => {
        const connection = attempt.connection
        const version = attempt.version
        if (attempt.reinitializing || connection === undefined || version === undefined) return Effect.void
        if (!McpSchema.isLegacyVersion(version)) return Effect.void
        attempt.reinitializing = true
        return initialize(attempt, connection, version).pipe(
          // the new session starts from nothing: what was cached of the server is stale, and the log level and
          // resource subscriptions are sent again
          Effect.flatMap((negotiated) => {
            const session = sessionOf(negotiated, attempt, connection)
            return Effect.zipRight(
              connection.setSession({ era: session.era, protocolVersion: session.protocolVersion }),
              Effect.zipRight(
                forgetServer(session.transport.target),
                Effect.forkIn(restoreLegacyState(session), attempt.scope)
              )
            )
          }),
          Effect.catchAll((error) =>
            closeAttempt(
              attempt,
              new McpError.TransportError({
                transport: kind,
                reason: "Closed",
                detail: `the server forgot the session and a new one could not be started: ${
                  "message" in error ? error.message : error._tag
                }`
              })
            )
          ),
          Effect.ensuring(Effect.sync(() => (attempt.reinitializing = false))),
          Effect.annotateLogs({ module: "McpClient", method: "reinitialize" }),
          Effect.forkIn(attempt.scope),
          Effect.asVoid
        )
      })

    // --- legacy session state (log level, resource subscriptions) is sent again on every new session
    const restoreLegacyState = (session: Session) =>
      Effect.gen(function*() {
        const wire: Wire = {
          attempt: session.attempt,
          connection: session.connection,
          era: "legacy",
          version: session.protocolVersion
        }
        const send = internalSend(requestTimeout, { cancellable: true })
        if (logLevel !== undefined && session.capabilities.logging !== undefined) {
          yield* Effect.ignore(sendRequest(wire, "logging/setLevel", { level: logLevel }, send))
        }
        if (session.capabilities.resources?.subscribe === true) {
          for (const uri of legacySubscriptions.keys()) {
            yield* Effect.ignore(sendRequest(wire, "resources/subscribe", { uri }, send))
          }
        }
      }).pipe(Effect.annotateLogs({ module: "McpClient", method: "restoreLegacyState" }))

    // --- health checks
    const healthCheck = (attempt: Attempt, session: Session, interval: number) =>
      Effect.gen(function*() {
        while (true) {
          const before = attempt.inbound
          yield* Effect.sleep(Duration.millis(interval))
          if (attempt.inbound !== before) continue
          const wire: Wire = {
            attempt,
            connection: session.connection,
            era: session.era,
            version: session.protocolVersion
          }
          const check = session.era === "legacy"
            ? sendRequest(wire, "ping", undefined, internalSend(healthTimeout, { cancellable: true }))
            : sendRequest(wire, "server/discover", undefined, internalSend(healthTimeout, { cancellable: true }))
          const failed = yield* check.pipe(
            Effect.as(false),
            Effect.catchAll((error) => Effect.succeed(error._tag !== "McpError"))
          )
          if (failed) {
            const error = new McpError.TransportError({
              transport: kind,
              reason: "Timeout",
              detail: "the connection failed its health check"
            })
            yield* Effect.logWarning("health check failed; reconnecting").pipe(Effect.annotateLogs({ module: "McpClient" }))
            yield* closeAttempt(attempt, error)
            return
          }
        }
      })

    // --- one connection attempt: connect, negotiate, serve until the transport closes
    let established = false
    const runAttempt: Effect.Effect<never, AttemptError> = Effect.scoped(
      Effect.gen(function*() {
        const attempt: Attempt = {
          closed: yield* Deferred.make<McpError.TransportError>(),
          closedError: undefined,
          connection: undefined,
          era: undefined,
          inbound: 0,
          scope: yield* Effect.scope,
          reinitializing: false,
          version: undefined,
          serverName: undefined
        }
        yield* Effect.addFinalizer(() =>
          Effect.gen(function*() {
            yield* failAll(
              new McpError.TransportError({ transport: kind, reason: "Closed", detail: "the connection closed" })
            )
            yield* FiberMap.clear(serverRequests)
            if (yield* Deferred.isDone(current)) {
              connected = undefined
              current = yield* Deferred.make<Session, McpError.McpClientError>()
            }
          })
        )
        yield* setState({ _tag: "Connecting" })
        const connection = yield* transport.connect(makeEmit(attempt))
        attempt.connection = connection
        const negotiated = yield* negotiate(attempt, connection)
        const session = sessionOf(negotiated, attempt, connection)
        attempt.version = session.protocolVersion
        attempt.serverName = session.serverInfo?.name
        yield* connection.setSession({ era: session.era, protocolVersion: session.protocolVersion })
        established = true
        if (yield* Deferred.succeed(current, session)) connected = session
        published = attempt
        yield* Deferred.succeed(ready, undefined)
        yield* setState({ _tag: "Connected", era: session.era, protocolVersion: session.protocolVersion })
        yield* Effect.logDebug(`connected: ${session.era} ${session.protocolVersion}`).pipe(
          Effect.annotateLogs({ module: "McpClient", transport: kind })
        )
        // Whatever changed while no session was up is unknown: cached results of this server are stale.
        if (restoreOnConnect) yield* forgetServer(session.transport.target)
        if (session.era === "legacy" && restoreOnConnect) yield* Effect.forkScoped(restoreLegacyState(session))
        restoreOnConnect = true
        if (healthInterval !== undefined) yield* Effect.forkScoped(healthCheck(attempt, session, healthInterval))
        if (session.era === "legacy" && Option.isSome(handlers.roots)) {
          // legacy roots are declared with listChanged: each change of the roots is announced to the server
          yield* Effect.forkScoped(Stream.runForEach(handlers.roots.value.changes, () =>
            Effect.ignore(connection.notify({ jsonrpc: "2.0", method: "notifications/roots/list_changed" }))))
        }
        const error = yield* Deferred.await(attempt.closed)
        return yield* Effect.fail(error)
      })
    )

    const ready = yield* Deferred.make<void, McpError.ConnectError>()
    const loop = Effect.gen(function*() {
      const driver = yield* Schedule.driver(reconnect)
      let attemptNumber = 0
      // changes of era since the last session: a server whose answers contradict each other (its probe says
      // legacy, its initialize names only modern versions) must not keep the client switching forever
      let eraSwitches = 0
      while (true) {
        established = false
        const signal = yield* Effect.flip(runAttempt)
        if (signal._tag === "RestartAsLegacy" || signal._tag === "Reprobe") {
          if (++eraSwitches <= 2) {
            // Reprobe: initialize was refused naming only modern versions, so the server is modern, however slow
            // its probe was
            verdict = signal._tag === "RestartAsLegacy" ? "legacy" : "modern"
            continue
          }
        }
        const outcome = signal._tag === "RestartAsLegacy" || signal._tag === "Reprobe"
          ? new McpError.ProtocolError({
            reason: "Negotiation",
            method: "initialize",
            detail: "the server's answers contradict each other about its era (the probe and initialize)"
          })
          : signal
        if (established) eraSwitches = 0
        if (!(yield* Deferred.isDone(ready))) {
          // The first connection failed: report it to the constructor instead of retrying a bad setup.
          yield* Deferred.fail(ready, outcome)
          yield* setState({ _tag: "Closed", error: outcome })
          yield* Deferred.fail(current, outcome)
          return
        }
        if (established) {
          attemptNumber = 0
          yield* driver.reset
        }
        attemptNumber++
        yield* setState({ _tag: "Reconnecting", attempt: attemptNumber, error: outcome })
        yield* Effect.logInfo(`connection lost (${outcome.message}); reconnecting`).pipe(
          Effect.annotateLogs({ module: "McpClient", attempt: attemptNumber })
        )
        const next = yield* Effect.either(driver.next(outcome))
        if (Either.isLeft(next)) {
          yield* setState({ _tag: "Closed", error: outcome })
          yield* Deferred.fail(current, outcome)
          return
        }
      }
    })

    // The connection fiber, started below, may run all of the above (these two included) before this constructor
    // goes on: a server may send notifications as soon as a session exists.
    const invalidateCache = (notification: McpSchema.ServerNotification): Effect.Effect<void> =>
      Option.isNone(cache) || published?.connection === undefined
        ? Effect.void
        : cache.value.invalidateForNotification(published.connection.info.target, notification)

    const forgetServer = (target: string): Effect.Effect<void> =>
      Option.isNone(cache) ? Effect.void : cache.value.invalidate(ResultCache.Selector.Server({ server: target }))

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        const closed = new McpError.TransportError({ transport: kind, reason: "Closed", detail: "the client closed" })
        connected = undefined
        yield* Deferred.fail(current, closed)
        yield* failAll(closed)
        yield* setState({ _tag: "Closed", error: undefined })
      })
    )
    yield* Effect.forkScoped(Effect.interruptible(loop))
    yield* Deferred.await(ready)

    // --- the public API
    const awaitSession = (timeoutMillis: number | undefined, method: string) => {
      const session = Effect.suspend(() => Deferred.await(current))
      if (timeoutMillis === undefined) return session
      const waiting = Effect.timeoutFail(session, {
        duration: timeoutMillis,
        onTimeout: () => new McpError.RequestTimeout({ method, timeoutMillis })
      })
      // connected: the session is there, so no timer is needed to wait for it
      return Effect.flatMap(Effect.suspend(() => Deferred.poll(current)), Option.getOrElse(() => waiting))
    }

    const defaultCallOptions: SendOptions = {
      timeoutMillis: requestTimeout,
      resetOnProgress: false,
      maxTotalMillis: undefined,
      onProgress: undefined,
      meta: undefined,
      cancellable: true,
      probe: false
    }
    const callOptions = (options: McpClient.RequestOptions | undefined): SendOptions => {
      if (options === undefined) return defaultCallOptions
      const timeoutMillis = options?.timeout === undefined ? requestTimeout : toMillis(options.timeout)
      return {
        timeoutMillis,
        resetOnProgress: options?.resetTimeoutOnProgress ?? false,
        maxTotalMillis: options?.maxTotalTimeout === undefined ? undefined : toMillis(options.maxTotalTimeout),
        onProgress: options?.onProgress,
        meta: options?.meta,
        cancellable: true,
        probe: false
      }
    }

    /**
     * Sends one request. A request that only reads, lost with its response stream (`StreamEnded`: the answer can
     * no longer come), is issued once more as a new request, with a new id; any other stays lost, with its error.
     */
    const rawRequest = (
      method: string,
      params: Readonly<Record<string, unknown>> | undefined,
      options: McpClient.RequestOptions | undefined
    ): Effect.Effect<readonly [unknown, Session], McpError.McpClientError> => {
      const send = callOptions(options)
      const once = Effect.flatMap(awaitSession(send.timeoutMillis, method), (session) =>
        Effect.map(
          sendRequest(
            { attempt: session.attempt, connection: session.connection, era: session.era, version: session.protocolVersion },
            method,
            params,
            send
          ),
          (raw) => [raw, session] as const
        ))
      if (!Idempotent.isIdempotent(method)) return once
      return Effect.catchIf(
        once,
        (error): error is McpError.TransportError => error._tag === "TransportError" && error.reason === "StreamEnded",
        (error) => Effect.zipRight(Effect.logDebug(`${error.message}; issuing ${method} again`), once)
      )
    }

    const inputError = (method: string, detail: string, reason: McpError.ProtocolError["reason"] = "InvalidResult") =>
      new McpError.ProtocolError({ reason, method, detail })

    /** Serves one `input_required` round: every input request through the handlers. */
    const answerInputs = (
      method: string,
      session: Session,
      inputRequests: Readonly<Record<string, { readonly method: string; readonly params?: unknown }>>
    ): Effect.Effect<Record<string, unknown>, McpError.ProtocolError> =>
      Effect.gen(function*() {
        const declared = capabilitiesFor(session.protocolVersion)
        const responses: Record<string, unknown> = {}
        for (const [key, input] of Object.entries(inputRequests)) {
          const capability = inputCapability[input.method]
          if (capability === undefined) {
            return yield* inputError(method, `the server asked for an unknown input method ${input.method}`)
          }
          if (declared[capability] === undefined) {
            return yield* inputError(method, `the server asked for ${input.method}, which this client did not declare`)
          }
          const outcome = yield* Features.fulfil(handlers, input.method, input.params ?? {}, {
            serverOrigin: session.transport.origin,
            serverName: session.serverInfo?.name,
            related: undefined,
            declaredModes: declaredModes(session.protocolVersion)
          })
          if (Either.isLeft(outcome)) {
            return yield* inputError(method, `${input.method} failed: ${outcome.left.message}`, "InputFailed")
          }
          responses[key] = outcome.right
        }
        return responses
      })

    /** A modern call answered with `input_required` is fulfilled and retried, a new id each round. */
    /** The first leg of a call, through the result cache when there is one and the method is cacheable. */
    const firstLeg = (
      method: string,
      params: Readonly<Record<string, unknown>> | undefined,
      options: McpClient.RequestOptions | undefined
    ): Effect.Effect<readonly [unknown, Session], McpError.McpClientError> => {
      if (Option.isNone(cache) || !ResultCache.isCacheableMethod(method)) return rawRequest(method, params, options)
      const results = cache.value
      return Effect.flatMap(awaitSession(callOptions(options).timeoutMillis, method), (session) => {
        let used = session
        const fetch = Effect.map(rawRequest(method, params, options), ([raw, fresh]) => {
          used = fresh
          return raw
        })
        const key: ResultCache.CacheKey = {
          server: session.transport.target,
          method,
          params,
          credential: credentialId
        }
        return Effect.map(
          results.cached(key, fetch, {
            ...(options?.cache !== undefined ? { mode: options.cache } : {}),
            ...(options?.serveStale === true ? { serveStaleOnError: true } : {})
          }),
          (raw) => [raw, used] as const
        )
      })
    }

    const withInputRounds = (
      method: string,
      params: Readonly<Record<string, unknown>> | undefined,
      options: McpClient.RequestOptions | undefined
    ): Effect.Effect<unknown, McpError.McpClientError> =>
      // the first round, which is usually the only one, runs without the generator below
      Effect.flatMap(
        firstLeg(method, params, options),
        (first) => isInputRequired(first[0]) ? inputRounds(method, params, options, first) : Effect.succeed(first[0])
      )

    const inputRounds = (
      method: string,
      params: Readonly<Record<string, unknown>> | undefined,
      options: McpClient.RequestOptions | undefined,
      first: readonly [unknown, Session]
    ): Effect.Effect<unknown, McpError.McpClientError> =>
      Effect.gen(function*() {
        let inputResponses: Record<string, unknown> | undefined
        let requestState: string | undefined
        for (let round = 1;; round++) {
          const legParams = inputResponses === undefined && requestState === undefined ? params : {
            ...params,
            ...(inputResponses !== undefined ? { inputResponses } : {}),
            ...(requestState !== undefined ? { requestState } : {})
          }
          const [raw, session] = round === 1 ? first : yield* rawRequest(method, legParams, options)
          if (!isInputRequired(raw)) return raw
          if (!inputMethods.has(method)) {
            return yield* inputError(method, `input_required is not allowed in answer to ${method}`, "InvalidResultType")
          }
          const decoded = decodeInputRequired(raw)
          if (Either.isLeft(decoded)) {
            return yield* inputError(method, `malformed input_required result: ${decoded.left.message}`)
          }
          const result = decoded.right
          if (result.inputRequests === undefined && result.requestState === undefined) {
            return yield* inputError(method, "input_required carries neither inputRequests nor requestState")
          }
          if (round > maxInputRounds) {
            return yield* inputError(
              method,
              `the server still needs input after ${maxInputRounds} rounds`,
              "InputRoundsExceeded"
            )
          }
          requestState = result.requestState
          if (result.inputRequests === undefined || Object.keys(result.inputRequests).length === 0) {
            inputResponses = undefined
            yield* Effect.sleep(Duration.millis(250)) // state only: retry, but never in a tight loop
          } else {
            inputResponses = options?.answerInputs !== undefined
              ? yield* options.answerInputs(result.inputRequests, round)
              : yield* answerInputs(method, session, result.inputRequests)
            // every input MUST be answered before the retry
            const unanswered = Object.keys(result.inputRequests).filter((key) => !(key in inputResponses!))
            if (unanswered.length > 0) {
              return yield* inputError(method, `no answer for the input(s) ${unanswered.join(", ")}`, "InputFailed")
            }
          }
        }
      })

    // --- a call: its span, its metrics, its legs
    const spanOptionsCache = new Map<string, Tracer.SpanOptions>()
    const spanOptionsFor = (method: string): Tracer.SpanOptions => {
      let spanOptions = spanOptionsCache.get(method)
      if (spanOptions === undefined) {
        spanOptions = {
          kind: "client",
          attributes: { ...spanAttributes, "rpc.method": method },
          captureStackTrace: false
        }
        spanOptionsCache.set(method, spanOptions)
      }
      return spanOptions
    }

    /** The span `Effect.withSpan` would start in this fiber, with the tracer enabled (but not made the parent). */
    const startSpan = (
      fiber: Fiber.RuntimeFiber<unknown, unknown>,
      name: string,
      spanOptions: Tracer.SpanOptions,
      tool: string | undefined,
      startTime: bigint
    ): Tracer.Span => {
      const parent = propagatedParent(Context.getOption(fiber.currentContext, Tracer.ParentSpan))
      const span = fiber.currentTracer.span(
        name,
        parent,
        Context.empty(),
        Chunk.toReadonlyArray(fiber.getFiberRef(FiberRef.currentTracerSpanLinks)),
        startTime,
        spanOptions.kind ?? "internal",
        spanOptions
      )
      HashMap.forEach(
        fiber.getFiberRef(FiberRef.currentTracerSpanAnnotations),
        (value, key) => span.attribute(key, value)
      )
      // a call's tool is an annotation of its spans: set before the attributes, as annotations are
      if (tool !== undefined) span.attribute("mcp.tool", tool)
      for (const [key, value] of Object.entries(spanOptions.attributes ?? {})) span.attribute(key, value)
      return span
    }

    /** A call under way: its span (when the tracer is enabled), and what its metrics need. */
    interface CallTrace {
      readonly fiber: Fiber.RuntimeFiber<unknown, unknown>
      readonly method: string
      readonly tool: string | undefined
      readonly metrics: MethodMetrics
      readonly clock: Clock.Clock
      readonly timing: boolean
      /** Undefined with the tracer disabled, or while a deferred span is not needed. */
      span: Tracer.Span | undefined
      readonly start: bigint
    }

    /**
     * Starts a call's metrics and its span. `deferSpan`: with Effect's native tracer, a span that no code runs
     * under and whose ids go nowhere cannot be observed, so it is made only if something comes to need it
     * ({@link spanOf}), with the start time it would have had.
     */
    const beginCall = (
      fiber: Fiber.RuntimeFiber<unknown, unknown>,
      method: string,
      tool: string | undefined,
      deferSpan: boolean
    ): CallTrace => {
      const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
      const timing = fiber.getFiberRef(FiberRef.currentTracerTimingEnabled)
      const start = clock.unsafeCurrentTimeNanos()
      const trace: CallTrace = { fiber, method, tool, metrics: metricsFor(method), clock, timing, span: undefined, start }
      if (!deferSpan && fiber.getFiberRef(FiberRef.currentTracerEnabled)) spanOf(trace)
      return trace
    }

    /**
     * The call's span, made now if it was not made yet, with the start time it would have had (the tracer is enabled
     * whenever a span may be deferred).
     */
    const spanOf = (trace: CallTrace): Tracer.Span => {
      if (trace.span === undefined) {
        const { fiber, method } = trace
        trace.span = startSpan(
          fiber,
          `McpClient ${method}`,
          spanOptionsFor(method),
          trace.tool,
          trace.timing ? trace.start : BigInt(0)
        )
      }
      return trace.span
    }

    /** Records a call's latency (and failure by error tag) and ends its span; gives back its outcome. */
    const endCall = <A>(
      trace: CallTrace,
      exit: Exit.Exit<A, McpError.McpClientError>
    ): Exit.Exit<A, McpError.McpClientError> => {
      const { clock, metrics, span } = trace
      const labels = trace.fiber.getFiberRef(FiberRef.currentMetricLabels)
      if (Exit.isFailure(exit)) {
        const error = Cause.failureOption(exit.cause)
        if (Option.isSome(error)) metrics.errorsBy(error.value._tag).unsafeUpdate(1, labels)
      }
      metrics.duration.unsafeUpdate(Number(clock.unsafeCurrentTimeNanos() - trace.start) / 1_000_000, labels)
      if (span !== undefined && span.status._tag !== "Ended") {
        span.end(trace.timing ? clock.unsafeCurrentTimeNanos() : BigInt(0), exit)
      }
      return exit
    }

    /**
     * Runs a call in its span (`McpClient <method>`, annotated with the call's tool) and records its latency, and
     * its failure by error tag: the same as `Effect.withSpan` around the metrics, in a single step. `body` runs with
     * the span as the parent.
     */
    const instrumented = <A>(
      method: string,
      tool: string | undefined,
      body: Effect.Effect<A, McpError.McpClientError>
    ): Effect.Effect<A, McpError.McpClientError> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.withFiberRuntime<A, McpError.McpClientError>((fiber) => {
          const trace = beginCall(fiber, method, tool, false)
          // with the tracer disabled, Effect's own (no-op) span keeps what it implies for what runs inside
          const run = trace.span === undefined
            ? Effect.withSpan(annotated(body, tool), `McpClient ${method}`, spanOptionsFor(method))
            : inSpan(trace.span, tool)(body)
          return Effect.matchCauseEffect(restore(run), {
            onFailure: (cause) => endCall(trace, Exit.failCause(cause)),
            onSuccess: (value) => endCall(trace, Exit.succeed(value))
          })
        })
      )

    const annotated = <A, E>(effect: Effect.Effect<A, E>, tool: string | undefined): Effect.Effect<A, E> =>
      tool === undefined ? effect : Effect.annotateSpans(effect, "mcp.tool", tool)

    /** What runs in a call's span: with the span as the parent, and the call's tool annotating nested spans. */
    const inSpan = (span: Tracer.Span, tool: string | undefined) =>
    <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> => Effect.withParentSpan(annotated(effect, tool), span)

    type Decoder<A> = (method: string, raw: unknown) => Effect.Effect<A, McpError.ProtocolError>
    type SyncDecoder<A> = (method: string, raw: unknown) => Either.Either<A, McpError.ProtocolError>

    /** One call: the request (its `input_required` rounds, through the result cache when it applies), decoded. */
    const call = <A>(
      method: string,
      params: Readonly<Record<string, unknown>> | undefined,
      decode: Decoder<A>,
      options: McpClient.RequestOptions | undefined,
      tool?: string | undefined
    ): Effect.Effect<A, McpError.McpClientError> =>
      instrumented(method, tool, Effect.flatMap(withInputRounds(method, params, options), (raw) => decode(method, raw)))

    /**
     * A call whose result decodes synchronously. Connected, with the tracer enabled and no cache in the way, the
     * usual call is one step: span, registration and send; then the reply, decoded, and the span ended. The
     * transport's part runs with the span as its parent, except on stdio, whose sends start no span.
     */
    const callSync = <A>(
      method: string,
      params: Readonly<Record<string, unknown>> | undefined,
      decode: SyncDecoder<A>,
      options: McpClient.RequestOptions | undefined,
      tool?: string | undefined
    ): Effect.Effect<A, McpError.McpClientError> => {
      // read when the call is made, as every call's options are
      const send = callOptions(options)
      return Effect.uninterruptibleMask((restore) =>
        Effect.withFiberRuntime<A, McpError.McpClientError>((fiber) => {
          const session = connected
          if (
            session === undefined || (Option.isSome(cache) && ResultCache.isCacheableMethod(method)) ||
            !fiber.getFiberRef(FiberRef.currentTracerEnabled)
          ) {
            return restore(call(method, params, decode, options, tool))
          }
          const wire = session.wire
          // With Effect's own tracer, nothing records a span: one is made only where something can see it. A legacy
          // call over stdio runs nothing under its span and sends no trace context; any other call needs its span
          // only under a caller's span, whose trace the server may join (with no span in the fiber, the call would
          // start a trace that no one records, and sends no trace context).
          const trace = beginCall(
            fiber,
            method,
            tool,
            Tracing.untraced(fiber) ||
              (kind === "stdio" && wire.era === "legacy" && fiber.currentTracer === Tracing.nativeTracer)
          )
          const span = trace.span
          if (wire.attempt.closedError !== undefined) return endCall(trace, Exit.fail(wire.attempt.closedError))
          const registered = register(fiber, wire, method, params, send, span)
          const around = kind === "stdio" || span === undefined ? undefined : inSpan(span, tool)
          return Effect.matchCauseEffect(
            restore(transmit(registered, around)),
            {
              onFailure: (cause) => {
                const exit = Exit.failCause(cause)
                const cancel = abandoned(wire, registered, send, cause)
                return cancel === undefined ? endCall(trace, exit) : Effect.flatMap(cancel, () => endCall(trace, exit))
              },
              onSuccess: (raw) => {
                completed(registered)
                if (isInputRequired(raw)) {
                  // the rounds after the first, still in the call's span
                  const rounds = Effect.flatMap(inputRounds(method, params, options, [raw, session]), (last) =>
                    decode(method, last))
                  return Effect.matchCauseEffect(restore(inSpan(spanOf(trace), tool)(rounds)), {
                    onFailure: (cause) => endCall(trace, Exit.failCause(cause)),
                    onSuccess: (value) => endCall(trace, Exit.succeed(value))
                  })
                }
                const decoded = decode(method, raw)
                return endCall(trace, Either.isRight(decoded) ? Exit.succeed(decoded.right) : Exit.fail(decoded.left))
              }
            }
          )
        })
      )
    }

    /**
     * Decodes a result with one of the library's schemas (synchronous ones); `quick` may recognise the usual shape
     * and build the same value by hand, else the schema decodes it.
     */
    const resultDecoder = <A, I>(schema: Schema.Schema<A, I>, quick?: (raw: unknown) => A | undefined) => {
      const decodeEither = Schema.decodeUnknownEither(schema, McpSchema.preserve)
      return (method: string, raw: unknown): Either.Either<A, McpError.ProtocolError> =>
        Either.flatMap(checkResultType(method, raw), (result) => {
          const value = quick?.(result)
          if (value !== undefined) return Either.right(value)
          return Either.mapLeft(decodeEither(result), (cause) =>
            new McpError.ProtocolError({ reason: "InvalidResult", method, detail: cause.message, cause }))
        })
    }

    const request = <A, I>(
      method: string,
      params: Readonly<Record<string, unknown>> | undefined,
      schema: Schema.Schema<A, I>,
      options?: McpClient.RequestOptions
    ): Effect.Effect<A, McpError.McpClientError> =>
      call(method, params, (m, raw) => decodeResult(m, schema, raw), options)

    const notify = (method: string, params?: Readonly<Record<string, unknown>> | undefined) =>
      Effect.flatMap(awaitSession(requestTimeout, method), (session) => {
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

    interface Page<T> {
      readonly items: ReadonlyArray<T>
      readonly nextCursor: string | undefined
    }

    /** Set when a page after the first was refused as invalid params: its cursor was no longer good. */
    interface CursorRefused {
      value: boolean
    }

    const paginate = <T>(
      method: string,
      fetchPage: (cursor: string | undefined) => Effect.Effect<Page<T>, McpError.McpClientError>,
      refused?: CursorRefused
    ): Stream.Stream<T, McpError.McpClientError> =>
      Stream.paginateChunkEffect({ cursor: undefined as string | undefined, page: 0 }, (state) =>
        Effect.flatMap(
          refused === undefined || state.page === 0
            ? fetchPage(state.cursor)
            : Effect.tapError(fetchPage(state.cursor), (error) =>
              Effect.sync(() => {
                if (error._tag === "McpError" && error.code === McpSchema.ErrorCode.InvalidParams) refused.value = true
              })),
          (page) => {
            const chunk = Chunk.fromIterable(page.items)
            if (page.nextCursor === undefined) return Effect.succeed([chunk, Option.none()] as const)
            if (state.page + 1 >= maxPages) {
              return Effect.fail(
                new McpError.ProtocolError({
                  reason: "InvalidResult",
                  method,
                  detail: `more than ${maxPages} pages; raise maxPages to fetch them all`
                })
              )
            }
            return Effect.succeed([chunk, Option.some({ cursor: page.nextCursor, page: state.page + 1 })] as const)
          }
        ))

    /**
     * Every page of a list. A cursor refused on a later page (the list changed under it; a cache also drops its
     * pages then) restarts the listing once from the first page, for a whole snapshot.
     */
    const collect = <T>(
      pages: (refused: CursorRefused) => Stream.Stream<T, McpError.McpClientError>,
      method: string
    ) =>
      Effect.suspend(() => {
        const refused: CursorRefused = { value: false }
        return Effect.catchIf(
          Stream.runCollect(pages(refused)),
          () => refused.value,
          () => Stream.runCollect(pages({ value: false }))
        )
      }).pipe(
        Effect.map((chunk): ReadonlyArray<T> => Chunk.toReadonlyArray(chunk)),
        Effect.withSpan(`McpClient ${method} (all pages)`, {
          kind: "client",
          attributes: { ...spanAttributes, "rpc.method": method }
        })
      )

    const cursorParams = (cursor: string | undefined) => cursor === undefined ? undefined : { cursor }

    /** The output schema of every tool listed so far, to check what its calls return. */
    const outputSchemas = new Map<string, Readonly<Record<string, unknown>>>()
    const schemaCache = JsonSchema.unsafeMakeCache()

    const listToolsPage = (cursor?: string, options?: McpClient.RequestOptions) =>
      Effect.tap(request("tools/list", cursorParams(cursor), McpSchema.ListToolsResult, options), (page) => {
        for (const tool of page.tools) {
          if (tool.outputSchema === undefined) outputSchemas.delete(tool.name)
          else outputSchemas.set(tool.name, tool.outputSchema)
        }
      })

    /** A tool that declares an output schema must return structured content matching it (unless `isError`). */
    const checkStructured = (
      name: string,
      result: McpSchema.CallToolResult
    ): Either.Either<McpSchema.CallToolResult, McpError.ProtocolError> => {
      const schema = outputSchemas.get(name)
      if (schema === undefined || result.isError === true) return Either.right(result)
      const invalid = (detail: string) =>
        Either.left(new McpError.ProtocolError({ reason: "InvalidResult", method: "tools/call", detail }))
      if (result.structuredContent === undefined) {
        return invalid(`${name} declares an output schema but returned no structuredContent`)
      }
      const verdict = schemaCache.validate(schema, result.structuredContent)
      if (Either.isRight(verdict)) return Either.right(result)
      const error = verdict.left
      return invalid(
        error._tag === "JsonSchemaMismatch"
          ? `the structuredContent of ${name} does not match its output schema: ${JsonSchema.formatIssues(error.issues)}`
          : `the output schema of ${name} cannot be used: ${error.message}`
      )
    }
    const streamTools = (options?: McpClient.RequestOptions, refused?: CursorRefused) =>
      paginate("tools/list", (cursor) =>
        Effect.map(listToolsPage(cursor, options), (r) => ({ items: r.tools, nextCursor: r.nextCursor })), refused)

    const listResourcesPage = (cursor?: string, options?: McpClient.RequestOptions) =>
      request("resources/list", cursorParams(cursor), McpSchema.ListResourcesResult, options)
    const streamResources = (options?: McpClient.RequestOptions, refused?: CursorRefused) =>
      paginate(
        "resources/list",
        (cursor) =>
          Effect.map(listResourcesPage(cursor, options), (r) => ({ items: r.resources, nextCursor: r.nextCursor })),
        refused
      )

    const streamResourceTemplates = (options?: McpClient.RequestOptions, refused?: CursorRefused) =>
      paginate("resources/templates/list", (cursor) =>
        Effect.map(
          request("resources/templates/list", cursorParams(cursor), McpSchema.ListResourceTemplatesResult, options),
          (r) => ({ items: r.resourceTemplates, nextCursor: r.nextCursor })
        ), refused)

    const streamPrompts = (options?: McpClient.RequestOptions, refused?: CursorRefused) =>
      paginate("prompts/list", (cursor) =>
        Effect.map(
          request("prompts/list", cursorParams(cursor), McpSchema.ListPromptsResult, options),
          (r) => ({ items: r.prompts, nextCursor: r.nextCursor })
        ), refused)

    const listen = (filter: McpClient.ListenFilter): Stream.Stream<McpSchema.ServerNotification, McpError.McpClientError> =>
      Stream.unwrap(Effect.map(awaitSession(undefined, "subscriptions/listen"), (session) =>
        session.era === "modern" ? listenModern(filter) : listenLegacy(filter, session)))

    const askedFor = (filter: McpClient.ListenFilter, capabilities: McpSchema.ServerCapabilities) => {
      const uris = capabilities.resources?.subscribe === true ? filter.resourceSubscriptions ?? [] : []
      return {
        ...(filter.toolsListChanged === true && capabilities.tools?.listChanged === true
          ? { toolsListChanged: true }
          : {}),
        ...(filter.promptsListChanged === true && capabilities.prompts?.listChanged === true
          ? { promptsListChanged: true }
          : {}),
        ...(filter.resourcesListChanged === true && capabilities.resources?.listChanged === true
          ? { resourcesListChanged: true }
          : {}),
        ...(uris.length > 0 ? { resourceSubscriptions: [...uris] } : {})
      }
    }

    const wanted = (filter: McpClient.ListenFilter) => (notification: McpSchema.ServerNotification): boolean => {
      switch (notification.method) {
        case "notifications/tools/list_changed":
          return filter.toolsListChanged === true
        case "notifications/prompts/list_changed":
          return filter.promptsListChanged === true
        case "notifications/resources/list_changed":
          return filter.resourcesListChanged === true
        case "notifications/resources/updated": {
          const uri = typeof notification.params === "object" && notification.params !== null &&
              "uri" in notification.params
            ? notification.params.uri
            : undefined
          return typeof uri === "string" && (filter.resourceSubscriptions ?? []).includes(uri)
        }
        default:
          return false
      }
    }

    const listenLegacy = (filter: McpClient.ListenFilter, session: Session) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const inbox = yield* notifications.subscribe
        const uris = session.capabilities.resources?.subscribe === true ? filter.resourceSubscriptions ?? [] : []
        for (const uri of uris) {
          const count = legacySubscriptions.get(uri) ?? 0
          legacySubscriptions.set(uri, count + 1)
          yield* Effect.addFinalizer(() =>
            Effect.suspend(() => {
              const left = (legacySubscriptions.get(uri) ?? 1) - 1
              if (left > 0) {
                legacySubscriptions.set(uri, left)
                return Effect.void
              }
              legacySubscriptions.delete(uri)
              return Effect.ignore(
                request("resources/unsubscribe", { uri }, McpSchema.EmptyResult, { timeout: "5 seconds" })
              )
            })
          )
          if (count === 0) {
            // A connection lost meanwhile is no failure: every new session subscribes again.
            yield* request("resources/subscribe", { uri }, McpSchema.EmptyResult).pipe(
              Effect.catchTag("TransportError", (error) =>
                Effect.logDebug(`resources/subscribe deferred to the next session: ${error.message}`))
            )
          }
        }
        return Stream.filter(inbox, (n) => n.method === NotificationHub.droppedMethod || wanted(filter)(n))
      }))

    const listenModern = (filter: McpClient.ListenFilter) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const items = yield* NotificationHub.makeInbox<McpError.McpClientError>(bufferSize, "listen")
        const deliver = items.offer
        const listenOnce = (onAnything: () => void) =>
          Effect.gen(function*() {
            const session = yield* awaitSession(undefined, "subscriptions/listen")
            const asked = askedFor(filter, session.capabilities)
            let id: McpSchema.RequestId | undefined
            return yield* sendRequest(
              {
                attempt: session.attempt,
                connection: session.connection,
                era: session.era,
                version: session.protocolVersion
              },
              "subscriptions/listen",
              { notifications: asked },
              {
                ...internalSend(0, { cancellable: true }),
                timeoutMillis: undefined,
                onId: (assigned) => {
                  id = assigned
                  listeners.set(assigned, (notification) => {
                    onAnything()
                    if (notification.method === "notifications/subscriptions/acknowledged") {
                      const missing = unacknowledged(asked, notification.params)
                      if (missing.length > 0) {
                        return Effect.zipRight(
                          Effect.logWarning(`the server does not honour: ${missing.join(", ")}`).pipe(
                            Effect.annotateLogs({ module: "McpClient", method: "subscriptions/listen" })
                          ),
                          deliver(notification)
                        )
                      }
                    }
                    return deliver(notification)
                  })
                }
              }
            ).pipe(Effect.ensuring(Effect.sync(() => id !== undefined && listeners.delete(id))))
          })
        const run = Effect.gen(function*() {
          const driver = yield* Schedule.driver(relistenSchedule)
          while (true) {
            let heard = false
            const outcome = yield* Effect.either(listenOnce(() => (heard = true)))
            if (Either.isRight(outcome)) return yield* items.end
            const error = outcome.left
            if (error._tag !== "TransportError") return yield* items.fail(error)
            // a client closed for good (closed, or out of reconnections) will not listen again
            if ((yield* SubscriptionRef.get(state))._tag === "Closed") return yield* items.fail(error)
            // A dropped stream: listen again (same filter, new id) after a jittered pause.
            if (heard) yield* driver.reset
            // Notifications may have been missed during the gap: what is cached about this server is stale.
            if (published?.connection !== undefined) yield* forgetServer(published.connection.info.target)
            yield* Effect.logDebug(`listen dropped (${error.message}); listening again`).pipe(
              Effect.annotateLogs({ module: "McpClient", method: "subscriptions/listen" })
            )
            yield* Effect.orElse(driver.next(error), () => Effect.void)
          }
        })
        yield* Effect.forkScoped(run)
        return items.stream
      }))

    /** Runs a call that reports progress as a Stream of progress events ending with the result. */
    const progressEvents = <A>(
      run: (onProgress: (progress: McpSchema.Progress) => Effect.Effect<void>) => Effect.Effect<A, McpError.McpClientError>
    ): Stream.Stream<McpClient.CallEvent<A>, McpError.McpClientError> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        // Progress reports to a slow reader: the oldest are dropped (each report carries the whole progress so far);
        // the result, offered last, is never dropped.
        const events = yield* Mailbox.make<McpClient.CallEvent<A>, McpError.McpClientError>({
          capacity: bufferSize,
          strategy: "sliding"
        })
        yield* run((progress) => Effect.sync(() => events.unsafeOffer({ _tag: "Progress", progress }))).pipe(
          Effect.flatMap((result) => events.offer({ _tag: "Result", result })),
          Mailbox.into(events),
          Effect.forkScoped
        )
        return Mailbox.toStream(events)
      }))

    const decodeCallToolResult = resultDecoder(McpSchema.CallToolResult, codec.decodeTextToolResult)
    const decodeReadResourceResult = resultDecoder(McpSchema.ReadResourceResult)
    const decodeGetPromptResult = resultDecoder(McpSchema.GetPromptResult)
    const decodeCompleteResult = resultDecoder(McpSchema.CompleteResult)
    // a result that breaks its tool's output schema fails the call (in its span and metrics, as a bad result does)
    const callTool = (params: McpClient.CallToolParams, options?: McpClient.RequestOptions) =>
      callSync(
        "tools/call",
        params.arguments === undefined ? { name: params.name } : { name: params.name, arguments: params.arguments },
        (method, raw) => Either.flatMap(decodeCallToolResult(method, raw), (result) => checkStructured(params.name, result)),
        options,
        params.name
      )

    const service: McpClient.McpClientService = {
      session: Effect.map(
        awaitSession(requestTimeout, "session"),
        ({ attempt: _attempt, connection: _connection, wire: _wire, ...session }): McpClient.ServerSession => session
      ),
      state: SubscriptionRef.get(state),
      stateChanges: state.changes,
      notifications: notifications.stream,
      subscribe: notifications.subscribe,
      request,
      notify,
      listTools: (options) => collect((refused) => streamTools(options, refused), "tools/list"),
      listToolsPage,
      streamTools: (options) => streamTools(options),
      callTool,
      callToolStructured: <A, I>(
        params: McpClient.CallToolParams,
        schema: Schema.Schema<A, I>,
        options?: McpClient.RequestOptions
      ) =>
        Effect.flatMap(callTool(params, options), (result): Effect.Effect<
          { readonly result: McpSchema.CallToolResult; readonly structured: A | undefined },
          McpError.ProtocolError
        > => {
          if (result.isError === true) return Effect.succeed({ result, structured: undefined })
          if (result.structuredContent === undefined) {
            return Effect.fail(
              new McpError.ProtocolError({
                reason: "InvalidResult",
                method: "tools/call",
                detail: `${params.name} returned no structuredContent`
              })
            )
          }
          return Effect.mapBoth(Schema.decodeUnknown(schema)(result.structuredContent), {
            onFailure: (cause) =>
              new McpError.ProtocolError({
                reason: "InvalidResult",
                method: "tools/call",
                detail: `the structuredContent of ${params.name} does not match the expected schema: ${cause.message}`,
                cause
              }),
            onSuccess: (structured) => ({ result, structured })
          })
        }),
      listen,
      callToolStream: (params, options) => progressEvents((onProgress) => callTool(params, { ...options, onProgress })),
      listResources: (options) => collect((refused) => streamResources(options, refused), "resources/list"),
      listResourcesPage,
      streamResources: (options) => streamResources(options),
      listResourceTemplates: (options) =>
        collect((refused) => streamResourceTemplates(options, refused), "resources/templates/list"),
      streamResourceTemplates: (options) => streamResourceTemplates(options),
      readResource: (uri, options) => callSync("resources/read", { uri }, decodeReadResourceResult, options),
      listPrompts: (options) => collect((refused) => streamPrompts(options, refused), "prompts/list"),
      streamPrompts: (options) => streamPrompts(options),
      getPrompt: (params, options) =>
        callSync(
          "prompts/get",
          params.arguments === undefined ? { name: params.name } : { name: params.name, arguments: params.arguments },
          decodeGetPromptResult,
          options
        ),
      complete: (params, options) =>
        callSync(
          "completion/complete",
          params.context === undefined
            ? { ref: params.ref, argument: params.argument }
            : { ref: params.ref, argument: params.argument, context: params.context },
          decodeCompleteResult,
          options
        ),
      ping: (options) =>
        Effect.flatMap(awaitSession(requestTimeout, "ping"), (session) =>
          session.era === "legacy"
            ? Effect.asVoid(request("ping", undefined, McpSchema.EmptyResult, options))
            : Effect.asVoid(request("server/discover", undefined, McpSchema.DiscoverResult, options))),
      setLoggingLevel: (level) =>
        Effect.flatMap(awaitSession(requestTimeout, "logging/setLevel"), (session) => {
          logLevel = level
          return session.era === "legacy"
            ? Effect.asVoid(request("logging/setLevel", { level }, McpSchema.EmptyResult))
            : Effect.void
        }),
      setAuth: (auth, authOptions) =>
        Effect.gen(function*() {
          const swap = transport.setAuth
          if (swap === undefined) {
            return yield* new McpError.InvalidOption({
              option: "auth",
              detail: `the ${kind} transport takes no credentials`
            })
          }
          const explicit: unknown = authOptions?.credentialId
          if (explicit !== undefined && (typeof explicit !== "string" || explicit.length === 0)) {
            return yield* new McpError.InvalidOption({ option: "credentialId", detail: "must be a non-empty string" })
          }
          // (a token that is no Redacted value is the transport's to refuse, below)
          const derived = auth._tag === "Bearer" && Redacted.isRedacted(auth.token)
            ? `bearer:${yield* fingerprint(auth.token)}`
            : undefined
          yield* swap(auth)
          // without an explicit id, a token keys its own partition and anything else starts a fresh one
          authChanges += 1
          credentialId = typeof explicit === "string"
            ? explicit
            : derived ?? `${auth._tag === "OAuth" ? "oauth" : "none"}#${authChanges}`
        })
    }
    return service
  })
