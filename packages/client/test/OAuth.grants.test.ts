import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { generateKeyPairSync, verify } from "node:crypto"
import * as OAuth from "../src/OAuth.js"
import { callMcp, oauthLayer } from "./fixtures/oauth/harness.js"
import { startWorld, type World } from "./fixtures/oauth/world.js"
import { eventually } from "./utils/fibers.js"

const tokenRequests = (world: World) => world.requests.filter((r) => r.url.pathname.endsWith("/token"))

const run = <A, E>(
  world: World,
  options: OAuth.OAuthOptions,
  f: (authorizer: OAuth.Authorizer) => Effect.Effect<A, E, import("effect/http/HttpClient").HttpClient>,
  handler: import("../src/AuthorizationHandler.js").HeadlessOptions = {}
) =>
  Effect.gen(function*() {
    const oauth = yield* OAuth.OAuth
    return yield* f(yield* oauth.authorizer(world.mcpUrl))
  }).pipe(Effect.provide(oauthLayer(options, handler)))

const jwtParts = (jwt: string) => {
  const [h, p, s] = jwt.split(".")
  return {
    header: JSON.parse(Buffer.from(h, "base64url").toString()),
    payload: JSON.parse(Buffer.from(p, "base64url").toString()),
    input: `${h}.${p}`,
    signature: Buffer.from(s, "base64url")
  }
}

describe("OAuth client credentials", () => {
  it.effect("client_secret_basic: no browser, resource on the token request", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ preRegistered: { clientId: "m2m", clientSecret: "m2m-secret" } })
      yield* run(world, {
        grant: OAuth.Grant.ClientCredentials(),
        clients: [{ clientId: "m2m", clientSecret: Redacted.make("m2m-secret") }]
      }, (a) => callMcp(a, "tools/list"))
      assert.strictEqual(world.count("/authorize"), 0)
      const token = tokenRequests(world)[0]
      assert.strictEqual(token.form.get("grant_type"), "client_credentials")
      assert.strictEqual(token.form.get("resource"), world.mcpUrl)
      assert.strictEqual(token.headers.authorization, `Basic ${Buffer.from("m2m:m2m-secret").toString("base64")}`)
    }))

  it.effect("client_secret_post", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ preRegistered: { clientId: "m2m", clientSecret: "m2m-secret" } })
      yield* run(world, {
        grant: OAuth.Grant.ClientCredentials(),
        clients: [{ clientId: "m2m", clientSecret: Redacted.make("m2m-secret"), authMethod: "client_secret_post" }]
      }, (a) => callMcp(a, "tools/list"))
      const token = tokenRequests(world)[0]
      assert.isUndefined(token.headers.authorization)
      assert.strictEqual(token.form.get("client_secret"), "m2m-secret")
    }))

  it.effect("private_key_jwt: an ES256 assertion with iss = sub = client id and aud = the issuer", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ preRegistered: { clientId: "jwt-client", clientSecret: "unused" } })
      const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
      const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString()
      yield* run(world, {
        grant: OAuth.Grant.ClientCredentials(),
        clients: [{ clientId: "jwt-client", privateKey: { pem: Redacted.make(pem), alg: "ES256" } }]
      }, (a) => callMcp(a, "tools/list"))
      const token = tokenRequests(world)[0]
      assert.strictEqual(
        token.form.get("client_assertion_type"),
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
      )
      const jwt = jwtParts(token.form.get("client_assertion")!)
      assert.strictEqual(jwt.header.alg, "ES256")
      assert.strictEqual(jwt.payload.iss, "jwt-client")
      assert.strictEqual(jwt.payload.sub, "jwt-client")
      assert.strictEqual(jwt.payload.aud, world.issuerUrl())
      assert.isString(jwt.payload.jti)
      const key = { key: publicKey, dsaEncoding: "ieee-p1363" as const }
      const valid = verify("sha256", Buffer.from(jwt.input), key, jwt.signature)
      assert.isTrue(valid)
    }))
})

describe("OAuth JWT bearer and identity assertion", () => {
  it.effect("workload identity: the assertion is presented with the JWT bearer grant", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      world.clients.set("wif-client", { secret: undefined, issuer: "", redirectUris: [] })
      yield* run(world, {
        grant: OAuth.Grant.JwtBearer({ assertion: Effect.succeed(Redacted.make("valid-assertion")) }),
        clients: [{ clientId: "wif-client" }]
      }, (a) => callMcp(a, "tools/list"))
      const token = tokenRequests(world)[0]
      assert.strictEqual(token.form.get("grant_type"), "urn:ietf:params:oauth:grant-type:jwt-bearer")
      assert.strictEqual(token.form.get("assertion"), "valid-assertion")
      assert.strictEqual(token.form.get("client_id"), "wif-client")
    }))

  it.effect("a refused assertion is surfaced once: no retry, no other grant", () =>
    Effect.gen(function*() {
      const world = yield* startWorld()
      const error = yield* run(world, {
        grant: OAuth.Grant.JwtBearer({ assertion: Effect.succeed(Redacted.make("expired-assertion")) }),
        clients: [{ clientId: "wif-client" }]
      }, (a) => callMcp(a, "tools/list")).pipe(Effect.flip)
      assert.strictEqual(error._tag, "AuthError")
      assert.include(error.message, "invalid_grant")
      assert.notInclude(error.message, "expired-assertion")
      assert.strictEqual(tokenRequests(world).length, 1)
      assert.strictEqual(world.count("/authorize"), 0)
    }))

  it.effect("enterprise-managed authorization: token exchange at the IdP, then the ID-JAG at the AS", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ preRegistered: { clientId: "ema", clientSecret: "ema-secret" } })
      yield* run(world, {
        grant: OAuth.Grant.IdentityAssertion({
          idpTokenEndpoint: `${world.origin}/idp/token`,
          idToken: Effect.succeed(Redacted.make("idp-id-token")),
          idpClientId: "idp-client"
        }),
        clients: [{ clientId: "ema", clientSecret: Redacted.make("ema-secret") }]
      }, (a) => callMcp(a, "tools/list"))
      const exchange = world.requests.find((r) => r.url.pathname === "/idp/token")!
      assert.strictEqual(exchange.form.get("requested_token_type"), "urn:ietf:params:oauth:token-type:id-jag")
      assert.strictEqual(exchange.form.get("subject_token_type"), "urn:ietf:params:oauth:token-type:id_token")
      assert.strictEqual(exchange.form.get("audience"), world.issuerUrl())
      assert.strictEqual(exchange.form.get("resource"), world.mcpUrl)
      const token = tokenRequests(world).find((r) => r.url.pathname === "/token")!
      assert.strictEqual(token.form.get("grant_type"), "urn:ietf:params:oauth:grant-type:jwt-bearer")
      assert.isTrue(token.form.get("assertion")?.startsWith("id-jag-"))
      assert.isTrue(token.headers.authorization?.startsWith("Basic "))
    }))
})

describe("OAuth device authorization grant", () => {
  it.live("shows the user code, polls while pending, then uses the token", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ deviceGrant: true, deviceInterval: 1, devicePendingPolls: 1 })
      const shown: Array<string> = []
      yield* run(world, { grant: OAuth.Grant.DeviceCode() }, (a) => callMcp(a, "tools/list"), {
        showDeviceCode: (code) =>
          Effect.sync(() => {
            shown.push(code.userCode)
            world.approveDevice(code.userCode)
          })
      })
      assert.strictEqual(shown.length, 1)
      const polls = tokenRequests(world).filter((r) =>
        r.form.get("grant_type") === "urn:ietf:params:oauth:grant-type:device_code"
      )
      assert.strictEqual(polls.length, 2)
      const device = world.requests.find((r) => r.url.pathname === "/device")!
      assert.strictEqual(device.form.get("resource"), world.mcpUrl)
    }).pipe(Effect.scoped))
})

/**
 * `clock` with every sleep noted: `asleep` holds the wake-up time of each sleep begun through it and not yet over
 * (Effect 4.1.5's TestClock does not list its sleeps). Given to one fiber with `Effect.provideService(Clock.Clock, …)`.
 */
const watchSleeps = (clock: Clock.Clock) => {
  const asleep: Array<number> = []
  const watching: Clock.Clock = {
    currentTimeMillisUnsafe: () => clock.currentTimeMillisUnsafe(),
    currentTimeMillis: clock.currentTimeMillis,
    currentTimeNanosUnsafe: () => clock.currentTimeNanosUnsafe(),
    currentTimeNanos: clock.currentTimeNanos,
    monotonicTimeNanosUnsafe: () => clock.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: clock.monotonicTimeNanos,
    sleep: (duration) =>
      Effect.suspend(() => {
        const wake = clock.currentTimeMillisUnsafe() + Duration.toMillis(duration)
        asleep.push(wake)
        return clock.sleep(duration).pipe(Effect.ensuring(Effect.sync(() => {
          const index = asleep.indexOf(wake)
          if (index !== -1) asleep.splice(index, 1)
        })))
      })
  }
  return { clock: watching, asleep }
}

describe("OAuth device grant from a hostile authorization server", () => {
  it.effect("a huge expires_in and interval are clamped: polls at most 60 s apart, given up after 30 minutes", () =>
    Effect.gen(function*() {
      // never approved; a billion seconds to wait between polls, and to wait in all
      const world = yield* startWorld({ deviceGrant: true, deviceInterval: 1e9, deviceExpiresIn: 1e9 })
      const shown: Array<number> = []
      const clock = watchSleeps(yield* Clock.Clock)
      const fiber = yield* run(world, { grant: OAuth.Grant.DeviceCode() }, (a) => callMcp(a, "tools/list"), {
        showDeviceCode: (code) => Effect.sync(() => shown.push(code.expiresInSeconds))
      }).pipe(Effect.result, Effect.provideService(Clock.Clock, clock.clock), Effect.forkChild)
      const polls = () =>
        tokenRequests(world).filter((r) => r.form.get("grant_type") === "urn:ietf:params:oauth:grant-type:device_code")
          .length
      // the flow sleeps a minute on the TestClock between real HTTP exchanges (discovery, the device request, each
      // poll and its answer): each time, wait until it sleeps again (or has ended), then move time a minute
      const asleepOrDone = Effect.gen(function*() {
        const wake = (yield* Clock.currentTimeMillis) + 60_000
        return fiber.pollUnsafe() !== undefined || clock.asleep.includes(wake)
      })
      let minutes = 0
      while (minutes < 40) {
        yield* eventually(asleepOrDone)
        if (fiber.pollUnsafe() !== undefined) break
        // the sleep is noted just before the TestClock registers it: let the flow's fiber get there
        yield* Effect.yieldNow
        yield* TestClock.adjust("60 seconds")
        minutes++
      }
      const outcome = yield* Fiber.join(fiber)
      assert.isTrue(outcome._tag === "Failure" && outcome.failure.message.includes("device code expired"), JSON.stringify(outcome))
      assert.deepStrictEqual(shown, [1800])
      assert.isAtMost(minutes, 31)
      assert.isAtLeast(polls(), 29)
    }))
})

describe("OAuth DPoP", () => {
  it.effect("a DPoP challenge and an ES256 authorization server give a key-bound token and a proof per request", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ dpop: true })
      yield* run(world, {}, (a) =>
        Effect.gen(function*() {
          yield* callMcp(a, "tools/list")
          const info = Option.getOrThrow(yield* a.current)
          assert.strictEqual(info.tokenType, "DPoP")
          for (const token of world.tokens.values()) if (token.kind === "access") token.revoked = true
          yield* callMcp(a, "tools/call")
        }))
      const token = tokenRequests(world)[0]
      const proof = jwtParts(String(token.headers.dpop))
      assert.strictEqual(proof.header.typ, "dpop+jwt")
      assert.strictEqual(proof.payload.htm, "POST")
      assert.strictEqual(proof.payload.htu, `${world.issuerUrl()}/token`)
      const refresh = tokenRequests(world).find((r) => r.form.get("grant_type") === "refresh_token")
      assert.isDefined(refresh?.headers.dpop)
      const accepted = world.requests.filter((r) =>
        r.url.pathname === "/mcp" && r.headers.authorization?.startsWith("DPoP ")
      )
      assert.isAtLeast(accepted.length, 2)
      for (const request of accepted) {
        const p = jwtParts(String(request.headers.dpop))
        assert.strictEqual(p.payload.htu, world.mcpUrl)
        assert.isString(p.payload.ath)
      }
      const jtis = accepted.map((r) => jwtParts(String(r.headers.dpop)).payload.jti)
      assert.strictEqual(new Set(jtis).size, jtis.length)
    }))

  it.effect("server and authorization server nonces: each request is retried once with the nonce", () =>
    Effect.gen(function*() {
      const world = yield* startWorld({ dpop: true, asNonce: true, rsNonce: true })
      const result = yield* run(world, {}, (a) => callMcp(a, "tools/list"))
      assert.deepStrictEqual(result, { ok: true, method: "tools/list" })
      const tokens = tokenRequests(world)
      assert.strictEqual(tokens.length, 2)
      assert.isUndefined(jwtParts(String(tokens[0].headers.dpop)).payload.nonce)
      assert.isString(jwtParts(String(tokens[1].headers.dpop)).payload.nonce)
      const withToken = world.requests.filter((r) => r.url.pathname === "/mcp" && r.headers.authorization !== undefined)
      assert.strictEqual(withToken.length, 2)
      assert.isUndefined(jwtParts(String(withToken[0].headers.dpop)).payload.nonce)
      assert.isString(jwtParts(String(withToken[1].headers.dpop)).payload.nonce)
    }))
})
