/**
 * `--trace`: every JSON-RPC message the client sends (`→`) and receives (`←`) printed on stderr as one line of
 * JSON, with what may be a secret redacted (the value of any key such as `token`, `password`, `secret`,
 * `authorization`, `apiKey`, `cookie`) and long strings cut short. The transport is wrapped: what is traced is
 * exactly what crosses it, on every binding. Credentials sent as HTTP headers are not part of any message, so never
 * traced.
 *
 * @since 0.1.0
 */
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as Transport from "@conduit-mcp/client/Transport"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Output from "./output.js"
import * as Text from "./terminalText.js"

const SECRET_KEY = /pass(word|phrase)?|secret|token|authori[sz]ation|api[-_]?key|cookie|credential|private[-_]?key/i

// a secret is text (or a structure holding it); MCP's own progressToken and maxTokens are not secrets
const notSecret = new Set(["progressToken", "maxTokens"])

const isSecret = (key: string, value: unknown): boolean =>
  SECRET_KEY.test(key) && !notSecret.has(key) && value !== null && value !== undefined && value !== "" &&
  typeof value !== "number" && typeof value !== "boolean"

const maxString = 1000
const maxDepth = 64

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const shorten = (text: string): string =>
  text.length <= maxString ? text : `${text.slice(0, maxString)}… (${text.length - maxString} more characters)`

/**
 * A copy of `value` with the values of secret-looking keys replaced by `"[redacted]"` and long strings cut short.
 * Written without recursion (a server may nest values thousands deep); past 64 levels a value is left out.
 *
 * @since 0.1.0
 * @category redaction
 */
export const redact = (value: unknown): unknown => {
  const root: { value: unknown } = { value: undefined }
  const work: Array<{ readonly from: unknown; readonly into: (value: unknown) => void; readonly depth: number }> = [
    { from: value, into: (v) => (root.value = v), depth: 0 }
  ]
  while (work.length > 0) {
    const { depth, from, into } = work.pop()!
    if (typeof from === "string") into(shorten(from))
    else if (Array.isArray(from)) {
      if (depth >= maxDepth) {
        into("[too deep]")
        continue
      }
      const copy: Array<unknown> = []
      into(copy)
      from.forEach((item, index) => work.push({ from: item, into: (v) => (copy[index] = v), depth: depth + 1 }))
    } else if (isRecord(from)) {
      if (depth >= maxDepth) {
        into("[too deep]")
        continue
      }
      const copy: Record<string, unknown> = {}
      into(copy)
      for (const [key, item] of Object.entries(from)) {
        // the key is set now, so that the copy keeps the order of the keys
        copy[key] = undefined
        if (isSecret(key, item)) copy[key] = "[redacted]"
        else work.push({ from: item, into: (v) => (copy[key] = v), depth: depth + 1 })
      }
    } else into(from)
  }
  return root.value
}

const show = (direction: "→" | "←", message: unknown): Effect.Effect<void> => {
  const s = Output.styles(process.stderr)
  return Output.stderr(`${s.dim(`[trace] ${direction}`)} ${Text.json(redact(message))}`)
}

const traced = (emit: Transport.Emit): Transport.Emit => (event) => {
  switch (event._tag) {
    case "Response":
    case "Notification":
    case "ServerRequest":
      return Effect.andThen(show("←", event.message), emit(event))
    case "RequestFailed":
      return Effect.andThen(
        Output.stderr(`${Output.styles(process.stderr).dim("[trace] ✗")} request ${Text.json(event.id)} failed: ${Text.line(event.error.message)}`),
        emit(event)
      )
    case "Closed":
      return Effect.andThen(
        Output.stderr(`${Output.styles(process.stderr).dim("[trace] ✗")} closed: ${Text.line(event.error.message)}`),
        emit(event)
      )
    default:
      return emit(event)
  }
}

const wrap = (connection: Transport.TransportConnection): Transport.TransportConnection => ({
  info: connection.info,
  // no unsafeRequest: every request goes through `request`, where it is traced
  request: (message: McpSchema.JsonRpcRequest, options) => Effect.andThen(show("→", message), connection.request(message, options)),
  notify: (message) => Effect.andThen(show("→", message), connection.notify(message)),
  respond: (message) => Effect.andThen(show("→", message), connection.respond(message)),
  cancel: (id, reason) =>
    Effect.andThen(
      Output.stderr(
        `${Output.styles(process.stderr).dim("[trace] ✗")} cancel request ${Text.json(id)} (${Text.line(reason)})`
      ),
      connection.cancel(id, reason)
    ),
  setSession: connection.setSession
})

/**
 * Wraps the transport below it so that every message is traced.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Transport.Transport, never, Transport.Transport> = Layer.effect(
  Transport.Transport,
  Effect.map(Transport.Transport, (inner) => ({
    ...inner,
    connect: (emit: Transport.Emit) => Effect.map(inner.connect(traced(emit)), wrap)
  }))
)
