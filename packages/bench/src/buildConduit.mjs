// Transpiles the client library (packages/client/src) to plain ES modules under packages/bench/.build, one
// file per source file, the way a published package ships it: the benchmarked process then loads JavaScript
// with `effect` and `@effect/platform` from node_modules, with no TypeScript loader in the way of import time.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const here = path.dirname(fileURLToPath(import.meta.url))
// CONDUIT_SRC builds another copy of the sources (to try a change before making it in the library)
export const sourceDir = path.resolve(process.env.CONDUIT_SRC ?? path.resolve(here, "../../client/src"))
export const buildDir = path.resolve(here, "../.build/client")

const walk = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return walk(full)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : []
  })

/** Transpiles every source file; returns the number of files written. */
export const buildConduit = () => {
  fs.rmSync(buildDir, { recursive: true, force: true })
  let count = 0
  for (const file of walk(sourceDir)) {
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
    const target = path.join(buildDir, path.relative(sourceDir, file)).replace(/\.ts$/, ".js")
    fs.mkdirSync(path.dirname(target), { recursive: true })
    fs.writeFileSync(target, output.outputText)
    count++
  }
  fs.writeFileSync(path.join(buildDir, "package.json"), JSON.stringify({ type: "module" }))
  return count
}

/** Whether a module of the library is committed (a module being written in the work tree does not count). */
export const hasModule = (name) => {
  try {
    execFileSync("git", ["cat-file", "-e", `HEAD:packages/client/src/${name}.ts`], {
      cwd: sourceDir,
      stdio: "ignore"
    })
    return true
  } catch {
    return false
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`built ${buildConduit()} files into ${buildDir}`)
}
