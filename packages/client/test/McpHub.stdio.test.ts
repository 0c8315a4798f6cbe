/**
 * The hub over real child processes: server-everything and the demo server (`conduit demo-server --stdio`), each
 * started through a shell that writes its pid to a marker file before it becomes the server. Nothing is spawned
 * before first use; an idle connection's child exits when the idle time passes (TestClock).
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as McpHub from "../src/McpHub.js"
import type * as StdioTransport from "../src/StdioTransport.js"
import { eventually } from "./utils/eventually.js"
import { everything, node, repositoryRoot } from "./utils/realServers.js"

const conduit = Path.join(repositoryRoot, "packages", "cli", "bin", "conduit.mjs")

/** Runs `command` through `sh`, which first writes its pid (the server's, after `exec`) to `marker`. */
const marked = (marker: string, command: string, args: ReadonlyArray<string>): StdioTransport.StdioTransportOptions => ({
  command: "sh",
  args: ["-c", `echo $$ > "$0"; exec "$@"`, marker, command, ...args],
  closeTimeout: "2 seconds"
})

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const pidOf = (hub: McpHub.Service, server: string) =>
  hub.use(server, (client) => Effect.map(client.session, (session) => session.transport.pid ?? -1))

describe("McpHub over stdio children", () => {
  it.effect("no child starts before first use; each exits once idle for idleTimeToLive", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-hub-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      const markers = { everything: Path.join(dir, "everything.pid"), demo: Path.join(dir, "demo.pid") }
      const hub = yield* McpHub.make({
        servers: [
          McpHub.stdio("everything", marked(markers.everything, everything.command, everything.args)),
          McpHub.stdio("demo", marked(markers.demo, node, [conduit, "demo-server", "--stdio"]))
        ],
        idleTimeToLive: "5 minutes",
        client: { healthCheckInterval: false }
      })
      assert.isFalse(Fs.existsSync(markers.everything) || Fs.existsSync(markers.demo), "nothing spawned yet")

      const echoed = yield* hub.callTool({ name: "demo__echo", arguments: { text: "hello" } })
      assert.deepStrictEqual(echoed.content, [{ type: "text", text: "hello" }])
      assert.isTrue(Fs.existsSync(markers.demo))
      assert.isFalse(Fs.existsSync(markers.everything), "only the server used was started")

      const { errors, items } = yield* hub.listTools()
      assert.deepStrictEqual(errors, [])
      const names = items.map((tool) => tool.name)
      assert.includeMembers(names, ["everything__echo", "everything__get-sum", "demo__echo", "demo__add"])
      const sum = yield* hub.callTool({ name: "everything__get-sum", arguments: { a: 2, b: 3 } })
      assert.include(JSON.stringify(sum.content), "5")

      const pids = { everything: yield* pidOf(hub, "everything"), demo: yield* pidOf(hub, "demo") }
      assert.strictEqual(Fs.readFileSync(markers.demo, "utf8").trim(), String(pids.demo))
      assert.strictEqual(Fs.readFileSync(markers.everything, "utf8").trim(), String(pids.everything))
      assert.isTrue(alive(pids.everything) && alive(pids.demo))

      yield* TestClock.adjust("4 minutes")
      assert.isTrue(alive(pids.everything) && alive(pids.demo), "still within the idle time")
      yield* TestClock.adjust("2 minutes")
      yield* eventually(() => !alive(pids.everything) && !alive(pids.demo), "both children to exit")
      assert.strictEqual((yield* hub.state("demo"))._tag, "Idle")
    }).pipe(Effect.provide(NodeServices.layer)), { timeout: 60_000 })
})
