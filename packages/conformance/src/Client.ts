/**
 * The client the driver tests, assembled from the library's public layers only: `McpClient` over
 * `HttpTransport` (undici), with the OAuth service in the transport's context when a scenario needs
 * authorization, and the handlers a scenario declares.
 *
 * @since 0.0.0
 */
import * as AuthorizationHandler from "@conduit-mcp/client/AuthorizationHandler"
import * as ElicitationHandler from "@conduit-mcp/client/ElicitationHandler"
import * as HttpTransport from "@conduit-mcp/client/HttpTransport"
import * as McpClient from "@conduit-mcp/client/McpClient"
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as OAuth from "@conduit-mcp/client/OAuth"
import * as RootsProvider from "@conduit-mcp/client/RootsProvider"
import * as SamplingHandler from "@conduit-mcp/client/SamplingHandler"
import * as TokenStore from "@conduit-mcp/client/TokenStore"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * How one scenario wants the client built.
 *
 * @since 0.0.0
 * @category models
 */
export interface Setup {
  /** OAuth options; the OAuth service is only present when this is given. */
  readonly oauth?: OAuth.OAuthOptions | undefined
  /** Answers elicitations; declares the elicitation capability. */
  readonly elicitation?: ElicitationHandler.Service | undefined
  /** Declares the sampling capability (every request is refused). */
  readonly sampling?: boolean | undefined
  /** Declares the roots capability with one root. */
  readonly roots?: boolean | undefined
  /** Extra capabilities (extensions). */
  readonly capabilities?: McpSchema.ClientCapabilities | undefined
}

/**
 * The `clientInfo` the driver reports.
 *
 * @since 0.0.0
 * @category constants
 */
export const clientInfo = { name: "conduit-conformance-driver", version: "0.1.0" }

/**
 * The URL used as `client_id` where the authorization server supports client ID metadata documents; the
 * harness expects exactly this value and never fetches it.
 *
 * @since 0.0.0
 * @category constants
 */
export const clientMetadataUrl = "https://conformance-test.local/client-metadata.json"

/** Accepts every form with the values the library pre-filled from the schema's defaults. */
const acceptDefaults: ElicitationHandler.Service = {
  modes: ["form"],
  elicit: (request) =>
    Effect.as(
      Effect.logInfo(`elicitation (${request.mode}): accepting with the schema's defaults`),
      request.mode === "form" ? { action: "accept" } : { action: "decline" }
    )
}

/**
 * An elicitation handler that accepts every form with its defaults.
 *
 * @since 0.0.0
 * @category handlers
 */
export const acceptingElicitation = acceptDefaults

const refuseSampling: SamplingHandler.Service = {
  createMessage: () => Effect.fail(new SamplingHandler.SamplingRefused({ reason: "the driver does not sample" }))
}

/**
 * The client layer for a server URL at one protocol revision.
 *
 * @since 0.0.0
 * @category layers
 */
export const layer = (
  url: URL,
  protocolVersion: McpSchema.ProtocolVersion,
  setup: Setup
) => {
  // the fixtures close idle keep-alive sockets after 5 s; a starved client that reuses one a moment too late gets
  // ECONNRESET on a POST it cannot safely repeat, so idle sockets are given up after 1 s
  // (an undici Agent made with these options for the layer's lifetime, destroyed when it closes)
  const http = NodeHttpClient.layerUndiciNoDispatcher.pipe(
    Layer.provide(NodeHttpClient.layerDispatcherOptions({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 }))
  )
  const transport = setup.oauth === undefined
    ? HttpTransport.layer({ url }).pipe(Layer.provide(http))
    : HttpTransport.layer({ url, oauth: OAuth.OAuth }).pipe(
      Layer.provide(http),
      Layer.provide(OAuth.layer({
        protocolVersion,
        requestTimeout: "30 seconds",
        ...setup.oauth,
        authorization: AuthorizationHandler.AuthorizationHandler
      }).pipe(
        Layer.provide(AuthorizationHandler.layerHeadless()),
        Layer.provide(TokenStore.layerMemory),
        Layer.provide(http)
      ))
    )
  return McpClient.layer({
    ...(setup.elicitation === undefined ? {} : { elicitation: setup.elicitation }),
    ...(setup.sampling === true ? { sampling: refuseSampling } : {}),
    ...(setup.roots === true ? { roots: RootsProvider.fixed([{ uri: "file:///tmp/conformance", name: "conformance" }]) } : {}),
    clientInfo,
    protocolVersion,
    capabilities: setup.capabilities,
    // one scenario, one connection: a lost connection is a failure to report, not to paper over
    reconnect: false,
    healthCheckInterval: false,
    // the requirement runs start every scenario at once: on a loaded machine answers are slow, not missing
    // (the era probe, or a pinned 2025 revision's initialize, also carries the first authorization)
    probeTimeout: "100 seconds",
    initializeTimeout: "100 seconds",
    requestTimeout: "60 seconds"
  }).pipe(Layer.provide(transport))
}
