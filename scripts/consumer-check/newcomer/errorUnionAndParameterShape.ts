// Item 3 of the 1.0 API issue, "union and shape": one error type, McpError.McpClientError, names what a call can
// fail with, so a handler typed with it compiles on callTool (whose calls run as tasks add TaskError) and on
// readResource; and readResource takes its parameters as an object, as callTool does. These are checked by the
// strict type checks of the app (each `@ts-expect-error` fails them if the line it marks compiles again); running
// the file sends the calls once to a TestServer.
import { McpClient, McpError } from "@conduit-mcp/client"
import { Effect } from "effect"
import { echoTestClient } from "./echoServer.js"
import { expectEqual, run } from "./guard.js"

/** One handler for every method's errors, as a newcomer writes it. */
const describeError = (e: McpError.McpClientError): string => `${e._tag}: ${e.message}`

/** Every member of the union by its tag, TaskError among them (an exhaustive switch: a tag gone fails it). */
export const kindOf = (e: McpError.McpClientError): string => {
  switch (e._tag) {
    case "TransportError":
    case "AuthError":
    case "SessionExpired":
      return "transport"
    case "McpError":
    case "ProtocolError":
    case "RequestTimeout":
      return "request"
    case "ResourceNotFound":
    case "UrlElicitationRequired":
    case "MissingClientCapability":
    case "UnsupportedProtocolVersion":
      return "spec"
    case "TaskError":
      return "task"
  }
}

const Client = echoTestClient("error-union")

export const shapes = (client: McpClient.McpClientService) => {
  // @ts-expect-error readResource takes { uri }, not a bare string
  client.readResource("demo://here")
  // @ts-expect-error callTool takes { name, arguments }, not a name and the arguments
  client.callTool("echo", { message: "hi" })
}

const program = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  const called = yield* client.callTool({ name: "echo", arguments: { message: "hi" } }).pipe(
    Effect.mapError((e: McpError.McpClientError) => describeError(e)),
    Effect.map((result) => result.content.map((c) => c.type === "text" ? c.text : "").join(""))
  )
  yield* expectEqual(called, "Echo: hi", "callTool with mapError((e: McpClientError) => …)")
  const read = yield* client.readResource({ uri: "demo://here" }).pipe(
    Effect.mapError((e: McpError.McpClientError) => describeError(e)),
    Effect.map((result) => result.contents.map((c) => "text" in c ? c.text : "").join(""))
  )
  yield* expectEqual(read, "here", "readResource({ uri }) with mapError((e: McpClientError) => …)")
  const missing = yield* client.readResource({ uri: "demo://gone" }).pipe(
    Effect.mapError((e: McpError.McpClientError) => kindOf(e)),
    Effect.flip
  )
  yield* expectEqual(missing, "spec", "a missing resource, told apart by the union's tags")
}).pipe(Effect.provide(Client))

await run("item 3, one error union (McpClientError) and one parameter shape", program)
