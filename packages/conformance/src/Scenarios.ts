/**
 * Every client scenario of the conformance suite (0.2.0-alpha.12), as a client set-up and a program over the
 * public `McpClient` API. Scenarios whose pass is a refusal say which failure counts as the right refusal.
 *
 * @since 0.0.0
 */
import * as McpClient from "@conduit-mcp/client/McpClient"
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as OAuth from "@conduit-mcp/client/OAuth"
import * as Skills from "@conduit-mcp/client/Skills"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as Client from "./Client.js"
import { acceptingElicitation, clientMetadataUrl } from "./Client.js"
import * as Environment from "./Environment.js"

/**
 * A failure the driver itself detected (a tool missing, an unexpected answer).
 *
 * @since 0.0.0
 * @category errors
 */
export class DriverFailure extends Data.TaggedError("DriverFailure")<{ readonly message: string }> {}

/**
 * @since 0.0.0
 * @category models
 */
export interface Scenario {
  readonly setup: (environment: Environment.Environment) => Effect.Effect<Client.Setup, Environment.InputError>
  readonly run: (environment: Environment.Environment) => Effect.Effect<void, unknown, McpClient.McpClient>
  /**
   * For scenarios whose correct outcome is that the client refuses and stops: describes the failure when it is
   * the expected refusal, `undefined` otherwise. A run that completes is then a failure.
   */
  readonly refusal?: ((error: unknown) => string | undefined) | undefined
}

const fail = (message: string) => Effect.fail(new DriverFailure({ message }))

const step = (message: string) => Effect.logInfo(`step: ${message}`)

const client = McpClient.McpClient

const listTools = Effect.gen(function*() {
  const mcp = yield* client
  yield* step("tools/list")
  const tools = yield* mcp.listTools()
  yield* step(`tools: ${tools.map((tool) => tool.name).join(", ") || "(none)"}`)
  return tools
})

const callTool = (name: string, args: Readonly<Record<string, unknown>> = {}) =>
  Effect.gen(function*() {
    const mcp = yield* client
    yield* step(`tools/call ${name}`)
    const result = yield* mcp.callTool({ name, arguments: args })
    const text = result.content.flatMap((block) => block.type === "text" && "text" in block ? [block.text] : [])
    yield* step(`tools/call ${name} answered${result.isError === true ? " (isError)" : ""}: ${text.join(" ")}`)
    return result
  })

const findTool = (tools: ReadonlyArray<McpSchema.Tool>, name: string) => {
  const tool = tools.find((candidate) => candidate.name === name)
  return tool === undefined ? fail(`the server lists no tool ${name}`) : Effect.succeed(tool)
}

const connect = Effect.gen(function*() {
  const mcp = yield* client
  const session = yield* mcp.session
  yield* step(
    `connected: ${session.era} era, protocol ${session.protocolVersion}, server ` +
      `${session.serverInfo?.name ?? "(unnamed)"}`
  )
  return session
})

/** List tools, then call the first one with no arguments: the flow every auth scenario drives. */
const listAndCallFirst = Effect.gen(function*() {
  yield* connect
  const tools = yield* listTools
  const first = tools[0]
  if (first === undefined) return yield* fail("the server lists no tools")
  yield* callTool(first.name)
})

// --- refusal classification

/** The chain of `cause`s of an error, outermost first. */
const causes = (error: unknown): Array<unknown> => {
  const chain: Array<unknown> = []
  let current: unknown = error
  while (typeof current === "object" && current !== null && chain.length < 10) {
    chain.push(current)
    current = "cause" in current ? current.cause : undefined
  }
  return chain
}

const tagOf = (value: unknown): string | undefined =>
  typeof value === "object" && value !== null && "_tag" in value && typeof value._tag === "string"
    ? value._tag
    : undefined

const reasonOf = (value: unknown): string | undefined =>
  typeof value === "object" && value !== null && "reason" in value && typeof value.reason === "string"
    ? value.reason
    : undefined

const messageOf = (value: unknown): string =>
  typeof value === "object" && value !== null && "message" in value && typeof value.message === "string"
    ? value.message
    : String(value)

/** A refusal classifier: the error (or one of its causes) is an `OAuthError` with one of the reasons. */
const oauthRefusal = (...reasons: ReadonlyArray<string>) => (error: unknown): string | undefined => {
  const found = causes(error).find((e) => tagOf(e) === "OAuthError" && reasons.includes(reasonOf(e) ?? ""))
  return found === undefined ? undefined : messageOf(found)
}

/** A refusal classifier: the skill failed verification for the given reason. */
const skillRefusal = (reason: Skills.VerificationFailure["reason"]) => (error: unknown): string | undefined => {
  const found = causes(error).find((e) => tagOf(e) === "SkillVerificationError" && reasonOf(e) === reason)
  return found === undefined ? undefined : messageOf(found)
}

// --- set-ups

const none = () => Effect.succeed<Client.Setup>({})

const dynamicRegistration = { applicationType: "native" } as const

/** Authorization code with dynamic registration (or a client ID metadata document where supported). */
const authorizationCode = () =>
  Effect.succeed<Client.Setup>({
    oauth: { clientName: "conduit conformance driver", clientMetadataUrl, dynamicRegistration }
  })

const withOAuth = (oauth: OAuth.OAuthOptions): Client.Setup => ({ oauth })

const secret = (value: string) => Redacted.make(value)

// --- the scenarios

const authFlow: Scenario = { setup: authorizationCode, run: () => listAndCallFirst }

const authRefusal = (...reasons: ReadonlyArray<string>): Scenario => ({
  setup: authorizationCode,
  run: () => listAndCallFirst,
  refusal: oauthRefusal(...reasons)
})

const skillVerification = (reason: Skills.VerificationFailure["reason"]): Scenario => ({
  setup: () => Effect.succeed({ capabilities: Skills.clientCapabilities }),
  run: () =>
    Effect.gen(function*() {
      yield* connect
      yield* step("skills/list")
      const skills = yield* Skills.list()
      const first = skills[0]
      if (first === undefined) return yield* fail("the server lists no skills")
      yield* step(`loading ${first.uri}`)
      const loaded = yield* Skills.load(first)
      yield* step(`loaded ${loaded.entry.uri}; reading its supporting files`)
      for (const file of loaded.entry.resources) {
        if (file.uri !== loaded.entry.uri) yield* Skills.readFile(loaded.entry, file.uri)
      }
    }),
  refusal: skillRefusal(reason)
})

/**
 * The scenario table.
 *
 * @since 0.0.0
 * @category scenarios
 */
export const scenarios: Readonly<Record<string, Scenario>> = {
  initialize: {
    setup: none,
    run: () => Effect.andThen(connect, listTools)
  },
  tools_call: {
    setup: none,
    run: () =>
      Effect.gen(function*() {
        yield* connect
        yield* findTool(yield* listTools, "add_numbers")
        yield* callTool("add_numbers", { a: 5, b: 3 })
      })
  },
  "elicitation-sep1034-client-defaults": {
    setup: () => Effect.succeed({ elicitation: acceptingElicitation }),
    run: () =>
      Effect.gen(function*() {
        yield* connect
        yield* findTool(yield* listTools, "test_client_elicitation_defaults")
        yield* callTool("test_client_elicitation_defaults")
      })
  },
  "sse-retry": {
    setup: none,
    run: () =>
      Effect.gen(function*() {
        yield* connect
        yield* findTool(yield* listTools, "test_reconnection")
        yield* callTool("test_reconnection")
      })
  },
  "request-metadata": {
    // all three optional capabilities, so that every capability-shape check runs
    setup: () => Effect.succeed({ elicitation: acceptingElicitation, sampling: true, roots: true }),
    run: () => Effect.asVoid(connect)
  },
  "sep-2322-client-request-state": {
    setup: () => Effect.succeed({ elicitation: acceptingElicitation }),
    run: () =>
      Effect.gen(function*() {
        yield* connect
        const tools = yield* listTools
        for (const name of ["test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state"]) {
          yield* findTool(tools, name)
          yield* callTool(name)
        }
        yield* findTool(tools, "test_mrtr_no_result_type")
        yield* callTool("test_mrtr_no_result_type")
      })
  },
  "http-standard-headers": {
    setup: none,
    run: () =>
      Effect.gen(function*() {
        const mcp = yield* client
        yield* connect
        const tools = yield* listTools
        for (const tool of tools) yield* callTool(tool.name)
        yield* step("resources/list")
        const resources = yield* mcp.listResources()
        for (const resource of resources) {
          yield* step(`resources/read ${resource.uri}`)
          yield* mcp.readResource({ uri: resource.uri })
        }
        yield* step("prompts/list")
        const prompts = yield* mcp.listPrompts()
        for (const prompt of prompts) {
          yield* step(`prompts/get ${prompt.name}`)
          yield* mcp.getPrompt({ name: prompt.name })
        }
      })
  },
  "http-custom-headers": {
    setup: none,
    run: (environment) =>
      Effect.gen(function*() {
        yield* connect
        yield* listTools
        const calls = environment.context.toolCalls
        if (!Array.isArray(calls)) return yield* fail("the scenario context has no toolCalls list")
        for (const call of calls) {
          if (typeof call !== "object" || call === null || typeof call.name !== "string") {
            return yield* fail("a toolCalls entry has no name")
          }
          const args = typeof call.arguments === "object" && call.arguments !== null ? call.arguments : {}
          yield* callTool(call.name, args)
        }
      })
  },
  "http-invalid-tool-headers": {
    setup: none,
    run: () =>
      Effect.gen(function*() {
        yield* connect
        const tools = yield* listTools
        const invalid = tools.filter((tool) => tool.name !== "valid_tool")
        if (invalid.length > 0) {
          return yield* fail(`the client kept tools with invalid headers: ${invalid.map((t) => t.name).join(", ")}`)
        }
        yield* findTool(tools, "valid_tool")
        yield* callTool("valid_tool", { region: "us-west-1" })
      })
  },
  "json-schema-ref-no-deref": {
    setup: none,
    run: () => Effect.andThen(connect, listTools)
  },
  "json-schema-2020-12-preservation": {
    setup: none,
    run: () =>
      Effect.gen(function*() {
        yield* connect
        const tools = yield* listTools
        const focal = yield* findTool(tools, "json_schema_2020_12_tool")
        yield* findTool(tools, "json_schema_echo")
        yield* callTool("json_schema_echo", { schema: focal.inputSchema })
      })
  },

  // --- authorization (the shared flow of section 5.1)
  "auth/metadata-default": authFlow,
  "auth/metadata-var1": authFlow,
  "auth/metadata-var2": authFlow,
  "auth/metadata-var3": authFlow,
  "auth/basic-cimd": authFlow,
  "auth/scope-from-www-authenticate": authFlow,
  "auth/scope-from-scopes-supported": authFlow,
  "auth/scope-omitted-when-undefined": authFlow,
  "auth/scope-step-up": authFlow,
  "auth/scope-retry-limit": authRefusal("StepUpLimit"),
  "auth/token-endpoint-auth-basic": authFlow,
  "auth/token-endpoint-auth-post": authFlow,
  "auth/token-endpoint-auth-none": authFlow,
  "auth/pre-registration": {
    setup: (environment) =>
      Effect.gen(function*() {
        const clientId = yield* Environment.field(environment, "client_id")
        const clientSecret = yield* Environment.field(environment, "client_secret")
        return withOAuth({
          clients: [{ clientId, clientSecret: secret(clientSecret), authMethod: "client_secret_basic" }],
          dynamicRegistration: false
        })
      }),
    run: () => listAndCallFirst
  },
  "auth/2025-03-26-oauth-metadata-backcompat": authFlow,
  "auth/2025-03-26-oauth-endpoint-fallback": authFlow,
  "auth/resource-mismatch": authRefusal("ResourceMismatch"),
  "auth/offline-access-scope": authFlow,
  "auth/offline-access-not-supported": authFlow,
  "auth/authorization-server-migration": authFlow,
  "auth/iss-supported": authFlow,
  "auth/iss-not-advertised": authFlow,
  "auth/iss-supported-missing": authRefusal("IssuerResponseMismatch"),
  "auth/iss-wrong-issuer": authRefusal("IssuerResponseMismatch"),
  "auth/iss-unexpected": authRefusal("IssuerResponseMismatch"),
  "auth/iss-normalized": authRefusal("IssuerResponseMismatch"),
  "auth/metadata-issuer-mismatch": authRefusal("IssuerMismatch"),
  "auth/client-credentials-basic": {
    setup: (environment) =>
      Effect.gen(function*() {
        const clientId = yield* Environment.field(environment, "client_id")
        const clientSecret = yield* Environment.field(environment, "client_secret")
        return withOAuth({
          grant: OAuth.Grant.ClientCredentials(),
          clients: [{ clientId, clientSecret: secret(clientSecret), authMethod: "client_secret_basic" }]
        })
      }),
    run: () => listAndCallFirst
  },
  "auth/client-credentials-jwt": {
    setup: (environment) =>
      Effect.gen(function*() {
        const clientId = yield* Environment.field(environment, "client_id")
        const pem = yield* Environment.field(environment, "private_key_pem")
        const alg = yield* Environment.field(environment, "signing_algorithm")
        if (alg !== "ES256" && alg !== "ES384" && alg !== "RS256" && alg !== "PS256") {
          return yield* new Environment.InputError({ message: `unsupported signing algorithm ${alg}` })
        }
        return withOAuth({
          grant: OAuth.Grant.ClientCredentials(),
          clients: [{ clientId, privateKey: { pem: secret(pem), alg }, authMethod: "private_key_jwt" }]
        })
      }),
    run: () => listAndCallFirst
  },
  "auth/enterprise-managed-authorization": {
    setup: (environment) =>
      Effect.gen(function*() {
        const clientId = yield* Environment.field(environment, "client_id")
        const clientSecret = yield* Environment.field(environment, "client_secret")
        const idpClientId = yield* Environment.field(environment, "idp_client_id")
        const idToken = yield* Environment.field(environment, "idp_id_token")
        const idpTokenEndpoint = yield* Environment.field(environment, "idp_token_endpoint")
        return withOAuth({
          grant: OAuth.Grant.IdentityAssertion({
            idpTokenEndpoint,
            idToken: Effect.succeed(secret(idToken)),
            idpClientId
          }),
          clients: [{ clientId, clientSecret: secret(clientSecret), authMethod: "client_secret_basic" }]
        })
      }),
    run: () => listAndCallFirst
  },
  "auth/dpop": authFlow,
  "auth/dpop-nonce": authFlow,
  "auth/wif-jwt-bearer": {
    setup: (environment) =>
      Effect.gen(function*() {
        const clientId = yield* Environment.field(environment, "client_id")
        const assertion = yield* Environment.field(environment, "valid_jwt")
        return withOAuth({
          grant: OAuth.Grant.JwtBearer({ assertion: Effect.succeed(secret(assertion)) }),
          clients: [{ clientId, authMethod: "none" }]
        })
      }),
    run: () => listAndCallFirst
  },

  // --- skills extension (SEP-2640)
  "sep-2640-client-no-prefetch": {
    setup: () => Effect.succeed({ capabilities: Skills.clientCapabilities }),
    run: () =>
      Effect.gen(function*() {
        yield* connect
        yield* step("skills/list")
        const skills = yield* Skills.list()
        yield* step(`skills: ${skills.map((skill) => skill.uri).join(", ") || "(none)"}`)
      })
  },
  "sep-2640-client-verify-digest": skillVerification("Digest"),
  "sep-2640-client-verify-size": skillVerification("Size"),
  "sep-2640-client-verify-frontmatter": skillVerification("Frontmatter")
}
