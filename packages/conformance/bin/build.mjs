// Bundles the driver (src/driver.ts and the client library it imports) with esbuild into dist/driver.mjs, so that
// each of the many short driver runs starts in a fraction of a second instead of compiling TypeScript first. The
// bundle is rebuilt whenever a source file or the lockfile changed since the last build.
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

const here = Path.dirname(Url.fileURLToPath(import.meta.url))
export const packageRoot = Path.resolve(here, "..")
export const repositoryRoot = Path.resolve(packageRoot, "..", "..")
const distDir = Path.join(packageRoot, "dist")
export const bundle = Path.join(distDir, "driver.mjs")
const stampFile = Path.join(distDir, "driver.stamp")
const entry = Path.join(packageRoot, "src", "driver.ts")
const workspaceSources = (name) => Path.resolve(packageRoot, "..", name, "src")
const sourceDirs = [Path.join(packageRoot, "src"), workspaceSources("client"), workspaceSources("server")]

const listSources = (dir, out) => {
  for (const item of Fs.readdirSync(dir, { withFileTypes: true })) {
    const full = Path.join(dir, item.name)
    if (item.isDirectory()) listSources(full, out)
    else if (item.name.endsWith(".ts")) out.push(full)
  }
  return out
}

const computeStamp = () => {
  const files = sourceDirs.flatMap((dir) => (Fs.existsSync(dir) ? listSources(dir, []) : [])).sort()
  const lock = Path.join(repositoryRoot, "package-lock.json")
  return [...files, ...(Fs.existsSync(lock) ? [lock] : [])]
    .map((file) => {
      const stat = Fs.statSync(file)
      return `${file}:${stat.size}:${stat.mtimeMs}`
    })
    .join("\n")
}

const readStamp = () => {
  try {
    return Fs.readFileSync(stampFile, "utf8")
  } catch {
    return undefined
  }
}

/** Builds the bundle when it is missing or stale (or always, with `force`). */
export const ensureBundle = async ({ force = false } = {}) => {
  const stamp = computeStamp()
  if (!force && readStamp() === stamp && Fs.existsSync(bundle)) return false
  const esbuild = await import("esbuild")
  Fs.mkdirSync(distDir, { recursive: true })
  // concurrent first runs each write their own file, then rename: the bundle is never seen half written
  const temporary = `${bundle}.${process.pid}.tmp`
  await esbuild.build({
    entryPoints: [entry],
    outfile: temporary,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
    // the workspace's packages are bundled from their sources (their `exports` name built files)
    alias: {
      "@conduit-mcp/client": workspaceSources("client"),
      "@conduit-mcp/server": workspaceSources("server"),
      "@conduit-mcp/ai": workspaceSources("ai")
    },
    // bundled CommonJS dependencies call require()
    banner: {
      js: "import { createRequire as __driverRequire } from 'node:module'; const require = __driverRequire(import.meta.url);"
    }
  })
  Fs.renameSync(temporary, bundle)
  Fs.writeFileSync(`${stampFile}.${process.pid}.tmp`, stamp)
  Fs.renameSync(`${stampFile}.${process.pid}.tmp`, stampFile)
  return true
}

if (process.argv[1] !== undefined && Path.resolve(process.argv[1]) === Url.fileURLToPath(import.meta.url)) {
  await ensureBundle({ force: process.argv.includes("--force") })
}
