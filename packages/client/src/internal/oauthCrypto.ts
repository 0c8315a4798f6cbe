/**
 * WebCrypto helpers for OAuth: PKCE S256, random values, token fingerprints, compact JWS signing for DPoP
 * proofs and `private_key_jwt` client assertions. Only `globalThis.crypto` is used, so the library stays
 * platform-agnostic.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { fingerprint, sha256 } from "./digest.js"
import { oauthError, type OAuthError } from "./oauthError.js"

/** @internal */
export { fingerprint, sha256 }

/** @internal */
export type CryptoKey = Parameters<typeof globalThis.crypto.subtle.sign>[1]

const utf8 = new TextEncoder()

/** @internal */
export const randomBytes = (size: number): Uint8Array => globalThis.crypto.getRandomValues(new Uint8Array(size))

/** A URL-safe random string carrying `bytes` bytes of entropy. @internal */
export const randomString = (bytes = 32): string => Base64Url.encode(randomBytes(bytes))

/** @internal */
export const sha256Base64Url = (input: string): Effect.Effect<string> =>
  Effect.map(sha256(input), Base64Url.encode)

/** @internal */
export interface Pkce {
  readonly verifier: Redacted.Redacted<string>
  readonly challenge: string
}

/** RFC 7636: a 43-character verifier (32 random bytes) and its S256 challenge. @internal */
export const makePkce: Effect.Effect<Pkce> = Effect.suspend(() => {
  const verifier = randomString(32)
  return Effect.map(sha256Base64Url(verifier), (challenge) => ({ verifier: Redacted.make(verifier), challenge }))
})

/** The signing algorithms this module can use for JWS. @internal */
export const SigningAlgorithm = Schema.Literals(["ES256", "ES384", "RS256", "PS256"])

/** @internal */
export type SigningAlgorithm = typeof SigningAlgorithm.Type

const importParams = (alg: SigningAlgorithm) => {
  switch (alg) {
    case "ES256":
      return { name: "ECDSA", namedCurve: "P-256" }
    case "ES384":
      return { name: "ECDSA", namedCurve: "P-384" }
    case "RS256":
      return { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }
    case "PS256":
      return { name: "RSA-PSS", hash: "SHA-256" }
  }
}

const signParams = (alg: SigningAlgorithm) => {
  switch (alg) {
    case "ES256":
      return { name: "ECDSA", hash: "SHA-256" }
    case "ES384":
      return { name: "ECDSA", hash: "SHA-384" }
    case "RS256":
      return { name: "RSASSA-PKCS1-v1_5" }
    case "PS256":
      return { name: "RSA-PSS", saltLength: 32 }
  }
}

/** A private key ready to sign JWS with one algorithm. @internal */
export interface SigningKey {
  readonly alg: SigningAlgorithm
  readonly key: CryptoKey
  readonly kid?: string | undefined
}

/**
 * Imports a PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`). SEC1 (`EC PRIVATE KEY`) and PKCS#1
 * (`RSA PRIVATE KEY`) files must be converted to PKCS#8 first.
 *
 * @internal
 */
export const importPkcs8Pem = (
  pem: Redacted.Redacted<string>,
  alg: SigningAlgorithm,
  kid?: string | undefined
): Effect.Effect<SigningKey, OAuthError> => {
  const text = Redacted.value(pem)
  const match = /-----BEGIN PRIVATE KEY-----([\s\S]+?)-----END PRIVATE KEY-----/.exec(text)
  if (match === null) {
    return Effect.fail(oauthError("InvalidOption", "the private key is not a PKCS#8 PEM (BEGIN PRIVATE KEY) document"))
  }
  const der = Base64.decode(match[1].replace(/\s+/g, ""))
  if (Result.isFailure(der)) {
    return Effect.fail(oauthError("InvalidOption", "the private key PEM body is not valid base64"))
  }
  return Effect.tryPromise({
    try: () => globalThis.crypto.subtle.importKey("pkcs8", der.success, importParams(alg), false, ["sign"]),
    catch: () => oauthError("InvalidOption", `the private key cannot be used with ${alg}`)
  }).pipe(Effect.map((key): SigningKey => ({ alg, key, kid })))
}

const encodeSegment = (value: unknown): string => Base64Url.encode(JSON.stringify(value))

/** Signs a compact JWS. @internal */
export const signJwt = (
  key: SigningKey,
  header: Readonly<Record<string, unknown>>,
  payload: Readonly<Record<string, unknown>>
): Effect.Effect<string> => {
  const input = `${encodeSegment({ ...header, alg: key.alg })}.${encodeSegment(payload)}`
  return Effect.map(
    Effect.promise(() => globalThis.crypto.subtle.sign(signParams(key.alg), key.key, utf8.encode(input))),
    // WebCrypto's ECDSA signature is already the fixed-size r || s form JWS requires
    (signature) => `${input}.${Base64Url.encode(new Uint8Array(signature))}`
  )
}

/** The public half of an EC P-256 key as a JWK. @internal */
export const PublicEcJwk = Schema.Struct({
  kty: Schema.Literal("EC"),
  crv: Schema.Literal("P-256"),
  x: Schema.String,
  y: Schema.String
})

/** @internal */
export type PublicEcJwk = typeof PublicEcJwk.Type

const PrivateEcJwk = Schema.Struct({ ...PublicEcJwk.fields, d: Schema.String })

/** An ES256 key pair for DPoP proofs (RFC 9449). @internal */
export interface DpopKey {
  readonly signing: SigningKey
  readonly publicJwk: PublicEcJwk
  /** The private JWK, serialised, for the token store. */
  readonly exported: Redacted.Redacted<string>
}

const dpopKeyFromJwk = (jwk: typeof PrivateEcJwk.Type): Effect.Effect<DpopKey> =>
  Effect.map(
    Effect.promise(() =>
      globalThis.crypto.subtle.importKey("jwk", { ...jwk, ext: true }, importParams("ES256"), false, ["sign"])
    ),
    (key): DpopKey => ({
      signing: { alg: "ES256", key },
      publicJwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y },
      exported: Redacted.make(JSON.stringify(jwk))
    })
  )

/** @internal */
export const generateDpopKey: Effect.Effect<DpopKey> = Effect.gen(function*() {
  const pair = yield* Effect.promise(() =>
    globalThis.crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])
  )
  const exported = yield* Effect.promise(() => globalThis.crypto.subtle.exportKey("jwk", pair.privateKey))
  const jwk = yield* Schema.decodeUnknownEffect(PrivateEcJwk)(exported).pipe(Effect.orDie)
  return yield* dpopKeyFromJwk(jwk)
})

/** Restores a DPoP key saved with its token; `None`-like `undefined` when the saved form is unusable. @internal */
export const importDpopKey = (exported: Redacted.Redacted<string>): Effect.Effect<DpopKey | undefined> =>
  Schema.decodeUnknownEffect(Schema.fromJsonString(PrivateEcJwk))(Redacted.value(exported)).pipe(
    Effect.flatMap(dpopKeyFromJwk),
    Effect.orElseSucceed(() => undefined)
  )

/** `htu` of a DPoP proof: the target URI without query and fragment (RFC 9449 §4.2). @internal */
export const htu = (url: URL): string => `${url.origin}${url.pathname}`

/** A fresh DPoP proof JWT for one HTTP request. @internal */
export const dpopProof = (options: {
  readonly key: DpopKey
  readonly method: string
  readonly url: URL
  readonly nonce?: string | undefined
  readonly accessToken?: Redacted.Redacted<string> | undefined
}): Effect.Effect<string> =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const ath = options.accessToken !== undefined
      ? yield* sha256Base64Url(Redacted.value(options.accessToken))
      : undefined
    return yield* signJwt(options.key.signing, { typ: "dpop+jwt", jwk: options.key.publicJwk }, {
      jti: randomString(16),
      htm: options.method.toUpperCase(),
      htu: htu(options.url),
      iat: Math.floor(now / 1000),
      ...(options.nonce !== undefined ? { nonce: options.nonce } : {}),
      ...(ath !== undefined ? { ath } : {})
    })
  })

/** An RFC 7523 client assertion for `private_key_jwt` (iss = sub = client id, aud = the issuer). @internal */
export const clientAssertion = (options: {
  readonly key: SigningKey
  readonly clientId: string
  readonly audience: string
}): Effect.Effect<string> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const iat = Math.floor(now / 1000)
    return signJwt(options.key, { typ: "JWT", ...(options.key.kid !== undefined ? { kid: options.key.kid } : {}) }, {
      iss: options.clientId,
      sub: options.clientId,
      aud: options.audience,
      jti: randomString(16),
      iat,
      exp: iat + 300
    })
  })
