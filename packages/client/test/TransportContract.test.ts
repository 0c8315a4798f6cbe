/**
 * The Transport contract (test/utils/transportContract.ts) run by every binding against the fixture server:
 * in-process, stdio, Streamable HTTP (modern and legacy) and HTTP+SSE (2024-11-05).
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import type * as McpServer from "@conduit-mcp/server/McpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Module from "node:module"
import * as Url from "node:url"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as StdioTransport from "../src/StdioTransport.js"
import type * as Transport from "../src/Transport.js"
import * as Common from "./fixtures/http/common.js"
import * as McpServerHttp from "./fixtures/http/mcpServerHttp.js"
import * as McpServerSse from "./fixtures/http/mcpServerSse.js"
import * as FixtureServer from "./utils/fixtureServer.js"
import { ServerSide, transportContract } from "./utils/transportContract.js"

const require = Module.createRequire(import.meta.url)
const tsx = Url.pathToFileURL(require.resolve("tsx")).href
const fixtureProgram = Url.fileURLToPath(new URL("./fixtures/server.ts", import.meta.url))

const serverSideOf = (server: McpServer.Server) =>
  Layer.succeed(ServerSide, { awaitInterrupted: (id) => Effect.asVoid(server.awaitInterrupted(id)) })

/** A transport over a fixture server made for the suite, served by `serve`. */
const served = <E>(
  serve: (server: McpServer.Server) => Layer.Layer<Transport.Transport, E>
): Layer.Layer<Transport.Transport | ServerSide, E> =>
  Layer.unwrap(
    Effect.map(FixtureServer.make(), (server) => Layer.merge(serve(server), serverSideOf(server)))
  )

const inProcess = served((server) => InProcessTransport.layer(server))

const overHttp = (binding: "streamable-http" | "sse") =>
  served((server) =>
    Layer.unwrap(
      Effect.map(
        binding === "sse" ? McpServerSse.serve(server) : McpServerHttp.serve(server),
        (url) => Common.transport({ url, binding })
      )
    )
  )

const overStdio = () => {
  const transport = StdioTransport.layer({
    command: process.execPath,
    args: ["--import", tsx, fixtureProgram],
    closeTimeout: "1 second"
  }).pipe(Layer.provide(NodeServices.layer))
  const serverSide = Layer.effect(
    ServerSide,
    Effect.map(StdioTransport.StdioProcess, (child) => ({
      awaitInterrupted: (id) =>
        Effect.repeat(child.stderrTail, {
          until: (lines) => lines.includes(`interrupted ${id}`),
          schedule: Schedule.spaced("20 millis")
        }).pipe(Effect.asVoid)
    }))
  )
  return Layer.merge(transport, serverSide.pipe(Layer.provide(transport)))
}

transportContract("in-process, modern", inProcess, { binding: "in-process", era: "modern" })
transportContract("in-process, legacy", inProcess, { binding: "in-process", era: "legacy" })
transportContract("stdio, modern", overStdio(), { binding: "stdio", era: "modern" })
transportContract("stdio, legacy", overStdio(), { binding: "stdio", era: "legacy" })
transportContract("Streamable HTTP, modern", overHttp("streamable-http"), {
  binding: "streamable-http",
  era: "modern"
})
transportContract("Streamable HTTP, legacy", overHttp("streamable-http"), {
  binding: "streamable-http",
  era: "legacy"
})
transportContract("HTTP+SSE (2024-11-05)", overHttp("sse"), {
  binding: "sse",
  era: "legacy",
  legacyVersion: "2024-11-05"
})
