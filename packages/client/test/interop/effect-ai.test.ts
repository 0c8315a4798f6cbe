/**
 * Interop: Effect's own `McpServer` (`effect/ai`, its legacy revisions) over stdio and Streamable HTTP.
 */
import * as Effect from "effect/Effect"
import * as Interop from "../utils/interop.js"

const script = Interop.fixture("effect-ai.mjs")

const profile: Interop.Profile = {
  era: "legacy",
  echo: { name: "echo", arguments: { text: "hi" }, text: "echo: hi" },
  slow: { name: "slow", arguments: {} },
  resource: { uri: "interop://readme", text: "interop readme" },
  prompt: { name: "greet", arguments: { name: "Ada" }, text: "Hello, Ada!" },
  completion: { prompt: "greet", argument: "name", value: "al", expected: ["alice", "albert"] }
}

const http = (...extra: ReadonlyArray<string>) =>
  Effect.map(
    Interop.startHttp((port) => [script, "http", String(port), ...extra], "interop server listening"),
    (port) => `http://127.0.0.1:${port}/mcp`
  )

Interop.suite("effect/ai McpServer over stdio", Interop.overStdio([script, "stdio"]), profile)
Interop.suite("effect/ai McpServer over HTTP", Interop.overHttp(http()), profile)

// Effect 4's server also speaks 2026-07-28: offered with the legacy revisions, the probe must find it
const modern: Interop.Profile = { ...profile, era: "modern" }
Interop.suite("effect/ai McpServer over stdio, modern", Interop.overStdio([script, "stdio", "modern"]), modern)
Interop.suite("effect/ai McpServer over HTTP, modern", Interop.overHttp(http("modern")), modern)
