// Import cost of each client, every measurement in a fresh `node` process (pinned to one core when `taskset` is
// there), interleaved over the rounds, medians printed as a markdown table:
//   cold           nothing loaded before: Conduit's `McpClient` and `StdioTransport` modules (what a program using
//                  one transport imports), or its entry point (every module), and what the stdio transport needs;
//                  the floor: the Effect and platform modules those import, alone, and the two barrels;
//   in an Effect app   the process first loads `effect`, `effect/http` and `effect/process` (the barrels an Effect
//                  program imports from) and the Node platform's services, then Conduit; what adding Conduit costs
//                  an application built on Effect.
// Effect's own MCP client (`effect/ai/McpClient`) is measured the same ways, and Conduit 0.2 on Effect 3 cold when
// prepareConduit02.mjs has installed it.
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
// one module per entry point and shared chunks (bundleEntries.mjs): measured beside the shape the package ships
const bundledDir = path.join(benchDir, ".build/imports-bundled")
buildConduit({ dir: bundledDir, shape: "bundled" })
const built = (file) => pathToFileURL(path.join(buildDir, file)).href
const builtBundled = (file) => pathToFileURL(path.join(bundledDir, file)).href
const conduitEntry = built("index.js")

// The Effect and platform modules a set of Conduit's modules imports (walking its relative imports): the floor
// under what Conduit itself adds.
const externalsOf = (entries, dir = buildDir) => {
  const seen = new Set()
  const externals = new Set()
  const walk = (file) => {
    if (seen.has(file)) return
    seen.add(file)
    const text = fs.readFileSync(file, "utf8")
    for (const match of text.matchAll(/^\s*(?:import|export)\s[^"';]*?from\s*"([^"]+)"|^import\s*"([^"]+)"/gm)) {
      const specifier = match[1] ?? match[2]
      if (specifier.startsWith(".")) walk(path.resolve(path.dirname(file), specifier))
      else if (!specifier.startsWith("node:")) externals.add(specifier)
    }
  }
  for (const entry of entries) walk(path.join(dir, entry))
  return { modules: seen.size, externals: [...externals].sort() }
}
const stdioApp = ["McpClient.js", "StdioTransport.js"]
const httpApp = ["McpClient.js", "HttpTransport.js"]
const stdioGraph = externalsOf(stdioApp)
const platform = "@effect/platform-node/NodeServices"
const effectApp = ["effect", "effect/http", "effect/process", platform]
const conduit02 = path.join(benchDir, ".conduit02")
const has02 = fs.existsSync(path.join(conduit02, "ready.json"))
const from02 = has02
  ? (await import(pathToFileURL(path.join(conduit02, "resolve.mjs")).href)).resolve
  : undefined

const cases = [
  {
    name: "Effect + platform alone",
    mode: "cold: the modules McpClient + StdioTransport import",
    preload: [],
    load: [...stdioGraph.externals, platform]
  },
  { name: "Effect + platform alone", mode: "cold: the barrels", preload: [], load: effectApp },
  {
    name: "Conduit McpClient + StdioTransport",
    mode: "cold",
    preload: [],
    load: [...stdioApp.map(built), platform]
  },
  {
    name: "Conduit McpClient + StdioTransport, bundled entry points (not shipped)",
    mode: "cold",
    preload: [],
    load: [...stdioApp.map(builtBundled), platform]
  },
  { name: "Conduit entry point", mode: "cold", preload: [], load: [conduitEntry, platform] },
  { name: "Effect McpClient", mode: "cold", preload: [], load: ["effect/ai/McpClient", "effect/ai/McpProtocol", platform] },
  { name: "Conduit McpClient + StdioTransport", mode: "in an Effect app", preload: effectApp, load: stdioApp.map(built) },
  {
    name: "Conduit McpClient + StdioTransport, bundled entry points (not shipped)",
    mode: "in an Effect app",
    preload: effectApp,
    load: stdioApp.map(builtBundled)
  },
  { name: "Conduit McpClient + HttpTransport", mode: "in an Effect app", preload: effectApp, load: httpApp.map(built) },
  { name: "Conduit entry point", mode: "in an Effect app", preload: effectApp, load: [conduitEntry] },
  { name: "Effect McpClient", mode: "in an Effect app", preload: effectApp, load: ["effect/ai/McpClient", "effect/ai/McpProtocol"] },
  ...(has02
    ? [{
      name: "Conduit 0.2 (Effect 3) McpClient + StdioTransport",
      mode: "cold",
      preload: [],
      load: [
        "@conduit-mcp/client/McpClient",
        "@conduit-mcp/client/StdioTransport",
        "@effect/platform-node/NodeContext"
      ].map(from02)
    }]
    : []),
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
globalThis.gc()
globalThis.gc()
const memory = process.memoryUsage()
console.log(JSON.stringify({ wall, cpu: (used.user + used.system) / 1000, rss: memory.rss / 1048576, heap: memory.heapUsed / 1048576 }))
`

const hasTaskset = spawnSync("taskset", ["--version"]).status === 0

const measure = (c) => {
  const args = ["--expose-gc", "--input-type=module", "-e", program, JSON.stringify([c.preload, c.load])]
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
console.log(
  `McpClient + StdioTransport: ${stdioGraph.modules} files of Conduit's (${externalsOf(stdioApp, bundledDir).modules} ` +
    `bundled), importing ${stdioGraph.externals.length} of Effect's and the platform's; the entry ` +
    `point: ${externalsOf(["index.js"]).modules} files of Conduit's (${externalsOf(["index.js"], bundledDir).modules} ` +
    `bundled)`
)
console.log("")
console.log("| what | import | CPU ms | wall ms | RSS MiB after | heap MiB after GC |")
console.log("| --- | --- | --- | --- | --- | --- |")
cases.forEach((c, i) => {
  const s = samples[i]
  const row = [
    c.name,
    c.mode,
    median(s.map((x) => x.cpu)).toFixed(0),
    median(s.map((x) => x.wall)).toFixed(0),
    median(s.map((x) => x.rss)).toFixed(1),
    median(s.map((x) => x.heap)).toFixed(1)
  ]
  console.log(`| ${row.join(" | ")} |`)
})

// what Conduit's two modules add to the floor, round by round (the same round's floor process: less exposed to a
// host whose speed drifts over the run than a difference of medians)
const floorAt = cases.findIndex((c) => c.mode.startsWith("cold: the modules"))
const above = (name) => {
  const at = cases.findIndex((c) => c.mode === "cold" && c.name === name)
  const deltas = samples[at].map((x, round) => x.cpu - samples[floorAt][round].cpu).sort((a, b) => a - b)
  return `${median(deltas).toFixed(1)} ms (${deltas[0].toFixed(1)} to ${deltas[deltas.length - 1].toFixed(1)})`
}
console.log("")
console.log(`Cold, CPU above the floor (the modules they import), median of the rounds' differences (range):`)
console.log(
  `- McpClient + StdioTransport as the package ships them, one file per source file: ` +
    above("Conduit McpClient + StdioTransport")
)
console.log(
  `- bundled entry points (not shipped): ${above("Conduit McpClient + StdioTransport, bundled entry points (not shipped)")}`
)
