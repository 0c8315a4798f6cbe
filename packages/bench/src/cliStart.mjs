// The start of the `conduit` command, cold: each run a fresh `node` process (pinned to core 0 when `taskset` is
// there), the commands interleaved over the rounds (A B C D A B C D …), the wall time from spawn to exit, medians
// and ratios printed as a markdown table:
//   node -e 0                  node itself
//   effect/cli --version       a bare `effect/cli` program (src/cliBare.mjs: one command, `Command.run` over
//                              NodeServices by `NodeRuntime.runMain`), from node_modules and bundled with esbuild as
//                              the CLI is
//   conduit --version          the CLI as its published package runs it: bin/conduit.mjs beside dist/conduit.mjs,
//                              the bundle made by the CLI's own scripts/bundle.mjs from the work tree
//   conduit tools list         the same, listing the tools of the embedded demo server (in-process)
// With `--commit REV`, the CLI of that commit is bundled too (from `git archive`) and measured in the same rounds,
// for a before and after in one window.
// Usage: node packages/bench/src/cliStart.mjs [--rounds 15] [--commit REV] [--no-pin]
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { flag, option } from "./args.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const benchDir = path.resolve(here, "..")
const repoRoot = path.resolve(benchDir, "../..")
const rounds = Number(option("rounds", "15"))
const commit = option("commit", undefined)
const work = path.join(benchDir, ".build/cli-start")
fs.rmSync(work, { recursive: true, force: true })
fs.mkdirSync(work, { recursive: true })

const esbuild = await import("esbuild")

// An installed package's layout: bin/conduit.mjs finds no src/main.ts beside it and loads dist/conduit.mjs.
const installCli = async (label, cliRoot) => {
  const root = path.join(work, label)
  fs.mkdirSync(path.join(root, "bin"), { recursive: true })
  fs.copyFileSync(path.join(cliRoot, "bin/conduit.mjs"), path.join(root, "bin/conduit.mjs"))
  const { bundle } = await import(pathToFileURL(path.join(cliRoot, "scripts/bundle.mjs")).href)
  await bundle(path.join(root, "dist/conduit.mjs"))
  return path.join(root, "bin/conduit.mjs")
}

const current = await installCli("work-tree", path.join(repoRoot, "packages/cli"))
let before
if (commit !== undefined) {
  const sources = path.join(work, "src-before")
  fs.mkdirSync(sources, { recursive: true })
  const archive = execFileSync("git", ["archive", "--format=tar", commit, "packages/cli", "packages/client/src", "packages/server/src"], {
    cwd: repoRoot,
    maxBuffer: 256 * 1024 * 1024
  })
  execFileSync("tar", ["-x", "-C", sources], { input: archive })
  before = await installCli("before", path.join(sources, "packages/cli"))
}

const bareBundle = path.join(work, "bare/cliBare.mjs")
await esbuild.build({
  entryPoints: [path.join(here, "cliBare.mjs")],
  outfile: bareBundle,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  logLevel: "error",
  banner: {
    js: "import { createRequire as __conduitRequire } from 'node:module'; const require = __conduitRequire(import.meta.url);"
  }
})

const commands = [
  { label: "`node -e 0`", args: ["-e", "0"] },
  { label: "bare `effect/cli` `--version` (node_modules)", args: [path.join(here, "cliBare.mjs"), "--version"], expect: "1.0.0" },
  { label: "bare `effect/cli` `--version` (bundled)", args: [bareBundle, "--version"], expect: "1.0.0", floor: true },
  ...(before === undefined ? [] : [
    { label: `\`conduit --version\` at ${commit}`, args: [before, "--version"], expect: "1.0.0" },
    { label: `\`conduit tools list\` at ${commit}`, args: [before, "tools", "list"], expect: "echo" }
  ]),
  { label: "`conduit --version`", args: [current, "--version"], expect: "1.0.0" },
  { label: "`conduit tools list` (demo server)", args: [current, "tools", "list"], expect: "echo" }
]

const pin = !flag("no-pin") && spawnSync("taskset", ["-c", "0", "true"]).status === 0
const runOnce = (command) => {
  const [file, args] = pin ? ["taskset", ["-c", "0", process.execPath, ...command.args]] : [process.execPath, command.args]
  const start = process.hrtime.bigint()
  const result = spawnSync(file, args, { cwd: work, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (result.status !== 0 || (command.expect !== undefined && !result.stdout.includes(command.expect))) {
    throw new Error(`${command.label} exited with ${result.status}: ${result.stdout}${result.stderr}`)
  }
  return ms
}

for (const command of commands) runOnce(command) // one untimed run each: the files in the page cache
const times = commands.map(() => [])
const load = (await import("node:os")).loadavg().map((n) => n.toFixed(1)).join(" ")
for (let round = 0; round < rounds; round++) {
  commands.forEach((command, index) => times[index].push(runOnce(command)))
}
const loadAfter = (await import("node:os")).loadavg().map((n) => n.toFixed(1)).join(" ")

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
// ratios: the median of the per-round ratios (each round's commands ran within a second of each other)
const ratioTo = (index, base) => median(times[index].map((t, round) => t / times[base][round]))
const nodeIndex = 0
const floorIndex = commands.findIndex((c) => c.floor)
const bareIndex = 1

console.log(`${rounds} rounds, ${pin ? "pinned to core 0" : "not pinned"}, node ${process.version}, load average ${load} before, ${loadAfter} after`)
console.log("")
console.log("| command | median ms | min–max ms | × `node -e 0` | × bare effect/cli (node_modules) | × bare effect/cli (bundled) |")
console.log("| --- | --- | --- | --- | --- | --- |")
commands.forEach((command, index) => {
  const ts = times[index]
  console.log(
    `| ${command.label} | ${median(ts).toFixed(1)} | ${Math.min(...ts).toFixed(0)}–${Math.max(...ts).toFixed(0)} | ${
      ratioTo(index, nodeIndex).toFixed(2)
    }× | ${ratioTo(index, bareIndex).toFixed(2)}× | ${ratioTo(index, floorIndex).toFixed(2)}× |`
  )
})
