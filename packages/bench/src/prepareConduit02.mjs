// Installs Conduit 0.2 on Effect 3 beside the Effect 4 workspace, for the `conduit-0.2` client of the benchmark
// (clients/conduit02.mjs): both Effect lines run in one bench run, each client in its own process, each loading
// its own copy of Effect.
//
//   node packages/bench/src/prepareConduit02.mjs [--force]
//
// Into packages/bench/.conduit02 (git-ignored): the packages of the commit of the last release for Effect 3
// (cc718ec, Release 0.2.1) taken with `git archive`, Effect 3 and its platform packages at the versions that
// commit's lock file pins (installed with npm), @conduit-mcp/client built there the way its `prepack` builds it
// (`tsc -b tsconfig.src.json`, TypeScript 5.9.3 as at that commit), packed with `npm pack` and installed from the
// tarball, as an application installs a release. `ready.json` records what was installed; a later run with the
// same commit does nothing. `resolve.mjs` resolves bare specifiers from inside the directory, so that the
// adapter (outside it) loads that directory's Effect 3 and not the workspace's Effect 4.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, "../../..")
export const conduit02Dir = path.resolve(here, "../.conduit02")
export const commit = "cc718ec"
// the versions cc718ec's package-lock.json pins
const runtimeDependencies = {
  effect: "3.22.4",
  "@effect/platform": "0.97.2",
  "@effect/platform-node": "0.108.2"
}
const buildDependencies = { "@types/node": "20.19.43" }

const readyFile = path.join(conduit02Dir, "ready.json")

/** What is installed, or undefined when nothing is (or another commit is). */
export const installed = () => {
  try {
    const ready = JSON.parse(fs.readFileSync(readyFile, "utf8"))
    return ready.commit === commit ? ready : undefined
  } catch {
    return undefined
  }
}

const run = (command, args, cwd) =>
  execFileSync(command, args, { cwd, stdio: ["ignore", "pipe", "inherit"], maxBuffer: 256 * 1024 * 1024 })

const npm = (args) =>
  run("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], conduit02Dir)

export const prepare = ({ force = false, log = (line) => process.stderr.write(`${line}\n`) } = {}) => {
  const ready = installed()
  if (ready !== undefined && !force) return ready
  fs.rmSync(conduit02Dir, { recursive: true, force: true })
  fs.mkdirSync(conduit02Dir, { recursive: true })
  fs.writeFileSync(
    path.join(conduit02Dir, "package.json"),
    JSON.stringify({ name: "conduit-bench-conduit02", private: true, type: "module" }, null, 2)
  )
  log(`conduit-0.2: installing ${Object.entries(runtimeDependencies).map(([n, v]) => `${n}@${v}`).join(" ")}`)
  npm([
    "install",
    "--save-exact",
    ...Object.entries({ ...runtimeDependencies, ...buildDependencies }).map(([name, version]) => `${name}@${version}`)
  ])

  // the sources of the release, inside the directory so that the build resolves its node_modules
  const source = path.join(conduit02Dir, "source")
  fs.mkdirSync(source, { recursive: true })
  const archive = run("git", ["archive", "--format=tar", commit, "package.json", "tsconfig.base.json", "packages/client"], repoRoot)
  execFileSync("tar", ["-x", "-C", source], { input: archive, maxBuffer: 256 * 1024 * 1024 })
  const clientDir = path.join(source, "packages/client")
  const manifest = JSON.parse(fs.readFileSync(path.join(clientDir, "package.json"), "utf8"))
  log(`conduit-0.2: building @conduit-mcp/client ${manifest.version} (commit ${commit})`)
  const tsc = path.join(repoRoot, "node_modules/typescript/bin/tsc")
  run(process.execPath, [tsc, "-b", "tsconfig.src.json"], clientDir)

  // packed as a release is (its `prepack` is the build above) and installed from the tarball
  const packs = path.join(conduit02Dir, "packs")
  fs.mkdirSync(packs, { recursive: true })
  run("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", packs], clientDir)
  const tarball = path.join(packs, `conduit-mcp-client-${manifest.version}.tgz`)
  if (!fs.existsSync(tarball)) throw new Error(`npm pack wrote no ${path.basename(tarball)}`)
  npm(["install", "--save-exact", tarball])
  fs.rmSync(source, { recursive: true, force: true })

  fs.writeFileSync(
    path.join(conduit02Dir, "resolve.mjs"),
    "// written by packages/bench/src/prepareConduit02.mjs: resolves a bare specifier from this directory\n" +
      "export const resolve = (specifier) => import.meta.resolve(specifier)\n"
  )
  const version = (name) =>
    JSON.parse(fs.readFileSync(path.join(conduit02Dir, "node_modules", name, "package.json"), "utf8")).version
  const result = {
    commit,
    client: version("@conduit-mcp/client"),
    effect: version("effect"),
    platform: version("@effect/platform"),
    platformNode: version("@effect/platform-node")
  }
  fs.writeFileSync(readyFile, JSON.stringify(result, null, 2))
  log(`conduit-0.2: ready in ${conduit02Dir} (${JSON.stringify(result)})`)
  return result
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  prepare({ force: process.argv.includes("--force") })
}
