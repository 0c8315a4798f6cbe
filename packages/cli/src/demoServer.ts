/**
 * The demo MCP server behind `conduit` when no server is named, and behind `conduit demo-server`. It is built
 * with the library's `McpServer`, speaks both eras (or one, when asked), and offers a few tools, a resource, a
 * resource template and a prompt.
 *
 * @since 0.1.0
 */
import * as McpServer from "@conduit-mcp/server/McpServer"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Text from "./terminalText.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const name = "conduit-demo"

/**
 * @since 0.1.0
 * @category constants
 */
export const version = "1.0.0"

/**
 * @since 0.1.0
 * @category constants
 */
export const instructions =
  "Demo server of Conduit. Try the echo and add tools, the slow tool (it reports progress and can be cancelled), " +
  "the confirm tool (it asks you a question through elicitation), the demo://about resource, the " +
  "demo://notes/{topic} template and the greet prompt."

const topics = ["effect", "eras", "mcp", "transports"] as const

const notes: Readonly<Record<string, string>> = {
  effect: "Conduit is written with Effect: every call is an Effect, and interrupting it cancels the request.",
  eras: "MCP has two eras: the 2025 initialize handshake (legacy) and 2026-07-28 discovery (modern).",
  mcp: "The Model Context Protocol connects applications to tools, resources and prompts.",
  transports: "Conduit speaks stdio, Streamable HTTP and an in-process transport."
}

const names = ["Ada", "Alan", "Barbara", "Grace", "Margaret"] as const

const startingWith = (candidates: ReadonlyArray<string>) => (value: string) =>
  Effect.succeed(candidates.filter((candidate) => candidate.toLowerCase().startsWith(value.toLowerCase())))

/**
 * The tools of the demo server.
 *
 * @since 0.1.0
 * @category definitions
 */
export const tools = [
  McpServer.tool({
    name: "echo",
    title: "Echo",
    description: "Returns the text it is given.",
    parameters: Schema.Struct({ text: Schema.String.annotate({ description: "The text to send back" }) }),
    annotations: { readOnlyHint: true },
    handler: ({ text }) => Effect.succeed(text)
  }),
  McpServer.tool({
    name: "add",
    title: "Add",
    description: "Adds two numbers.",
    parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
    outputSchema: {
      type: "object",
      properties: { sum: { type: "number" } },
      required: ["sum"]
    },
    annotations: { readOnlyHint: true },
    handler: ({ a, b }) =>
      Effect.succeed({ content: [McpServer.text(String(a + b))], structuredContent: { sum: a + b } })
  }),
  McpServer.tool({
    name: "slow",
    title: "Slow",
    description: "Works for a while, reporting progress at each step; interrupting the call cancels it.",
    parameters: Schema.Struct({
      steps: Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 1000 }))
        .annotate({ description: "How many steps (default 5)" })
        .pipe(Schema.withDecodingDefaultType(Effect.succeed(5))),
      delayMs: Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 60_000 }))
        .annotate({ description: "Milliseconds per step (default 400)" })
        .pipe(Schema.withDecodingDefaultType(Effect.succeed(400)))
    }),
    handler: ({ delayMs, steps }) =>
      Effect.flatMap(McpServer.RequestContext, (request) =>
        Effect.gen(function*() {
          for (let step = 1; step <= steps; step++) {
            yield* Effect.sleep(delayMs)
            yield* McpServer.progress(step, { total: steps, message: `step ${step} of ${steps}` })
          }
          return `done after ${steps} steps`
        }).pipe(
          Effect.onInterrupt(() =>
            Effect.logInfo(
              `request ${Text.line(String(request.requestId))} (tools/call slow) cancelled by the client`
            ).pipe(
              Effect.annotateLogs({ server: name })
            )
          )
        ))
  }),
  McpServer.tool({
    name: "research",
    title: "Research",
    description: "Runs as a task (execution.taskSupport: required): works in the background for a few seconds, then " +
      "reports; try `tools call research --detach`, then `tasks get|result|cancel <id>`.",
    parameters: Schema.Struct({
      topic: Schema.String.annotate({ description: "What to research (default tides)" })
        .pipe(Schema.withDecodingDefaultType(Effect.succeed("tides"))),
      seconds: Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: 3600 }))
        .annotate({ description: "How long it takes (default 3)" })
        .pipe(Schema.withDecodingDefaultType(Effect.succeed(3)))
    }),
    execution: { taskSupport: "required" },
    // progress each second: notifications/progress on the creating call's token (2025-11-25), the task's status
    // message (2026-07-28)
    handler: ({ seconds, topic }) =>
      Effect.gen(function*() {
        for (let second = 1; second <= seconds; second++) {
          yield* Effect.sleep("1 second")
          yield* McpServer.progress(second, { total: seconds, message: `researching ${topic}` })
        }
        return `Report on ${topic}: it took ${seconds} s`
      })
  }),
  McpServer.tool({
    name: "confirm",
    title: "Confirm",
    description: "Asks you a yes/no question through elicitation (a form) and reports your answer.",
    parameters: Schema.Struct({
      question: Schema.optional(Schema.String.annotate({ description: "The question (default \"Proceed?\")" }))
    }),
    handler: ({ question }) => {
      const asked = question ?? "Proceed?"
      return McpServer.elicit({
        message: asked,
        requestedSchema: {
          type: "object",
          properties: {
            answer: { type: "boolean", title: asked, description: "yes or no", default: false },
            comment: { type: "string", title: "Comment", description: "Anything to add (optional)" }
          },
          required: ["answer"]
        }
      }).pipe(
        Effect.map((reply) => {
          if (reply.action !== "accept") {
            return {
              content: [McpServer.text(`You ${reply.action === "decline" ? "declined" : "dismissed"}: ${asked}`)],
              structuredContent: { action: reply.action }
            }
          }
          const answer = reply.content?.answer === true
          const comment = typeof reply.content?.comment === "string" && reply.content.comment !== ""
            ? reply.content.comment
            : undefined
          return {
            content: [
              McpServer.text(`You answered ${answer ? "yes" : "no"}: ${asked}${comment ? ` (${comment})` : ""}`)
            ],
            structuredContent: { action: reply.action, answer, ...(comment !== undefined ? { comment } : {}) }
          }
        }),
        // A client that cannot answer (no elicitation capability) gets a tool error saying so.
        Effect.catchTag("InputError", (error) =>
          Effect.fail(new McpServer.ToolError({ message: `Cannot ask "${asked}": ${error.message}` })))
      )
    }
  }),
  McpServer.tool({
    name: "touch",
    title: "Touch",
    description: "Announces that a resource changed (notifications/resources/updated), to try `conduit listen --uri`.",
    parameters: Schema.Struct({
      uri: Schema.String.annotate({ description: "The resource (default demo://about)" })
        .pipe(Schema.withDecodingDefaultType(Effect.succeed("demo://about")))
    }),
    handler: ({ uri }) =>
      Effect.as(McpServer.publish(McpServer.Change.ResourceUpdated({ uri })), `announced an update of ${uri}`)
  }),
  McpServer.tool({
    name: "fail",
    title: "Fail",
    description: "Always answers with an error result (isError), to try exit codes.",
    parameters: Schema.Struct({ message: Schema.optional(Schema.String) }),
    handler: ({ message }) => Effect.fail(new McpServer.ToolError({ message: message ?? "the fail tool always fails" }))
  })
]

/**
 * @since 0.1.0
 * @category definitions
 */
export const about = McpServer.resource({
  uri: "demo://about",
  name: "about",
  title: "About this server",
  description: "What the demo server is.",
  mimeType: "text/plain",
  read: Effect.succeed(instructions)
})

/**
 * @since 0.1.0
 * @category definitions
 */
export const note = McpServer.resourceTemplate({
  uriTemplate: "demo://notes/{topic}",
  name: "note",
  title: "A note on a topic",
  description: `A short note; topics: ${topics.join(", ")}.`,
  mimeType: "text/plain",
  read: (_uri, { topic }) => Effect.succeed(notes[topic] ?? `No note on ${topic}; try one of: ${topics.join(", ")}.`),
  complete: { topic: startingWith(topics) }
})

/**
 * @since 0.1.0
 * @category definitions
 */
export const greet = McpServer.prompt({
  name: "greet",
  title: "Greet someone",
  description: "A prompt that greets someone by name.",
  arguments: [
    { name: "name", description: "Who to greet", required: true, complete: startingWith(names) },
    { name: "style", description: "formal or casual (default casual)", complete: startingWith(["casual", "formal"]) }
  ],
  handler: ({ name, style }) =>
    Effect.succeed(
      style === "formal"
        ? `Please write a formal greeting addressed to ${name}.`
        : `Please write a short, friendly hello to ${name}.`
    )
})

/**
 * Builds the demo server for the given eras (`"both"` by default).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (eras: McpServer.Eras = "both"): Effect.Effect<McpServer.Server> =>
  McpServer.make({
    name,
    version,
    title: "Conduit demo server",
    instructions,
    eras,
    // a CLI session is short; keeping every message would only grow memory in a long `demo-server` run
    record: false,
    // the research tool's tasks: polled every 500 ms, kept for 10 minutes
    tasks: { pollIntervalMs: 500, ttlMs: 600_000 },
    tools,
    resources: [about],
    resourceTemplates: [note],
    prompts: [greet]
  })
