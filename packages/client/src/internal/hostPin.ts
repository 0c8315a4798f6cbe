/**
 * A `lookup` in the shape of Node's `dns.lookup` that answers only the addresses a host name was checked against,
 * and only for that name: given to the connector of an HTTP client (`net.connect`, `tls.connect`, undici's
 * `connect` option), the connection goes to a checked address while the name stays the TLS server name and the
 * `Host` header. Written without Node's types (the package runs wherever Effect runs); it is assignable to
 * `net.LookupFunction`.
 *
 * @internal
 */

/** @internal */
export interface LookupOptions {
  readonly family?: number | string | undefined
  readonly all?: boolean | undefined
}

/** @internal */
export interface LookupAddress {
  readonly address: string
  readonly family: number
}

/** @internal */
export type Lookup = (
  hostname: string,
  options: LookupOptions,
  callback: (error: Error | null, address: string | Array<LookupAddress>, family?: number) => void
) => void

const familyOf = (address: string): number => address.includes(":") ? 6 : 4

const wantedFamily = (family: LookupOptions["family"]): number =>
  family === 4 || family === "IPv4" ? 4 : family === 6 || family === "IPv6" ? 6 : 0

/** A host name as a connector may spell it: any case, a trailing dot for a fully qualified name. */
const normalise = (host: string): string => host.toLowerCase().replace(/\.$/, "")

/**
 * The lookup of `host` pinned to `addresses`. Another name, or a family none of the addresses has, fails like an
 * unknown name (`ENOTFOUND`). The answer comes in a later microtask, as a resolver's would.
 *
 * @internal
 */
export const pinnedLookup = (host: string, addresses: ReadonlyArray<string>): Lookup => {
  const pinned = normalise(host)
  const entries: ReadonlyArray<LookupAddress> = addresses.map((address) => ({ address, family: familyOf(address) }))
  return (hostname, options, callback) => {
    const family = wantedFamily(options.family)
    const found = normalise(hostname) === pinned
      ? entries.filter((entry) => family === 0 || entry.family === family)
      : []
    queueMicrotask(() => {
      if (found.length === 0) {
        const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname} (pinned to the checked addresses)`), {
          code: "ENOTFOUND",
          hostname
        })
        return callback(error, options.all === true ? [] : "")
      }
      if (options.all === true) return callback(null, found.map((entry) => ({ ...entry })))
      const first = found[0]!
      callback(null, first.address, first.family)
    })
  }
}

/** A host name's pin: the name (lower-case), its checked addresses and their lookup. @internal */
export const makePin = (host: string, addresses: ReadonlyArray<string>) => ({
  host: normalise(host),
  addresses,
  lookup: pinnedLookup(host, addresses)
})
