// Import cost of each client, every measurement in a fresh `node` process (pinned to one core when `taskset` is
// there), interleaved over the rounds, medians printed as a markdown table:
//   cold           the library's entry point and what its stdio transport needs, with nothing loaded before;
//   in an Effect app   Conduit only: the process first loads `effect` and `@effect/platform` (the barrels an Effect
//                  program imports from), then Conduit; what adding Conduit costs an application built on Effect.
// Usage: node packages/bench/src/imports.mjs [--rounds 7]
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const benchDir = path.resolve(here, "..")
const repoRoot = path.resolve(benchDir, "../..")

// the committed sources, extracted and built in folders of this script's own (a benchmark may run meanwhile)
let label = process.env.CONDUIT_SRC ?? "work tree"
if (process.env.CONDUIT_SRC === undefined) {
  const sources = path.join(benchDir, ".build/imports-src")
  fs.rmSync(sources, { recursive: true, force: true })
  fs.mkdirSync(sources, { recursive: true })
  const archive = execFileSync("git", ["archive", "--format=tar", "HEAD", "packages/client/src"], {
    cwd: repoRoot,
    maxBuffer: 256 * 1024 * 1024
  })
  execFileSync("tar", ["-x", "-C", sources], { input: archive })
  process.env.CONDUIT_SRC = path.join(sources, "packages/client/src")
  label = `commit ${execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot }).toString().trim()}`
}
process.env.CONDUIT_BUILD_DIR ??= ".build/imports"
const { buildConduit, buildDir } = await import("./buildConduit.mjs")
const argv = process.argv.slice(2)
const roundsAt = argv.indexOf("--rounds")
const rounds = roundsAt === -1 ? 7 : Number(argv[roundsAt + 1])

buildConduit()
const conduitEntry = pathToFileURL(path.join(buildDir, "index.js")).href

const cases = [
  { name: "Conduit", mode: "cold", preload: [], load: [conduitEntry, "@effect/platform-node/NodeContext"] },
  {
    name: "Conduit",
    mode: "in an Effect app",
    preload: ["effect", "@effect/platform", "@effect/platform-node/NodeContext"],
    load: [conduitEntry]
  },
  { name: "SDK v2", mode: "cold", preload: [], load: ["@modelcontextprotocol/client", "@modelcontextprotocol/client/stdio"] },
  {
    name: "SDK v1",
    mode: "cold",
    preload: [],
    load: ["@modelcontextprotocol/sdk/client/index.js", "@modelcontextprotocol/sdk/client/stdio.js"]
  }
]

// the measuring program: loads `preload`, then times the import of `load` (wall and CPU) and reports RSS
const program = `
const [preload, load] = JSON.parse(process.argv[1])
for (const m of preload) await import(m)
const cpu = process.cpuUsage()
const start = performance.now()
for (const m of load) await import(m)
const wall = performance.now() - start
const used = process.cpuUsage(cpu)
console.log(JSON.stringify({ wall, cpu: (used.user + used.system) / 1000, rss: process.memoryUsage().rss / 1048576 }))
`

const hasTaskset = spawnSync("taskset", ["--version"]).status === 0

const measure = (c) => {
  const args = ["--input-type=module", "-e", program, JSON.stringify([c.preload, c.load])]
  const command = hasTaskset ? "taskset" : process.execPath
  const full = hasTaskset ? ["-c", "0", process.execPath, ...args] : args
  return JSON.parse(execFileSync(command, full, { cwd: benchDir }).toString())
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

const samples = cases.map(() => [])
for (let round = 0; round < rounds; round++) {
  cases.forEach((c, i) => samples[i].push(measure(c)))
}

const load = () => execFileSync("cat", ["/proc/loadavg"]).toString().split(" ").slice(0, 3).join(" ")
console.log(`Conduit at ${label}; Node ${process.version}; ${rounds} fresh processes per row; load ${load()}`)
console.log("")
console.log("| client | import | CPU ms | wall ms | RSS MiB after |")
console.log("| --- | --- | --- | --- | --- |")
cases.forEach((c, i) => {
  const s = samples[i]
  const row = [
    c.name,
    c.mode,
    median(s.map((x) => x.cpu)).toFixed(0),
    median(s.map((x) => x.wall)).toFixed(0),
    median(s.map((x) => x.rss)).toFixed(1)
  ]
  console.log(`| ${row.join(" | ")} |`)
})
