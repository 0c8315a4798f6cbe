#!/usr/bin/env node
// The `conduit` command. An installed package runs its bundle (dist/conduit.mjs, made by `npm pack`). In a
// checkout there is no build step to remember: the first run bundles src/main.ts (and the workspace packages it
// imports) with esbuild into build/conduit.mjs, and later runs load that bundle (about 0.4 s instead of 2.5 s
// through a TypeScript loader). The bundle is rebuilt whenever a source file changes. If bundling is impossible,
// the sources run through tsx.
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

const packageRoot = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const sources = Path.join(packageRoot, "src", "main.ts")

const listSources = (dir, out) => {
  for (const item of Fs.readdirSync(dir, { withFileTypes: true })) {
    const full = Path.join(dir, item.name)
    if (item.isDirectory()) listSources(full, out)
    else if (item.name.endsWith(".ts")) out.push(full)
  }
  return out
}

// size and modification time of every source file, and the versions of the installed packages
const computeStamp = (sourceDirs) => {
  const files = sourceDirs.flatMap((dir) => (Fs.existsSync(dir) ? listSources(dir, []) : [])).sort()
  const lock = Path.resolve(packageRoot, "..", "..", "package-lock.json")
  const parts = [...files, ...(Fs.existsSync(lock) ? [lock] : [])].map((file) => {
    const stat = Fs.statSync(file)
    return `${file}:${stat.size}:${stat.mtimeMs}`
  })
  return parts.join("\n")
}

const readFile = (file) => {
  try {
    return Fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

const fromCheckout = async () => {
  const buildDir = Path.join(packageRoot, "build")
  const bundled = Path.join(buildDir, "conduit.mjs")
  const stampFile = Path.join(buildDir, "conduit.stamp")
  try {
    const { bundle, sourceDirs } = await import("../scripts/bundle.mjs")
    const stamp = computeStamp(sourceDirs)
    if (readFile(stampFile) !== stamp || !Fs.existsSync(bundled)) {
      await bundle(bundled)
      Fs.writeFileSync(`${stampFile}.${process.pid}.tmp`, stamp)
      Fs.renameSync(`${stampFile}.${process.pid}.tmp`, stampFile)
    }
  } catch (error) {
    process.stderr.write(`conduit: could not bundle the sources (${error?.message ?? error}); running them through tsx\n`)
    const { register } = await import("tsx/esm/api")
    register()
    await import(Url.pathToFileURL(sources).href)
    return
  }
  await import(Url.pathToFileURL(bundled).href)
}

if (Fs.existsSync(sources)) await fromCheckout()
else await import(Url.pathToFileURL(Path.join(packageRoot, "dist", "conduit.mjs")).href)
