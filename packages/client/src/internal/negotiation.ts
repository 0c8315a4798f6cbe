/** @internal */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as McpError from "../McpError.js"
import * as McpSchema from "../McpSchema.js"
import type * as Transport from "../Transport.js"

/**
 * What the connection does after the era probe.
 *
 * @internal
 */
export type ProbeVerdict =
  | { readonly _tag: "Modern"; readonly version: McpSchema.ModernVersion; readonly discover: McpSchema.DiscoverResult }
  | { readonly _tag: "RetryModern"; readonly version: McpSchema.ModernVersion }
  | { readonly _tag: "Legacy"; readonly version: McpSchema.LegacyVersion | undefined }
  | { readonly _tag: "Fail"; readonly error: McpError.ProtocolError | McpError.TransportFailure }

const decodeDiscover = Schema.decodeUnknownResult(McpSchema.DiscoverResult, McpSchema.preserve)
const SupportedData = Schema.Struct({ supported: Schema.Array(Schema.String) })
const decodeSupported = Schema.decodeUnknownResult(SupportedData)

/**
 * The newest version present in both lists, if any.
 *
 * @internal
 */
export const newestShared = <V extends string>(
  ours: ReadonlyArray<V>,
  theirs: ReadonlyArray<string>
): V | undefined => {
  let best: V | undefined
  for (const version of ours) {
    if (theirs.includes(version) && (best === undefined || version > best)) best = version
  }
  return best
}

const fromVersionList = (
  offered: ReadonlyArray<string>,
  supported: ReadonlyArray<McpSchema.ProtocolVersion>,
  onModern: (version: McpSchema.ModernVersion) => ProbeVerdict,
  onNone: () => ProbeVerdict
): ProbeVerdict => {
  const modern = newestShared(supported.filter(McpSchema.isModernVersion), offered)
  if (modern !== undefined) return onModern(modern)
  const legacy = newestShared(supported.filter(McpSchema.isLegacyVersion), offered)
  if (legacy !== undefined) return { _tag: "Legacy", version: legacy }
  return onNone()
}

const noSharedVersion = (offered: ReadonlyArray<string>, supported: ReadonlyArray<string>): ProbeVerdict => ({
  _tag: "Fail",
  error: new McpError.ProtocolError({
    reason: "UnsupportedVersion",
    method: "server/discover",
    detail: `the server supports ${offered.join(", ") || "no version"}; this client supports ${supported.join(", ")}`
  })
})

/**
 * Classifies a successful answer to `server/discover`.
 *
 * @internal
 */
export const classifyProbeResult = (
  result: unknown,
  supported: ReadonlyArray<McpSchema.ProtocolVersion>
): ProbeVerdict => {
  const decoded = decodeDiscover(result)
  if (Result.isFailure(decoded)) {
    // Something answered the method but not with a DiscoverResult: not a modern server.
    return { _tag: "Legacy", version: undefined }
  }
  const discover = decoded.success
  return fromVersionList(
    discover.supportedVersions,
    supported,
    (version) => ({ _tag: "Modern", version, discover }),
    () => noSharedVersion(discover.supportedVersions, supported)
  )
}

/**
 * Classifies a JSON-RPC error answering the probe (the stdio rules; an HTTP 2xx carrying an error uses them too).
 * Only `-32022` with a usable version list is modern evidence; `-32020`/`-32021` mean our own probe was
 * malformed and fail the negotiation; every other code means a legacy server.
 *
 * @internal
 */
export const classifyProbeError = (
  error: McpError.McpError,
  supported: ReadonlyArray<McpSchema.ProtocolVersion>,
  retried: boolean
): ProbeVerdict => {
  if (error.code === McpSchema.ErrorCode.UnsupportedProtocolVersion) {
    const data = decodeSupported(error.data)
    if (Result.isFailure(data)) return { _tag: "Legacy", version: undefined }
    return fromVersionList(
      data.success.supported,
      supported,
      (version) =>
        retried
          ? {
            _tag: "Fail",
            error: new McpError.ProtocolError({
              reason: "UnsupportedVersion",
              method: "server/discover",
              detail: `the server rejected protocol version ${version} twice`
            })
          }
          : { _tag: "RetryModern", version },
      () => noSharedVersion(data.success.supported, supported)
    )
  }
  if (
    error.code === McpSchema.ErrorCode.HeaderMismatch ||
    error.code === McpSchema.ErrorCode.MissingRequiredClientCapability
  ) {
    return {
      _tag: "Fail",
      error: new McpError.ProtocolError({
        reason: "Negotiation",
        method: "server/discover",
        detail: `the server refused the era probe with ${error.code}: ${error.message}`
      })
    }
  }
  return { _tag: "Legacy", version: undefined }
}

/**
 * Classifies a probe that failed without a JSON-RPC answer. On a transport that reads refusals by status (HTTP) a
 * 400/404/405 without a modern error body means a legacy server; 401/403 go to the auth path; 5xx and network
 * failures are outages, never verdicts. On a stream the caller treats a closed transport as "legacy, restart";
 * anything else is a failure.
 *
 * @internal
 */
export const classifyProbeFailure = (
  reading: Transport.ProbeFailures,
  error: McpError.TransportFailure,
  supported: ReadonlyArray<McpSchema.ProtocolVersion>,
  retried: boolean
): ProbeVerdict => {
  if (error._tag !== "TransportError" || reading !== "status") return { _tag: "Fail", error }
  if (error.reason !== "HttpStatus" || error.status === undefined) return { _tag: "Fail", error }
  if (error.status >= 400 && error.status < 500 && error.body !== undefined && error.body.length > 0) {
    const modern = modernErrorInBody(error.body)
    if (modern !== undefined) return classifyProbeError(modern, supported, retried)
  }
  if (error.status === 400 || error.status === 404 || error.status === 405) {
    return { _tag: "Legacy", version: undefined }
  }
  return { _tag: "Fail", error }
}

const ErrorBody = Schema.fromJsonString(Schema.Struct({ error: McpSchema.JsonRpcErrorObject }))
const decodeErrorBody = Schema.decodeUnknownResult(ErrorBody)

const modernErrorInBody = (body: string): McpError.McpError | undefined => {
  const decoded = decodeErrorBody(body)
  if (Result.isFailure(decoded)) return undefined
  const error = decoded.success.error
  if (
    error.code !== McpSchema.ErrorCode.UnsupportedProtocolVersion &&
    error.code !== McpSchema.ErrorCode.HeaderMismatch &&
    error.code !== McpSchema.ErrorCode.MissingRequiredClientCapability
  ) return undefined
  return new McpError.McpError({ code: error.code, message: error.message, data: error.data })
}

/**
 * Whether a failed `initialize` names only modern versions: the cached legacy verdict was wrong.
 *
 * @internal
 */
export const initializeNamesOnlyModern = (error: McpError.McpError): boolean => {
  const data = decodeSupported(error.data)
  if (Result.isFailure(data) || data.success.supported.length === 0) return false
  return data.success.supported.every(McpSchema.isModernVersion)
}

/** What a server that quit because of the probe tends to say about it. */
const probeComplaint = /server\/discover|initiali[sz]|unknown method|method not found|unsupported method|invalid request|-3260[01]/i

/**
 * Whether a child that went away during the probe may have done so because of it (a legacy server that quits on
 * any request before `initialize`): it exited cleanly, or with no code (a signal, or a transport that reports
 * none), or its stderr names the probe, initialization or an unknown method. One that exited with an error code
 * and said nothing of the kind failed on its own (a missing setting, a crash at start): starting it again would
 * only repeat the failure, and whatever it did before failing.
 *
 * @internal
 */
export const exitedBecauseOfProbe = (error: McpError.TransportError): boolean => {
  const code = error.exitCode
  if (error.reason !== "Exited" || code === undefined || code === null || code === 0) return true
  return probeComplaint.test([...(error.stderr ?? []), error.detail ?? ""].join("\n"))
}

// ---------------------------------------------------------------------------------------------------------------
// The negotiator: the probe / initialize loop that finds a server's era on each new connection.

/**
 * Internal signal: the child went away during the probe, so restart it and speak legacy.
 *
 * @internal
 */
export class RestartAsLegacy {
  readonly _tag = "RestartAsLegacy"
}

/**
 * Internal signal: the cached legacy verdict proved wrong, so probe again.
 *
 * @internal
 */
export class Reprobe {
  readonly _tag = "Reprobe"
}

/**
 * How a negotiation ends without a session.
 *
 * @internal
 */
export type NegotiationError = McpError.ConnectError | RestartAsLegacy | Reprobe

/**
 * What the negotiation agreed on.
 *
 * @internal
 */
export interface Negotiated {
  readonly era: McpSchema.Era
  readonly protocolVersion: McpSchema.ProtocolVersion
  readonly serverInfo: McpSchema.Implementation | undefined
  readonly capabilities: McpSchema.ServerCapabilities
  readonly instructions: string | undefined
}

/**
 * The connection being negotiated, as the negotiator sees it.
 *
 * @internal
 */
export interface Channel {
  /** The era the transport already knows the server speaks (the HTTP transport keeps verdicts per origin). */
  readonly knownEra: McpSchema.Era | undefined
  /**
   * Sends one of the negotiation's requests; `era` and `version` shape its `_meta`, `probe` marks the era probe
   * (sent with the next integer id like every request: some servers accept only integer ids).
   */
  readonly request: (
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    options: {
      readonly era: McpSchema.Era | "probe"
      readonly version: McpSchema.ProtocolVersion
      readonly timeoutMillis: number
      readonly probe?: boolean | undefined
    }
  ) => Effect.Effect<unknown, McpError.RequestError>
  readonly notifyInitialized: Effect.Effect<void, McpError.TransportFailure>
  /** Whether the transport closed (some legacy servers quit on any request before `initialize`). */
  readonly closed: Effect.Effect<boolean>
  /** The era is known (before the negotiation returns: what the server sends next is read in it). */
  readonly onEra: (era: McpSchema.Era) => void
}

/**
 * @internal
 */
export interface NegotiatorConfig {
  /** The transport's label, for the errors the negotiator makes. */
  readonly kind: McpError.TransportKind
  /** How a failed probe reads on the transport (its `traits.probeFailures`). */
  readonly probeFailures: Transport.ProbeFailures
  readonly eraOption: "auto" | "legacy" | "modern"
  readonly pinned: McpSchema.ProtocolVersion | undefined
  readonly supported: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly probeTimeout: number
  readonly initializeTimeout: number
  readonly clientInfo: McpSchema.Implementation
  readonly capabilitiesFor: (version: McpSchema.ProtocolVersion) => McpSchema.ClientCapabilities
  /** Runs when the era probe starts (the client's state becomes `Probing`). */
  readonly onProbe: Effect.Effect<void>
}

/**
 * @internal
 */
export interface Negotiator {
  /** Finds the era of a new connection: the verdict known so far, else the probe. */
  readonly negotiate: (channel: Channel) => Effect.Effect<Negotiated, NegotiationError>
  /** The legacy handshake, offering `version` (the newest supported when undefined). */
  readonly initialize: (
    channel: Channel,
    version: McpSchema.LegacyVersion | undefined
  ) => Effect.Effect<Negotiated, NegotiationError>
  /**
   * An attempt ended with a signal: the verdict turns and the client connects again at once (undefined), unless the
   * server's answers keep contradicting each other (the error to report).
   */
  readonly turn: (signal: RestartAsLegacy | Reprobe) => McpError.ProtocolError | undefined
  /** A session was established: contradictions are counted afresh. */
  readonly established: () => void
}

const decodeImplementation = Schema.decodeUnknownResult(McpSchema.Implementation, McpSchema.preserve)

/** The negotiator's state: its configuration and what it learnt of the server. */
interface State {
  readonly config: NegotiatorConfig
  readonly supportedLegacy: ReadonlyArray<McpSchema.LegacyVersion>
  readonly supportedModern: ReadonlyArray<McpSchema.ModernVersion>
  /**
   * Changes of era since the last session: a server whose answers contradict each other (its probe says legacy,
   * its initialize names only modern versions) must not keep the client switching forever.
   */
  eraSwitches: number
  /** The era this server speaks, as far as known. */
  verdict: McpSchema.Era | undefined
}

const initialize: (
  state: State,
  channel: Channel,
  version: McpSchema.LegacyVersion | undefined
) => Effect.Effect<Negotiated, NegotiationError> = Effect.fnUntraced(function*(state, channel, version) {
  const { config, supportedLegacy } = state
  const offered = version ?? supportedLegacy[supportedLegacy.length - 1]
  if (offered === undefined) {
    return yield* new McpError.ProtocolError({
      reason: "UnsupportedVersion",
      method: "initialize",
      detail: "the server speaks only legacy revisions and this client is pinned to the modern era"
    })
  }
  const raw = yield* channel.request(
    "initialize",
    { protocolVersion: offered, capabilities: config.capabilitiesFor(offered), clientInfo: config.clientInfo },
    { era: "legacy", version: offered, timeoutMillis: config.initializeTimeout }
  ).pipe(
    Effect.catchTag("McpError", (error): Effect.Effect<never, McpError.McpError | Reprobe> =>
      // (legacy by this client's verdict, or by the one its transport kept for the server)
      (channel.knownEra ?? state.verdict) === "legacy" && config.eraOption === "auto" &&
        config.pinned === undefined && initializeNamesOnlyModern(error)
        ? Effect.fail(new Reprobe())
        : Effect.fail(error))
  )
  const result = yield* decodeInitialize(raw)
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
  channel.onEra("legacy")
  yield* channel.notifyInitialized
  return {
    era: "legacy" as const,
    protocolVersion: agreed,
    serverInfo: result.serverInfo,
    capabilities: result.capabilities,
    instructions: result.instructions
  }
})

/**
 * `server/discover`. While the era is unknown it is a probe and waits `probeTimeout`; once the era is pinned to
 * modern or known to be, it is the opening handshake and waits `initializeTimeout`, as `initialize` does (a child
 * that starts slowly, say through `npx`, is not given up after the probe's few seconds).
 */
const discover = (state: State, channel: Channel, version: McpSchema.ProtocolVersion) =>
  channel.request("server/discover", undefined, {
    era: "probe",
    version,
    timeoutMillis: state.supportedLegacy.length === 0 || state.verdict === "modern"
      ? state.config.initializeTimeout
      : state.config.probeTimeout,
    probe: true
  })

const modernSession = (
  channel: Channel,
  version: McpSchema.ModernVersion,
  result: McpSchema.DiscoverResult
): Negotiated => {
  channel.onEra("modern")
  const serverInfo = decodeImplementation(result._meta?.[McpSchema.MetaKeys.serverInfo])
  return {
    era: "modern",
    protocolVersion: version,
    serverInfo: Result.getOrUndefined(serverInfo),
    capabilities: result.capabilities,
    instructions: result.instructions
  }
}

/** What a failed probe means. */
const classifyFailure = (
  state: State,
  channel: Channel,
  error: McpError.RequestError,
  retried: boolean
): Effect.Effect<ProbeVerdict, NegotiationError> => {
  const { kind, probeFailures, supported } = state.config
  switch (error._tag) {
    case "McpError":
      return Effect.succeed(classifyProbeError(error, supported, retried))
    case "RequestTimeout":
      // Where a server answers every request (HTTP) silence is an outage; and a server known to be modern is never
      // quietly downgraded.
      if (probeFailures === "status" || state.verdict === "modern") {
        return Effect.fail(
          new McpError.TransportError({
            transport: kind,
            reason: "Timeout",
            detail: "the server did not answer the era probe"
          })
        )
      }
      return Effect.succeed({ _tag: "Legacy", version: undefined })
    case "TransportError":
      if (probeFailures === "status" || state.verdict === "modern") {
        return Effect.succeed(classifyProbeFailure(probeFailures, error, supported, retried))
      }
      // Some legacy servers quit on any request before initialize: restart and speak legacy. A child that failed
      // on its own is not started again just to fail the same way: its exit is the error.
      return Effect.flatMap(channel.closed, (closed): Effect.Effect<ProbeVerdict, NegotiationError> =>
        !closed
          ? Effect.succeed(classifyProbeFailure(probeFailures, error, supported, retried))
          : exitedBecauseOfProbe(error)
          ? Effect.fail(new RestartAsLegacy())
          : Effect.fail(error))
    case "ProtocolError":
      return Effect.fail(error)
    default:
      return Effect.succeed(classifyProbeFailure(probeFailures, error, supported, retried))
  }
}

/** The era probe: `server/discover`, then what its answer (or failure) means. */
const probe = Effect.fnUntraced(function*(state: State, channel: Channel) {
  let version: McpSchema.ModernVersion = state.supportedModern[state.supportedModern.length - 1] ?? "2026-07-28"
  let retried = false
  while (true) {
    const outcome = yield* Effect.result(discover(state, channel, version))
    const verdictNow = Result.isSuccess(outcome)
      ? classifyProbeResult(outcome.success, state.config.supported)
      : yield* classifyFailure(state, channel, outcome.failure, retried)
    switch (verdictNow._tag) {
      case "Modern":
        state.verdict = "modern"
        return modernSession(channel, verdictNow.version, verdictNow.discover)
      case "RetryModern":
        version = verdictNow.version
        retried = true
        continue
      case "Legacy":
        if (state.supportedLegacy.length === 0) {
          return yield* new McpError.ProtocolError({
            reason: "UnsupportedVersion",
            method: "server/discover",
            detail: "the server is not a modern server and this client is pinned to the modern era"
          })
        }
        state.verdict = "legacy"
        return yield* initialize(state, channel, verdictNow.version)
      case "Fail":
        return yield* Effect.fail(verdictNow.error)
    }
  }
})

/** Pinned to modern: discover for capabilities; a modern server must answer it. */
const discoverPinned = (state: State, channel: Channel): Effect.Effect<Negotiated, NegotiationError> =>
  Effect.flatMap(discover(state, channel, state.supportedModern[state.supportedModern.length - 1]!), (raw) => {
    const verdictNow = classifyProbeResult(raw, state.config.supported)
    return verdictNow._tag === "Modern"
      ? Effect.succeed(modernSession(channel, verdictNow.version, verdictNow.discover))
      : Effect.fail(
        new McpError.ProtocolError({
          reason: "Negotiation",
          method: "server/discover",
          detail: "the server did not answer server/discover like a modern server"
        })
      )
  })

/**
 * @internal
 */
export const makeNegotiator = (config: NegotiatorConfig): Negotiator => {
  const { eraOption, pinned } = config
  const state: State = {
    config,
    supportedLegacy: config.supported.filter(McpSchema.isLegacyVersion),
    supportedModern: config.supported.filter(McpSchema.isModernVersion),
    eraSwitches: 0,
    verdict: pinned !== undefined ? McpSchema.eraOf(pinned) : eraOption === "auto" ? undefined : eraOption
  }
  return {
    negotiate: (channel) =>
      Effect.suspend(() => {
        const known = channel.knownEra ?? state.verdict
        if (known === "legacy") return initialize(state, channel, undefined)
        if (known === "modern" && eraOption !== "auto") return discoverPinned(state, channel)
        return Effect.andThen(config.onProbe, probe(state, channel))
      }),
    initialize: (channel, version) => initialize(state, channel, version),
    turn: (signal) => {
      if (++state.eraSwitches <= 2) {
        // Reprobe: initialize was refused naming only modern versions, so the server is modern, however slow its
        // probe was
        state.verdict = signal._tag === "RestartAsLegacy" ? "legacy" : "modern"
        return undefined
      }
      return new McpError.ProtocolError({
        reason: "Negotiation",
        method: "initialize",
        detail: "the server's answers contradict each other about its era (the probe and initialize)"
      })
    },
    established: () => {
      state.eraSwitches = 0
    }
  }
}

const decodeInitializeResult = Schema.decodeUnknownResult(McpSchema.InitializeResult, McpSchema.preserve)

/** The answer to `initialize`: a complete result decoded with the schema, or a ProtocolError. */
const decodeInitialize = (raw: unknown): Effect.Effect<McpSchema.InitializeResult, McpError.ProtocolError> => {
  if (typeof raw !== "object" || raw === null) {
    return Effect.fail(
      new McpError.ProtocolError({
        reason: "InvalidResult",
        method: "initialize",
        detail: "the result is not an object"
      })
    )
  }
  const resultType = "resultType" in raw ? raw.resultType : undefined
  if (resultType !== undefined && resultType !== "complete") {
    return Effect.fail(
      new McpError.ProtocolError({
        reason: "InvalidResultType",
        method: "initialize",
        detail: `unknown resultType ${String(resultType)}`
      })
    )
  }
  return Result.match(decodeInitializeResult(raw), {
    onFailure: (cause) =>
      Effect.fail(
        new McpError.ProtocolError({ reason: "InvalidResult", method: "initialize", detail: cause.message, cause })
      ),
    onSuccess: Effect.succeed
  })
}
