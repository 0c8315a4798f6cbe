/**
 * `conduit` end to end over HTTP: `conduit demo-server --http 0` as a child process, reached with `--url` in
 * each era (and a legacy-only server found by the era probe), Ctrl-C closing a modern request's stream, and the
 * exit codes of an HTTP refusal (401 → 4) and an unreachable server (3).
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Http from "node:http"
import * as Cli from "./utils/cli.js"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Starts `conduit demo-server --http 0` and returns its URL and its stderr. */
const demoServer = (era: "auto" | "legacy" | "modern" = "auto") =>
  Effect.gen(function*() {
    const running = yield* Cli.start(["demo-server", "--http", "0", ...(era === "auto" ? [] : ["--era", era])])
    yield* running.awaitStderr("/mcp")
    const stderr = yield* SubscriptionRef.get(running.stderr)
    const url = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr)?.[1]
    assert.isDefined(url, stderr)
    return { url: url ?? "", running }
  })

/** An HTTP server answering every request with 401 and a Bearer challenge. */
const refusingServer = Effect.acquireRelease(
  Effect.callback<Http.Server>((resume) => {
    const server = Http.createServer((_request, response) => {
      response.writeHead(401, { "www-authenticate": "Bearer realm=\"test\", scope=\"mcp\"" }).end()
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
).pipe(Effect.map((server) => {
  const address = server.address()
  return `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/mcp`
}))

layer(Cli.layer, { excludeTestServices: true })("conduit over HTTP", (it) => {
  it.effect("the demo server over Streamable HTTP, modern and legacy", () =>
    Effect.gen(function*() {
      const server = yield* demoServer()
      const [probe, legacyProbe, call, legacyCall] = yield* Cli.runAll([
        ["--url", server.url, "probe", "--json"],
        ["--url", server.url, "--era", "legacy", "probe", "--json"],
        ["--url", server.url, "tools", "call", "slow", "{\"steps\":2,\"delayMs\":1}", "--json"],
        ["--url", server.url, "--era", "legacy", "resources", "read", "demo://notes/mcp"]
      ])
      assert.strictEqual(probe.code, 0, probe.stderr)
      const modern = Cli.parseJson(probe)
      assert.isTrue(isRecord(modern) && modern.era === "modern" && modern.transport === "streamable-http")
      assert.strictEqual(legacyProbe.code, 0, legacyProbe.stderr)
      const legacy = Cli.parseJson(legacyProbe)
      assert.isTrue(isRecord(legacy) && legacy.era === "legacy" && legacy.transport === "streamable-http")
      assert.strictEqual(call.code, 0, call.stderr)
      const result = Cli.parseJson(call)
      assert.isTrue(isRecord(result) && JSON.stringify(result.content) === "[{\"type\":\"text\",\"text\":\"done after 2 steps\"}]")
      assert.include(call.stderr, "progress 2/2")
      assert.strictEqual(legacyCall.code, 0, legacyCall.stderr)
      assert.include(legacyCall.stdout, "Model Context Protocol")
    }))

  it.effect("listen hears a resource update another client causes, in both eras", () =>
    Effect.gen(function*() {
      const server = yield* demoServer()
      for (const era of ["modern", "legacy"]) {
        const listening = yield* Cli.start(["--url", server.url, "--era", era, "listen", "--uri", "demo://about", "--json"])
        yield* listening.awaitStderr("Ctrl-C stops")
        const touch = yield* Cli.run(["--url", server.url, "tools", "call", "touch", "{\"uri\":\"demo://about\"}"])
        assert.strictEqual(touch.code, 0, touch.stderr)
        yield* listening.stdout.pipe(SubscriptionRef.changes).pipe(
          Stream.filter((out) => out.includes("notifications/resources/updated")),
          Stream.take(1),
          Stream.runDrain
        )
        yield* listening.signal("SIGINT")
        const result = yield* listening.result
        assert.strictEqual(result.code, 130, result.stderr)
        const updates = result.stdout.trim().split("\n").map((line) => JSON.parse(line))
          .filter((n) => isRecord(n) && n.method === "notifications/resources/updated")
        assert.strictEqual(updates.length, 1, `${era}: ${result.stdout}`)
        assert.strictEqual(updates[0].params.uri, "demo://about")
      }
    }))

  it.effect("a legacy-only server is found by the era probe", () =>
    Effect.gen(function*() {
      const server = yield* demoServer("legacy")
      const probe = yield* Cli.run(["--url", server.url, "probe", "--json"])
      assert.strictEqual(probe.code, 0, probe.stderr)
      const session = Cli.parseJson(probe)
      assert.isTrue(isRecord(session) && session.era === "legacy" && session.protocolVersion === "2025-11-25")
    }))

  it.effect("Ctrl-C cancels the call the era's way (modern: close the stream; legacy: notifications/cancelled)", () =>
    Effect.gen(function*() {
      const server = yield* demoServer()
      for (const era of ["modern", "legacy"]) {
        const running = yield* Cli.start([
          "--url",
          server.url,
          "--era",
          era,
          "tools",
          "call",
          "slow",
          "{\"steps\":600,\"delayMs\":100}"
        ])
        yield* running.awaitStderr("progress 1/600")
        yield* running.signal("SIGINT")
        const result = yield* running.result
        assert.strictEqual(result.code, 130, result.stderr)
        assert.strictEqual(result.stdout, "")
      }
      // both calls were cancelled on the server (each request is number 1 of its connection or session)
      yield* server.running.stderr.pipe(SubscriptionRef.changes).pipe(
        Stream.filter((log) => log.split("(tools/call slow) cancelled by the client").length === 3),
        Stream.take(1),
        Stream.runDrain
      )
    }))

  it.effect("exit code 4 on HTTP 401, 3 when nothing listens", () =>
    Effect.gen(function*() {
      const url = yield* refusingServer
      const [refused, unreachable, badUrl] = yield* Cli.runAll([
        ["--url", url, "probe"],
        ["--url", "http://127.0.0.1:9/mcp", "probe"],
        ["--url", "ftp://example.com/mcp", "probe"]
      ])
      assert.strictEqual(refused.code, 4, refused.stderr)
      assert.include(refused.stderr, "401")
      // the hint names the server
      assert.include(refused.stderr, `to sign in, run: conduit login --url ${url}`)
      assert.strictEqual(unreachable.code, 3, unreachable.stderr)
      assert.strictEqual(badUrl.code, 2)
    }))
})
