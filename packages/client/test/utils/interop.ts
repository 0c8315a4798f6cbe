/**
 * The interoperability suite's harness: a server from the npm registry started on 127.0.0.1 (a free port) or over
 * stdio, the client connected to it, and one set of checks every server runs as far as it offers the feature: the
 * era probe, tools listed and called, a resource read, a prompt got, a completion, a slow call cancelled (the client
 * stays usable, and the server hears of it when the framework reports cancellations).
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import * as Net from "node:net"
import * as Url from "node:url"
import * as HttpTransport from "../../src/HttpTransport.js"
import * as McpClient from "../../src/McpClient.js"
import type * as McpSchema from "../../src/McpSchema.js"
import * as StdioTransport from "../../src/StdioTransport.js"

export type Binding = "stdio" | "streamable-http" | "sse"

/** What one server offers, and what the checks expect of it. */
export interface Profile {
  /** The era the server speaks (the probe must find it). */
  readonly era: McpSchema.Era
  readonly echo: {
    readonly name: string
    readonly arguments: Readonly<Record<string, unknown>>
    readonly text: string
  }
  /** A tool that runs for a long time (cancelled by the client). */
  readonly slow?: { readonly name: string; readonly arguments: Readonly<Record<string, unknown>> } | undefined
  readonly resource?: { readonly uri: string; readonly text: string } | undefined
  readonly prompt?: {
    readonly name: string
    readonly arguments: Readonly<Record<string, string>>
    readonly text: string
  } | undefined
  readonly completion?: {
    readonly prompt: string
    readonly argument: string
    readonly value: string
    readonly expected: ReadonlyArray<string>
  } | undefined
}

/** Absolute path of a fixture under `test/fixtures/interop`. */
export const fixture = (file: string): string =>
  Url.fileURLToPath(new URL(`../fixtures/interop/${file}`, import.meta.url))

export const freePort: Effect.Effect<number> = Effect.callback((resume) => {
  const probe = Net.createServer()
  probe.listen(0, "127.0.0.1", () => {
    const address = probe.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    probe.close(() => resume(Effect.succeed(port)))
  })
})

/**
 * Starts a server process that listens on HTTP: `args(port)` is its command line, `ready` a text it writes (to
 * stdout or stderr) once it listens. It is killed when the scope closes.
 */
export const startHttp = (
  args: (port: number) => ReadonlyArray<string>,
  ready: string,
  env: Readonly<Record<string, string>> = {}
): Effect.Effect<number, never, Scope.Scope> =>
  Effect.gen(function*() {
    const port = yield* freePort
    const output: Array<string> = []
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        ChildProcess.spawn(process.execPath, [...args(port)], {
          env: { ...process.env, ...env, PORT: String(port) },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      (child) =>
        Effect.callback<void>((resume) => {
          if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
          child.once("exit", () => resume(Effect.void))
          child.kill("SIGKILL")
        })
    )
    yield* Effect.callback<void>((resume) => {
      let done = false
      const watch = (chunk: Buffer) => {
        output.push(chunk.toString("utf8"))
        if (!done && output.join("").includes(ready)) {
          done = true
          resume(Effect.void)
        }
      }
      child.stdout.on("data", watch)
      child.stderr.on("data", watch)
      child.once("exit", (code) => {
        if (!done) {
          done = true
          resume(Effect.die(new Error(`the server exited with code ${code} before listening: ${output.join("")}`)))
        }
      })
    }).pipe(
      Effect.timeoutOrElse({
        duration: "30 seconds",
        orElse: () => Effect.fail(`the server did not start: ${output.join("")}`)
      }),
      Effect.orDie
    )
    return port
  })

const clientOptions: McpClient.McpClientOptions = {
  healthCheckInterval: false,
  reconnect: false,
  // a child started with npx-like overhead on a loaded machine must not read as legacy for being slow
  probeTimeout: "20 seconds",
  clientInfo: { name: "conduit-interop", version: "0.1.0" }
}

/** The client over stdio, spawning `node <args>`. */
export const overStdio = (
  args: ReadonlyArray<string>,
  options: Partial<StdioTransport.StdioTransportOptions> = {},
  client: McpClient.McpClientOptions = {}
) =>
  McpClient.layer({ ...clientOptions, ...client }).pipe(
    Layer.provide(StdioTransport.layer({ command: process.execPath, args, closeTimeout: "1 second", ...options })),
    Layer.provide(NodeServices.layer)
  )

/** The client over HTTP, to the URL the effect gives (a server it starts in the layer's scope). */
export const overHttp = <E>(url: Effect.Effect<string, E, Scope.Scope>, client: McpClient.McpClientOptions = {}) =>
  Layer.unwrap(Effect.map(url, (url) =>
    McpClient.layer({ ...clientOptions, ...client }).pipe(
      Layer.provide(HttpTransport.layer({ url })),
      Layer.provide(NodeHttpClient.layerUndici)
    )))

const textOf = (content: ReadonlyArray<McpSchema.ContentBlock>) =>
  content.flatMap((block) => (block.type === "text" && "text" in block ? [block.text] : [])).join("")

/**
 * Runs the checks against one server over one binding, in one `describe` whose tests share one client (and so
 * one server process).
 */
export const suite = <E>(
  title: string,
  clientLayer: Layer.Layer<McpClient.McpClient, E>,
  profile: Profile
) =>
  describe(title, () => {
    // the real clock: the transports' shutdown timeouts must fire while a server still runs a cancelled call
    layer(clientLayer, { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect(`the probe finds the ${profile.era} era`, () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          assert.strictEqual((yield* client.session).era, profile.era)
        }))

      it.effect("tools are listed and called", () =>
        Effect.gen(function*() {
          const client = yield* McpClient.McpClient
          const tools = yield* client.listTools()
          assert.include(tools.map((tool) => tool.name), profile.echo.name)
          const result = yield* client.callTool({ name: profile.echo.name, arguments: profile.echo.arguments })
          assert.include(textOf(result.content), profile.echo.text)
        }))

      const resource = profile.resource
      if (resource !== undefined) {
        it.effect("a resource is read", () =>
          Effect.gen(function*() {
            const client = yield* McpClient.McpClient
            const read = yield* client.readResource({ uri: resource.uri })
            const first = read.contents[0]
            assert.include(first !== undefined && "text" in first ? first.text : "", resource.text)
          }))
      }

      const prompt = profile.prompt
      if (prompt !== undefined) {
        it.effect("a prompt is got", () =>
          Effect.gen(function*() {
            const client = yield* McpClient.McpClient
            const prompts = yield* client.listPrompts()
            assert.include(prompts.map((p) => p.name), prompt.name)
            const got = yield* client.getPrompt({ name: prompt.name, arguments: prompt.arguments })
            const content = got.messages[0]?.content
            assert.include(content !== undefined && content.type === "text" && "text" in content ? content.text : "", prompt.text)
          }))
      }

      const completion = profile.completion
      if (completion !== undefined) {
        it.effect("an argument is completed", () =>
          Effect.gen(function*() {
            const client = yield* McpClient.McpClient
            const completed = yield* client.complete({
              ref: { type: "ref/prompt", name: completion.prompt },
              argument: { name: completion.argument, value: completion.value }
            })
            assert.deepStrictEqual([...completed.completion.values], [...completion.expected])
          }))
      }

      const slow = profile.slow
      if (slow !== undefined) {
        it.effect("a slow call is cancelled (interrupted), and the client goes on", () =>
          Effect.gen(function*() {
            const client = yield* McpClient.McpClient
            const call = yield* Effect.forkChild(client.callTool({ name: slow.name, arguments: slow.arguments }))
            // (on the real clock: the server runs the call meanwhile)
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
            assert.isUndefined(call.pollUnsafe(), "the slow call still runs")
            yield* Fiber.interrupt(call)
            const result = yield* client.callTool({ name: profile.echo.name, arguments: profile.echo.arguments })
            assert.include(textOf(result.content), profile.echo.text)
          }))
      }
    })
  })
