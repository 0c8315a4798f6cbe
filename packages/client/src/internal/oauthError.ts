/**
 * The error of the OAuth module. Kept apart from `OAuth.ts` so that `AuthorizationHandler.ts` can raise it
 * without an import cycle; `OAuth.ts` re-exports it.
 *
 * @internal
 */
import * as Schema from "effect/Schema"

/** @internal */
export const OAuthErrorReason = Schema.Literals([
  "InvalidOption",
  "InsecureUrl",
  "Discovery",
  "ResourceMismatch",
  "IssuerMismatch",
  "PkceUnsupported",
  "NoClient",
  "Registration",
  "AuthorizationDenied",
  "StateMismatch",
  "IssuerResponseMismatch",
  "InvalidCallback",
  "TokenRequest",
  "InvalidGrant",
  "Transient",
  "StepUpLimit",
  "Storage",
  "Cancelled",
  "Unsupported"
])

/**
 * An OAuth step failed. The message never contains a token, a code, a verifier or a secret: only endpoints,
 * issuers, the authorization server's `error` code and its `error_description`.
 *
 * @internal
 */
export class OAuthError extends Schema.TaggedError<OAuthError>("@conduit-mcp/client/OAuthError")("OAuthError", {
  reason: OAuthErrorReason,
  detail: Schema.String,
  /** The `error` code the authorization server answered with, when there was one. */
  error: Schema.optional(Schema.String),
  /** HTTP status of the failed exchange, when there was one. */
  status: Schema.optional(Schema.Number)
}) {
  override get message(): string {
    const code = this.error !== undefined ? ` [${this.error}]` : ""
    const status = this.status !== undefined ? ` (HTTP ${this.status})` : ""
    return `OAuth ${this.reason}${code}${status}: ${this.detail}`
  }
}

/** @internal */
export const oauthError = (
  reason: typeof OAuthErrorReason.Type,
  detail: string,
  extra?: { readonly error?: string | undefined; readonly status?: number | undefined }
): OAuthError =>
  new OAuthError({
    reason,
    detail,
    ...(extra?.error !== undefined ? { error: extra.error } : {}),
    ...(extra?.status !== undefined ? { status: extra.status } : {})
  })
