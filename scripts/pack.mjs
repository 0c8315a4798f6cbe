#!/usr/bin/env node
// Packs every published package of this checkout into one folder and prints the line that installs them.
//
//   npm run pack-all                 # into ./packs
//   npm run pack-all -- --out DIR    # into DIR
//
// The packages reach users as tarballs: an application installs the ones it needs from the folder, beside its
// own copy of Effect (a peer dependency of every library package). Each package's `prepack` builds it first.
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const npm = process.platform === "win32" ? "npm.cmd" : "npm"
const published = ["client", "server", "redis", "ai", "cli"]

const flag = process.argv.indexOf("--out")
const out = Path.resolve(flag === -1 ? Path.join(root, "packs") : process.argv[flag + 1] ?? "packs")
Fs.mkdirSync(out, { recursive: true })

const readJson = (file) => JSON.parse(Fs.readFileSync(file, "utf8"))
const manifests = Object.fromEntries(
  published.map((name) => [name, readJson(Path.join(root, "packages", name, "package.json"))])
)

const packed = ChildProcess.spawnSync(npm, [
  "pack",
  "--silent",
  ...published.flatMap((name) => ["-w", `packages/${name}`]),
  "--pack-destination",
  out
], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
if (packed.status !== 0) {
  process.stderr.write(packed.stdout ?? "")
  process.exit(packed.status ?? 1)
}

const tarball = (name) => {
  const file = Path.join(out, `conduit-mcp-${name}-${manifests[name].version}.tgz`)
  if (!Fs.existsSync(file)) throw new Error(`npm pack wrote no ${Path.basename(file)}`)
  return file
}
const peers = (name) => Object.entries(manifests[name].peerDependencies ?? {}).map(([peer, range]) => `${peer}@${range}`)
// the stdio transport spawns servers through the Node platform package, which the application provides
const platformRange = readJson(Path.join(root, "package.json")).devDependencies["@effect/platform-node"]
const nodePlatform = `@effect/platform-node@${/^[~^<>=]/.test(platformRange) ? platformRange : `^${platformRange}`}`
const line = (names) => {
  const extra = [...new Set([...names.flatMap(peers), nodePlatform])]
  return `npm install ${[...names.map(tarball), ...extra].map((word) => JSON.stringify(word)).join(" ")}`
}

let commit = "unknown"
const git = ChildProcess.spawnSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: root, encoding: "utf8" })
if (git.status === 0) commit = git.stdout.trim()

process.stdout.write(
  [
    `Packed ${published.map((name) => `@conduit-mcp/${name}@${manifests[name].version}`).join(", ")}`,
    `from commit ${commit} into ${out}.`,
    "",
    "The client, with Effect and the platforms at the versions it takes:",
    `  ${line(["client"])}`,
    "Every library package (or pick: server for TestServer and serving, redis for a shared cache, ai for an @effect/ai toolkit):",
    `  ${line(["client", "server", "redis", "ai"])}`,
    "The command-line client:",
    `  npm install -g ${JSON.stringify(tarball("cli"))}`,
    ""
  ].join("\n")
)
