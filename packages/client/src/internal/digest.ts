/**
 * SHA-256 through WebCrypto (`globalThis.crypto`, so the library stays platform-agnostic), the fingerprint of a
 * secret built on it, and a digest keyed for this process alone. A leaf of its own: the task store and the
 * transports' credential cache keys need only these, not the OAuth signing helpers of `oauthCrypto.ts`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Hex from "effect/encoding/Hex"
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
  Effect.map(sha256(Redacted.value(secret)), (digest) => Hex.encode(digest.slice(0, 8)))

const makeProcessKey = () => globalThis.crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign"])
let processKey: ReturnType<typeof makeProcessKey> | undefined

/**
 * A digest of `input` keyed by a secret this process makes at random on first use and never exports
 * (HMAC-SHA-256, in hex): the same input has the same digest throughout the process, and one found elsewhere (a
 * result cache shared through Redis or a directory) cannot be matched by hashing guesses, nor compared with
 * another process's.
 *
 * @internal
 */
export const processDigest = (input: string): Effect.Effect<string> =>
  Effect.promise(async () => {
    processKey ??= makeProcessKey()
    const mac = await globalThis.crypto.subtle.sign("HMAC", await processKey, utf8.encode(input))
    return Hex.encode(new Uint8Array(mac))
  })
