/**
 * Interop: the official SDK v2 (`@modelcontextprotocol/server`, 2026-07-28 with a legacy fallback) over stdio
 * (`serveStdio`, both eras) and Streamable HTTP (`createMcpHandler`, both eras), through the repository's SDK v2
 * fixtures.
 */
import * as Effect from "effect/Effect"
import * as SdkV2Http from "../fixtures/http/sdkV2Http.js"
import * as Interop from "../utils/interop.js"
import * as RealServers from "../utils/realServers.js"

const stdioProfile: Interop.Profile = {
  era: "modern",
  echo: { name: "echo", arguments: { message: "hi" }, text: "Echo: hi" },
  slow: { name: "wait", arguments: { ms: 60_000 } },
  resource: { uri: "fixture://greeting", text: "hello from the SDK v2 fixture" },
  prompt: { name: "greet", arguments: { name: "Ada" }, text: "Say hello to Ada." }
}
// the HTTP fixture serves tools only
const httpProfile: Interop.Profile = {
  era: "modern",
  echo: stdioProfile.echo,
  slow: stdioProfile.slow
}
const http = Effect.map(SdkV2Http.start, (server) => server.url)

Interop.suite("SDK v2 over stdio", Interop.overStdio(RealServers.sdkV2.args), stdioProfile)
Interop.suite("SDK v2 over stdio, legacy", Interop.overStdio(RealServers.sdkV2.args, {}, { era: "legacy" }), {
  ...stdioProfile,
  era: "legacy"
})
Interop.suite("SDK v2 over Streamable HTTP", Interop.overHttp(http), httpProfile)
Interop.suite("SDK v2 over Streamable HTTP, legacy", Interop.overHttp(http, { era: "legacy" }), {
  ...httpProfile,
  era: "legacy"
})
