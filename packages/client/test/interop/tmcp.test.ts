/**
 * Interop: `tmcp` (2026-07-28 and the legacy revisions) over stdio and Streamable HTTP.
 */
import * as Effect from "effect/Effect"
import * as Interop from "../utils/interop.js"

const script = Interop.fixture("tmcp.mjs")

const profile: Interop.Profile = {
  era: "modern",
  echo: { name: "echo", arguments: { text: "hi" }, text: "echo: hi" },
  slow: { name: "slow", arguments: {} },
  resource: { uri: "interop://readme", text: "interop readme" },
  prompt: { name: "greet", arguments: { name: "Ada" }, text: "Hello, Ada!" },
  completion: { prompt: "greet", argument: "name", value: "al", expected: ["alice", "albert"] }
}

const http = Effect.map(
  Interop.startHttp((port) => [script, "http", String(port)], "interop server listening"),
  (port) => `http://127.0.0.1:${port}/mcp`
)

Interop.suite("tmcp over stdio", Interop.overStdio([script, "stdio"]), profile)
Interop.suite("tmcp over Streamable HTTP", Interop.overHttp(http), profile)

// its legacy revisions (up to 2025-06-18), with the client pinned to them. Over stdio in the legacy era tmcp 1.20
// serves one request at a time and does not stop a cancelled one: a slow call holds back every later request, so
// the cancellation check is left out there.
Interop.suite("tmcp over stdio, legacy", Interop.overStdio([script, "stdio"], {}, { era: "legacy" }), {
  ...profile,
  era: "legacy",
  slow: undefined
})
Interop.suite("tmcp over Streamable HTTP, legacy", Interop.overHttp(http, { era: "legacy" }), {
  ...profile,
  era: "legacy"
})
