// A bare `effect/cli` program: one command with a handler, run by `Command.run` (which answers `--version` and
// `--help` itself) over `NodeServices` through `NodeRuntime.runMain`. The floor `cliStart.mjs` compares the start
// of `conduit --version` with.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"

const hello = Command.make("hello", { name: Flag.String("name").pipe(Flag.withDefault("world")) }, ({ name }) =>
  Effect.sync(() => {
    process.stdout.write(`hello, ${name}\n`)
  }))

NodeRuntime.runMain(Command.run(hello, { version: "1.0.0" }).pipe(Effect.provide(NodeServices.layer)))
