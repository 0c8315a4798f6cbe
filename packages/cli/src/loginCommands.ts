/**
 * `conduit login`, `logout` and `whoami`: the OAuth token of an HTTP server, got (browser, pasted redirect or
 * device grant), forgotten or shown (never the token itself).
 *
 * @since 0.1.0
 */
import * as McpError from "@conduit-mcp/client/McpError"
import * as OAuth from "@conduit-mcp/client/OAuth"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Auth from "./auth.js"
import * as Connection from "./connection.js"
import { type CliError, UsageError } from "./errors.js"
import * as Output from "./output.js"
import * as Text from "./terminalText.js"

const httpTarget = (connection: Connection.ConnectionOptions, command: string) =>
  Effect.gen(function*() {
    const resolved = yield* Connection.resolve(connection)
    if (resolved.target._tag !== "Http") {
      return yield* new UsageError({
        message: `${command} is for HTTP servers: give --url <url> (or a --config entry with a "url")`
      })
    }
    return { url: resolved.target.url, json: resolved.json }
  })

const withAuthorizer = <A>(
  mode: Auth.LoginMode | undefined,
  url: URL,
  use: (authorizer: OAuth.Authorizer) => Effect.Effect<A, CliError>
) =>
  Effect.flatMap(OAuth.OAuth, (oauth) => Effect.flatMap(oauth.authorizer(url), use)).pipe(
    Effect.provide(Auth.layer(mode))
  )

/**
 * How `login` signs in.
 *
 * @since 0.1.0
 * @category models
 */
export interface LoginOptions {
  readonly connection: Connection.ConnectionOptions
  readonly device: boolean
  readonly noBrowser: boolean
  readonly scope: ReadonlyArray<string>
}

/**
 * `login`: signs in and stores the token.
 *
 * @since 0.1.0
 * @category commands
 */
export const login = (options: LoginOptions) =>
  Effect.gen(function*() {
    const { json, url } = yield* httpTarget(options.connection, "login")
    const mode: Auth.LoginMode = options.device ? "device" : options.noBrowser ? "no-browser" : "browser"
    const info = yield* withAuthorizer(
      mode,
      url,
      (authorizer) => authorizer.authorize(options.scope.length > 0 ? { scope: options.scope } : undefined)
    )
    yield* json
      ? Output.json(Auth.tokenJson(info))
      : Output.stdout(`Logged in; the token is stored in ${Text.line(Auth.tokenFile())}\n${Auth.describeToken(info)}`)
  })

/**
 * `logout`: forgets the stored token.
 *
 * @since 0.1.0
 * @category commands
 */
export const logout = (connection: Connection.ConnectionOptions) =>
  Effect.gen(function*() {
    const { url } = yield* httpTarget(connection, "logout")
    // `current` tells whether there was anything to forget
    const held = yield* withAuthorizer(undefined, url, (authorizer) =>
      Effect.flatMap(authorizer.current, (current) => Effect.as(authorizer.logout, Option.isSome(current))))
    yield* Output.stderr(held ? `Logged out of ${Text.url(url.href)}` : `No token was stored for ${Text.url(url.href)}`)
  })

/**
 * `whoami`: the stored token's issuer, scope and expiry.
 *
 * @since 0.1.0
 * @category commands
 */
export const whoami = (connection: Connection.ConnectionOptions) =>
  Effect.gen(function*() {
    const { json, url } = yield* httpTarget(connection, "whoami")
    const current = yield* withAuthorizer(undefined, url, (authorizer) => authorizer.current)
    if (Option.isNone(current)) {
      return yield* new McpError.AuthError({
        status: 401,
        challenges: [],
        detail: `not logged in to ${url.href}`
      })
    }
    yield* json ? Output.json(Auth.tokenJson(current.value)) : Output.stdout(Auth.describeToken(current.value))
  })
