/**
 * Wire schemas of the OAuth documents and responses the client reads. Unknown members are ignored and a
 * `null` member counts as absent, as several authorization servers send them.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"

/** An optional member for which `null` counts as absent (Effect 3's `optionalWith(schema, { nullable: true })`). */
const opt = <S extends Schema.Top>(schema: S) =>
  Schema.optional(Schema.NullOr(schema)).pipe(Schema.decodeTo(Schema.optional(schema), {
    decode: SchemaGetter.transformOptional(Option.filter(Predicate.isNotNull)),
    encode: SchemaGetter.passthrough({ strict: false })
  }))
const Strings = Schema.Array(Schema.String)
const Seconds = Schema.Union([Schema.Number, Schema.NumberFromString])

/** RFC 9728 Protected Resource Metadata. @internal */
export const ProtectedResourceMetadata = Schema.Struct({
  resource: Schema.String,
  authorization_servers: opt(Strings),
  scopes_supported: opt(Strings),
  bearer_methods_supported: opt(Strings),
  dpop_signing_alg_values_supported: opt(Strings),
  resource_name: opt(Schema.String)
})

/** @internal */
export type ProtectedResourceMetadata = typeof ProtectedResourceMetadata.Type

/** RFC 8414 / OpenID Connect Discovery authorization server metadata (the members the client uses). @internal */
export const AuthorizationServerMetadata = Schema.Struct({
  issuer: Schema.String,
  authorization_endpoint: opt(Schema.String),
  token_endpoint: opt(Schema.String),
  registration_endpoint: opt(Schema.String),
  device_authorization_endpoint: opt(Schema.String),
  scopes_supported: opt(Strings),
  response_types_supported: opt(Strings),
  grant_types_supported: opt(Strings),
  token_endpoint_auth_methods_supported: opt(Strings),
  token_endpoint_auth_signing_alg_values_supported: opt(Strings),
  code_challenge_methods_supported: opt(Strings),
  client_id_metadata_document_supported: opt(Schema.Boolean),
  authorization_response_iss_parameter_supported: opt(Schema.Boolean),
  dpop_signing_alg_values_supported: opt(Strings)
})

/** @internal */
export type AuthorizationServerMetadata = typeof AuthorizationServerMetadata.Type

/** A successful token endpoint answer (RFC 6749 §5.1). @internal */
export const TokenResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.String,
  expires_in: opt(Seconds),
  refresh_token: opt(Schema.String),
  scope: opt(Schema.String),
  issued_token_type: opt(Schema.String)
})

/** @internal */
export type TokenResponse = typeof TokenResponse.Type

/** An error answer of the token, registration or device endpoint (RFC 6749 §5.2). @internal */
export const ErrorResponse = Schema.Struct({
  error: Schema.String,
  error_description: opt(Schema.String)
})

/** @internal */
export type ErrorResponse = typeof ErrorResponse.Type

const decodeErrorResponse = Schema.decodeUnknownOption(ErrorResponse)

/** The error object of an answer's JSON body, when it has one. @internal */
export const errorOf = (response: { readonly json: Option.Option<unknown> }): ErrorResponse | undefined =>
  Option.getOrUndefined(Option.flatMap(response.json, decodeErrorResponse))

/** RFC 7591 client information response. @internal */
export const RegistrationResponse = Schema.Struct({
  client_id: Schema.String,
  client_secret: opt(Schema.String),
  client_secret_expires_at: opt(Schema.Number),
  token_endpoint_auth_method: opt(Schema.String),
  redirect_uris: opt(Strings)
})

/** @internal */
export type RegistrationResponse = typeof RegistrationResponse.Type

/** RFC 8628 device authorization response. @internal */
export const DeviceAuthorizationResponse = Schema.Struct({
  device_code: Schema.String,
  user_code: Schema.String,
  verification_uri: Schema.String,
  verification_uri_complete: opt(Schema.String),
  expires_in: Seconds,
  interval: opt(Seconds)
})

/** @internal */
export type DeviceAuthorizationResponse = typeof DeviceAuthorizationResponse.Type
