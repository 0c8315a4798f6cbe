/**
 * The era negotiator on its own, against scripted answers: what it sends, in which era, and what it concludes.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as McpError from "../src/McpError.js"
import * as McpSchema from "../src/McpSchema.js"
import * as Negotiation from "../src/internal/negotiation.js"

type Answer = Effect.Effect<unknown, McpError.RequestError>

interface Sent {
  readonly method: string
  readonly era: McpSchema.Era | "probe"
  readonly version: McpSchema.ProtocolVersion
  readonly timeoutMillis: number
  readonly probe: boolean | undefined
  readonly params: unknown
}

const discovered = (versions: ReadonlyArray<string> = ["2026-07-28"]) => ({
  resultType: "complete",
  supportedVersions: versions,
  capabilities: { tools: {} },
  instructions: "hello",
  _meta: { [McpSchema.MetaKeys.serverInfo]: { name: "modern", version: "2.0.0" } }
})
const initialized = (version: string) => ({
  protocolVersion: version,
  capabilities: { tools: {} },
  serverInfo: { name: "legacy", version: "1.0.0" }
})
const refusal = (code: number, data?: unknown) =>
  Effect.fail(new McpError.McpError({ code, message: "no", ...(data === undefined ? {} : { data }) }))

/** A channel whose server answers each request with the next scripted answer for its method. */
const channel = (
  script: Readonly<Record<string, ReadonlyArray<Answer>>>,
  options: { readonly knownEra?: McpSchema.Era; readonly closed?: boolean } = {}
) =>
  Effect.gen(function*() {
    const sent = yield* Ref.make<ReadonlyArray<Sent>>([])
    const eras: Array<McpSchema.Era> = []
    const initializedSent = yield* Ref.make(0)
    const next = new Map<string, number>()
    const value: Negotiation.Channel = {
      knownEra: options.knownEra,
      request: (method, params, o) =>
        Effect.andThen(
          Ref.update(sent, (all) => [...all, {
            method,
            era: o.era,
            version: o.version,
            timeoutMillis: o.timeoutMillis,
            probe: o.probe,
            params
          }]),
          Effect.suspend(() => {
            const index = next.get(method) ?? 0
            next.set(method, index + 1)
            const answers = script[method] ?? []
            return answers[Math.min(index, answers.length - 1)] ??
              Effect.fail(new McpError.McpError({ code: -32601, message: "Method not found" }))
          })
        ),
      notifyInitialized: Ref.update(initializedSent, (n) => n + 1),
      closed: Effect.succeed(options.closed ?? false),
      onEra: (era) => {
        eras.push(era)
      }
    }
    return { value, sent, eras, initializedSent }
  })

const negotiator = (
  overrides: Partial<Negotiation.NegotiatorConfig> = {},
  probes?: Ref.Ref<number>
) =>
  Negotiation.makeNegotiator({
    kind: "stdio",
    probeFailures: "stream",
    eraOption: "auto",
    pinned: undefined,
    supported: [...McpSchema.LEGACY_VERSIONS, ...McpSchema.MODERN_VERSIONS],
    probeTimeout: 3_000,
    initializeTimeout: 30_000,
    clientInfo: { name: "test", version: "0" },
    capabilitiesFor: () => ({}),
    onProbe: probes === undefined ? Effect.void : Ref.update(probes, (n) => n + 1),
    ...overrides
  })

const methods = (sent: ReadonlyArray<Sent>) => sent.map((s) => s.method)

describe("the era negotiator", () => {
  it.effect("a modern server answers the probe: a modern session, from server/discover alone", () =>
    Effect.gen(function*() {
      const probes = yield* Ref.make(0)
      const ch = yield* channel({ "server/discover": [Effect.succeed(discovered())] })
      const session = yield* negotiator({}, probes).negotiate(ch.value)
      assert.deepStrictEqual(session, {
        era: "modern",
        protocolVersion: "2026-07-28",
        serverInfo: { name: "modern", version: "2.0.0" },
        capabilities: { tools: {} },
        instructions: "hello"
      })
      const [probe] = yield* Ref.get(ch.sent)
      assert.deepStrictEqual(
        [probe?.method, probe?.era, probe?.version, probe?.timeoutMillis, probe?.probe],
        ["server/discover", "probe", "2026-07-28", 3_000, true]
      )
      assert.deepStrictEqual(ch.eras, ["modern"])
      assert.strictEqual(yield* Ref.get(probes), 1)
      assert.strictEqual(yield* Ref.get(ch.initializedSent), 0)
    }))

  it.effect("a legacy server refuses the probe: initialize offers the newest legacy version, then initialized", () =>
    Effect.gen(function*() {
      const ch = yield* channel({
        "server/discover": [refusal(-32601)],
        "initialize": [Effect.succeed(initialized("2025-06-18"))]
      })
      const session = yield* negotiator().negotiate(ch.value)
      assert.deepStrictEqual([session.era, session.protocolVersion, session.serverInfo?.name], [
        "legacy",
        "2025-06-18",
        "legacy"
      ])
      const sent = yield* Ref.get(ch.sent)
      assert.deepStrictEqual(methods(sent), ["server/discover", "initialize"])
      assert.deepStrictEqual(sent[1]?.params, {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "test", version: "0" }
      })
      assert.deepStrictEqual([sent[1]?.era, sent[1]?.timeoutMillis], ["legacy", 30_000])
      assert.strictEqual(yield* Ref.get(ch.initializedSent), 1)
      assert.deepStrictEqual(ch.eras, ["legacy"])
    }))

  it.effect("-32022 naming a shared modern version: one corrective retry; a second refusal fails", () =>
    Effect.gen(function*() {
      const unsupported = refusal(-32022, { supported: ["2026-07-28"], requested: "2026-07-28" })
      const once = yield* channel({ "server/discover": [unsupported, Effect.succeed(discovered())] })
      assert.strictEqual((yield* negotiator().negotiate(once.value)).era, "modern")
      assert.deepStrictEqual((yield* Ref.get(once.sent)).map((s) => s.probe), [true, true])
      const twice = yield* channel({ "server/discover": [unsupported] })
      const error = yield* Effect.flip(negotiator().negotiate(twice.value))
      assert.strictEqual(error._tag === "ProtocolError" ? error.reason : error._tag, "UnsupportedVersion")
    }))

  it.effect("a probe unanswered: legacy over stdio, an outage over HTTP", () =>
    Effect.gen(function*() {
      const timeout = Effect.fail(new McpError.RequestTimeout({ method: "server/discover", timeoutMillis: 3_000 }))
      const stdio = yield* channel({
        "server/discover": [timeout],
        "initialize": [Effect.succeed(initialized("2025-11-25"))]
      })
      assert.strictEqual((yield* negotiator().negotiate(stdio.value)).era, "legacy")
      const http = yield* channel({ "server/discover": [timeout] })
      const error = yield* Effect.flip(negotiator({ kind: "http", probeFailures: "status" }).negotiate(http.value))
      assert.deepStrictEqual(
        [error._tag, error._tag === "TransportError" ? error.reason : undefined],
        ["TransportError", "Timeout"]
      )
      assert.deepStrictEqual(methods(yield* Ref.get(http.sent)), ["server/discover"])
    }))

  it.effect("an HTTP 404 to the probe means legacy; a 500 is an outage", () =>
    Effect.gen(function*() {
      const status = (code: number) =>
        Effect.fail(new McpError.TransportError({ transport: "http", reason: "HttpStatus", status: code }))
      const legacy = yield* channel({
        "server/discover": [status(404)],
        "initialize": [Effect.succeed(initialized("2025-11-25"))]
      })
      assert.strictEqual((yield* negotiator({ kind: "http", probeFailures: "status" }).negotiate(legacy.value)).era, "legacy")
      const down = yield* channel({ "server/discover": [status(500)] })
      const error = yield* Effect.flip(negotiator({ kind: "http", probeFailures: "status" }).negotiate(down.value))
      assert.strictEqual(error._tag === "TransportError" ? error.status : undefined, 500)
    }))

  it.effect("a child that quits on the probe: restart as legacy; the turned verdict skips the probe", () =>
    Effect.gen(function*() {
      const n = negotiator()
      const gone = Effect.fail(new McpError.TransportError({ transport: "stdio", reason: "Exited" }))
      const first = yield* channel({ "server/discover": [gone] }, { closed: true })
      const signal = yield* Effect.flip(n.negotiate(first.value))
      if (signal._tag !== "RestartAsLegacy") return assert.fail(`expected RestartAsLegacy, got ${signal._tag}`)
      assert.isUndefined(n.turn(signal))
      const second = yield* channel({ "initialize": [Effect.succeed(initialized("2025-11-25"))] })
      assert.strictEqual((yield* n.negotiate(second.value)).era, "legacy")
      assert.deepStrictEqual(methods(yield* Ref.get(second.sent)), ["initialize"])
    }))

  it.effect("a child that exits with an error on its own is not restarted: its exit is the error", () =>
    Effect.gen(function*() {
      const exited = (code: number, stderr: ReadonlyArray<string>) =>
        Effect.fail(new McpError.TransportError({ transport: "stdio", reason: "Exited", exitCode: code, stderr }))
      const crashed = yield* channel({ "server/discover": [exited(3, ["fatal: API_TOKEN is not set"])] }, {
        closed: true
      })
      const error = yield* Effect.flip(negotiator().negotiate(crashed.value))
      assert.strictEqual(error._tag, "TransportError")
      if (error._tag === "TransportError") assert.strictEqual(error.exitCode, 3)
      // one that names the probe or initialization, or exits cleanly, quit because of the probe
      for (const [code, stderr] of [[1, ["Error: received server/discover before initialization"]], [0, []]] as const) {
        const quit = yield* channel({ "server/discover": [exited(code, stderr)] }, { closed: true })
        const signal = yield* Effect.flip(negotiator().negotiate(quit.value))
        assert.strictEqual(signal._tag, "RestartAsLegacy")
      }
    }))

  it.effect("answers that contradict each other about the era turn the verdict twice, then fail", () =>
    Effect.gen(function*() {
      const n = negotiator()
      const onlyModern = refusal(-32602, { supported: ["2026-07-28"] })
      // the transport says legacy; initialize names only modern versions: probe again
      const first = yield* channel({ "initialize": [onlyModern] }, { knownEra: "legacy" })
      const reprobe = yield* Effect.flip(n.negotiate(first.value))
      if (reprobe._tag !== "Reprobe") return assert.fail(`expected Reprobe, got ${reprobe._tag}`)
      assert.isUndefined(n.turn(reprobe))
      assert.isUndefined(n.turn(reprobe))
      assert.strictEqual(n.turn(reprobe)?.reason, "Negotiation")
      // a session established: contradictions are counted afresh
      n.established()
      assert.isUndefined(n.turn(reprobe))
    }))

  it.effect("an era the transport already knows is used without a probe", () =>
    Effect.gen(function*() {
      const probes = yield* Ref.make(0)
      const ch = yield* channel({ "initialize": [Effect.succeed(initialized("2025-11-25"))] }, { knownEra: "legacy" })
      assert.strictEqual((yield* negotiator({}, probes).negotiate(ch.value)).era, "legacy")
      assert.strictEqual(yield* Ref.get(probes), 0)
      assert.deepStrictEqual(methods(yield* Ref.get(ch.sent)), ["initialize"])
    }))

  it.effect("pinned to modern: a server that is not modern is refused", () =>
    Effect.gen(function*() {
      // a pinned modern version: the probe finds a legacy server, which this client may not speak
      const pinned = { pinned: "2026-07-28" as const, supported: McpSchema.MODERN_VERSIONS }
      const legacyServer = yield* channel({ "server/discover": [refusal(-32601)] })
      const error = yield* Effect.flip(negotiator(pinned).negotiate(legacyServer.value))
      assert.strictEqual(error._tag === "ProtocolError" ? error.reason : error._tag, "UnsupportedVersion")
      // the modern era asked for: server/discover must succeed, and answer like a modern server
      const modernOnly = { eraOption: "modern" as const, supported: McpSchema.MODERN_VERSIONS }
      const refusing = yield* channel({ "server/discover": [refusal(-32601)] })
      const refusal32601 = yield* Effect.flip(negotiator(modernOnly).negotiate(refusing.value))
      assert.strictEqual(refusal32601._tag === "McpError" ? refusal32601.code : refusal32601._tag, -32601)
      const odd = yield* channel({ "server/discover": [Effect.succeed({ hello: 1 })] })
      const refused = yield* Effect.flip(negotiator(modernOnly).negotiate(odd.value))
      assert.strictEqual(refused._tag === "ProtocolError" ? refused.reason : refused._tag, "Negotiation")
      assert.deepStrictEqual(methods(yield* Ref.get(odd.sent)), ["server/discover"])
    }))

  it.effect("initialize answered with a version this client does not speak fails the negotiation", () =>
    Effect.gen(function*() {
      const ch = yield* channel({
        "server/discover": [refusal(-32601)],
        "initialize": [Effect.succeed(initialized("2099-01-01"))]
      })
      const error = yield* Effect.flip(negotiator().negotiate(ch.value))
      assert.strictEqual(error._tag === "ProtocolError" ? error.reason : error._tag, "UnsupportedVersion")
      assert.strictEqual(yield* Ref.get(ch.initializedSent), 0)
    }))
})
