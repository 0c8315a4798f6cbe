/**
 * Host name resolution for the OAuth flow's address checks. The OAuth module refuses metadata, registration and
 * token URLs whose literal address is loopback or private (unless allowed); given a `HostResolver` (its
 * `hostResolver` option) it also resolves host names first and refuses a name that resolves to such an address, so a public-looking
 * name cannot point the flow at an internal service. The library itself does no DNS (it runs wherever Effect
 * runs); on Node, one line builds the resolver from `node:dns`.
 *
 * A resolution is a check made before the request: the HTTP client resolves the name again when it connects, so
 * an attacker who controls the name's DNS and answers differently the second time (DNS rebinding) is only stopped
 * by an egress proxy that pins addresses.
 *
 * @example
 * ```ts
 * import { HostResolver, OAuth } from "@conduit-mcp/client"
 * import { Layer } from "effect"
 * import * as Dns from "node:dns/promises"
 *
 * const ResolverLive = HostResolver.fromLookup((host) => Dns.lookup(host, { all: true, verbatim: true }))
 * const OAuthLive = OAuth.layer({ clientName: "my-app", hostResolver: HostResolver.HostResolver }).pipe(
 *   Layer.provide(ResolverLive)
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * A name could not be resolved.
 *
 * @since 0.1.0
 * @category errors
 */
export class HostResolverError extends Data.TaggedError("HostResolverError")<{
  readonly host: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `could not resolve ${this.host}`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface HostResolverShape {
  /** Every address (IPv4 dotted quad or IPv6 text form) the name resolves to. */
  readonly resolve: (host: string) => Effect.Effect<ReadonlyArray<string>, HostResolverError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class HostResolver extends Context.Tag("@conduit-mcp/client/HostResolver")<HostResolver, HostResolverShape>() {}

/**
 * A resolver from a promise-returning lookup such as `node:dns/promises` `lookup(host, { all: true })`.
 *
 * @since 0.1.0
 * @category layers
 */
export const fromLookup = (
  lookup: (host: string) => PromiseLike<ReadonlyArray<string | { readonly address: string }>>
): Layer.Layer<HostResolver> =>
  Layer.succeed(HostResolver, {
    resolve: (host) =>
      Effect.tryPromise({
        try: async () => (await lookup(host)).map((entry) => typeof entry === "string" ? entry : entry.address),
        catch: (cause) => new HostResolverError({ host, cause })
      })
  })

/**
 * A fixed table of names (tests, split-horizon setups); a name not in it fails to resolve.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStatic = (table: Readonly<Record<string, ReadonlyArray<string>>>): Layer.Layer<HostResolver> =>
  Layer.succeed(HostResolver, {
    resolve: (host) => {
      const addresses = Object.prototype.hasOwnProperty.call(table, host) ? table[host] : undefined
      return addresses === undefined ? Effect.fail(new HostResolverError({ host })) : Effect.succeed(addresses)
    }
  })
