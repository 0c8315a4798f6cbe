/**
 * A transport written outside the library, against its public modules only: JSON-RPC text over a pair of in-memory
 * queues to a server of `@conduit-mcp/server` (kind "memory-pipe"). Declaring the contract's optional members is all
 * it takes to be first-class: the fast path (`trySend`, and `deliver` for answers), credentials that
 * `McpClient.setAuth` swaps, the private partition of the result cache (its credentials', or its connection's), and
 * its own traits (the era probe's default timeout and how a failed probe reads, whether its send sees a span).
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpServer from "@conduit-mcp/server/McpServer"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import * as HttpTransport from "../src/HttpTransport.js"
import * as McpClient from "../src/McpClient.js"
import * as McpError from "../src/McpError.js"
import * as McpSchema from "../src/McpSchema.js"
import * as ResultCache from "../src/ResultCache.js"
import * as Transport from "../src/Transport.js"

// ---------------------------------------------------------------------------------------------------------------
// The user's transport

/** What went through the pipe, as the user's transport saw it. */
interface PipeLog {
  /** Every message the client sent: the method (or "response"), how it left and the credential in force. */
  readonly out: Array<{ readonly method: string; readonly path: "trySend" | "request"; readonly credential: string }>
  /** Ids of the answers handed over at once (`deliver`), and of the events that went through `emit`. */
  readonly delivered: Array<McpSchema.RequestId>
  readonly emitted: Array<string>
  /** The span the transport's `request` ran under, by method. */
  readonly spans: Array<{ readonly method: string; readonly span: string | undefined }>
  /** The credentials the transport was given through `credentials.set`. */
  readonly auths: Array<unknown>
  /** Completed when the client first sends `method`. */
  readonly sent: (method: string) => Deferred.Deferred<void>
}

const makeLog = (): PipeLog => {
  const waiting = new Map<string, Deferred.Deferred<void>>()
  return {
    out: [],
    delivered: [],
    emitted: [],
    spans: [],
    auths: [],
    sent: (method) => {
      let deferred = waiting.get(method)
      if (deferred === undefined) {
        deferred = Deferred.makeUnsafe<void>()
        waiting.set(method, deferred)
      }
      return deferred
    }
  }
}

interface PipeOptions {
  readonly traits?: Transport.Traits | undefined
  /** No `trySend`, no `deliver`: every message goes through an effect. */
  readonly slow?: boolean | undefined
  /** The connection's cache partition, when the transport knows who the server answers. */
  readonly partition?: string | undefined
  /** Declares credentials, starting with this token. */
  readonly token?: string | undefined
  /** Methods the server end never passes on (a server that says nothing to what it does not know). */
  readonly unanswered?: ReadonlyArray<string> | undefined
  /** Methods the pipe refuses with a status, as an HTTP server would. */
  readonly refused?: Readonly<Record<string, number>> | undefined
}

const KIND = "memory-pipe"

const decode = (line: string): McpSchema.JsonRpcMessage | undefined =>
  Result.getOrUndefined(McpSchema.decodeMessage(McpSchema.parseJson(line)))

const eventOf = (message: McpSchema.JsonRpcMessage): Transport.TransportEvent =>
  McpSchema.isResponse(message)
    ? Transport.TransportEvent.Response({ message })
    : McpSchema.isRequest(message)
    ? Transport.TransportEvent.ServerRequest({ message, related: undefined })
    : Transport.TransportEvent.Notification({ message })

/** JSON-RPC text over two queues: one the server end reads, one the client end reads. */
const memoryPipe = (server: McpServer.Server, log: PipeLog, options: PipeOptions = {}): Transport.Transport["Service"] => {
  let credential = options.token ?? "none"
  const record = (method: string, path: "trySend" | "request") => {
    log.out.push({ method, path, credential })
    Deferred.doneUnsafe(log.sent(method), Exit.void)
  }
  const connect = (emit: Transport.Emit, connectOptions?: Transport.ConnectOptions) =>
    Effect.gen(function*() {
      const toServer = yield* Queue.bounded<string>(256)
      const toClient = yield* Queue.unbounded<string>()
      const serverEnd = yield* server.connect((message) => Effect.asVoid(Queue.offer(toClient, JSON.stringify(message))))
      // the server end: every line the client wrote, in order
      yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(toServer), (line) => {
        const message = decode(line)
        return message === undefined ? Effect.void : serverEnd.handle(message)
      })))
      // the client end: an answer to a pending request is handed over at once when the client takes it
      const deliver = options.slow === true ? undefined : connectOptions?.deliver
      yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(toClient), (line) => {
        const message = decode(line)
        if (message === undefined) return Effect.void
        const event = eventOf(message)
        if (deliver !== undefined && deliver(event)) {
          log.delivered.push((message as McpSchema.JsonRpcResponse).id ?? "null")
          return Effect.void
        }
        log.emitted.push(event._tag)
        return emit(event)
      })))
      const write = (message: McpSchema.JsonRpcMessage): Effect.Effect<void> =>
        "method" in message && options.unanswered?.includes(message.method) === true
          ? Effect.void
          : Effect.asVoid(Queue.offer(toServer, JSON.stringify(message)))
      const request = (message: McpSchema.JsonRpcRequest): Effect.Effect<void, McpError.TransportFailure> =>
        Effect.gen(function*() {
          record(message.method, "request")
          const span = yield* Effect.option(Effect.currentSpan)
          log.spans.push({ method: message.method, span: span._tag === "Some" ? span.value.name : undefined })
          const status = options.refused?.[message.method]
          if (status === undefined) return yield* write(message)
          yield* emit(Transport.TransportEvent.RequestFailed({
            id: message.id,
            error: new McpError.TransportError({ transport: KIND, reason: "HttpStatus", status })
          }))
        })
      const trySend = (message: McpSchema.JsonRpcRequest): boolean => {
        if (options.unanswered?.includes(message.method) === true || options.refused?.[message.method] !== undefined) {
          return false
        }
        const taken = Queue.offerUnsafe(toServer, JSON.stringify(message))
        if (taken) record(message.method, "trySend")
        return taken
      }
      const notify = (message: McpSchema.JsonRpcNotification) =>
        Effect.andThen(Effect.sync(() => record(message.method, "request")), write(message))
      const connection: Transport.TransportConnection = {
        info: { binding: "memory-pipe", target: `memory-pipe:${server.info.name}` },
        request,
        notify,
        respond: (message) => Effect.andThen(Effect.sync(() => record("response", "request")), write(message)),
        cancel: (id) => write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } }),
        setSession: () => Effect.void,
        ...(options.slow === true ? {} : { trySend }),
        ...(options.partition === undefined ? {} : { partition: Effect.succeed(options.partition) })
      }
      return connection
    })
  return {
    kind: KIND,
    connect,
    ...(options.traits === undefined ? {} : { traits: options.traits }),
    ...(options.token === undefined ? {} : {
      credentials: {
        set: (auth) =>
          Effect.suspend(() => {
            log.auths.push(auth)
            const given = auth as { readonly _tag?: unknown; readonly token?: unknown }
            if (given._tag !== "Bearer" || !Redacted.isRedacted(given.token)) {
              return Effect.fail(new McpError.InvalidOption({ option: "auth", detail: "memory-pipe takes a bearer" }))
            }
            credential = String(Redacted.value(given.token))
            return Effect.void
          }),
        partition: Effect.sync(() => `token:${credential}`)
      }
    })
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The server and the client

const echo = McpServer.tool({
  name: "echo",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(`echo: ${text}`)
})

const REPORT = "mcp://reports/q1"

const serverOf = (eras: McpServer.Eras, cacheScope: "public" | "private" = "private") =>
  McpServer.make({
    name: "pipe-test",
    version: "1.0.0",
    eras,
    record: true,
    cacheHints: { ttlMs: 60_000, cacheScope },
    tools: [echo],
    resources: [McpServer.resource({ uri: REPORT, name: "report", read: Effect.succeed("Q1: 42") })]
  })

const clientOver = <const O extends McpClient.McpClientOptions<unknown> = {}>(
  transport: Transport.Transport["Service"],
  options: O = {} as O
) =>
  McpClient.make({ healthCheckInterval: false, reconnect: false, ...options }).pipe(
    Effect.provideService(Transport.Transport, transport)
  )

const texts = (result: McpSchema.CallToolResult) =>
  result.content.flatMap((block) => (block.type === "text" ? [block.text] : []))

describe("a transport written outside the library", () => {
  for (const era of ["legacy", "modern"] as const) {
    it.effect(`speaks the ${era} era and takes the fast path: trySend out, deliver in`, () =>
      Effect.gen(function*() {
        const log = makeLog()
        const client = yield* clientOver(memoryPipe(yield* serverOf(era), log))
        const session = yield* client.session
        assert.strictEqual(session.era, era)
        assert.strictEqual(session.transport.binding, "memory-pipe")
        const results = yield* Effect.forEach(
          ["a", "b", "c", "d", "e"],
          (text) => Effect.map(client.callTool({ name: "echo", arguments: { text } }), texts),
          { concurrency: 2 }
        )
        assert.deepStrictEqual(results, [["echo: a"], ["echo: b"], ["echo: c"], ["echo: d"], ["echo: e"]])
        const calls = log.out.filter((entry) => entry.method === "tools/call")
        assert.deepStrictEqual(calls.map((entry) => entry.path), Array(5).fill("trySend"))
        // every answer to a call was handed over at once, none went through `emit`
        assert.isAtLeast(log.delivered.length, 5)
        assert.notInclude(log.emitted, "Response")
      }))
  }

  it.effect("without trySend and deliver, every message goes through effects, and still arrives", () =>
    Effect.gen(function*() {
      const log = makeLog()
      const client = yield* clientOver(memoryPipe(yield* serverOf("modern"), log, { slow: true }))
      assert.deepStrictEqual(texts(yield* client.callTool({ name: "echo", arguments: { text: "x" } })), ["echo: x"])
      assert.deepStrictEqual(log.out.filter((entry) => entry.path === "trySend"), [])
      assert.deepStrictEqual(log.delivered, [])
      assert.include(log.emitted, "Response")
    }))

  it.effect("its credentials are what McpClient.setAuth swaps; a refusal is the transport's", () =>
    Effect.gen(function*() {
      const log = makeLog()
      const client = yield* clientOver(memoryPipe(yield* serverOf("modern"), log, { token: "alpha" }))
      yield* client.callTool({ name: "echo", arguments: { text: "1" } })
      const beta = HttpTransport.Auth.Bearer({ token: Redacted.make("beta") })
      yield* client.setAuth(beta)
      yield* client.callTool({ name: "echo", arguments: { text: "2" } })
      assert.deepStrictEqual(log.auths, [beta])
      const calls = log.out.filter((entry) => entry.method === "tools/call")
      assert.deepStrictEqual(calls.map((entry) => entry.credential), ["alpha", "beta"])
      const refused = yield* Effect.flip(client.setAuth(HttpTransport.Auth.None()))
      assert.strictEqual(refused.detail, "memory-pipe takes a bearer")
      // a transport that declares none takes none, and says so under its own label
      const bare = yield* clientOver(memoryPipe(yield* serverOf("modern"), makeLog()))
      const none = yield* Effect.flip(bare.setAuth(beta))
      assert.strictEqual(none.detail, "the memory-pipe transport takes no credentials")
    }))

  it.effect("the result cache keeps private results in its partitions: its credentials', else its connection's", () =>
    Effect.gen(function*() {
      const cache = yield* Layer.build(ResultCache.layerMemory())
      const server = yield* serverOf("modern")
      /** Reads the private report through a new client over its own pipe; answers whether the server was asked. */
      const readThrough = (options: PipeOptions) =>
        Effect.gen(function*() {
          const client = yield* clientOver(memoryPipe(server, makeLog(), options), {
            resultCache: ResultCache.ResultCache
          }).pipe(Effect.provide(cache))
          const before = (yield* server.received("resources/read")).length
          yield* client.readResource({ uri: REPORT })
          return (yield* server.received("resources/read")).length > before
        })
      // credentials: the same token shares, another does not
      assert.deepStrictEqual(
        [
          yield* readThrough({ token: "alpha" }),
          yield* readThrough({ token: "alpha" }),
          yield* readThrough({ token: "beta" })
        ],
        [true, false, true]
      )
      // no credentials: the connection's partition, when it has one; else each client its own
      assert.deepStrictEqual(
        [
          yield* readThrough({ partition: "pipe:one" }),
          yield* readThrough({ partition: "pipe:one" }),
          yield* readThrough({ partition: "pipe:two" }),
          yield* readThrough({}),
          yield* readThrough({})
        ],
        [true, false, true, true, true]
      )
    }))

  describe("its traits", () => {
    /** A client connecting to a legacy server that never answers the probe, through a pipe with these traits. */
    const silentProbe = (traits: Transport.Traits | undefined, options: McpClient.McpClientOptions = {}) =>
      Effect.gen(function*() {
        const log = makeLog()
        const transport = memoryPipe(yield* serverOf("legacy"), log, { traits, unanswered: ["server/discover"] })
        const fiber = yield* Effect.forkChild(clientOver(transport, options))
        yield* Deferred.await(log.sent("server/discover"))
        /** Moves the clock by `millis`; answers whether `initialize` was sent by then. */
        const after = (millis: number) =>
          Effect.gen(function*() {
            yield* TestClock.adjust(millis)
            for (let i = 0; i < 50; i++) yield* Effect.yieldNow
            return log.out.some((entry) => entry.method === "initialize")
          })
        return { fiber, after }
      })

    it.effect("no traits: the defaults of a stream (a 3 s probe; silence means a legacy server)", () =>
      Effect.gen(function*() {
        const { after, fiber } = yield* silentProbe(undefined)
        assert.deepStrictEqual([yield* after(2_999), yield* after(1)], [false, true])
        const client = yield* Fiber.join(fiber)
        assert.strictEqual((yield* client.session).era, "legacy")
      }))

    it.effect("probeTimeout: the probe waits as long as the transport says, unless the options say otherwise", () =>
      Effect.gen(function*() {
        const declared = yield* silentProbe({ probeTimeout: "7 seconds" })
        assert.deepStrictEqual([yield* declared.after(6_999), yield* declared.after(1)], [false, true])
        assert.strictEqual((yield* (yield* Fiber.join(declared.fiber)).session).era, "legacy")
        const given = yield* silentProbe({ probeTimeout: "7 seconds" }, { probeTimeout: "1 second" })
        assert.deepStrictEqual([yield* given.after(999), yield* given.after(1)], [false, true])
        yield* Fiber.join(given.fiber)
        const bad = yield* Effect.flip(
          clientOver(memoryPipe(yield* serverOf("legacy"), makeLog(), { traits: { probeTimeout: -1 } }))
        )
        assert.strictEqual(bad._tag, "InvalidOption")
      }))

    it.effect("probeFailures \"status\": silence is an outage, reported under the transport's own label", () =>
      Effect.gen(function*() {
        const { after, fiber } = yield* silentProbe({ probeFailures: "status" })
        yield* after(3_000)
        const failure = yield* Effect.flip(Fiber.join(fiber))
        assert.strictEqual(failure._tag, "TransportError")
        if (failure._tag !== "TransportError") return
        assert.deepStrictEqual([failure.transport, failure.reason], [KIND, "Timeout"])
        assert.match(failure.message, /^memory-pipe transport: Timeout/)
        // the label survives the error's schema both ways
        const encoded = Schema.encodeSync(McpError.TransportError)(failure)
        assert.strictEqual(Schema.decodeUnknownSync(McpError.TransportError)(encoded).transport, KIND)
      }))

    it.effect("probeFailures \"status\": a 404 refusing the probe means a legacy server; on a stream it is a failure", () =>
      Effect.gen(function*() {
        const refused = { "server/discover": 404 }
        const byStatus = yield* clientOver(
          memoryPipe(yield* serverOf("legacy"), makeLog(), { traits: { probeFailures: "status" }, refused })
        )
        assert.strictEqual((yield* byStatus.session).era, "legacy")
        const onStream = yield* Effect.flip(clientOver(memoryPipe(yield* serverOf("legacy"), makeLog(), { refused })))
        assert.deepStrictEqual(
          [onStream._tag, onStream._tag === "TransportError" ? onStream.status : undefined],
          ["TransportError", 404]
        )
      }))

    it.effect("untracedSend: its request runs outside the call's span; by default inside it", () =>
      Effect.gen(function*() {
        const spanOfCall = (traits: Transport.Traits | undefined) =>
          Effect.gen(function*() {
            const log = makeLog()
            const client = yield* clientOver(memoryPipe(yield* serverOf("modern"), log, { traits, slow: true }))
            yield* client.callTool({ name: "echo", arguments: { text: "t" } }).pipe(Effect.withSpan("caller"))
            return log.spans.find((entry) => entry.method === "tools/call")?.span
          })
        assert.strictEqual(yield* spanOfCall(undefined), "McpClient tools/call")
        assert.strictEqual(yield* spanOfCall({ untracedSend: true }), "caller")
      }))
  })
})
