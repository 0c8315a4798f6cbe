/**
 * Interop: `@modelcontextprotocol/server-everything` (the SDK v1 reference server, legacy revisions) over stdio,
 * Streamable HTTP and HTTP+SSE, with its own tools, resources and prompts.
 */
import * as Effect from "effect/Effect"
import * as Everything from "../fixtures/http/everything.js"
import * as Interop from "../utils/interop.js"
import * as RealServers from "../utils/realServers.js"

const profile: Interop.Profile = {
  era: "legacy",
  echo: { name: "echo", arguments: { message: "hi" }, text: "Echo: hi" },
  slow: { name: "trigger-long-running-operation", arguments: { duration: 30, steps: 3 } },
  resource: { uri: "demo://resource/dynamic/text/1", text: "Resource 1: This is a plaintext resource" },
  prompt: { name: "args-prompt", arguments: { city: "Paris" }, text: "What's weather in Paris?" },
  completion: { prompt: "completable-prompt", argument: "department", value: "Sa", expected: ["Sales"] }
}

Interop.suite("server-everything over stdio", Interop.overStdio(RealServers.everything.args), profile)
Interop.suite(
  "server-everything over Streamable HTTP",
  Interop.overHttp(Effect.map(Everything.start("streamableHttp"), (server) => server.url)),
  profile
)
Interop.suite(
  "server-everything over HTTP+SSE",
  Interop.overHttp(Effect.map(Everything.start("sse"), (server) => server.url)),
  profile
)
