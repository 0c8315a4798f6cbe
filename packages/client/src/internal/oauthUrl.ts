/**
 * URL rules of the OAuth flow: the canonical resource identifier, the well-known discovery locations in the
 * order the specification gives, and the SSRF policy applied to every URL a server or an authorization server
 * hands us.
 *
 * @internal
 */
import * as Result from "effect/Result"
import { oauthError, type OAuthError } from "./oauthError.js"

/** @internal */
export const parseUrl = (input: string, base?: URL | string): URL | undefined => {
  try {
    return new URL(input, base)
  } catch {
    return undefined
  }
}

const trimTrailingSlash = (path: string): string => path.endsWith("/") ? path.slice(0, -1) : path

/**
 * The canonical URI of an MCP server (RFC 8707 as the MCP authorization spec uses it): lower-case scheme and
 * host, no fragment, no lone trailing slash.
 *
 * @internal
 */
export const canonicalResource = (url: URL): string => {
  const path = url.pathname === "/" ? "" : url.pathname
  return `${url.protocol}//${url.host}${path}${url.search}`
}

/**
 * Whether a Protected Resource Metadata `resource` identifies the server at `server`: same origin, and its
 * path is the server's path or a parent of it on a segment boundary (a root PRM names the origin).
 *
 * @internal
 */
export const resourceCovers = (resource: string, server: URL): boolean => {
  const declared = parseUrl(resource)
  if (declared === undefined || declared.hash !== "" || declared.username !== "" || declared.password !== "") {
    return false
  }
  if (declared.protocol !== server.protocol || declared.host !== server.host) return false
  const declaredPath = trimTrailingSlash(declared.pathname)
  const serverPath = trimTrailingSlash(server.pathname)
  return declaredPath === "" || serverPath === declaredPath || serverPath.startsWith(`${declaredPath}/`)
}

/**
 * RFC 9728 well-known locations for a server URL: path-aware first (when the URL has a path), then the root.
 *
 * @internal
 */
export const protectedResourceMetadataUrls = (server: URL): Array<URL> => {
  const path = trimTrailingSlash(server.pathname)
  const root = new URL("/.well-known/oauth-protected-resource", server.origin)
  return path === "" ? [root] : [new URL(`/.well-known/oauth-protected-resource${path}`, server.origin), root]
}

/**
 * RFC 8414 and OpenID Connect discovery locations for an issuer, in the order of the 2025-11-25 and later
 * revisions: OAuth path insertion, OpenID path insertion, OpenID path appending (issuers with a path); the two
 * root documents otherwise.
 *
 * @internal
 */
export const authorizationServerMetadataUrls = (issuer: URL): Array<URL> => {
  const path = trimTrailingSlash(issuer.pathname)
  if (path === "") {
    return [
      new URL("/.well-known/oauth-authorization-server", issuer.origin),
      new URL("/.well-known/openid-configuration", issuer.origin)
    ]
  }
  return [
    new URL(`/.well-known/oauth-authorization-server${path}`, issuer.origin),
    new URL(`/.well-known/openid-configuration${path}`, issuer.origin),
    new URL(`${path}/.well-known/openid-configuration`, issuer.origin)
  ]
}

/** @internal */
export type HostClass = "loopback" | "private" | "public"

const ipv4Class = (parts: ReadonlyArray<number>): HostClass => {
  const [a, b, c] = parts
  if (a === 127) return "loopback"
  if (
    a === 0 || a === 10 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || a >= 224 ||
    // IETF protocol assignments, benchmarking, and the documentation networks: never a public server
    (a === 192 && b === 0 && (c === 0 || c === 2)) || (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)
  ) return "private"
  return "public"
}

/** The IPv4 address in two 16-bit groups. */
const embedded = (high: number, low: number): HostClass => ipv4Class([high >> 8, high & 0xff, low >> 8, low & 0xff])

const parseIpv4 = (host: string): Array<number> | undefined => {
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return undefined
  const parts = host.split(".").map(Number)
  return parts.every((part) => part <= 255) ? parts : undefined
}

const expandIpv6 = (host: string): Array<number> | undefined => {
  const halves = host.split("::")
  if (halves.length > 2) return undefined
  const groups = (text: string) => text === "" ? [] : text.split(":")
  const head = groups(halves[0])
  const tail = halves.length === 2 ? groups(halves[1]) : []
  const fill = 8 - head.length - tail.length
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return undefined
  const all = [...head, ...Array.from({ length: fill }, () => "0"), ...tail]
  const numbers = all.map((group) => /^[0-9a-f]{1,4}$/i.test(group) ? parseInt(group, 16) : NaN)
  return numbers.every((n) => !Number.isNaN(n)) ? numbers : undefined
}

const ipv6Class = (groups: ReadonlyArray<number>): HostClass => {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups
  if (groups.every((g, i) => i === 7 ? g === 1 : g === 0)) return "loopback"
  if (groups.every((g) => g === 0)) return "private"
  // forms that carry an IPv4 address take its class: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible,
  // IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::)
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0) {
    if (g4 === 0 && (g5 === 0xffff || g5 === 0)) return embedded(g6, g7)
    if (g4 === 0xffff && g5 === 0) return embedded(g6, g7)
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return embedded(g6, g7)
  if (g0 === 0x2002) return embedded(g1, g2)
  if (
    (g0 & 0xfe00) === 0xfc00 || (g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0 || (g0 & 0xff00) === 0xff00 ||
    // local-use NAT64, discard-only, Teredo (its server and client addresses are hidden), documentation
    (g0 === 0x64 && g1 === 0xff9b && g2 === 1) || (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) ||
    (g0 === 0x2001 && g1 === 0) || (g0 === 0x2001 && g1 === 0xdb8)
  ) {
    return "private"
  }
  return "public"
}

/**
 * Classifies a URL's host. Literal addresses are classified after the WHATWG URL parser has normalised them
 * (it rewrites decimal, octal and hex IPv4 forms to dotted quads). Host names are not resolved here: with a
 * `HostResolver`, `oauthHttp.checkResolved` classifies the addresses a name resolves to before each exchange (and
 * `oauthHttp.send` connects to those addresses when the resolver has `connect`).
 *
 * @internal
 */
export const hostClass = (url: URL): HostClass => {
  // (a fully qualified name may end with a dot: `localhost.` is localhost)
  const host = url.hostname.toLowerCase().replace(/\.$/, "")
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback"
  const v4 = parseIpv4(host)
  if (v4 !== undefined) return ipv4Class(v4)
  if (host.startsWith("[") && host.endsWith("]")) {
    const v6 = expandIpv6(host.slice(1, -1))
    return v6 === undefined ? "private" : ipv6Class(v6)
  }
  return "public"
}

/** Which targets the OAuth flow may contact. @internal */
export interface UrlPolicy {
  /** Loopback targets, over http too (development, tests, a local server). */
  readonly allowLoopback: boolean
  /** Private, link-local and unique-local targets. */
  readonly allowPrivate: boolean
}

/** The default policy for a server: loopback is allowed for a loopback server, private for a private one. @internal */
export const defaultPolicy = (server: URL): UrlPolicy => {
  const kind = hostClass(server)
  return { allowLoopback: kind === "loopback", allowPrivate: kind === "private" }
}

/**
 * Checks a URL the flow is about to contact or send the user to: `https` only (`http` only on an allowed
 * loopback host), no credentials in the URL, and no loopback or private target unless the policy allows it.
 *
 * @internal
 */
export const checkUrl = (
  input: string | URL,
  policy: UrlPolicy,
  what: string
): Result.Result<URL, OAuthError> => {
  const url = typeof input === "string" ? parseUrl(input) : input
  if (url === undefined) return Result.fail(oauthError("InsecureUrl", `${what} is not a valid URL`))
  const shown = `${url.origin}${url.pathname}`
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return Result.fail(oauthError("InsecureUrl", `${what} uses the ${url.protocol} scheme; only https is allowed`))
  }
  if (url.username !== "" || url.password !== "") {
    return Result.fail(oauthError("InsecureUrl", `${what} carries credentials in the URL`))
  }
  const kind = hostClass(url)
  if (kind === "loopback" && !policy.allowLoopback) {
    return Result.fail(oauthError("InsecureUrl", `${what} ${shown} points to a loopback address`))
  }
  if (kind === "private" && !policy.allowPrivate) {
    return Result.fail(oauthError("InsecureUrl", `${what} ${shown} points to a private network address`))
  }
  if (url.protocol === "http:" && kind !== "loopback") {
    return Result.fail(oauthError("InsecureUrl", `${what} ${shown} is not https`))
  }
  return Result.succeed(url)
}
