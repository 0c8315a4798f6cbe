/**
 * The behavioural suite over every transport and both eras.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Module from "node:module"
import * as Url from "node:url"
import * as InProcessTransport from "../src/InProcessTransport.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpServer from "@conduit-mcp/server/McpServer"
import * as StdioTransport from "../src/StdioTransport.js"
import { behaviourSuite, ServerSide } from "./utils/behaviourSuite.js"
import * as FixtureServer from "./utils/fixtureServer.js"
import * as Recording from "./utils/recordingTransport.js"

const require = Module.createRequire(import.meta.url)
const tsx = Url.pathToFileURL(require.resolve("tsx")).href
const fixtureProgram = Url.fileURLToPath(new URL("./fixtures/server.ts", import.meta.url))

const clientOptions = (era: McpClient.EraOption): McpClient.McpClientOptions => ({
  era,
  // A TypeScript fixture may take seconds to start on a loaded machine: its silence must not read as "legacy".
  probeTimeout: "20 seconds",
  healthCheckInterval: false,
  reconnect: Schedule.spaced("100 millis")
})

const inProcess = (era: McpClient.EraOption) =>
  Layer.unwrap(Effect.map(FixtureServer.make({ pageSize: 2 }), (server: McpServer.Server) =>
    McpClient.layer(clientOptions(era)).pipe(
      Layer.provideMerge(Recording.layer(InProcessTransport.layer(server))),
      Layer.provideMerge(Layer.succeed(ServerSide, {
        awaitInterrupted: (id) => Effect.asVoid(server.awaitInterrupted(id))
      }))
    )))

const overStdio = (era: McpClient.EraOption) => {
  // One layer value, so the client's transport and the server-side probe share one child process.
  const transport = StdioTransport.layer({
    command: process.execPath,
    args: ["--import", tsx, fixtureProgram, "--page-size", "2"],
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
  return McpClient.layer(clientOptions(era)).pipe(
    Layer.provideMerge(Recording.layer(transport)),
    Layer.provideMerge(serverSide),
    Layer.provide(transport)
  )
}

behaviourSuite("in-process, discovered (modern)", inProcess("auto"), { era: "modern", binding: "in-process" })
behaviourSuite("in-process, legacy", inProcess("legacy"), { era: "legacy", binding: "in-process" })
behaviourSuite("stdio, discovered (modern)", overStdio("auto"), { era: "modern", binding: "stdio" })
behaviourSuite("stdio, legacy", overStdio("legacy"), { era: "legacy", binding: "stdio" })
