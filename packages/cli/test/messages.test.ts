/**
 * Failures said in words: an era the server does not speak (the same exit code over stdio and HTTP), and an
 * HTTP error with the first line of what the server answered (a 404 with a hint about the path instead).
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Http from "node:http"
import * as Cli from "./utils/cli.js"

/** A server answering every request with 500 and a body of two lines, the first with an escape sequence. */
const failingServer = (
  answer: (response: Http.ServerResponse) => void = (response) =>
    response.writeHead(500, { "content-type": "text/plain" }).end("database is \u001b[31mdown\nat line 2")
) =>
  Effect.acquireRelease(
    Effect.callback<Http.Server>((resume) => {
      const server = Http.createServer((_request, response) => answer(response))
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  ).pipe(Effect.map((server) => {
    const address = server.address()
    return `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/mcp`
  }))

layer(Cli.layer, { excludeTestServices: true })("failures in words", (it) => {
  it.effect("--era modern against a legacy-only server says so, with exit 5 over stdio and over HTTP", () =>
    Effect.gen(function*() {
      const running = yield* Cli.start(["demo-server", "--http", "0", "--era", "legacy"])
      yield* running.awaitStderr("/mcp")
      const url = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(yield* SubscriptionRef.get(running.stderr))?.[1] ?? ""
      const [stdio, http] = yield* Cli.runAll([
        ["--era", "modern", "--stdio", Cli.demoServerCommand("legacy"), "probe"],
        ["--era", "modern", "--url", url, "probe"]
      ])
      for (const result of [stdio, http]) {
        assert.strictEqual(result.code, 5, result.stderr)
        assert.include(result.stderr, "does not speak the 2026-07-28 protocol asked for with --era modern")
        assert.include(result.stderr, "try --era legacy")
      }
    }))

  it.effect("an HTTP error shows the first line of the body, without escape sequences", () =>
    Effect.gen(function*() {
      const url = yield* failingServer()
      const result = yield* Cli.run(["--url", url, "probe"])
      assert.strictEqual(result.code, 3)
      assert.strictEqual(result.stderr, "conduit: the server answered HTTP 500: database is down\n")
    }))

  it.effect("a URL where nothing serves MCP (a web server's 404 page) says to check the path, not the page", () =>
    Effect.gen(function*() {
      const url = yield* failingServer((response) =>
        response.writeHead(404, { "content-type": "text/html" }).end("<!doctype html>\n<html><body>Not Found</body></html>")
      )
      const result = yield* Cli.run(["--url", url, "probe"])
      assert.strictEqual(result.code, 3)
      assert.strictEqual(
        result.stderr,
        "conduit: the server answered HTTP 404: nothing serves MCP at this URL (check its path)\n"
      )
    }))
})
