/**
 * Interop: the official SDK v1 (`@modelcontextprotocol/sdk`, legacy revisions) over stdio, Streamable HTTP and
 * HTTP+SSE.
 */
import * as Effect from "effect/Effect"
import * as Interop from "../utils/interop.js"

const script = Interop.fixture("sdk-v1.mjs")

const profile: Interop.Profile = {
  era: "legacy",
  echo: { name: "echo", arguments: { text: "hi" }, text: "echo: hi" },
  slow: { name: "slow", arguments: {} },
  resource: { uri: "interop://readme", text: "interop readme" },
  prompt: { name: "greet", arguments: { name: "Ada" }, text: "Hello, Ada!" },
  completion: { prompt: "greet", argument: "name", value: "al", expected: ["alice", "albert"] }
}

const http = (path: string) =>
  Effect.map(
    Interop.startHttp((port) => [script, "http", String(port)], "interop server listening"),
    (port) => `http://127.0.0.1:${port}${path}`
  )

Interop.suite("SDK v1 over stdio", Interop.overStdio([script, "stdio"]), profile)
Interop.suite("SDK v1 over Streamable HTTP", Interop.overHttp(http("/mcp")), profile)
Interop.suite("SDK v1 over HTTP+SSE", Interop.overHttp(http("/sse")), profile)
