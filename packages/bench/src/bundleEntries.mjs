#!/usr/bin/env node
// Builds a copy of a library package's sources as one ES module per public entry point (each name in the package's
// `exports`) and the chunks they share, with esbuild: the "bundled" shape of buildConduit.mjs, measured against the
// file per source file the packages ship (README.md, "Cold import, bundled entry points": it loads faster and runs
// calls slower, so the packages do not ship it).
//
//   node packages/bench/src/bundleEntries.mjs --package DIR --src DIR --out DIR [--single]
//
// --single: no chunks, each entry point a module of its own with everything it imports (what an application's own
// bundler makes of one entry; not shippable as a package: two entry points would hold two copies of each class).
//
// Every package an import names (effect, @conduit-mcp/*, re2js, ...) stays external and a module two entry points
// share is one chunk, evaluated once, as a published bundle would have to be. esbuild renames a module-level name
// that two bundled modules share (a second `make` becomes `make2`); a class renamed so (or given a name of its own,
// `var A = class _A`) would show its new name in errors, so the build fails instead.
import * as esbuild from "esbuild"
import * as Fs from "node:fs"
import * as Path from "node:path"

const argument = (name) => {
  const at = process.argv.indexOf(`--${name}`)
  if (at === -1 || process.argv[at + 1] === undefined) throw new Error(`--${name} DIR is required`)
  return Path.resolve(process.argv[at + 1])
}
const packageDir = argument("package")
const srcDir = argument("src")
const outDir = argument("out")
const manifest = JSON.parse(Fs.readFileSync(Path.join(packageDir, "package.json"), "utf8"))

// every `exports` target "./dist/<name>.js" is built from "<src>/<name>.ts"; an earlier commit's sources (the
// bench builds those too) may lack a module the manifest names
const entryPoints = Object.values(manifest.exports ?? {}).flatMap((target) => {
  const file = target !== null && typeof target === "object" ? target.import : undefined
  const match = typeof file === "string" ? /^\.\/dist\/(.+)\.js$/.exec(file) : null
  if (match === null) return []
  const source = Path.join(srcDir, `${match[1]}.ts`)
  return Fs.existsSync(source) ? [{ in: source, out: match[1] }] : []
})
if (entryPoints.length === 0) throw new Error(`${manifest.name}: no "./dist/*.js" entry point in its exports`)

Fs.rmSync(outDir, { recursive: true, force: true })
const result = await esbuild.build({
  entryPoints,
  outdir: outDir,
  bundle: true,
  splitting: !process.argv.includes("--single"),
  format: "esm",
  platform: "node",
  target: "es2022",
  packages: "external",
  chunkNames: "chunks/[name]-[hash]",
  metafile: true,
  logLevel: "warning"
})
const outputs = Object.keys(result.metafile.outputs).filter((file) => file.endsWith(".js"))

// only the package's own sources: another package's module bundled in would be a second copy of its classes
const foreign = Object.keys(result.metafile.inputs).filter((file) => {
  const relative = Path.relative(srcDir, Path.resolve(file))
  return relative.startsWith("..") || Path.isAbsolute(relative)
})
if (foreign.length > 0) throw new Error(`${manifest.name}: the bundle took in ${foreign.slice(0, 3).join(", ")}`)

// a class statement's name, and the `var Name = class ...` esbuild writes for a class
const classesIn = (text) =>
  new Set([
    ...[...text.matchAll(/\bclass\s+([A-Za-z_$][\w$]*)/g)].map((match) => match[1]).filter((name) => name !== "extends"),
    ...[...text.matchAll(/\b(?:var|let|const)\s+([A-Za-z_$][\w$]*)\s*=\s*class\b/g)].map((match) => match[1])
  ])
const sourceFiles = (dir) =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(Path.join(dir, entry.name))
      : entry.name.endsWith(".ts")
      ? [Path.join(dir, entry.name)]
      : []
  )
const declared = new Set(sourceFiles(srcDir).flatMap((file) => [...classesIn(Fs.readFileSync(file, "utf8"))]))
const renamed = outputs.flatMap((file) =>
  [...classesIn(Fs.readFileSync(file, "utf8"))].filter((name) => !declared.has(name))
)
if (renamed.length > 0) {
  throw new Error(`${manifest.name}: the bundle renamed these classes: ${renamed.join(", ")}`)
}
process.stdout.write(
  `${manifest.name}: ${entryPoints.length} entry points and ${outputs.length - entryPoints.length} shared chunks\n`
)
