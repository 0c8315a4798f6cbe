// Builds the client library (packages/client/src) to plain ES modules under packages/bench/.build, the way the
// published package ships it (one file per source file, see buildConduit below): the benchmarked process then loads
// JavaScript with `effect` and `@effect/platform-node` from node_modules, with no TypeScript loader in the way.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, "../../..")
// CONDUIT_BUILD_DIR writes elsewhere under packages/bench (so that node_modules still resolve), e.g. to try a
// change while a benchmark runs on the regular build
export const buildDir = path.resolve(here, "..", process.env.CONDUIT_BUILD_DIR ?? ".build/client")
const headDir = path.resolve(here, "../.build/head")

const git = (args, options = {}) => execFileSync("git", args, { cwd: repoRoot, ...options })

/**
 * The sources to build: the committed library (HEAD), so that work in progress in the tree is not measured;
 * CONDUIT_SRC=dir builds another copy instead (to try a change before making it in the library), and
 * CONDUIT_SRC=worktree the work tree.
 */
const prepareSources = () => {
  const override = process.env.CONDUIT_SRC
  if (override === "worktree") return { dir: path.join(repoRoot, "packages/client/src"), label: "work tree" }
  if (override !== undefined) return { dir: path.resolve(override), label: override }
  fs.rmSync(headDir, { recursive: true, force: true })
  fs.mkdirSync(headDir, { recursive: true })
  const archive = git(["archive", "--format=tar", "HEAD", "packages/client/src"], { maxBuffer: 256 * 1024 * 1024 })
  execFileSync("tar", ["-x", "-C", headDir], { input: archive })
  const commit = git(["rev-parse", "--short", "HEAD"]).toString().trim()
  return { dir: path.join(headDir, "packages/client/src"), label: `commit ${commit}` }
}

/** The files under `dir` whose names `keep` accepts. */
const walk = (dir, keep) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return walk(full, keep)
    return keep(entry.name) ? [full] : []
  })
const isSource = (name) => name.endsWith(".ts") && !name.endsWith(".d.ts")

const bundler = path.join(repoRoot, "packages/bench/src/bundleEntries.mjs")

/**
 * Builds the client library into `dir` (default: `buildDir`) in one of three shapes (CONDUIT_BUILD chooses):
 * - `files`, the default and what the package ships: one JavaScript file per source file, as `tsc` writes them;
 * - `bundled`: one module per public entry point and the chunks they share (bundleEntries.mjs), measured and not
 *   shipped (README.md, "Cold import, bundled entry points");
 * - `single`: each entry point one module with all it imports (bundleEntries.mjs --single), what an application's
 *   own bundler makes; not shippable.
 * Returns the number of JavaScript files written and which sources they came from.
 */
export const buildConduit = ({ dir = buildDir, shape = process.env.CONDUIT_BUILD ?? "files" } = {}) => {
  const { dir: sourceDir, label } = prepareSources()
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  let count = 0
  if (shape === "bundled" || shape === "single") {
    execFileSync(process.execPath, [
      bundler,
      "--package",
      path.join(repoRoot, "packages/client"),
      "--src",
      sourceDir,
      "--out",
      dir,
      ...(shape === "single" ? ["--single"] : [])
    ], { stdio: ["ignore", "ignore", "inherit"] })
    count = walk(dir, (name) => name.endsWith(".js")).length
  } else if (shape === "files") {
    for (const file of walk(sourceDir, isSource)) {
      const source = fs.readFileSync(file, "utf8")
      const output = ts.transpileModule(source, {
        fileName: file,
        compilerOptions: {
          module: ts.ModuleKind.ESNext,
          target: ts.ScriptTarget.ES2022,
          verbatimModuleSyntax: true,
          sourceMap: false
        }
      })
      const target = path.join(dir, path.relative(sourceDir, file)).replace(/\.ts$/, ".js")
      fs.mkdirSync(path.dirname(target), { recursive: true })
      fs.writeFileSync(target, output.outputText)
      count++
    }
  } else {
    throw new Error(`CONDUIT_BUILD: "files", "bundled" or "single", not ${JSON.stringify(shape)}`)
  }
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }))
  return { count, source: `${label}, ${shape}` }
}

/** Whether a module of the library is committed (a module being written in the work tree does not count). */
export const hasModule = (name) => {
  try {
    git(["cat-file", "-e", `HEAD:packages/client/src/${name}.ts`], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { count, source } = buildConduit()
  console.log(`built ${count} files (${source}) into ${buildDir}`)
}
