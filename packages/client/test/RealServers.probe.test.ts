/**
 * Guards what the integration tests assume about the real servers (see `utils/realServers.ts`): each server is
 * spawned with plain `child_process`, fed raw JSON-RPC lines and its answers are checked. Every message written
 * here is also checked against the official schema of its revision.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import * as RealServers from "./utils/realServers.js"
import * as SchemaValidator from "./utils/schemaValidator.js"

type Json = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

interface RawServer {
  /** Writes one message as a line, after checking it against the schema of `revision`. */
  readonly send: (revision: SchemaValidator.Revision, message: Json) => Effect.Effect<void>
  /** Writes one message without checking it (for deliberately invalid messages). */
  readonly sendUnchecked: (message: Json) => Effect.Effect<void>
  /** Waits for the response with this id; returns it with the notifications that came before it. */
  readonly response: (id: string | number) => Effect.Effect<{ readonly message: Json; readonly before: Array<Json> }>
}

/**
 * A safety net, never what a test asserts: a server's first answer waits for its start, which a loaded machine
 * stretches past 10 s (every test here ran out of 10 s in a whole-suite run beside four busy loops).
 */
const answerTimeout = Duration.seconds(30)

/** The tests' own limit, above a first answer's safety net. */
const generous = { timeout: 60_000 }

/** Spawns a server; it is killed when the scope closes, even if the test failed. */
const spawn = (server: RealServers.ServerCommand): Effect.Effect<RawServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const inbox = yield* Queue.unbounded<Json>()
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => ChildProcess.spawn(server.command, [...server.args], { stdio: ["pipe", "pipe", "ignore"] })),
      (child) =>
        Effect.callback<void>((resume) => {
          if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
          child.once("exit", () => resume(Effect.void))
          child.stdin.end()
          child.kill("SIGKILL")
        })
    )
    // a child that died makes writes fail with EPIPE: the missing answer is what the test reports
    child.stdin.on("error", () => {})
    let buffer = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      buffer += chunk
      let newline = buffer.indexOf("\n")
      while (newline >= 0) {
        const line = buffer.slice(0, newline).trim()
        buffer = buffer.slice(newline + 1)
        newline = buffer.indexOf("\n")
        if (line.length === 0) continue
        try {
          const parsed: unknown = JSON.parse(line)
          if (isObject(parsed)) Queue.offerUnsafe(inbox, parsed)
        } catch {
          // a line that is not JSON is not an answer; the awaited response then times out
        }
      }
    })
    const sendUnchecked = (message: Json) => Effect.sync(() => void child.stdin.write(`${JSON.stringify(message)}\n`))
    const response = (id: string | number) =>
      Effect.gen(function*() {
        const before: Array<Json> = []
        while (true) {
          const message = yield* Queue.take(inbox)
          if (message.id === id && ("result" in message || "error" in message)) return { message, before }
          before.push(message)
        }
      }).pipe(
        Effect.timeoutOrElse({ duration: answerTimeout, orElse: () => Effect.fail(`no answer to request ${id}`) }),
        Effect.orDie
      )
    return {
      sendUnchecked,
      send: (revision, message) => {
        const valid = SchemaValidator.validateClientMessage(revision, message)
        return valid.ok ? sendUnchecked(message) : Effect.die(new Error(`invalid ${revision} message: ${valid.errors}`))
      },
      response
    } satisfies RawServer
  })

const MODERN = "2026-07-28"
const LEGACY = "2025-11-25"

const modernMeta = (extra: Json = {}) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "conduit-probe", version: "0.0.0" },
  ...extra
})

const discover = (id: string) => ({ jsonrpc: "2.0", id, method: "server/discover", params: { _meta: modernMeta() } })

const initialize = (id: number, protocolVersion: string = LEGACY) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "conduit-probe", version: "0.0.0" } }
})

const initialized = { jsonrpc: "2.0", method: "notifications/initialized" }

const callTool = (id: number, name: string, args: Json, meta?: Json) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) }
})

const resultOf = (message: Json): Json => {
  assert.isTrue(isObject(message.result), `expected a result, got ${JSON.stringify(message)}`)
  return isObject(message.result) ? message.result : {}
}

const errorOf = (message: Json): Json => {
  assert.isTrue(isObject(message.error), `expected an error, got ${JSON.stringify(message)}`)
  return isObject(message.error) ? message.error : {}
}

const firstText = (result: Json): unknown => {
  const content = result.content
  const first: unknown = Array.isArray(content) ? content[0] : undefined
  return isObject(first) ? first.text : undefined
}

/** The text of a `GetPromptResult`'s first message. */
const firstMessageText = (result: Json): unknown => {
  const messages = result.messages
  const first: unknown = Array.isArray(messages) ? messages[0] : undefined
  return isObject(first) && isObject(first.content) ? first.content.text : undefined
}

const progressOf = (notifications: ReadonlyArray<Json>, token: string | number) =>
  notifications.flatMap((message) =>
    message.method === "notifications/progress" && isObject(message.params) && message.params.progressToken === token
      ? [message.params.progress]
      : []
  )

describe("server-everything (legacy only)", generous, () => {
  const { everything } = RealServers

  it.live("answers server/discover with an error and then serves initialize on the same process", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* spawn(everything)
      yield* server.send(MODERN, discover("era-probe"))
      const probe = (yield* server.response("era-probe")).message
      assert.isFalse("result" in probe, "server-everything must not answer server/discover with a result")
      assert.strictEqual(errorOf(probe).code, everything.discoverErrorCode)

      yield* server.send(LEGACY, initialize(1))
      const init = resultOf((yield* server.response(1)).message)
      assert.strictEqual(init.protocolVersion, everything.latestVersion)
      assert.deepStrictEqual(init.serverInfo, everything.serverInfo)
      yield* server.send(LEGACY, initialized)

      const { echo } = everything.tools
      yield* server.send(LEGACY, callTool(2, echo.name, { [echo.argument]: "hi" }))
      assert.strictEqual(firstText(resultOf((yield* server.response(2)).message)), echo.reply("hi"))
    })))

  it.live("answers initialize at 2026-07-28 with its own latest version", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* spawn(everything)
      yield* server.send(LEGACY, initialize(1, MODERN))
      assert.strictEqual(resultOf((yield* server.response(1)).message).protocolVersion, everything.latestVersion)
    })))

  it.live("reports progress for the long-running tool and serves the documented resource and prompt", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* spawn(everything)
      yield* server.send(LEGACY, initialize(1))
      yield* server.response(1)
      yield* server.send(LEGACY, initialized)

      const { longRunning } = everything.tools
      yield* server.send(
        LEGACY,
        callTool(2, longRunning.name, { [longRunning.durationSeconds]: 0.2, [longRunning.steps]: 2 }, {
          progressToken: "p-2"
        })
      )
      const { before, message } = yield* server.response(2)
      resultOf(message)
      assert.deepStrictEqual(progressOf(before, "p-2"), [1, 2])

      const uri = everything.resources.dynamicText(1)
      yield* server.send(LEGACY, { jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri } })
      const contents = resultOf((yield* server.response(3)).message).contents
      assert.isTrue(Array.isArray(contents) && isObject(contents[0]) && contents[0].uri === uri)

      const { staticDocument } = everything.resources
      yield* server.send(LEGACY, { jsonrpc: "2.0", id: 4, method: "resources/list", params: {} })
      const resources = resultOf((yield* server.response(4)).message).resources
      assert.isTrue(Array.isArray(resources) && resources.some((r) => isObject(r) && r.uri === staticDocument.uri))

      const prompt = everything.prompts.withArguments
      yield* server.send(LEGACY, {
        jsonrpc: "2.0",
        id: 5,
        method: "prompts/get",
        params: { name: prompt.name, arguments: { [prompt.required]: "Paris" } }
      })
      assert.strictEqual(firstMessageText(resultOf((yield* server.response(5)).message)), prompt.text("Paris"))
    })))
})

describe("SDK v2 fixture (dual era)", generous, () => {
  const { sdkV2 } = RealServers

  it.live("answers server/discover with a DiscoverResult, then serves modern requests and refuses bad envelopes", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* spawn(sdkV2)
      yield* server.send(MODERN, discover("era-probe"))
      const discovered = resultOf((yield* server.response("era-probe")).message)
      assert.deepStrictEqual(SchemaValidator.validateDefinition(MODERN, "DiscoverResult", discovered), { ok: true })
      assert.include(discovered.supportedVersions, MODERN)

      const { echo, progress } = sdkV2.tools
      yield* server.send(MODERN, callTool(1, echo.name, { [echo.argument]: "hi" }, modernMeta()))
      const echoed = resultOf((yield* server.response(1)).message)
      assert.strictEqual(firstText(echoed), echo.reply("hi"))
      assert.strictEqual(echoed.resultType, "complete")

      yield* server.send(MODERN, callTool(2, progress.name, { [progress.steps]: 2 }, modernMeta({ progressToken: 2 })))
      const { before, message } = yield* server.response(2)
      assert.strictEqual(firstText(resultOf(message)), progress.reply(2))
      assert.deepStrictEqual(progressOf(before, 2), [1, 2])

      yield* server.sendUnchecked(callTool(3, echo.name, { [echo.argument]: "hi" }))
      assert.strictEqual(errorOf((yield* server.response(3)).message).code, sdkV2.errors.missingMeta)

      yield* server.sendUnchecked(
        callTool(4, echo.name, { [echo.argument]: "hi" }, { "io.modelcontextprotocol/protocolVersion": MODERN })
      )
      assert.strictEqual(errorOf((yield* server.response(4)).message).code, sdkV2.errors.invalidMeta)

      yield* server.send(LEGACY, initialize(5))
      const refused = errorOf((yield* server.response(5)).message)
      assert.strictEqual(refused.code, sdkV2.errors.unsupportedVersion)
      assert.deepStrictEqual(isObject(refused.data) ? refused.data.supported : undefined, [MODERN])
    })))

  it.live("serves the legacy handshake, with progress, when the first message is initialize", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* spawn(sdkV2)
      yield* server.send(LEGACY, initialize(1))
      const init = resultOf((yield* server.response(1)).message)
      assert.strictEqual(init.protocolVersion, sdkV2.legacyVersion)
      assert.deepStrictEqual(init.serverInfo, sdkV2.serverInfo)
      yield* server.send(LEGACY, initialized)

      const { progress } = sdkV2.tools
      yield* server.send(LEGACY, callTool(2, progress.name, { [progress.steps]: 2 }, { progressToken: "t" }))
      const { before, message } = yield* server.response(2)
      assert.strictEqual(firstText(resultOf(message)), progress.reply(2))
      assert.deepStrictEqual(progressOf(before, "t"), [1, 2])

      yield* server.send(MODERN, discover("late-probe"))
      assert.strictEqual(errorOf((yield* server.response("late-probe")).message).code, sdkV2.errors.methodNotFound)
    })))

  it.live("refuses an opening request claiming an unknown version or missing clientCapabilities", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* spawn(sdkV2)
      yield* server.sendUnchecked({
        jsonrpc: "2.0",
        id: "v",
        method: "server/discover",
        params: { _meta: modernMeta({ "io.modelcontextprotocol/protocolVersion": "2099-01-01" }) }
      })
      const unsupported = errorOf((yield* server.response("v")).message)
      assert.strictEqual(unsupported.code, sdkV2.errors.unsupportedVersion)
      assert.deepStrictEqual(unsupported.data, { supported: [MODERN], requested: "2099-01-01" })

      yield* server.sendUnchecked({
        jsonrpc: "2.0",
        id: "c",
        method: "server/discover",
        params: { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN } }
      })
      assert.strictEqual(errorOf((yield* server.response("c")).message).code, sdkV2.errors.invalidMeta)

      // neither refusal decided the era: a valid probe still succeeds
      yield* server.send(MODERN, discover("ok"))
      resultOf((yield* server.response("ok")).message)

      const { greeting } = sdkV2.resources
      yield* server.send(MODERN, {
        jsonrpc: "2.0",
        id: 1,
        method: "resources/read",
        params: { uri: greeting.uri, _meta: modernMeta() }
      })
      const contents = resultOf((yield* server.response(1)).message).contents
      assert.isTrue(Array.isArray(contents) && isObject(contents[0]) && contents[0].text === greeting.text)

      const { greet } = sdkV2.prompts
      yield* server.send(MODERN, {
        jsonrpc: "2.0",
        id: 2,
        method: "prompts/get",
        params: { name: greet.name, arguments: { [greet.argument]: "Ada" }, _meta: modernMeta() }
      })
      assert.strictEqual(firstMessageText(resultOf((yield* server.response(2)).message)), greet.text("Ada"))
    })))
})
