/**
 * DNS rebinding against the OAuth flow's address check: the name's DNS answers one address when the flow checks it
 * and another when the HTTP client connects. With a `HostResolver` that has `connect`, each exchange connects to
 * the address that was checked, or fails: never to the one answered later. Real TLS servers on 127.0.0.1 only
 * (the certificate, for `metadata.test`, is a fixture: `openssl req -x509 -newkey ec -pkeyopt
 * ec_paramgen_curve:prime256v1 -nodes -days 36500 -subj /CN=metadata.test -addext
 * subjectAltName=DNS:metadata.test`); 127.0.0.2, where nothing listens, stands for an address nobody answers at.
 * Loopback addresses are allowed by the policy here, so that the checked address can be one of ours.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as Scope from "effect/Scope"
import * as Fs from "node:fs"
import * as Https from "node:https"
import type * as Net from "node:net"
import type * as Tls from "node:tls"
import * as HostResolver from "../src/HostResolver.js"
import * as OAuth from "../src/OAuth.js"
import * as TokenStore from "../src/TokenStore.js"

const fixture = (name: string) => Fs.readFileSync(new URL(`./fixtures/tls/${name}`, import.meta.url))
const cert = fixture("cert.pem")
const key = fixture("key.pem")

/** What the TLS server saw of one request: its path, its Host header and the TLS server name. */
interface Seen {
  readonly path: string
  readonly host: string | undefined
  readonly servername: string | undefined
}

/** A TLS server for `metadata.test` on 127.0.0.1 that answers 404 to everything and records what it was sent. */
const tlsServer: Effect.Effect<{ readonly port: number; readonly seen: Array<Seen> }, never, Scope.Scope> = Effect
  .acquireRelease(
    Effect.callback<{
      readonly server: Https.Server
      readonly sockets: Set<Net.Socket>
      readonly port: number
      readonly seen: Array<Seen>
    }>(
      (resume) => {
        const seen: Array<Seen> = []
        const sockets = new Set<Net.Socket>()
        const server = Https.createServer({ cert, key }, (req, res) => {
          seen.push({
            path: req.url ?? "",
            host: req.headers.host,
            servername: (req.socket as Tls.TLSSocket).servername || undefined
          })
          res.writeHead(404, { "content-type": "application/json" }).end("{}")
        })
        server.on("secureConnection", (socket) => {
          sockets.add(socket)
          socket.on("close", () => sockets.delete(socket))
        })
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          resume(Effect.succeed({ server, sockets, port, seen }))
        })
      }
    ),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ port, seen }) => ({ port, seen })))

/** An undici client trusting the fixture certificate, resolving names with `lookup`; its agent ends with the scope. */
const undiciClient = (lookup: HostResolver.Lookup) =>
  Effect.acquireRelease(
    Effect.sync(() => new Undici.Agent({ connect: { lookup, ca: cert } })),
    (agent) => Effect.promise(() => agent.destroy())
  ).pipe(Effect.flatMap((agent) => Effect.provideService(NodeHttpClient.makeUndici, NodeHttpClient.Dispatcher, agent)))

/**
 * Runs the discovery of `https://mcp.test/mcp`, whose protected resource metadata is on `metadata.test`: the flow's
 * resolver answers `checked` for it, the application's HTTP client (the system's resolver, later) `rebound`.
 */
const discover = (port: number, checked: string, rebound: string, pinning: boolean) =>
  Effect.gen(function*() {
    const pins: Array<HostResolver.Pin> = []
    const warnings: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (logLevel === "Warn") warnings.push(String(message))
    })
    const resolver = HostResolver.layerStatic(
      { "metadata.test": [checked] },
      pinning ? { connect: (pin) => Effect.andThen(Effect.sync(() => pins.push(pin)), undiciClient(pin.lookup)) } : {}
    )
    // the application's client: its own resolution of the name gives the rebound address
    const application = Layer.effect(
      NodeHttpClient.Dispatcher,
      Effect.acquireRelease(
        Effect.sync(() =>
          new Undici.Agent({ connect: { lookup: HostResolver.pin("metadata.test", [rebound]).lookup, ca: cert } })
        ),
        (agent) => Effect.promise(() => agent.destroy())
      )
    )
    const error = yield* Effect.gen(function*() {
      const oauth = yield* OAuth.OAuth
      const authorizer = yield* oauth.authorizer("https://mcp.test/mcp")
      const resourceMetadata = `https://metadata.test:${port}/.well-known/oauth-protected-resource/mcp`
      return yield* Effect.flip(
        authorizer.authorize({ challenges: [{ scheme: "Bearer", params: { resource_metadata: resourceMetadata } }] })
      )
    }).pipe(
      Effect.provide(
        OAuth.layer({ hostResolver: HostResolver.HostResolver, allowLoopback: true }).pipe(
          Layer.provide(TokenStore.layerMemory),
          Layer.provide(resolver),
          Layer.provide(NodeHttpClient.layerUndiciNoDispatcher.pipe(Layer.provide(application)))
        )
      ),
      Effect.provide(Logger.layer([logger]))
    )
    return { error, pins, warnings }
  })

describe("DNS rebinding against the OAuth flow", () => {
  it.live("the exchange goes to the checked address, not the one the name answers later; TLS names the host", () =>
    Effect.gen(function*() {
      const server = yield* tlsServer
      const { pins, warnings } = yield* discover(server.port, "127.0.0.1", "127.0.0.2", true)
      assert.deepStrictEqual(warnings, [])
      // the metadata request reached the checked address, under its name (certificate, SNI and Host)
      assert.deepStrictEqual(server.seen, [{
        path: "/.well-known/oauth-protected-resource/mcp",
        host: `metadata.test:${server.port}`,
        servername: "metadata.test"
      }])
      assert.deepStrictEqual(pins.map(({ addresses, host }) => ({ host, addresses })), [
        { host: "metadata.test", addresses: ["127.0.0.1"] }
      ])
    }).pipe(Effect.scoped))

  it.live("a name rebound to an internal service after its check gets no request there: the exchange fails", () =>
    Effect.gen(function*() {
      // the server on 127.0.0.1 is the internal service; the check saw 127.0.0.2, where nothing listens
      const server = yield* tlsServer
      const { error } = yield* discover(server.port, "127.0.0.2", "127.0.0.1", true)
      assert.deepStrictEqual(server.seen, [])
      assert.strictEqual(error.reason, "Discovery")
      assert.include(error.message, `GET https://metadata.test:${server.port}/.well-known/oauth-protected-resource`)
    }).pipe(Effect.scoped))

  it.live("without connect the application's client resolves the name again (what the warning is about)", () =>
    Effect.gen(function*() {
      const server = yield* tlsServer
      const { warnings } = yield* discover(server.port, "127.0.0.2", "127.0.0.1", false)
      assert.strictEqual(warnings.length, 1)
      assert.include(warnings[0], "HostResolver has no connect")
      assert.deepStrictEqual(server.seen.map(({ path }) => path), ["/.well-known/oauth-protected-resource/mcp"])
    }).pipe(Effect.scoped))
})

/** What a lookup answered: the error's code, the address or addresses, the family. */
interface Answer {
  readonly error: string | undefined
  readonly address: unknown
  readonly family: number | undefined
}

describe("HostResolver.pin", () => {
  const lookup = (
    pin: HostResolver.Pin,
    hostname: string,
    options: { readonly family?: number; readonly all?: boolean }
  ) =>
    Effect.callback<Answer>((resume) =>
      pin.lookup(hostname, options, (error, address, family) =>
        resume(Effect.succeed({ error: (error as { code?: string } | null)?.code, address, family })))
    )

  it.effect("answers the checked addresses, for the checked name only", () =>
    Effect.gen(function*() {
      const pin = HostResolver.pin("Metadata.Test", ["203.0.113.7", "2001:db8::7"])
      assert.strictEqual(pin.host, "metadata.test")
      assert.deepStrictEqual(yield* lookup(pin, "metadata.test", {}), {
        error: undefined,
        address: "203.0.113.7",
        family: 4
      })
      assert.deepStrictEqual((yield* lookup(pin, "METADATA.test.", { all: true })).address, [
        { address: "203.0.113.7", family: 4 },
        { address: "2001:db8::7", family: 6 }
      ])
      assert.deepStrictEqual((yield* lookup(pin, "metadata.test", { family: 6 })).address, "2001:db8::7")
      assert.strictEqual((yield* lookup(pin, "internal.test", {})).error, "ENOTFOUND")
      assert.strictEqual((yield* lookup(HostResolver.pin("v4.test", ["203.0.113.7"]), "v4.test", { family: 6 })).error,
        "ENOTFOUND")
    }))
})
