/**
 * Config files: `conduit servers` lists the servers of a file or of the known locations with the file each comes
 * from, `--server <name>` alone finds its entry there (the user's files before the project's, a project's entry
 * only once approved), and a bad file or a missing `--server` is one clear sentence.
 */
import { assert, describe, it as plainIt, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Auth from "../src/auth.js"
import * as ProjectTrust from "../src/projectTrust.js"
import * as ServerConfig from "../src/serverConfig.js"
import * as Cli from "./utils/cli.js"
import * as Tmux from "./utils/tmux.js"

const project = () => {
  const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-servers-home-"))
  const cwd = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-servers-cwd-"))
  Fs.mkdirSync(Path.join(cwd, ".vscode"))
  const [command, ...args] = Cli.demoServerCommand().split(" ")
  Fs.writeFileSync(Path.join(cwd, ".vscode", "mcp.json"), JSON.stringify({ servers: { demo: { command, args } } }))
  Fs.mkdirSync(Path.join(home, ".cursor"))
  Fs.writeFileSync(
    Path.join(home, ".cursor", "mcp.json"),
    JSON.stringify({ mcpServers: { remote: { url: "http://127.0.0.1:1/mcp" } } })
  )
  Fs.writeFileSync(Path.join(cwd, "broken.json"), "{\"mcpServers\": {")
  return { cwd, env: { HOME: home, XDG_CONFIG_HOME: Path.join(home, ".config") } }
}

layer(Cli.layer, { excludeTestServices: true })("config files", (it) => {
  it.effect("servers lists the known files' entries; --server alone picks one; mistakes are one sentence", () =>
    Effect.gen(function*() {
      const options = project()
      // the project's server is approved first (the tests below show what happens before)
      const trusted = yield* Cli.run(["servers", "--trust", "demo"], options)
      assert.strictEqual(trusted.code, 0, trusted.stderr)
      const [listed, json, called, unknown, noServer, broken] = yield* Effect.all([
        Cli.run(["servers"], options),
        Cli.run(["servers", "--json"], options),
        Cli.run(["--server", "demo", "tools", "call", "echo", "{\"text\":\"found\"}"], options),
        Cli.run(["--server", "nope", "probe"], options),
        Cli.run(["--config", Path.join(".vscode", "mcp.json"), "probe"], options),
        Cli.run(["--config", "broken.json", "--server", "demo", "probe"], options)
      ], { concurrency: 3 })
      assert.strictEqual(listed.code, 0, listed.stderr)
      assert.match(listed.stdout, /^demo\s+stdio\s+.*\s+project, approved\s+/m)
      assert.match(listed.stdout, /^remote\s+http\s+http:\/\/127\.0\.0\.1:1\/mcp\s+user\s+/m)
      assert.strictEqual(json.code, 0, json.stderr)
      const parsed = Cli.parseJson(json) as { servers: ReadonlyArray<{ name: string; file: string; origin: string }> }
      // the user's files first: that is the order a bare --server searches them
      assert.deepStrictEqual(parsed.servers.map((s) => [s.name, s.origin]), [["remote", "user"], ["demo", "project"]])
      assert.deepStrictEqual(called, { code: 0, stdout: "found\n", stderr: "" })
      assert.strictEqual(unknown.code, 2)
      assert.include(unknown.stderr, "no server named \"nope\" in the known config files (they have: remote, demo")
      assert.strictEqual(noServer.code, 2)
      assert.include(noServer.stderr, "--config needs --server <name> to pick one of its servers: demo")
      assert.strictEqual(broken.code, 2)
      assert.match(broken.stderr, /^conduit: config file broken\.json is not JSON: /)
      assert.strictEqual(broken.stderr.trim().split("\n").length, 1)
    }))
})

// A project whose .mcp.json defines `name` as the demo server started through a preload that appends a line to
// `ran` in the project: the file counts how often the project's command was run.
const projectWithMarker = (name: string) => {
  const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-trust-home-"))
  const cwd = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-trust-cwd-"))
  const marker = Path.join(cwd, "ran")
  const preload = Path.join(cwd, "mark.mjs")
  Fs.writeFileSync(preload, `import { appendFileSync } from "node:fs"\nappendFileSync(${JSON.stringify(marker)}, "ran\\n")\n`)
  const [command, ...args] = Cli.demoServerCommand().split(" ")
  const define = (env: Record<string, string>) =>
    Fs.writeFileSync(
      Path.join(cwd, ".mcp.json"),
      JSON.stringify({ mcpServers: { [name]: { command, args: ["--import", preload, ...args], env } } })
    )
  const runs = () => Fs.existsSync(marker) ? Fs.readFileSync(marker, "utf8").split("\n").filter((l) => l !== "").length : 0
  return { cwd, home, define, runs, env: { HOME: home, XDG_CONFIG_HOME: Path.join(home, ".config") } }
}

const echo = ["tools", "call", "echo", "{\"text\":\"hi\"}"]

layer(Cli.layer, { excludeTestServices: true })("project config files", (it) => {
  it.effect("the user's own server wins over a project's of the same name, and the CLI says which file it took", () =>
    Effect.gen(function*() {
      const p = projectWithMarker("github")
      p.define({})
      // the user's own "github" is the demo server, without the preload
      const [command, ...args] = Cli.demoServerCommand().split(" ")
      Fs.mkdirSync(Path.join(p.home, ".cursor"))
      const userFile = Path.join(p.home, ".cursor", "mcp.json")
      Fs.writeFileSync(userFile, JSON.stringify({ mcpServers: { github: { command, args } } }))
      const options = { cwd: p.cwd, env: p.env }
      const called = yield* Cli.run(["--server", "github", ...echo], options)
      assert.strictEqual(called.code, 0, called.stderr)
      assert.strictEqual(called.stdout, "hi\n")
      assert.strictEqual(p.runs(), 0, "the project's command ran")
      assert.include(called.stderr, `server "github" is taken from ${userFile} (user); the one of `)
      assert.include(called.stderr, `${Path.join(p.cwd, ".mcp.json")} (project) is ignored`)
      // the listing names each entry's file and who wrote it
      const listed = yield* Cli.run(["servers"], options)
      assert.strictEqual(listed.code, 0, listed.stderr)
      assert.match(listed.stdout, /^NAME\s+KIND\s+COMMAND OR URL\s+FROM\s+FILE$/m)
      assert.match(listed.stdout, new RegExp(`^github\\s+stdio\\s+.*\\s+user\\s+${userFile}$`, "m"))
      assert.match(listed.stdout, /^github\s+stdio\s+.*\s+project, ignored \(shadowed\)\s+\S+\.mcp\.json$/m)
      const json = Cli.parseJson(yield* Cli.run(["servers", "--json"], options)) as {
        servers: ReadonlyArray<{ origin: string; file: string; shadowedBy?: string }>
      }
      assert.deepStrictEqual(json.servers.map((s) => [s.origin, s.shadowedBy]), [["user", undefined], [
        "project",
        userFile
      ]])
    }))

  it.effect("a project's server runs only once approved, and again only while its definition is unchanged", () =>
    Effect.gen(function*() {
      const p = projectWithMarker("demo")
      // a value built to deceive a terminal: it is shown escaped
      p.define({ NOTE: "\u001b]0;pwned\u0007" })
      const options = { cwd: p.cwd, env: p.env }

      const refused = yield* Cli.run(["--server", "demo", ...echo], options)
      assert.strictEqual(refused.code, 2)
      assert.strictEqual(refused.stdout, "")
      assert.strictEqual(p.runs(), 0, "the project's command ran before it was approved")
      assert.include(refused.stderr, "which you have not approved yet; it would run:")
      assert.include(refused.stderr, `  command: ${Cli.node} --import ${Path.join(p.cwd, "mark.mjs")} `)
      assert.include(refused.stderr, "  env:     NOTE=\\x1b]0;pwned\\x07")
      assert.notInclude(refused.stderr, "\u001b")
      assert.include(refused.stderr, "run `conduit servers --trust demo` in this directory")
      const listedBefore = yield* Cli.run(["servers"], options)
      assert.match(listedBefore.stdout, /^demo\s+stdio\s+.*\s+project, not approved\s+/m)

      const trusted = yield* Cli.run(["servers", "--trust", "demo"], options)
      assert.strictEqual(trusted.code, 0, trusted.stderr)
      assert.include(trusted.stdout, "approved server \"demo\" of ")
      assert.include(trusted.stdout, "  env:     NOTE=\\x1b]0;pwned\\x07")
      assert.strictEqual(p.runs(), 0, "approving ran the command")
      const store = Path.join(p.home, ".config", "conduit", "trusted-servers.json")
      assert.strictEqual(Fs.statSync(store).mode & 0o777, 0o600)

      const approved = yield* Cli.run(["--server", "demo", ...echo], options)
      assert.deepStrictEqual(approved, { code: 0, stdout: "hi\n", stderr: "" })
      assert.strictEqual(p.runs(), 1)

      // the same name, another definition: asked again
      p.define({ NOTE: "changed" })
      const changed = yield* Cli.run(["--server", "demo", ...echo], options)
      assert.strictEqual(changed.code, 2)
      assert.include(changed.stderr, "changed since you approved it; it would now run:")
      assert.include(changed.stderr, "  env:     NOTE=changed")
      assert.strictEqual(p.runs(), 1, "the changed command ran")
      const listedAfter = yield* Cli.run(["servers"], options)
      assert.match(listedAfter.stdout, /^demo\s+stdio\s+.*\s+project, changed since approved\s+/m)
    }))

  it.effect("an approval is of the project file where it is found: a symlink to an approved file is asked about", () =>
    Effect.gen(function*() {
      // the user approved "demo" of project a, whose command takes a preload from its working directory; project b
      // (a cloned repository) links its .mcp.json to a's and brings its own mark.mjs
      const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-trust-home-"))
      const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-trust-link-"))
      const env = { HOME: home, XDG_CONFIG_HOME: Path.join(home, ".config") }
      const [command, ...args] = Cli.demoServerCommand().split(" ")
      const made = (name: string) => {
        const cwd = Path.join(root, name)
        Fs.mkdirSync(cwd)
        Fs.writeFileSync(
          Path.join(cwd, "mark.mjs"),
          `import { appendFileSync } from "node:fs"\nappendFileSync(${JSON.stringify(Path.join(cwd, "ran"))}, "ran\\n")\n`
        )
        return { cwd, runs: () => Fs.existsSync(Path.join(cwd, "ran")) ? 1 : 0 }
      }
      const a = made("a")
      const b = made("b")
      Fs.writeFileSync(
        Path.join(a.cwd, ".mcp.json"),
        JSON.stringify({ mcpServers: { demo: { command, args: ["--import", "./mark.mjs", ...args] } } })
      )
      Fs.symlinkSync(Path.join("..", "a", ".mcp.json"), Path.join(b.cwd, ".mcp.json"))
      const trusted = yield* Cli.run(["servers", "--trust", "demo"], { cwd: a.cwd, env })
      assert.strictEqual(trusted.code, 0, trusted.stderr)
      const inA = yield* Cli.run(["--server", "demo", ...echo], { cwd: a.cwd, env })
      assert.deepStrictEqual(inA, { code: 0, stdout: "hi\n", stderr: "" })
      assert.strictEqual(a.runs(), 1)

      const inB = yield* Cli.run(["--server", "demo", ...echo], { cwd: b.cwd, env })
      assert.strictEqual(b.runs(), 0, "project b's mark.mjs ran under the approval of project a's file")
      assert.strictEqual(inB.code, 2)
      assert.include(inB.stderr, `${Path.join(b.cwd, ".mcp.json")}, which you have not approved yet`)
      const listed = yield* Cli.run(["servers"], { cwd: b.cwd, env })
      assert.match(listed.stdout, /^demo\s+stdio\s+.*\s+project, not approved\s+/m)
    }))

  it.effect("an empty or relative XDG_CONFIG_HOME does not make the project's files the user's", () =>
    Effect.gen(function*() {
      // the XDG spec ignores such a value; taken as it is, the user's Linux config files were looked for in the
      // working directory, where a repository can ship Code/User/mcp.json and have it run as the user's own
      const p = projectWithMarker("demo")
      p.define({})
      for (const dir of [Path.join(p.cwd, "Code", "User"), Path.join(p.cwd, "config", "Code", "User")]) {
        Fs.mkdirSync(dir, { recursive: true })
        Fs.copyFileSync(Path.join(p.cwd, ".mcp.json"), Path.join(dir, "mcp.json"))
      }
      Fs.rmSync(Path.join(p.cwd, ".mcp.json"))
      for (const xdg of ["", "config"]) {
        const env = { ...p.env, XDG_CONFIG_HOME: xdg }
        const called = yield* Cli.run(["--server", "demo", ...echo], { cwd: p.cwd, env })
        assert.strictEqual(p.runs(), 0, `the repository's Code/User/mcp.json ran as the user's (XDG_CONFIG_HOME=${xdg})`)
        assert.strictEqual(called.code, 2, called.stderr)
      }
      assert.isFalse(Fs.existsSync(Path.join(p.cwd, "config", "conduit")), "approvals kept in the project")
    }))

  it.effect("at a terminal, an unapproved project server is shown and asked about: no runs nothing, yes runs it", () =>
    Effect.gen(function*() {
      const p = projectWithMarker("demo")
      p.define({ NOTE: "\u001b]0;pwned\u0007" })
      const env = { ...p.env, XDG_STATE_HOME: Cli.stateHome }
      const script = `cd ${p.cwd} && exec ${Cli.node} ${Cli.bin} --server demo tools call echo '{"text":"hi"}'`
      const question = /Run it, and remember that you approved it\? \[y\/N\]/

      const declined = yield* Tmux.open(["sh", "-c", script], { env })
      const asked = yield* declined.waitFor(question)
      assert.include(asked, "which you have not approved yet; it would run:")
      assert.include(asked, "  env:     NOTE=\\x1b]0;pwned\\x07")
      yield* declined.sendKeys("n", "Enter")
      assert.include(yield* declined.waitFor(/\[exit \d+\]/), "server \"demo\" was not approved; nothing was run\n[exit 2]")
      assert.strictEqual(p.runs(), 0, "the project's command ran after no")

      const accepted = yield* Tmux.open(["sh", "-c", script], { env })
      yield* accepted.waitFor(question)
      yield* accepted.sendKeys("y", "Enter")
      assert.include(yield* accepted.waitFor(/\[exit \d+\]/), "hi\n[exit 0]")
      assert.strictEqual(p.runs(), 1)
      // the answer was remembered: without a terminal it runs now
      const later = yield* Cli.run(["--server", "demo", ...echo], { cwd: p.cwd, env: p.env })
      assert.deepStrictEqual(later, { code: 0, stdout: "hi\n", stderr: "" })
      assert.strictEqual(p.runs(), 2)
    }))
})

describe("known locations", () => {
  plainIt("conduit's own files (tokens, approvals) ignore an empty or relative XDG_CONFIG_HOME", () => {
    const saved = process.env.XDG_CONFIG_HOME
    try {
      for (const xdg of ["", "config"]) {
        process.env.XDG_CONFIG_HOME = xdg
        for (const file of [Auth.tokenFile(), ProjectTrust.storeFile()]) {
          assert.isTrue(Path.isAbsolute(file), `${file} (XDG_CONFIG_HOME=${xdg}) is under the working directory`)
        }
      }
      process.env.XDG_CONFIG_HOME = Path.join(Path.sep, "xdg")
      assert.strictEqual(Auth.tokenFile(), Path.join(Path.sep, "xdg", "conduit", "tokens.json"))
      assert.strictEqual(ProjectTrust.storeFile(), Path.join(Path.sep, "xdg", "conduit", "trusted-servers.json"))
    } finally {
      if (saved === undefined) delete process.env.XDG_CONFIG_HOME
      else process.env.XDG_CONFIG_HOME = saved
    }
  })


  plainIt("the user's files come first; a project path that is one of the user's (cwd is the home) is the user's", () => {
    const home = Path.join(Path.sep, "home", "me")
    const elsewhere = ServerConfig.locations(home, Path.join(home, "repo"), "darwin")
    assert.deepStrictEqual(elsewhere.map((l) => l.origin), ["user", "user", "user", "project", "project", "project"])
    const atHome = ServerConfig.locations(home, home, "darwin")
    const cursor = atHome.filter((l) => l.path === Path.join(home, ".cursor", "mcp.json"))
    assert.deepStrictEqual(cursor.map((l) => l.origin), ["user"])
    assert.deepStrictEqual(atHome.map((l) => l.origin), ["user", "user", "user", "project", "project"])
  })
})
