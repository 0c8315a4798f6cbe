#!/usr/bin/env node
// Replaces the JavaScript that `tsc` wrote under a library package's dist/ with one module per public entry point
// (each name in the package's `exports`) and the chunks they share, bundled by esbuild from the package's
// TypeScript sources. The declarations (`*.d.ts`, `*.d.ts.map`) stay as `tsc` wrote them, one per source file.
//
//   node ../../scripts/bundle-entries.mjs            # in a package's folder (its `prepack` runs it after tsc)
//   node ../../scripts/bundle-entries.mjs --restore  # puts tsc's JavaScript back (the package's `postpack`)
//   node scripts/bundle-entries.mjs --package DIR --src DIR --out DIR   # another copy of the sources (the bench)
//
// In a package's folder, tsc's JavaScript is moved aside to build/bundle-backup/ rather than deleted, and `--restore`
// moves it back: the tests' child processes load dist/, and `tsc -b` only writes the files whose sources changed, so
// a bundle left in dist/ after `npm pack` would go stale under the next edit. `--restore` keeps what tsc wrote since
// the bundle (a file newer than the bundle is tsc's); the prepack runs it first, after a pack that stopped halfway.
//
// Why: Node's module loader resolves, reads and compiles each file an application imports, and resolves each of a
// file's bare specifiers again for every file that names it. A program that imports `McpClient` and
// `StdioTransport` loaded 56 of the client's files one per source file, and 21 bundled (packages/bench/README.md,
// "Cold import"). Every package an import names (effect, @conduit-mcp/*, re2js, ...) stays external, so an
// application keeps one copy of Effect and of each Conduit package, and a module two entry points share is one
// chunk, evaluated once: its classes and service keys are the same for both. The output is not minified; source maps
// point to the sources the package ships under src/. esbuild renames a module-level name that two bundled modules
// share (a second `make` becomes `make2`); a class renamed so would show its new name in errors and stack traces,
// so the build fails instead (esbuild's `keepNames` would keep every name, at ~9 ms of every cold import). A renamed
// function keeps its new name (`McpClient.make.name` is "make23"): nothing reads a function's name (every Effect.fn
// and span is named by a string, every error by its tag), and with `--enable-source-maps` a stack frame is the source's.
import * as esbuild from "esbuild"
import * as Fs from "node:fs"
import * as Path from "node:path"

const argument = (name) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? undefined : process.argv[at + 1]
}

const packageDir = Path.resolve(argument("package") ?? process.cwd())
const otherSources = argument("src") !== undefined
const srcDir = Path.resolve(argument("src") ?? Path.join(packageDir, "src"))
const outDir = Path.resolve(argument("out") ?? Path.join(packageDir, "dist"))
const manifest = JSON.parse(Fs.readFileSync(Path.join(packageDir, "package.json"), "utf8"))

// every `exports` target "./dist/<name>.js" is built from "<src>/<name>.ts"
const entryPoints = Object.values(manifest.exports ?? {}).flatMap((target) => {
  const file = target !== null && typeof target === "object" ? target.import : undefined
  const match = typeof file === "string" ? /^\.\/dist\/(.+)\.js$/.exec(file) : null
  if (match === null) return []
  const source = Path.join(srcDir, `${match[1]}.ts`)
  // another copy of the sources (an earlier commit's, for the bench) may not have every module the manifest names
  return otherSources && !Fs.existsSync(source) ? [] : [{ in: source, out: match[1] }]
})
if (entryPoints.length === 0) throw new Error(`${manifest.name}: no "./dist/*.js" entry point in its exports`)

const isScript = (name) => /\.js(\.map)?$/.test(name)
const scriptsUnder = (dir, prefix = "") =>
  !Fs.existsSync(dir)
    ? []
    : Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? scriptsUnder(Path.join(dir, entry.name), Path.join(prefix, entry.name))
        : isScript(entry.name)
        ? [Path.join(prefix, entry.name)]
        : []
    )

// tsc's JavaScript, while the bundle is in dist/, and the list of the files the bundle wrote with their times
const backupDir = Path.join(packageDir, "build", "bundle-backup")
const backupList = Path.join(backupDir, "bundle.json")
const tscBuildInfo = Path.join(packageDir, "build", "tsbuildinfo", "src.tsbuildinfo")
const move = (from, to) => {
  Fs.mkdirSync(Path.dirname(to), { recursive: true })
  Fs.renameSync(from, to)
}

/**
 * Puts tsc's JavaScript back. With the bundle's list: removes the bundle's files that nothing rewrote since and moves
 * tsc's files back where tsc wrote none since. Without it (a bundle that stopped before writing it): replaces all of
 * dist/'s JavaScript with tsc's files as they were moved, and, unless `bundleFailed` (nothing ran since the move),
 * deletes tsc's build info so that the next `tsc -b` writes every file again rather than trusting files it did not
 * write.
 */
const restore = ({ bundleFailed = false } = {}) => {
  if (!Fs.existsSync(backupDir)) return
  const written = Fs.existsSync(backupList) ? JSON.parse(Fs.readFileSync(backupList, "utf8")) : undefined
  if (written === undefined) for (const file of scriptsUnder(outDir)) Fs.rmSync(Path.join(outDir, file))
  for (const [file, mtimeMs] of Object.entries(written ?? {})) {
    const full = Path.join(outDir, file)
    if (Fs.existsSync(full) && Fs.statSync(full).mtimeMs === mtimeMs) Fs.rmSync(full)
  }
  Fs.rmSync(Path.join(outDir, "chunks"), { recursive: true, force: true })
  for (const file of scriptsUnder(Path.join(backupDir, "dist"))) {
    const target = Path.join(outDir, file)
    if (written === undefined || !Fs.existsSync(target)) move(Path.join(backupDir, "dist", file), target)
  }
  if (written === undefined && !bundleFailed) Fs.rmSync(tscBuildInfo, { force: true })
  Fs.rmSync(backupDir, { recursive: true, force: true })
}

if (process.argv.includes("--restore")) {
  if (otherSources) throw new Error("--restore works in a package's own folder")
  restore()
  process.exit(0)
}

// the JavaScript tsc wrote moves aside (another copy's output is the bench's own: it goes); the declarations stay
if (otherSources) {
  for (const file of scriptsUnder(outDir)) Fs.rmSync(Path.join(outDir, file))
} else {
  restore()
  // tsc -b writes only what changed and never a file that went missing: a dist/ without tsc's entry points is not
  // one to bundle over (the declarations would be missing from the package)
  const missing = entryPoints.flatMap(({ out }) => [`${out}.js`, `${out}.d.ts`])
    .filter((file) => !Fs.existsSync(Path.join(outDir, file)))
  if (missing.length > 0) {
    throw new Error(
      `${manifest.name}: dist/ lacks ${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ", ..." : ""}: ` +
        "run `tsc -b --force tsconfig.src.json` in the package first"
    )
  }
  Fs.mkdirSync(backupDir, { recursive: true })
  for (const file of scriptsUnder(outDir)) move(Path.join(outDir, file), Path.join(backupDir, "dist", file))
}
Fs.rmSync(Path.join(outDir, "chunks"), { recursive: true, force: true })

// a class statement's name (a class esbuild gives a name of its own, `var A = class _A`, included), and the
// `var Name = class ...` esbuild writes for a class
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

let outputs
try {
  const result = await esbuild.build({
    entryPoints,
    outdir: outDir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "es2022",
    packages: "external",
    chunkNames: "chunks/[name]-[hash]",
    sourcemap: true,
    sourcesContent: false,
    metafile: true,
    logLevel: "warning"
  })
  outputs = Object.keys(result.metafile.outputs).filter((file) => file.endsWith(".js"))
  if (!otherSources) {
    const written = Object.fromEntries(
      Object.keys(result.metafile.outputs).map((file) => {
        const full = Path.resolve(file)
        return [Path.relative(outDir, full), Fs.statSync(full).mtimeMs]
      })
    )
    Fs.writeFileSync(backupList, JSON.stringify(written, null, 2))
  }

  // only this package's own sources are bundled: a module of another package (another Conduit package's sources,
  // reached through a path mapping) would be a second copy of its classes and service keys
  const foreign = Object.keys(result.metafile.inputs).filter((file) => {
    const relative = Path.relative(srcDir, Path.resolve(file))
    return relative.startsWith("..") || Path.isAbsolute(relative)
  })
  if (foreign.length > 0) throw new Error(`${manifest.name}: the bundle took in ${foreign.slice(0, 3).join(", ")}`)

  const declared = new Set(sourceFiles(srcDir).flatMap((file) => [...classesIn(Fs.readFileSync(file, "utf8"))]))
  const renamed = outputs.flatMap((file) =>
    [...classesIn(Fs.readFileSync(file, "utf8"))].filter((name) => !declared.has(name))
  )
  if (renamed.length > 0) {
    throw new Error(`${manifest.name}: the bundle renamed these classes: ${renamed.join(", ")}; give them distinct names`)
  }
} catch (error) {
  // tsc's files go back where they were: a failed pack leaves dist/ as tsc left it
  if (!otherSources) restore({ bundleFailed: true })
  throw error
}
process.stdout.write(
  `${manifest.name}: ${entryPoints.length} entry points and ${outputs.length - entryPoints.length} shared chunks\n`
)
