import { Cause, Chunk, Clock, Config, ConfigProvider, Context, Deferred, Duration, Effect, Exit, Fiber, FiberMap, Filter, Layer, Logger, Metric, Option, Predicate, PubSub, Queue, Redacted, References, Result, Schedule, Schema, SchemaGetter, SchemaIssue, SchemaTransformation, Scope, Semaphore, Stream, SubscriptionRef, Tracer, Pull } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Headers from "effect/http/Headers"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as PlatformError from "effect/PlatformError"
import * as FileSystem from "effect/FileSystem"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import * as Base64Url from "effect/encoding/Base64Url"
import * as TestClock from "effect/testing/TestClock"
import { NodeServices, NodeHttpClient, NodeRuntime } from "@effect/platform-node"

// services
export class Transport extends Context.Service<Transport, { readonly send: (s: string) => Effect.Effect<void> }>()("x/Transport") {}
export const CurrentServer = Context.Reference<string | undefined>("x/CurrentServer", { defaultValue: () => undefined })
type TransportShape = Transport["Service"]
export const useT = (t: TransportShape) => t.send("a")
export const l1: Layer.Layer<Transport> = Layer.succeed(Transport, { send: () => Effect.void })
export const l2 = Layer.effect(Transport, Effect.gen(function*() { yield* Effect.addFinalizer(() => Effect.void); return Transport.of({ send: () => Effect.void }) }))
export const l3 = Layer.unwrap(Effect.succeed(l1))
export const l4 = Layer.effectDiscard(Effect.forkScoped(Effect.never))
export const withServer = Effect.provideService(Effect.gen(function*() { return yield* CurrentServer }), CurrentServer, "a")

// errors
export class Boom extends Schema.TaggedError<Boom>("x/Boom")("Boom", { detail: Schema.String, cause: Schema.optional(Schema.Defect()) }) {
  override get message() { return this.detail }
}
export const e1 = Effect.fail(new Boom({ detail: "d" })).pipe(Effect.catchTag("Boom", (e) => Effect.succeed(e.detail)))
export const e2 = Effect.fail("x").pipe(Effect.catch((e) => Effect.succeed(e)))
export const e3 = Effect.die("x").pipe(Effect.catchCause((c) => Effect.succeed(Cause.hasInterruptsOnly(c))))
export const e4 = Effect.result(Effect.fail(1)).pipe(Effect.map((r) => Result.isFailure(r) ? r.failure : r.success))
export const e5 = Effect.timeoutOrElse(Effect.never, { duration: "1 second", orElse: () => Effect.fail(new Boom({ detail: "t" })) })
export const e6 = Effect.repeat(Effect.void, { times: 3 })
export const e7 = Effect.andThen(Effect.void, Effect.succeed(1))
export const e8 = Effect.tap(Effect.succeed(1), Effect.void)
export const e9 = Effect.callback<number>((resume) => { const t = setTimeout(() => resume(Effect.succeed(1)), 1); return Effect.sync(() => clearTimeout(t)) })
export const e10 = Effect.fromOption(Option.some(1))
export const e11 = Effect.fromResult(Result.succeed(1))
export const e12 = Effect.when(Effect.void, Effect.map(Effect.succeed(true), (b) => !b))
export const e13 = Effect.gen(function*() { const c = yield* Clock.Clock; return c.currentTimeMillisUnsafe() })
export const e14 = Effect.gen(function*() { const t = yield* Tracer.Tracer; return t })
export const e15 = Effect.filterOrElse(Effect.succeed(1), (n) => n === 0, () => Effect.die(new Error("nonzero")))
export const e16 = Cause.findErrorOption(Cause.fail(1))
export const e17 = Exit.getCause(Exit.fail(1))
export const sem = Effect.gen(function*() { const s = yield* Semaphore.make(1); return yield* s.withPermits(1)(Effect.succeed(1)) })
export const ref = Effect.gen(function*() { const r = yield* References.MinimumLogLevel; return r })
export const ctx = Effect.gen(function*() { const c = yield* Effect.context<Transport>(); return Effect.runForkWith(c)(Effect.void) })

// scope
export const sc = Effect.gen(function*() {
  const scope = yield* Scope.make("sequential")
  const child = yield* Scope.fork(scope, "sequential")
  yield* Scope.provide(Effect.addFinalizer(() => Effect.void), child)
  yield* Scope.addFinalizer(scope, Effect.void)
  yield* Scope.close(scope, Exit.void)
})

// fibers
export const fb = Effect.gen(function*() {
  const f = yield* Effect.forkChild(Effect.succeed(1))
  const d = yield* Effect.forkDetach(Effect.never)
  const polled = f.pollUnsafe()
  yield* Fiber.interrupt(d)
  const m = yield* FiberMap.make<string>()
  yield* FiberMap.run(m, "k", Effect.never)
  return [yield* Fiber.join(f), polled] as const
})

// queue / mailbox
export const qm = Effect.gen(function*() {
  const q = yield* Queue.make<string, Cause.Done>({ capacity: 10 })
  Queue.offerUnsafe(q, "a")
  yield* Queue.end(q)
  const drained = yield* Queue.clear(q)
  const s = Stream.fromQueue(q)
  const ev = yield* Queue.make<number, Boom | Cause.Done>()
  yield* Effect.succeed(1).pipe(Queue.into(ev))
  return [drained, s] as const
})
export const ps = Effect.gen(function*() { const p = yield* PubSub.sliding<string>(10); yield* PubSub.publish(p, "x"); return Stream.fromPubSub(p) })
export const sr = Effect.gen(function*() { const r = yield* SubscriptionRef.make(0); return SubscriptionRef.changes(r) })

// stream
export const st = Effect.gen(function*() {
  const arr: Array<number> = yield* Stream.runCollect(Stream.make(1, 2, 3))
  const h = yield* Stream.runHead(Stream.make(1))
  const pulled = yield* Effect.scoped(Effect.gen(function*() {
    const pull = yield* Stream.toPull(Stream.make(1, 2))
    return yield* pull.pipe(Pull.catchDone(() => Effect.succeed([] as ReadonlyArray<number>)))
  }))
  const fm = Stream.filterMap(Stream.make(1, 2), Filter.fromPredicate((n: number) => n > 1))
  const acc = Stream.mapAccum(Stream.make(1, 2), () => 0, (s, a) => [s + a, [s + a]] as const)
  const pg = Stream.paginate(0, (n) => Effect.succeed([[n], n < 3 ? Option.some(n + 1) : Option.none()] as const))
  const un = Stream.unfold(0, (n) => Effect.succeed(n < 3 ? [n, n + 1] as const : undefined))
  const ma = Stream.mapArray(Stream.make(1, 2), (chunk) => chunk)
  return [arr, h, pulled, fm, acc, pg, un, ma] as const
})

// schema
export const Lit = Schema.Literals(["a", "b"])
export const U = Schema.Union([Schema.String, Schema.Int])
export const Rec = Schema.Record(Schema.String, Schema.Unknown)
export const WithDefault = Schema.Struct({
  n: Schema.Number.pipe(Schema.withDecodingDefaultType(Effect.succeed(5))),
  o: Schema.optional(Schema.String),
  k: Schema.optionalKey(Schema.String)
})
export const dec = Schema.decodeUnknownResult(WithDefault)
export const decE = Schema.decodeUnknownEffect(WithDefault)
export const Json = Schema.fromJsonString(Schema.Unknown)
export const Icons = Schema.Array(Schema.String).pipe(Schema.decodeTo(Schema.Array(Schema.String), SchemaTransformation.transform<ReadonlyArray<string>, ReadonlyArray<string>>({ decode: (xs) => xs.filter((x) => x !== ""), encode: (xs) => xs })))
export const SafeJson = Schema.String.pipe(Schema.decodeTo(Schema.Unknown, {
  decode: SchemaGetter.transformEffect((text: string) => Effect.try({ try: () => JSON.parse(text) as unknown, catch: () => new SchemaIssue.InvalidValue({ message: "not JSON" }, text) })),
  encode: SchemaGetter.transformEffect((v: unknown) => Effect.try({ try: () => JSON.stringify(v), catch: () => new SchemaIssue.InvalidValue({ message: "not serializable" }, v) }))
}))
export const Composed = Schema.StringFromBase64Url.pipe(Schema.decodeTo(SafeJson), Schema.decodeTo(WithDefault))
export const Bounded = Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 1000 }))
export const NonNeg = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
export const annotated = Schema.String.annotate({ description: "x" })
export const Red = Schema.Struct({ token: Schema.RedactedFromValue(Schema.String) })
export const fmt = (e: Schema.SchemaError) => [e.message, SchemaIssue.makeFormatterStandardSchemaV1()(e.issue).issues] as const
export const Nullable = Schema.optionalKey(Schema.NullOr(Schema.String)).pipe(Schema.decodeTo(Schema.optionalKey(Schema.String), {
  decode: SchemaGetter.transformOptional(Option.filter(Predicate.isNotNull)),
  encode: SchemaGetter.passthrough()
}))
export const Rest = Schema.StructWithRest(Schema.Struct({}), [Schema.Record(Schema.String, Schema.Unknown)])
export const codecType: Schema.Codec<{ readonly a: string }, { readonly a: string }> = Schema.Struct({ a: Schema.String })

// config
export const cfg = Config.all({ a: Config.String("A"), n: Config.Int("N"), arr: Config.Array(Schema.String, "ARR"), d: Config.Duration("D"), r: Config.Redacted("R"), m: Config.option(Config.Boolean("B")) })
export const cfgRun = Effect.provideService(cfg, ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({ A: "x" }))

// metrics
export const counter = Metric.counter("c", { description: "d", incremental: true })
export const hist = Metric.histogram("h", { boundaries: Metric.exponentialBoundaries({ start: 0.5, factor: 2, count: 35 }) })
export const hist2 = Metric.mapInput(Metric.withAttributes(hist, { method: "m" }), (d: Duration.Duration) => Duration.toMillis(d))
export const mx = Effect.void.pipe(Effect.trackDuration(hist2), Effect.tapError(() => Metric.update(Metric.withAttributes(counter, { error: "x" }), 1)))

// schedule
export const sch = Schedule.exponential("200 millis", 2).pipe((s) => Schedule.min([s, Schedule.spaced("10 seconds")]), Schedule.jittered, (s) => Schedule.max([s, Schedule.recurs(20)]))
export const step = Effect.gen(function*() { const next = yield* Schedule.toStepWithSleep(sch); return yield* Effect.exit(next(undefined)) })

// logger
export const lg = Effect.log("x").pipe(Effect.provide(Logger.layer([Logger.consoleLogFmt])), Effect.provideService(References.MinimumLogLevel, "Debug"))

// http
export const http = Effect.gen(function*() {
  const client = yield* HttpClient.HttpClient
  const req = HttpClientRequest.post("http://x").pipe(HttpClientRequest.bodyJsonUnsafe({ a: 1 }), HttpClientRequest.setHeaders({ a: "b" }))
  const res = yield* client.execute(req).pipe(Effect.catchIf((e) => e.reason._tag === "TransportError", () => Effect.die("t")))
  const headers: Headers.Headers = res.headers
  return [res.status, headers, HttpClientRequest.toUrl(req)] as const
}).pipe(Effect.provideService(Headers.CurrentRedactedNames, ["authorization"]), Effect.provideService(HttpClient.TracerDisabledWhen, () => true), Effect.scoped, Effect.provide(FetchHttpClient.layer))
export const httpErr = new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request: HttpClientRequest.get("http://x"), cause: new Error("x") }) })
export const fromWeb = (r: Response) => HttpClientResponse.fromWeb(HttpClientRequest.get("http://x"), r)
export const undici = NodeHttpClient.layerUndici

// platform
export const kv = Effect.gen(function*() { const s = yield* KeyValueStore.KeyValueStore; const v: string | undefined = yield* s.get("k"); return v }).pipe(Effect.provide(KeyValueStore.layerMemory))
export const perr = PlatformError.systemError({ _tag: "NotFound", module: "KeyValueStore", method: "get" })
export const isNotFound = (e: PlatformError.PlatformError) => e.reason._tag === "NotFound"
export const fsx = Effect.gen(function*() { const fs = yield* FileSystem.FileSystem; return yield* fs.readFileString("/x") })
export const proc = Effect.gen(function*() {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const cmd = ChildProcess.make("node", ["-v"], { cwd: "/tmp", env: { A: "1" }, extendEnv: true, killSignal: "SIGTERM", forceKillAfter: "2 seconds" })
  const handle = yield* spawner.spawn(cmd)
  yield* Stream.run(Stream.encodeText(Stream.make("x\n")), handle.stdin)
  const out = yield* Stream.mkString(Stream.decodeText(handle.stdout))
  const code = yield* handle.exitCode
  yield* handle.kill({ killSignal: "SIGKILL" })
  return [out, code === ChildProcessSpawner.ExitCode(0), handle.pid] as const
}).pipe(Effect.scoped, Effect.provide(NodeServices.layer))
export const b64 = Base64Url.encode("x")
export const tc = Effect.gen(function*() { yield* TestClock.adjust("1 second"); return yield* Clock.currentTimeMillis })
export const red = Redacted.make("x")
export const main = () => NodeRuntime.runMain(Effect.void)
export const chunks = [Chunk.fromArrayUnsafe([1]), Chunk.getUnsafe(Chunk.of(1), 0), Chunk.headUnsafe(Chunk.of(1))]
export const dl = Deferred.makeUnsafe<number>()
export const dd = Deferred.doneUnsafe(dl, Effect.succeed(1))
export const dur = [Duration.fromInputUnsafe("1 second")]
