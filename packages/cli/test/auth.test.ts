/**
 * `conduit login` / `whoami` / `logout` end to end against the scripted OAuth world of the client tests (a
 * protected resource at /mcp and its authorization server on 127.0.0.1): the device grant, the browser flow
 * with a loopback redirect (the "browser" is a command that follows the redirects), the token file, the
 * stored token sent on later `--url` runs, and exit code 4; then both logins against a real authorization server
 * (oidc-provider) in front of the official SDK v2 MCP server, with tool calls on the stored tokens.
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as OidcWorld from "../../client/test/fixtures/oauth/oidcWorld.js"
import * as World from "../../client/test/fixtures/oauth/world.js"
import * as Cli from "./utils/cli.js"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const tokenStore = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "conduit-auth-test-"))),
  (directory) => Effect.sync(() => Fs.rmSync(directory, { recursive: true, force: true }))
).pipe(Effect.map((directory) => Path.join(directory, "conduit", "tokens.json")))

// a "browser" that loads the page and follows its redirects, back to conduit's loopback listener
const fetchingBrowser = `${Cli.node} -e "fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1))"`

// a "browser" with cookies that also submits the provider's forms (login, consent, device-code confirmation)
const browserScript = Path.join(Cli.repositoryRoot, "packages", "cli", "test", "utils", "browser.mjs")
const formBrowser = `${Cli.node} ${browserScript}`

layer(Cli.layer, { excludeTestServices: true })("conduit login, whoami, logout", (it) => {
  it.effect("the device grant stores a token that later runs send; logout forgets it", () =>
    Effect.gen(function*() {
      const world = yield* World.startWorld({ deviceGrant: true, deviceInterval: 1 })
      const file = yield* tokenStore
      const env = { CONDUIT_TOKEN_FILE: file }
      const url = world.mcpUrl

      const [before, refused] = yield* Cli.runAll([["whoami", "--url", url], ["--url", url, "probe"]], { env })
      assert.strictEqual(before.code, 4, before.stderr)
      assert.include(before.stderr, "not logged in")
      assert.strictEqual(refused.code, 4, refused.stderr)
      assert.include(refused.stderr, "conduit login")

      const running = yield* Cli.start(["login", "--url", url, "--device"], { env })
      yield* running.awaitStderr("and enter the code ")
      const code = /enter the code (\w+)/.exec(yield* SubscriptionRef.get(running.stderr))?.[1]
      assert.isDefined(code)
      world.approveDevice(code ?? "")
      const login = yield* running.result
      assert.strictEqual(login.code, 0, login.stderr)
      assert.include(login.stdout, "Logged in")
      assert.isTrue(Fs.existsSync(file))
      assert.strictEqual(Fs.statSync(file).mode & 0o077, 0)

      const whoami = yield* Cli.run(["whoami", "--url", url, "--json"], { env })
      assert.strictEqual(whoami.code, 0, whoami.stderr)
      const info = Cli.parseJson(whoami)
      assert.isTrue(isRecord(info) && info.issuer === world.issuerUrl() && info.tokenType === "Bearer")
      assert.notInclude(whoami.stdout, "at-") // never the token itself

      // the stored token goes with the next run (the world's /mcp is no MCP server, so the probe fails after)
      const issued = [...world.tokens.entries()].filter(([, token]) => token.kind === "access").map(([token]) => token)
      yield* Cli.run(["--url", url, "--timeout", "2s", "probe"], { env })
      const sent = world.requests.filter((request) =>
        request.url.pathname === "/mcp" && issued.some((token) => request.headers.authorization === `Bearer ${token}`)
      )
      assert.isAbove(sent.length, 0)

      const logout = yield* Cli.run(["logout", "--url", url], { env })
      assert.strictEqual(logout.code, 0, logout.stderr)
      const after = yield* Cli.run(["whoami", "--url", url], { env })
      assert.strictEqual(after.code, 4)
    }))

  it.effect("the browser flow: authorization page, loopback redirect, token stored", () =>
    Effect.gen(function*() {
      const world = yield* World.startWorld()
      const file = yield* tokenStore
      const env = { CONDUIT_TOKEN_FILE: file, BROWSER: fetchingBrowser }
      const login = yield* Cli.run(["login", "--url", world.mcpUrl, "--json"], { env })
      assert.strictEqual(login.code, 0, login.stderr)
      const info = Cli.parseJson(login)
      assert.isTrue(isRecord(info) && info.resource === world.mcpUrl && info.refreshable === true)
      assert.include(login.stderr, "/authorize?")
      const usage = yield* Cli.run(["login"], { env })
      assert.strictEqual(usage.code, 2) // the demo server needs no login
    }))

  it.effect("oidc-provider in front of the SDK v2 MCP server: browser and device logins, then tool calls", () =>
    Effect.gen(function*() {
      const world = yield* OidcWorld.startOidcSdkWorld
      const url = world.mcpUrl

      // the browser flow: the provider's login and consent pages, back to conduit's loopback listener
      const browserFile = yield* tokenStore
      const browserEnv = { CONDUIT_TOKEN_FILE: browserFile, BROWSER: formBrowser }
      const login = yield* Cli.run(["login", "--url", url, "--json"], { env: browserEnv })
      assert.strictEqual(login.code, 0, login.stderr)
      const info = Cli.parseJson(login)
      assert.isTrue(isRecord(info) && info.issuer === world.issuer && info.resource === url, login.stdout)
      const called = yield* Cli.run(["--url", url, "tools", "call", "whoami"], { env: browserEnv })
      assert.strictEqual(called.code, 0, called.stderr)
      assert.include(called.stdout, "mcp:basic")

      // the device grant: the user opens the verification URI elsewhere and confirms the code
      const deviceFile = yield* tokenStore
      const deviceEnv = { CONDUIT_TOKEN_FILE: deviceFile }
      const running = yield* Cli.start(["login", "--url", url, "--device"], { env: deviceEnv })
      yield* running.awaitStderr("and enter the code ")
      const prompt = yield* SubscriptionRef.get(running.stderr)
      const verification = /visit (\S+)/.exec(prompt)?.[1]
      assert.isDefined(verification, prompt)
      const approved = yield* ChildProcessSpawner.ChildProcessSpawner.use((spawner) =>
        spawner.exitCode(ChildProcess.make(Cli.node, [browserScript, verification ?? ""]))
      )
      assert.strictEqual(approved, 0)
      const device = yield* running.result
      assert.strictEqual(device.code, 0, device.stderr)
      assert.include(device.stdout, "Logged in")
      const again = yield* Cli.run(["--url", url, "--json", "tools", "call", "whoami"], { env: deviceEnv })
      assert.strictEqual(again.code, 0, again.stderr)
      assert.include(again.stdout, "mcp:basic")
      const deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"
      assert.isAbove(world.asRequests.filter((r) => r.grantType === deviceGrant).length, 0)

      // no token in anything conduit printed
      for (const output of [login, called, device, again]) {
        for (const token of world.tokens) assert.notInclude(`${output.stdout}${output.stderr}`, token)
      }
    }))
})
