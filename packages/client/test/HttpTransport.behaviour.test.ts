/**
 * The shared behavioural suite over HTTP, in both eras: the fixture server served over Streamable HTTP by
 * `fixtures/http/mcpServerHttp.ts`, the client over `HttpTransport` and the undici `HttpClient`.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as McpClient from "../src/McpClient.js"
import * as Common from "./fixtures/http/common.js"
import * as McpServerHttp from "./fixtures/http/mcpServerHttp.js"
import { behaviourSuite, ServerSide } from "./utils/behaviourSuite.js"
import * as FixtureServer from "./utils/fixtureServer.js"
import * as Recording from "./utils/recordingTransport.js"

const overHttp = (era: McpClient.EraOption) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const server = yield* FixtureServer.make({ pageSize: 2 })
      const url = yield* McpServerHttp.serve(server)
      return McpClient.layer({ era, healthCheckInterval: false, reconnect: Schedule.spaced("100 millis") }).pipe(
        Layer.provideMerge(Recording.layer(Common.transport({ url }))),
        Layer.provideMerge(Layer.succeed(ServerSide, {
          awaitInterrupted: (id) => Effect.asVoid(server.awaitInterrupted(id))
        }))
      )
    })
  )

behaviourSuite("HTTP, discovered (modern)", overHttp("auto"), { era: "modern", binding: "streamable-http" })
behaviourSuite("HTTP, legacy", overHttp("legacy"), { era: "legacy", binding: "streamable-http" })
