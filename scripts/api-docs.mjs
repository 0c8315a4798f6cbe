#!/usr/bin/env node
// The API reference of the library packages (client, server, ai, redis): packages/<name>/docs/modules/*.md, one page
// per public module, made by @effect/docgen from the modules' documentation. Making it type-checks every example of
// every public module (strict, with exactOptionalPropertyTypes) and runs it, so an example that no longer compiles or
// throws fails `npm test`.
//
//   node scripts/api-docs.mjs           writes the reference
//   node scripts/api-docs.mjs --check   also fails when the committed reference differs from what the sources give
//
// docgen reads the package's name and `homepage` from a package.json next to its docgen.json; the published
// package.json has no homepage, so each package is staged under build/docgen/<name> (its package.json, docgen.json,
// and `src` as a link to the package's own), and the pages are copied back. Run after `tsc -b` (npm test runs it
// after the typecheck): an example that imports a sibling package reads that package's built declarations.
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const check = process.argv.includes("--check")
const log = (line) => process.stdout.write(`api-docs: ${line}\n`)
const packages = ["client", "server", "ai", "redis"]

const compilerOptions = {
  strict: true,
  noEmit: true,
  target: "ES2022",
  lib: ["ES2022"],
  exactOptionalPropertyTypes: true,
  skipLibCheck: true,
  types: ["node"]
}

const listPages = (dir) =>
  Fs.existsSync(dir) ? Fs.readdirSync(dir).filter((name) => name.endsWith(".md")).sort() : []

let failed = false
for (const name of packages) {
  const packageDir = Path.join(root, "packages", name)
  const manifest = JSON.parse(Fs.readFileSync(Path.join(packageDir, "package.json"), "utf8"))
  const stage = Path.join(root, "build", "docgen", name)
  Fs.rmSync(stage, { recursive: true, force: true })
  Fs.mkdirSync(stage, { recursive: true })
  Fs.symlinkSync(Path.join(packageDir, "src"), Path.join(stage, "src"), "dir")
  Fs.writeFileSync(
    Path.join(stage, "package.json"),
    JSON.stringify({ name: manifest.name, version: manifest.version, type: "module", homepage: "../../README.md" }, null, 2)
  )
  Fs.writeFileSync(
    Path.join(stage, "docgen.json"),
    JSON.stringify({
      srcDir: "src",
      outDir: "docs",
      exclude: ["src/internal/**/*.ts"],
      enableSearch: false,
      parseCompilerOptions: { ...compilerOptions, module: "NodeNext", moduleResolution: "NodeNext" },
      // docgen rewrites an example's import of its own package to a path without an extension
      examplesCompilerOptions: { ...compilerOptions, module: "ESNext", moduleResolution: "Bundler" }
    }, null, 2)
  )
  const started = Date.now()
  const bin = Path.join(root, "node_modules", ".bin")
  const result = ChildProcess.spawnSync(Path.join(bin, "docgen"), [], {
    cwd: stage,
    encoding: "utf8",
    // (tsc and tsx from the repository; the Node that runs this script first)
    env: { ...process.env, PATH: [Path.dirname(process.execPath), bin, process.env.PATH].join(Path.delimiter) }
  })
  if (result.status !== 0) {
    failed = true
    log(`${name}: failed (${Math.round((Date.now() - started) / 1000)} s)`)
    process.stdout.write(`${result.stdout}${result.stderr}\n`)
    continue
  }
  const generated = Path.join(stage, "docs", "modules")
  const target = Path.join(packageDir, "docs", "modules")
  const pages = listPages(generated)
  const differing = check
    ? [...new Set([...pages, ...listPages(target)])].filter((page) => {
      const a = Path.join(generated, page)
      const b = Path.join(target, page)
      return !Fs.existsSync(a) || !Fs.existsSync(b) || Fs.readFileSync(a, "utf8") !== Fs.readFileSync(b, "utf8")
    })
    : []
  if (differing.length > 0) {
    failed = true
    log(`${name}: the committed reference differs from the sources in ${differing.join(", ")} (run node scripts/api-docs.mjs)`)
    continue
  }
  Fs.rmSync(target, { recursive: true, force: true })
  Fs.mkdirSync(target, { recursive: true })
  for (const page of pages) Fs.copyFileSync(Path.join(generated, page), Path.join(target, page))
  log(`${name}: ${pages.length} pages, examples type-checked and run (${Math.round((Date.now() - started) / 1000)} s)`)
}
if (failed) process.exit(1)
