/**
 * Host name resolution for the OAuth flow's address checks. The OAuth module refuses metadata, registration and
 * token URLs whose literal address is loopback or private (unless allowed); given a `HostResolver` (its
 * `hostResolver` option) it also resolves host names first and refuses a name that resolves to such an address, so a public-looking
 * name cannot point the flow at an internal service. The library itself does no DNS (it runs wherever Effect
 * runs); on Node, one line builds the resolver from `node:dns`.
 *
 * A resolution is a check made before the request. So that the HTTP client does not resolve the name again when
 * it connects (an attacker who controls the name's DNS could answer a loopback or private address the second time:
 * DNS rebinding), give the resolver a `connect`: for each exchange with a checked name, the OAuth flow asks it for
 * an HTTP client whose connections go to the checked addresses only, through a `lookup` that answers them (in the
 * shape of Node's `dns.lookup`); the name stays the TLS server name (the certificate is verified for it) and the
 * `Host` header. On Node, an undici `Agent` with that `lookup` does it, as below. Without `connect`, the exchange
 * goes through the application's `HttpClient`, which resolves the name itself, and a warning says so.
 *
 * @example
 * ```ts
 * import { HostResolver, OAuth } from "@conduit-mcp/client"
 * import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
 * import * as Undici from "@effect/platform-node/Undici"
 * import { Effect, Layer } from "effect"
 * import * as Dns from "node:dns/promises"
 *
 * const ResolverLive = HostResolver.fromLookup((host) => Dns.lookup(host, { all: true, verbatim: true }), {
 *   // one agent per exchange, connecting to the checked addresses only, closed when the exchange ends
 *   connect: ({ lookup }) =>
 *     Effect.acquireRelease(
 *       Effect.sync(() => new Undici.Agent({ connect: { lookup } })),
 *       (agent) => Effect.promise(() => agent.destroy())
 *     ).pipe(Effect.flatMap((agent) => Effect.provideService(NodeHttpClient.makeUndici, NodeHttpClient.Dispatcher, agent)))
 * })
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
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/hostPin.js"

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
 * A lookup in the shape of Node's `dns.lookup` (assignable to `net.LookupFunction`: the `lookup` option of
 * `net.connect`, `tls.connect` and undici's `connect`).
 *
 * @since 0.2.0
 * @category models
 */
export type Lookup = internal.Lookup

/**
 * The addresses a host name was checked against for one exchange, and a `lookup` that answers only them, and only
 * for that name (another name fails like an unknown one).
 *
 * @since 0.2.0
 * @category models
 */
export interface Pin {
  /** The host name, lower-case, without a trailing dot. */
  readonly host: string
  readonly addresses: ReadonlyArray<string>
  readonly lookup: Lookup
}

/**
 * @since 0.1.0
 * @category models
 */
export interface HostResolverShape {
  /** Every address (IPv4 dotted quad or IPv6 text form) the name resolves to. */
  readonly resolve: (host: string) => Effect.Effect<ReadonlyArray<string>, HostResolverError>
  /**
   * An HTTP client for one exchange whose connections go to `pin.addresses` only (use `pin.lookup` as its
   * resolver), keeping the host name for TLS and the `Host` header; what it holds is released when the scope
   * closes, once the answer was read. Without it, the exchange goes through the application's `HttpClient`, which
   * resolves the name again when it connects (DNS rebinding can then reach another address).
   *
   * @since 0.2.0
   */
  readonly connect?: ((pin: Pin) => Effect.Effect<HttpClient.HttpClient, never, Scope.Scope>) | undefined
}

/**
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** See `HostResolverShape.connect`. */
  readonly connect?: HostResolverShape["connect"]
}

/**
 * The pin of `host` to `addresses`: what the OAuth flow gives `connect` (exported for resolvers of your own).
 *
 * @since 0.2.0
 * @category constructors
 */
export const pin: (host: string, addresses: ReadonlyArray<string>) => Pin = internal.makePin

/**
 * @since 0.1.0
 * @category tags
 */
export class HostResolver extends Context.Service<HostResolver, HostResolverShape>()("@conduit-mcp/client/HostResolver") {}

/**
 * A resolver from a promise-returning lookup such as `node:dns/promises` `lookup(host, { all: true })`.
 *
 * @since 0.1.0
 * @category layers
 */
export const fromLookup = (
  lookup: (host: string) => PromiseLike<ReadonlyArray<string | { readonly address: string }>>,
  options?: Options
): Layer.Layer<HostResolver> =>
  Layer.succeed(HostResolver, {
    resolve: (host) =>
      Effect.tryPromise({
        try: async () => (await lookup(host)).map((entry) => typeof entry === "string" ? entry : entry.address),
        catch: (cause) => new HostResolverError({ host, cause })
      }),
    ...(options?.connect !== undefined ? { connect: options.connect } : {})
  })

/**
 * A fixed table of names (tests, split-horizon setups); a name not in it fails to resolve.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStatic = (
  table: Readonly<Record<string, ReadonlyArray<string>>>,
  options?: Options
): Layer.Layer<HostResolver> =>
  Layer.succeed(HostResolver, {
    resolve: (host) => {
      const addresses = Object.prototype.hasOwnProperty.call(table, host) ? table[host] : undefined
      return addresses === undefined ? Effect.fail(new HostResolverError({ host })) : Effect.succeed(addresses)
    },
    ...(options?.connect !== undefined ? { connect: options.connect } : {})
  })
