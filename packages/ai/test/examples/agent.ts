// The README's effect/ai example, kept here so that the type checker compiles it; McpToolkit.test.ts runs `agent`
// with a scripted model. The LanguageModel layer is the application's (a provider package's layer).
import { McpToolkit } from "@conduit-mcp/ai"
import { McpHub } from "@conduit-mcp/client"
import { Console, Effect } from "effect"
import { Chat } from "effect/ai"

export const agent = (question: string) =>
  Effect.gen(function*() {
    const hub = yield* McpHub.McpHub
    // every server's tools, rebuilt after a server's tool list changes; progress of long calls is shown
    const tools = yield* McpToolkit.live(McpToolkit.fromHub(hub), {
      onProgress: ({ progress, tool }) => Console.error(`${tool}: ${progress.progress}/${progress.total ?? "?"}`)
    })
    const chat = yield* Chat.empty
    let response = yield* chat.generateText({ prompt: question, toolkit: tools.toolkit })
    // the model reads the tools' results (failures included) and may ask for more, a few rounds at most
    for (let round = 0; round < 5 && response.toolCalls.length > 0; round++) {
      response = yield* chat.generateText({ prompt: [], toolkit: tools.toolkit })
    }
    return response.text
  })
