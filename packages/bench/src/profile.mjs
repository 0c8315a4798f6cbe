// Profiles one client's hot path with `node --cpu-prof`: the client runs the usual benchmark process with a
// plan dominated by calls at 64 in flight, and the profile is summarized by self time per function and per
// file (library files, effect modules, node internals, GC).
//
//   node packages/bench/src/profile.mjs [--client conduit] [--transport stdio] [--era legacy] [--calls 40000]
//        [--top 40] [--import] [--sequential [--steady]] [--no-build]
//   --import: profile only the import of the library; --sequential: the calls one at a time instead of 64 in flight
//   (the first of the client's two runs of them; with --steady the second, once that path is warm)
// Conduit is built as it ships, one file per source file, so that self time is summed per source file
// (CONDUIT_BUILD=bundled profiles bundleEntries.mjs's shape, its chunks named as files); --no-build keeps the build
// there is (CONDUIT_BUILD_DIR chooses another, relative to packages/bench).
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { buildConduit } from "./buildConduit.mjs"
import { flag, option } from "./args.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const client = option("client", "conduit")
const transport = option("transport", "stdio")
const era = option("era", "legacy")
const calls = Number(option("calls", "40000"))
const top = Number(option("top", "40"))
const importOnly = flag("import")
const sequential = flag("sequential")
const steady = flag("steady")

const outDir = path.resolve(option("out", path.join(here, "../.bench-results/profiles")))
fs.mkdirSync(outDir, { recursive: true })
const runDir = fs.mkdtempSync(path.join(outDir, `${client}-${transport}-${era}-`))

const plan = importOnly
  ? { concurrency: 64, warmup: 0, sequential: 1, concurrent: 1, memoryAfter: 0, blobs: [] }
  : sequential
  ? { concurrency: 64, warmup: 2_000, sequential: calls, concurrent: 1, memoryAfter: 0, blobs: [] }
  : { concurrency: 64, warmup: 2_000, sequential: 1, concurrent: calls, memoryAfter: 0, blobs: [] }

const startHttpServer = () =>
  new Promise((resolve, reject) => {
    const child = spawn("taskset", ["-c", "1", process.execPath, path.join(here, "server.mjs"), "--http"], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.stdout.once("data", (chunk) => {
      const { port } = JSON.parse(chunk.toString("utf8").split("\n")[0])
      resolve({ url: `http://127.0.0.1:${port}/mcp`, child })
    })
    child.on("error", reject)
  })

const run = async () => {
  if (client.startsWith("conduit") && client !== "conduit-0.2" && !flag("no-build")) buildConduit()
  const server = transport === "http" ? await startHttpServer() : undefined
  const resultFile = path.join(runDir, "result.json")
  const args = [
    "-c",
    "0",
    process.execPath,
    "--cpu-prof",
    "--cpu-prof-dir",
    runDir,
    "--cpu-prof-interval",
    "200",
    "--expose-gc",
    path.join(here, "client.mjs"),
    "--client",
    client,
    "--transport",
    transport,
    "--era",
    era,
    "--plan",
    JSON.stringify(plan),
    "--out",
    resultFile,
    ...(server === undefined
      ? [
        "--command",
        "taskset",
        "--args",
        JSON.stringify(["-c", "1", process.execPath, path.join(here, "server.mjs"), "--stdio"])
      ]
      : ["--url", server.url])
  ]
  const child = spawn("taskset", args, { stdio: "inherit" })
  const code = await new Promise((resolve) => child.on("exit", resolve))
  server?.child.kill("SIGTERM")
  if (code !== 0) throw new Error(`the client exited with ${code}`)
  const result = JSON.parse(fs.readFileSync(resultFile, "utf8"))
  const file = fs.readdirSync(runDir).find((f) => f.endsWith(".cpuprofile"))
  return { result, profile: path.join(runDir, file) }
}

const categorize = (url) => {
  if (url === "") return "(native/vm)"
  if (url.includes("/.build/client/")) return `conduit: ${url.split("/.build/client/")[1]}`
  const nm = url.lastIndexOf("/node_modules/")
  if (nm !== -1) {
    const rest = url.slice(nm + 14).split("/")
    const pkg = rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]
    // effect 4: effect/dist/…; effect 3 (conduit-0.2): effect/dist/esm/…
    if (pkg === "effect") return `effect: ${rest.slice(rest.indexOf(rest.includes("esm") ? "esm" : "dist") + 1).join("/")}`
    return pkg
  }
  if (url.startsWith("node:")) return url
  if (url.includes("/bench/src/")) return `bench: ${path.basename(url)}`
  return url
}

// Only the samples of the measured phase (the calls one at a time with --sequential, else the calls at 64 in
// flight; everything with --import), idle time left out: the client marks each phase's start on the profile's clock.
const summarize = (profileFile, marks) => {
  const profile = JSON.parse(fs.readFileSync(profileFile, "utf8"))
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
  const [from, to] = importOnly || marks === undefined
    ? [-Infinity, Infinity]
    : sequential
    ? steady ? [marks["sequential-steady"], marks.concurrent] : [marks.sequential, marks["sequential-steady"]]
    : [marks.concurrent, marks.memory]
  const counts = new Map()
  let at = profile.startTime
  profile.samples.forEach((sample, index) => {
    at += profile.timeDeltas[index]
    if (at < from || at >= to || nodes.get(sample).callFrame.functionName === "(idle)") return
    counts.set(sample, (counts.get(sample) ?? 0) + 1)
  })
  let total = 0
  for (const count of counts.values()) total += count
  const byFunction = new Map()
  const byFile = new Map()
  for (const [id, count] of counts) {
    const node = nodes.get(id)
    const frame = node.callFrame
    const category = categorize(frame.url)
    const name = `${frame.functionName || "(anonymous)"}  ${category}:${frame.lineNumber + 1}`
    byFunction.set(name, (byFunction.get(name) ?? 0) + count)
    byFile.set(category, (byFile.get(category) ?? 0) + count)
  }
  const lines = (map) =>
    [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) =>
      `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`
    )
  // share of time spent under any conduit frame (inclusive), by walking parents
  const parent = new Map()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  // inclusive time per function: each function counted once per sample whatever its depth
  const inclusive = new Map()
  for (const [id, count] of counts) {
    const seen = new Set()
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const frame = nodes.get(at).callFrame
      const name = `${frame.functionName || "(anonymous)"}  ${categorize(frame.url)}:${frame.lineNumber + 1}`
      if (seen.has(name)) continue
      seen.add(name)
      inclusive.set(name, (inclusive.get(name) ?? 0) + count)
    }
  }
  let underConduit = 0
  for (const [id, count] of counts) {
    let at = id
    while (at !== undefined) {
      if (nodes.get(at).callFrame.url.includes("/.build/client/")) {
        underConduit += count
        break
      }
      at = parent.get(at)
    }
  }
  return [
    `${total} busy samples in the measured phase; ${
      ((100 * underConduit) / total).toFixed(1)
    }% with a library frame on the stack`,
    "",
    "Self time by file:",
    ...lines(byFile),
    "",
    "Self time by function:",
    ...lines(byFunction),
    "",
    "Inclusive time by function:",
    ...lines(inclusive)
  ].join("\n")
}

run().then(({ result, profile }) => {
  const text = [
    `${client} ${transport}/${era}: ${result.cpuMsPer10k.toFixed(0)} ms CPU per 10k calls, ` +
    `${result.sequentialCpuMsPer10k.toFixed(0)} ms per 10k one at a time, ` +
    `${result.callsPerSecond.toFixed(0)} calls/s, import ${result.importLibMs.toFixed(0)} ms`,
    `profile: ${profile}`,
    "",
    summarize(profile, result.marks)
  ].join("\n")
  fs.writeFileSync(path.join(runDir, "summary.txt"), text)
  process.stdout.write(`${text}\n`)
}, (error) => {
  process.stderr.write(`${error?.stack ?? error}\n`)
  process.exit(1)
})
