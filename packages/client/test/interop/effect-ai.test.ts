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

const http = Effect.map(
  Interop.startHttp((port) => [script, "http", String(port)], "interop server listening"),
  (port) => `http://127.0.0.1:${port}/mcp`
)

Interop.suite("effect/ai McpServer over stdio", Interop.overStdio([script, "stdio"]), profile)
Interop.suite("effect/ai McpServer over HTTP", Interop.overHttp(http), profile)
