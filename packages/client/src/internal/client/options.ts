/**
 * The client's options, checked before any I/O and resolved to the values the components use.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Transport from "../../Transport.js"
import * as Pagination from "./pagination.js"

/** Time to wait for an answer to the era probe when neither the options nor the transport's traits say. */
const defaultProbeTimeoutMillis = 3_000

const VERSION = "1.0.0"

/**
 * @internal
 */
export interface Resolved {
  readonly kind: McpError.TransportKind
  /** The transport's `traits.probeFailures`, or its default. */
  readonly probeFailures: Transport.ProbeFailures
  /** The transport's `traits.untracedSend`, or its default. */
  readonly untracedSend: boolean
  readonly probeTimeout: number
  readonly initializeTimeout: number
  readonly requestTimeout: number
  readonly healthTimeout: number
  /** Undefined: no health checks. */
  readonly healthInterval: number | undefined
  /** The total budget of every listing. */
  readonly listing: Pagination.Budget
  readonly maxInputRounds: number
  /** Capability gating. */
  readonly strict: boolean
  /** How long a completion result is kept (0: not at all). */
  readonly completionCacheTtl: number
  readonly notificationBufferSize: number
  readonly maxServerRequests: number
  readonly eraOption: McpClient.EraOption
  readonly pinned: McpSchema.ProtocolVersion | undefined
  /** Every version this client may speak, oldest first. */
  readonly supported: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly supportedLegacy: ReadonlyArray<McpSchema.LegacyVersion>
  readonly supportedModern: ReadonlyArray<McpSchema.ModernVersion>
  readonly clientInfo: McpSchema.Implementation
  readonly capabilities: McpSchema.ClientCapabilities
  readonly reconnect: Schedule.Schedule<unknown, McpError.ConnectError>
  /** The first connection's retries, when it is retried. */
  readonly firstConnection: Schedule.Schedule<unknown, McpError.ConnectError> | undefined
  readonly serverLogs: "stream" | "logger"
  readonly spanAttributes: Readonly<Record<string, unknown>>
}

const defaultReconnect: Schedule.Schedule<unknown, McpError.ConnectError> = Schedule.max([
  Schedule.jittered(Schedule.min([Schedule.exponential("200 millis", 2), Schedule.spaced("10 seconds")])),
  Schedule.recurs(20)
])

const millis = (
  name: string,
  input: Duration.Input | undefined,
  fallback: number
): Effect.Effect<number, McpError.InvalidOption> =>
  Effect.suspend(() => {
    if (input === undefined) return Effect.succeed(fallback)
    const decoded = Duration.fromInput(input)
    if (Option.isNone(decoded)) {
      return Effect.fail(new McpError.InvalidOption({ option: name, detail: "not a duration" }))
    }
    const value = Duration.toMillis(decoded.value)
    return value > 0
      ? Effect.succeed(value)
      : Effect.fail(new McpError.InvalidOption({ option: name, detail: "must be a positive duration" }))
  })

const count = (
  name: string,
  input: number | undefined,
  fallback: number
): Effect.Effect<number, McpError.InvalidOption> =>
  input === undefined
    ? Effect.succeed(fallback)
    : Number.isInteger(input) && input >= 1
    ? Effect.succeed(input)
    : Effect.fail(new McpError.InvalidOption({ option: name, detail: "must be a positive integer" }))

const versions = (
  eraOption: McpClient.EraOption,
  pinned: McpSchema.ProtocolVersion | undefined
): Effect.Effect<ReadonlyArray<McpSchema.ProtocolVersion>, McpError.InvalidOption> => {
  if (pinned !== undefined && !McpSchema.isLegacyVersion(pinned) && !McpSchema.isModernVersion(pinned)) {
    return Effect.fail(new McpError.InvalidOption({ option: "protocolVersion", detail: `unknown version ${pinned}` }))
  }
  if (pinned !== undefined && eraOption !== "auto" && McpSchema.eraOf(pinned) !== eraOption) {
    return Effect.fail(
      new McpError.InvalidOption({
        option: "protocolVersion",
        detail: `${pinned} does not belong to the ${eraOption} era`
      })
    )
  }
  return Effect.succeed(
    pinned !== undefined
      ? [pinned]
      : eraOption === "legacy"
      ? McpSchema.LEGACY_VERSIONS
      : eraOption === "modern"
      ? McpSchema.MODERN_VERSIONS
      : [...McpSchema.LEGACY_VERSIONS, ...McpSchema.MODERN_VERSIONS]
  )
}

/**
 * @internal
 */
export const resolve: (
  options: McpClient.McpClientOptions<unknown>,
  transport: Pick<Transport.Transport["Service"], "kind" | "traits">
) => Effect.Effect<Resolved, McpError.InvalidOption> = Effect.fnUntraced(function*(options, transport) {
  const { kind, traits } = transport
  const probeTimeout = yield* millis(
    "probeTimeout",
    options.probeTimeout,
    // (a transport's own default is checked as an option would be, with the transport named)
    yield* millis(`probeTimeout (the ${kind} transport's default)`, traits?.probeTimeout, defaultProbeTimeoutMillis)
  )
  const initializeTimeout = yield* millis("initializeTimeout", options.initializeTimeout, 30_000)
  const requestTimeout = yield* millis("requestTimeout", options.requestTimeout, 60_000)
  const healthTimeout = yield* millis("healthCheckTimeout", options.healthCheckTimeout, 10_000)
  const healthInterval = options.healthCheckInterval === false
    ? undefined
    : yield* millis("healthCheckInterval", options.healthCheckInterval, 30_000)
  const listing: Pagination.Budget = {
    maxPages: yield* count("maxPages", options.maxPages, Pagination.defaultBudget.maxPages),
    maxItems: yield* count("maxListItems", options.maxListItems, Pagination.defaultBudget.maxItems),
    maxBytes: yield* count("maxListBytes", options.maxListBytes, Pagination.defaultBudget.maxBytes)
  }
  const notificationBufferSize = yield* count("notificationBufferSize", options.notificationBufferSize, 1_000)
  const maxServerRequests = yield* count("maxServerRequests", options.maxServerRequests, 32)
  const eraOption = options.era ?? "auto"
  const supported = yield* versions(eraOption, options.protocolVersion)
  const completionCacheTtl = options.completionCacheTtl === false
    ? 0
    : yield* millis("completionCacheTtl", options.completionCacheTtl, 5_000)
  const reconnect = options.reconnect === false ? Schedule.recurs(0) : options.reconnect ?? defaultReconnect
  return {
    kind,
    probeFailures: traits?.probeFailures === "status" ? "status" : "stream",
    untracedSend: traits?.untracedSend === true,
    probeTimeout,
    initializeTimeout,
    requestTimeout,
    healthTimeout,
    healthInterval,
    listing,
    maxInputRounds: options.maxInputRounds ?? 10,
    strict: options.strict ?? false,
    completionCacheTtl,
    notificationBufferSize,
    maxServerRequests,
    eraOption,
    pinned: options.protocolVersion,
    supported,
    supportedLegacy: supported.filter(McpSchema.isLegacyVersion),
    supportedModern: supported.filter(McpSchema.isModernVersion),
    clientInfo: options.clientInfo ?? { name: "conduit", version: VERSION },
    capabilities: options.capabilities ?? {},
    reconnect,
    firstConnection: options.retryFirstConnection === true
      ? reconnect
      : options.retryFirstConnection === false || options.retryFirstConnection === undefined
      ? undefined
      : options.retryFirstConnection,
    serverLogs: options.serverLogs ?? "stream",
    spanAttributes: { "rpc.system": "jsonrpc", "mcp.transport": kind, ...options.spanAttributes }
  }
})

/**
 * A duration option given per call, in milliseconds.
 *
 * @internal
 */
export const toMillis = (input: Duration.Input): number => Duration.toMillis(Duration.fromInputUnsafe(input))
