/**
 * OAuth for `conduit`: `login` (browser with a loopback redirect, `--device` for the device grant,
 * `--no-browser` to paste the redirect), `logout`, `whoami`, and the stored bearer token that `--url`
 * connections send. Tokens live in one file store (mode 0600) under the user's config directory:
 * `$CONDUIT_TOKEN_FILE`, else `$XDG_CONFIG_HOME/conduit/tokens.json` (`~/.config`, `~/Library/Application
 * Support` on macOS, `%APPDATA%` on Windows).
 *
 * @since 0.1.0
 */
import * as AuthorizationHandler from "@conduit-mcp/client/AuthorizationHandler"
import * as HostResolver from "@conduit-mcp/client/HostResolver"
import * as OAuth from "@conduit-mcp/client/OAuth"
import * as TokenStore from "@conduit-mcp/client/TokenStore"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Undici from "@effect/platform-node/Undici"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Path from "effect/Path"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Redacted from "effect/Redacted"
import type * as Terminal from "effect/Terminal"
import * as Dns from "node:dns/promises"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as NodePath from "node:path"
import * as Browser from "./browser.js"
import * as Output from "./output.js"
import * as ServerConfig from "./serverConfig.js"
import * as Text from "./terminalText.js"

/**
 * Where tokens are kept.
 *
 * @since 0.1.0
 * @category constants
 */
export const tokenFile = (): string => {
  const explicit = process.env.CONDUIT_TOKEN_FILE
  if (explicit !== undefined && explicit !== "") return explicit
  return NodePath.join(ServerConfig.conduitConfigDirectory(), "tokens.json")
}

/**
 * How `login` lets the user authorize.
 *
 * @since 0.1.0
 * @category models
 */
export type LoginMode = "browser" | "no-browser" | "device"

const openBrowser = (executor: ChildProcessSpawner.ChildProcessSpawner["Service"]) => (url: URL) =>
  Effect.gen(function*() {
    yield* Output.stderr(
      `Opening the authorization page in your browser. If nothing opens, visit:\n  ${Text.url(url.href)}`
    )
    const exit = yield* Browser.open(url.href).pipe(
      Effect.provideService(ChildProcessSpawner.ChildProcessSpawner, executor),
      Effect.option
    )
    if (Option.isNone(exit) || exit.value !== 0) yield* Output.stderr("(could not start a browser: open the URL yourself)")
  })

const showDeviceCode = (code: AuthorizationHandler.DeviceCode) =>
  Output.stderr(
    `To authorize, visit ${Text.url(code.verificationUriComplete ?? code.verificationUri)}\n` +
      `and enter the code ${Text.line(code.userCode)} (valid for ${Math.round(code.expiresInSeconds / 60)} minutes).`
  )

const handlerLayer = (
  mode: LoginMode
): Layer.Layer<AuthorizationHandler.AuthorizationHandler, never, ChildProcessSpawner.ChildProcessSpawner | Terminal.Terminal> => {
  switch (mode) {
    case "browser":
      return Layer.unwrap(Effect.map(ChildProcessSpawner.ChildProcessSpawner, (executor) =>
        AuthorizationHandler.layerLoopback({ open: openBrowser(executor), showDeviceCode }).pipe(
          Layer.provide(NodeHttpServer.layer(() => Http.createServer(), { port: 0, host: "127.0.0.1" })),
          Layer.orDie
        )))
    case "no-browser":
      return AuthorizationHandler.layerPaste({ redirectUri: "http://127.0.0.1/callback" })
    case "device":
      return Layer.succeed(
        AuthorizationHandler.AuthorizationHandler,
        AuthorizationHandler.AuthorizationHandler.of({
          begin: Effect.die(new Error("the device grant needs no redirect")),
          showDeviceCode
        })
      )
  }
}

/**
 * The HTTP client of one OAuth exchange with a checked host name: an undici agent of its own whose connections go
 * to the checked addresses only (no second resolution that DNS rebinding could answer differently), closed when
 * the exchange ends.
 */
const pinnedClient = (pin: HostResolver.Pin) =>
  Effect.acquireRelease(
    Effect.sync(() => new Undici.Agent({ connect: { lookup: pin.lookup } })),
    (agent) => Effect.promise(() => agent.destroy())
  ).pipe(Effect.flatMap((agent) => Effect.provideService(NodeHttpClient.makeUndici, NodeHttpClient.Dispatcher, agent)))

/**
 * The OAuth service over the token file, with the authorization handler of `mode` (or none, for stored tokens
 * only).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  mode: LoginMode | undefined
): Layer.Layer<
  OAuth.OAuth,
  OAuth.OAuthError,
  ChildProcessSpawner.ChildProcessSpawner | Terminal.Terminal | FileSystem.FileSystem | Path.Path
> => {
  const common = {
    clientName: "conduit",
    ...(mode === "device" ? { grant: OAuth.Grant.DeviceCode() } : {}),
    // host names are resolved and checked before the flow contacts them (no metadata fetch into a private network),
    // and each exchange connects to the addresses that were checked
    hostResolver: HostResolver.HostResolver
  } as const
  const platform = Layer.mergeAll(
    TokenStore.layerFileSystem(tokenFile()),
    HostResolver.fromLookup((host) => Dns.lookup(host, { all: true, verbatim: true }), { connect: pinnedClient }),
    NodeHttpClient.layerUndici
  )
  return mode === undefined
    ? OAuth.layer(common).pipe(Layer.provide(platform))
    : OAuth.layer({ ...common, authorization: AuthorizationHandler.AuthorizationHandler }).pipe(
      Layer.provide(platform),
      Layer.provide(handlerLayer(mode))
    )
}

/**
 * What `login --json` and `whoami --json` print.
 *
 * @since 0.1.0
 * @category models
 */
export const tokenJson = (info: OAuth.TokenInfo) => ({
  issuer: info.issuer,
  resource: info.resource,
  tokenType: info.tokenType,
  fingerprint: info.fingerprint,
  scope: info.scope,
  expiresAt: Option.match(info.expiresAt, { onNone: () => null, onSome: (at) => new Date(at).toISOString() }),
  refreshable: info.refreshable
})

/**
 * @since 0.1.0
 * @category formatting
 */
export const describeToken = (info: OAuth.TokenInfo): string => {
  const json = tokenJson(info)
  return [
    `resource     ${Text.line(json.resource)}`,
    `issuer       ${Text.line(json.issuer)}`,
    `token        ${Text.line(json.tokenType)} (fingerprint ${Text.line(json.fingerprint)})`,
    `scope        ${json.scope.length > 0 ? Text.line(json.scope.join(" ")) : "(none)"}`,
    `expires      ${json.expiresAt ?? "(no expiry given)"}${json.refreshable ? ", refreshable" : ""}`
  ].join("\n")
}

/**
 * The bearer token stored for `url`, refreshed when it is about to expire; `None` when there is no token file,
 * no token for this server, or a DPoP-bound one (which needs a proof per request). Never fails: a broken store
 * only means no token.
 *
 * @since 0.1.0
 * @category tokens
 */
export const storedBearer = (
  url: URL
): Effect.Effect<
  Option.Option<Redacted.Redacted<string>>,
  never,
  ChildProcessSpawner.ChildProcessSpawner | Terminal.Terminal | FileSystem.FileSystem | Path.Path
> =>
  Fs.existsSync(tokenFile())
    ? Effect.gen(function*() {
      const oauth = yield* OAuth.OAuth
      const authorizer = yield* oauth.authorizer(url)
      const current = yield* authorizer.current
      if (Option.isNone(current) || current.value.tokenType !== "Bearer") return Option.none()
      const credentials = yield* authorizer.headersFor({ method: "POST", url })
      const header = Object.entries(credentials.headers).find(([name]) => name.toLowerCase() === "authorization")?.[1]
      const token = header !== undefined && /^bearer /i.test(header) ? header.slice(7).trim() : undefined
      return token !== undefined && token !== "" ? Option.some(Redacted.make(token)) : Option.none()
    }).pipe(
      Effect.provide(layer(undefined)),
      Effect.tapError((error) => Effect.logDebug("no stored token used", error)),
      Effect.orElseSucceed(() => Option.none<Redacted.Redacted<string>>())
    )
    : Effect.succeed(Option.none())
