/**
 * Interop: `mcp-framework` (legacy revisions) over stdio, Streamable HTTP and HTTP+SSE.
 */
import * as Effect from "effect/Effect"
import * as Interop from "../utils/interop.js"

const script = Interop.fixture("mcp-framework/server.mjs")

const profile: Interop.Profile = {
  era: "legacy",
  echo: { name: "echo", arguments: { text: "hi" }, text: "echo: hi" },
  slow: { name: "slow", arguments: {} },
  resource: { uri: "interop://readme", text: "interop readme" },
  prompt: { name: "greet", arguments: { name: "Ada" }, text: "Hello, Ada!" },
  completion: { prompt: "greet", argument: "name", value: "al", expected: ["alice", "albert"] }
}

const http = (mode: "http" | "sse", path: string) =>
  Effect.map(
    Interop.startHttp((port) => [script, mode, String(port)], "Server running and ready"),
    (port) => `http://127.0.0.1:${port}${path}`
  )

Interop.suite("mcp-framework over stdio", Interop.overStdio([script, "stdio"]), profile)
Interop.suite("mcp-framework over Streamable HTTP", Interop.overHttp(http("http", "/mcp")), profile)
Interop.suite("mcp-framework over HTTP+SSE", Interop.overHttp(http("sse", "/sse")), profile)
