// Bundles the CLI (src/main.ts, the workspace packages it imports from their sources, and every dependency) into
// one ES module. Used by bin/conduit.mjs in a checkout (into build/, rebuilt when a source changes) and by
// `npm pack` (into dist/, what the published package runs). Run directly, it writes dist/conduit.mjs.
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

const here = Path.dirname(Url.fileURLToPath(import.meta.url))
export const packageRoot = Path.resolve(here, "..")
const workspaceSources = (name) => Path.resolve(packageRoot, "..", name, "src")
export const entry = Path.join(packageRoot, "src", "main.ts")
export const sourceDirs = [Path.join(packageRoot, "src"), workspaceSources("client"), workspaceSources("server")]

/** Writes the bundle to `outfile` (through a temporary file, so that it is never seen half written). */
export const bundle = async (outfile) => {
  const esbuild = await import("esbuild")
  Fs.mkdirSync(Path.dirname(outfile), { recursive: true })
  const temporary = `${outfile}.${process.pid}.tmp`
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
      js: "import { createRequire as __conduitRequire } from 'node:module'; const require = __conduitRequire(import.meta.url);"
    }
  })
  Fs.renameSync(temporary, outfile)
}

if (process.argv[1] !== undefined && Path.resolve(process.argv[1]) === Url.fileURLToPath(import.meta.url)) {
  await bundle(Path.join(packageRoot, "dist", "conduit.mjs"))
}
