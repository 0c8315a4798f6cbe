/**
 * `-32042` (2025-11-25): the URL elicitations a request needs go through the elicitation handler; accepted, the
 * request is sent once more when the server reports them complete; declined (or with no URL-mode handler), the
 * caller gets `UrlElicitationRequired` and nothing is sent again.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as ElicitationHandler from "../src/ElicitationHandler.js"
import * as McpClient from "../src/McpClient.js"
import * as Scripted from "./utils/scriptedTransport.js"

const elicitation = {
  mode: "url",
  elicitationId: "connect-1",
  url: "https://auth.example.com/connect",
  message: "Connect your account"
}

/** tools/call needs the URL elicitation until the server saw it completed (`connected`). */
const server = (connected: Ref.Ref<boolean>): Scripted.Script =>
  Scripted.legacyScript((message, ctx) =>
    Effect.gen(function*() {
      if (!("method" in message) || !("id" in message) || message.method !== "tools/call") return
      if (!(yield* Ref.get(connected))) {
        return yield* ctx.fail(message.id, -32042, "URL elicitation required", { elicitations: [elicitation] })
      }
      return yield* ctx.reply(message.id, { content: [{ type: "text", text: "connected" }] })
    })
  )

const setup = (action: "accept" | "decline") =>
  Effect.gen(function*() {
    const connected = yield* Ref.make(false)
    const shown: Array<ElicitationHandler.ElicitationRequest> = []
    let log: Scripted.ScriptLog["Service"] | undefined
    // the user goes to the URL; the server then reports the elicitation complete
    const handler = ElicitationHandler.layer({
      modes: ["url"],
      elicit: (request) =>
        Effect.gen(function*() {
          shown.push(request)
          if (action === "decline") return { action: "decline" as const }
          yield* Ref.set(connected, true)
          const ctx = (yield* Ref.get(log!.current))!
          yield* ctx.notify("notifications/elicitation/complete", { elicitationId: "connect-1" })
          return { action: "accept" as const }
        })
    })
    const context = yield* Layer.build(
      McpClient.layer({ healthCheckInterval: false, elicitation: ElicitationHandler.ElicitationHandler }).pipe(
        Layer.provideMerge(Scripted.layer(server(connected))),
        Layer.provide(handler)
      )
    )
    log = Context.get(context, Scripted.ScriptLog)
    const calls = Effect.map(Ref.get(log.sent), (sent) =>
      Scripted.sentMethods(sent).filter((m) => m === "tools/call").length)
    return { client: Context.get(context, McpClient.McpClient), shown, calls }
  })

describe("-32042 URL elicitation required", () => {
  it.effect("accepted: the elicitation is shown, and the request is sent again once it is complete", () =>
    Effect.gen(function*() {
      const { calls, client, shown } = yield* setup("accept")
      const result = yield* client.callTool({ name: "account" })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "connected" }])
      assert.strictEqual(shown.length, 1)
      const request = shown[0]!
      assert.strictEqual(request.mode, "url")
      if (request.mode === "url") {
        assert.strictEqual(request.url, elicitation.url)
        assert.strictEqual(request.elicitationId, "connect-1")
      }
      assert.strictEqual(yield* calls, 2)
    }))

  it.effect("declined: the caller gets UrlElicitationRequired and nothing is sent again", () =>
    Effect.gen(function*() {
      const { calls, client, shown } = yield* setup("decline")
      const error = yield* Effect.flip(client.callTool({ name: "account" }))
      assert.strictEqual(error._tag, "UrlElicitationRequired")
      assert.strictEqual(shown.length, 1)
      assert.strictEqual(yield* calls, 1)
    }))
})
