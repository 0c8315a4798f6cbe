/**
 * The README's hub example (examples/hub.ts) against real servers: server-everything over stdio and the demo server
 * over HTTP (`conduit demo-server --http 0`, a child process on a loopback port).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Stream from "effect/Stream"
import * as Path from "node:path"
import * as McpHub from "../src/McpHub.js"
import { program } from "./examples/hub.js"
import { everything, node, repositoryRoot } from "./utils/realServers.js"

const conduit = Path.join(repositoryRoot, "packages", "cli", "bin", "conduit.mjs")

/** `conduit demo-server --http 0` for the Scope; its URL once it listens. */
const demoOverHttp = Effect.gen(function*() {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const child = yield* spawner.spawn(ChildProcess.make(node, [conduit, "demo-server", "--http", "0"]))
  return yield* child.stderr.pipe(
    Stream.decodeText(),
    Stream.scan(() => "", (all: string, chunk: string) => all + chunk),
    Stream.map((all) => /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(all)?.[1]),
    Stream.filter((url): url is string => url !== undefined),
    Stream.runHead,
    Effect.flatMap((found) => Effect.fromOption(found)),
    Effect.timeout("30 seconds")
  )
})

it.live("the hub example lists both servers' tools and routes calls by name", () =>
  Effect.gen(function*() {
    const url = yield* demoOverHttp
    const Hub = McpHub.layer({
      servers: [McpHub.stdio("everything", everything), McpHub.http("demo", { url })],
      client: { healthCheckInterval: false }
    }).pipe(Layer.provide(NodeHttpClient.layerUndici))
    yield* Effect.gen(function*() {
      yield* program
      const hub = yield* McpHub.McpHub
      const names = (yield* hub.knownTools).map((tool) => tool.name)
      assert.includeMembers(names, ["everything__echo", "everything__get-sum", "demo__echo", "demo__add"])
      const states = yield* Effect.all([hub.state("everything"), hub.state("demo")])
      assert.deepStrictEqual(states.map((state) => state._tag), ["Connected", "Connected"])
    }).pipe(Effect.provide(Hub))
  }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)), { timeout: 60_000 })
