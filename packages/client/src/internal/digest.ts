/**
 * SHA-256 through WebCrypto (`globalThis.crypto`, so the library stays platform-agnostic), and the fingerprint of
 * a secret built on it. A leaf of its own: the task store and the HTTP transport's credential cache keys need
 * only these, not the OAuth signing helpers of `oauthCrypto.ts`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Encoding from "effect/Encoding"
import * as Redacted from "effect/Redacted"

const utf8 = new TextEncoder()

/** @internal */
export const sha256 = (input: string | Uint8Array): Effect.Effect<Uint8Array> =>
  Effect.map(
    Effect.promise(() =>
      globalThis.crypto.subtle.digest("SHA-256", typeof input === "string" ? utf8.encode(input) : input)
    ),
    (buffer) => new Uint8Array(buffer)
  )

/**
 * A short, stable, non-reversible name for a secret: the first 8 bytes of its SHA-256, in hex. Safe to log and
 * to compare.
 *
 * @internal
 */
export const fingerprint = (secret: Redacted.Redacted<string>): Effect.Effect<string> =>
  Effect.map(sha256(Redacted.value(secret)), (digest) => Encoding.encodeHex(digest.slice(0, 8)))
