// Compares the shapes buildConduit.mjs can build the client in, as the benchmark's stdio client measures them: each
// round runs one client process per shape, in an order that alternates round by round (no shape always first), the
// client on core 0 and the server on core 1, and reports per-round ratios to the first shape and their medians.
// Ratios within a round hold on a host whose speed drifts between runs, where two separate runs of the full
// benchmark do not.
//   node packages/bench/src/shapes.mjs [--shapes files,bundled] [--rounds 7] [--era legacy|modern]
// Measured per process: CPU per 10k calls at 64 in flight, one at a time once warm ("steady"), the first calls
// made one at a time, and the import of the library (its plan: 2 000 warm-up calls, 2 000 one at a time twice,
// 10 000 at 64 in flight, no blobs).
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { option } from "./args.mjs"
import { buildConduit } from "./buildConduit.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const benchDir = path.resolve(here, "..")
const shapes = option("shapes", "files,bundled").split(",")
const rounds = Number(option("rounds", "7"))
const era = option("era", "legacy")
const plan = { rounds: 1, concurrency: 64, warmup: 2_000, sequential: 2_000, concurrent: 10_000, memoryAfter: 10_000, blobs: [] }

const dirOf = (shape) => `.build/shape-${shape}`
for (const shape of shapes) buildConduit({ dir: path.join(benchDir, dirOf(shape)), shape })

const hasTaskset = spawnSync("taskset", ["--version"]).status === 0
const pinned = (core, command, args) => (hasTaskset ? ["taskset", ["-c", String(core), command, ...args]] : [command, args])
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "conduit-shapes-"))

const measure = (shape, round) => {
  const out = path.join(scratch, `${shape}-${round}.json`)
  const [serverCommand, serverArgs] = pinned(1, process.execPath, [path.join(here, "server.mjs"), "--stdio"])
  const [command, args] = pinned(0, process.execPath, [
    "--expose-gc",
    path.join(here, "client.mjs"),
    ...["--client", "conduit", "--transport", "stdio", "--era", era, "--plan", JSON.stringify(plan), "--out", out],
    ...["--command", serverCommand, "--args", JSON.stringify(serverArgs)]
  ])
  const child = spawnSync(command, args, {
    cwd: benchDir,
    env: { ...process.env, CONDUIT_BUILD_DIR: dirOf(shape) },
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 10 * 60_000
  })
  if (child.status !== 0) throw new Error(`${shape}: exit ${child.status}: ${child.stderr?.toString().slice(-2_000)}`)
  return JSON.parse(fs.readFileSync(out, "utf8"))
}

const results = Object.fromEntries(shapes.map((shape) => [shape, []]))
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? shapes : [...shapes].reverse()
  for (const shape of order) results[shape][round] = measure(shape, round)
}
fs.rmSync(scratch, { recursive: true, force: true })

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const metrics = [
  ["CPU ms / 10k calls @64", "cpuMsPer10k"],
  ["steady one-at-a-time CPU ms / 10k", "steadyCpuMsPer10k"],
  ["first one-at-a-time CPU ms / 10k", "sequentialCpuMsPer10k"],
  ["import ms (library)", "importLibMs"]
]
const load = fs.existsSync("/proc/loadavg") ? fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ") : "n/a"
console.log(`shapes ${shapes.join(", ")}; ${rounds} rounds, stdio ${era}; Node ${process.version}; load ${load}`)
console.log("")
console.log(`| measure | ${shapes.map((shape) => `${shape} (median)`).join(" | ")} | ${shapes.slice(1).map((shape) => `${shape} ÷ ${shapes[0]} per round (median)`).join(" | ")} |`)
console.log(`| --- | ${shapes.map(() => "---").join(" | ")} | ${shapes.slice(1).map(() => "---").join(" | ")} |`)
for (const [label, key] of metrics) {
  const medians = shapes.map((shape) => median(results[shape].map((run) => run[key])).toFixed(0))
  const ratios = shapes.slice(1).map((shape) => {
    const perRound = results[shape].map((run, round) => run[key] / results[shapes[0]][round][key])
    return `${perRound.map((ratio) => ratio.toFixed(2)).join(" ")} (**${median(perRound).toFixed(2)}**)`
  })
  console.log(`| ${label} | ${medians.join(" | ")} | ${ratios.join(" | ")} |`)
}
