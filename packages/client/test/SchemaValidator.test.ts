import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as SchemaValidator from "./utils/schemaValidator.js"

const MODERN = "2026-07-28"
const examplesDirectory = Path.join(SchemaValidator.specDirectory, MODERN, "examples")

const readJson = (path: string): unknown => JSON.parse(Fs.readFileSync(path, "utf8"))

/** Every 2026-07-28 example: the definition it is an instance of (its folder) and its content. */
const examples = Fs.readdirSync(examplesDirectory).flatMap((definition) =>
  Fs.readdirSync(Path.join(examplesDirectory, definition)).map((file) => ({
    definition,
    file,
    value: readJson(Path.join(examplesDirectory, definition, file))
  }))
)

const discoverExample = examples.find((example) => example.definition === "DiscoverRequest")?.value

const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {}
}

const assertOk = (result: SchemaValidator.ValidationResult, label: string) =>
  assert.deepStrictEqual(result, { ok: true }, label)

const assertNotOk = (result: SchemaValidator.ValidationResult, label: string, mentions?: string) => {
  assert.isFalse(result.ok, label)
  if (!result.ok && mentions !== undefined) assert.include(result.errors, mentions, label)
}

describe("SchemaValidator", () => {
  it("finds the schemas beside the repository and loads all five revisions", () => {
    for (const revision of SchemaValidator.REVISIONS) {
      assert.isTrue(Fs.existsSync(SchemaValidator.schemaPath(revision)), revision)
      assert.include(SchemaValidator.definitionNames(revision), "JSONRPCRequest", revision)
    }
    assert.strictEqual(SchemaValidator.definitionsKey("2025-06-18"), "definitions")
    assert.strictEqual(SchemaValidator.definitionsKey("2025-11-25"), "$defs")
  })

  it("maps client methods to the definitions each revision names", () => {
    const legacy = SchemaValidator.clientMethods("2025-06-18")
    assert.strictEqual(legacy.requests.get("initialize"), "InitializeRequest")
    assert.strictEqual(legacy.requests.get("tools/call"), "CallToolRequest")
    assert.strictEqual(legacy.notifications.get("notifications/initialized"), "InitializedNotification")
    assert.isFalse(legacy.requests.has("sampling/createMessage"), "a server request is not a client request")
    const modern = SchemaValidator.clientMethods(MODERN)
    assert.strictEqual(modern.requests.get("server/discover"), "DiscoverRequest")
    assert.strictEqual(modern.requests.get("subscriptions/listen"), "SubscriptionsListenRequest")
    assert.deepStrictEqual([...modern.notifications.entries()], [["notifications/cancelled", "CancelledNotification"]])
    assert.isFalse(modern.requests.has("initialize"))
    assert.isFalse(modern.requests.has("ping"))
  })

  it("validates every 2026-07-28 example against the definition it is filed under", () => {
    assert.isAbove(examples.length, 100)
    for (const { definition, file, value } of examples) {
      assertOk(SchemaValidator.validateDefinition(MODERN, definition, value), `${definition}/${file}`)
    }
  })

  it("accepts every 2026-07-28 example of a client message", () => {
    const { notifications, requests } = SchemaValidator.clientMethods(MODERN)
    const clientDefinitions = new Set([...requests.values(), ...notifications.values()])
    const clientExamples = examples.filter(({ definition }) => clientDefinitions.has(definition))
    // requests (tools/call, server/discover, lists, listen, ...) and the cancelled notification are all covered
    assert.isAtLeast(new Set(clientExamples.map(({ definition }) => definition)).size, 10)
    for (const { definition, file, value } of clientExamples) {
      assertOk(SchemaValidator.validateClientMessage(MODERN, value), `${definition}/${file}`)
    }
  })

  it("refuses 2026-07-28 examples of messages only a server sends", () => {
    for (const definition of ["ProgressNotification", "LoggingMessageNotification", "ToolListChangedNotification"]) {
      const found = examples.filter((example) => example.definition === definition)
      assert.isNotEmpty(found, definition)
      for (const { file, value } of found) {
        assertNotOk(SchemaValidator.validateClientMessage(MODERN, value), `${definition}/${file}`, "not a client")
      }
    }
  })

  it("requires the protocol version and client capabilities in a 2026-07-28 request's _meta, not clientInfo", () => {
    const call = (params: object) => ({ jsonrpc: "2.0", id: 1, method: "tools/call", params })
    assertOk(SchemaValidator.validateClientMessage(MODERN, call({ name: "echo", _meta: modernMeta })), "minimal")
    assertNotOk(SchemaValidator.validateClientMessage(MODERN, call({ name: "echo" })), "no _meta", "_meta")
    assertNotOk(
      SchemaValidator.validateClientMessage(
        MODERN,
        call({ name: "echo", _meta: { "io.modelcontextprotocol/clientCapabilities": {} } })
      ),
      "no protocolVersion",
      "io.modelcontextprotocol/protocolVersion"
    )
    assertNotOk(
      SchemaValidator.validateClientMessage(
        MODERN,
        call({ name: "echo", _meta: { "io.modelcontextprotocol/protocolVersion": MODERN } })
      ),
      "no clientCapabilities",
      "io.modelcontextprotocol/clientCapabilities"
    )
    assertNotOk(
      SchemaValidator.validateClientMessage(MODERN, {
        jsonrpc: "2.0",
        id: "probe",
        method: "server/discover",
        params: {}
      }),
      "discover without _meta",
      "_meta"
    )
    assertNotOk(
      SchemaValidator.validateClientMessage(MODERN, call({ _meta: modernMeta })),
      "no tool name",
      "name"
    )
  })

  it("refuses what a 2026-07-28 client never sends: the handshake, ping, responses, unknown methods", () => {
    const legacyInit = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "1" } }
    }
    assertNotOk(SchemaValidator.validateClientMessage(MODERN, legacyInit), "initialize", "initialize")
    assertNotOk(
      SchemaValidator.validateClientMessage(MODERN, { jsonrpc: "2.0", method: "notifications/initialized" }),
      "initialized"
    )
    assertNotOk(
      SchemaValidator.validateClientMessage(MODERN, {
        jsonrpc: "2.0",
        id: 2,
        method: "ping",
        params: { _meta: modernMeta }
      }),
      "ping"
    )
    assertNotOk(SchemaValidator.validateClientMessage(MODERN, { jsonrpc: "2.0", id: 3, result: {} }), "a response")
    assertNotOk(
      SchemaValidator.validateClientMessage(MODERN, { jsonrpc: "2.0", id: 4, method: "foo/bar", params: {} }),
      "unknown",
      "foo/bar"
    )
  })

  it("validates the legacy handshake and requests of every legacy revision", () => {
    for (const revision of SchemaValidator.REVISIONS.filter((r) => r !== MODERN)) {
      const init = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: revision, capabilities: {}, clientInfo: { name: "c", version: "1" } }
      }
      assertOk(SchemaValidator.validateClientMessage(revision, init), `${revision} initialize`)
      assertOk(
        SchemaValidator.validateClientMessage(revision, { jsonrpc: "2.0", method: "notifications/initialized" }),
        `${revision} initialized`
      )
      assertOk(
        SchemaValidator.validateClientMessage(revision, {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "echo", arguments: { message: "hi" }, _meta: { progressToken: 2 } }
        }),
        `${revision} tools/call`
      )
      assertOk(SchemaValidator.validateClientMessage(revision, { jsonrpc: "2.0", id: 3, method: "ping" }), "ping")
      assertOk(
        SchemaValidator.validateClientMessage(revision, {
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: 2, reason: "timeout" }
        }),
        `${revision} cancelled`
      )

      const { clientInfo: _, ...withoutClientInfo } = init.params
      assertNotOk(
        SchemaValidator.validateClientMessage(revision, { ...init, params: withoutClientInfo }),
        `${revision} initialize without clientInfo`,
        "clientInfo"
      )
      assertNotOk(
        SchemaValidator.validateClientMessage(revision, { jsonrpc: "2.0", id: 4, method: "tools/call", params: {} }),
        `${revision} tools/call without a name`,
        "name"
      )
      assertNotOk(
        SchemaValidator.validateClientMessage(revision, { jsonrpc: "1.0", id: 5, method: "ping" }),
        `${revision} wrong jsonrpc`
      )
      assertNotOk(
        SchemaValidator.validateClientMessage(revision, { jsonrpc: "2.0", id: 6, method: "server/discover" }),
        `${revision} server/discover`,
        "server/discover"
      )
    }
  })

  it("checks the requestId of a cancellation where the revision requires it", () => {
    const cancelled = { jsonrpc: "2.0", method: "notifications/cancelled", params: { reason: "x" } }
    assertNotOk(SchemaValidator.validateClientMessage("2024-11-05", cancelled), "2024-11-05", "requestId")
    assertNotOk(SchemaValidator.validateClientMessage(MODERN, cancelled), MODERN, "requestId")
    // 2025-11-25 made requestId optional (task cancellation goes through tasks/cancel)
    assertOk(SchemaValidator.validateClientMessage("2025-11-25", cancelled), "2025-11-25")
  })

  it("validates legacy responses to server requests, by the request's method when given", () => {
    const rootsResult = { jsonrpc: "2.0", id: 7, result: { roots: [{ uri: "file:///work", name: "work" }] } }
    assertOk(
      SchemaValidator.validateClientMessage("2025-06-18", rootsResult, { respondingTo: "roots/list" }),
      "roots/list"
    )
    assertNotOk(
      SchemaValidator.validateClientMessage("2025-06-18", { jsonrpc: "2.0", id: 7, result: {} }, {
        respondingTo: "roots/list"
      }),
      "roots/list without roots",
      "roots"
    )
    assertOk(
      SchemaValidator.validateClientMessage("2024-11-05", { jsonrpc: "2.0", id: 8, result: {} }, {
        respondingTo: "ping"
      }),
      "ping"
    )
    assertOk(
      SchemaValidator.validateClientMessage("2025-06-18", { jsonrpc: "2.0", id: 9, result: { action: "decline" } }, {
        respondingTo: "elicitation/create"
      }),
      "elicitation/create"
    )
    assertNotOk(
      SchemaValidator.validateClientMessage("2024-11-05", { jsonrpc: "2.0", id: 9, result: { action: "decline" } }, {
        respondingTo: "elicitation/create"
      }),
      "elicitation/create is not a 2024-11-05 server request",
      "elicitation/create"
    )
    const refusal = { jsonrpc: "2.0", id: 10, error: { code: -32601, message: "Method not found" } }
    for (const revision of SchemaValidator.REVISIONS.filter((r) => r !== MODERN)) {
      assertOk(SchemaValidator.validateClientMessage(revision, refusal), `${revision} error`)
      assertNotOk(
        SchemaValidator.validateClientMessage(revision, { ...refusal, error: { code: "x", message: "m" } }),
        `${revision} error with a string code`
      )
    }
  })

  it("refuses what is not a message, and revisions without a schema", () => {
    assertOk(SchemaValidator.validateClientMessage(MODERN, discoverExample), "the discover example itself")
    assertNotOk(SchemaValidator.validateClientMessage(MODERN, null), "null")
    assertNotOk(SchemaValidator.validateClientMessage(MODERN, [discoverExample]), "a batch")
    assertNotOk(SchemaValidator.validateClientMessage(MODERN, { jsonrpc: "2.0", id: 1 }), "no method, result or error")
    assertNotOk(SchemaValidator.validateClientMessage("2023-01-01", discoverExample), "unknown revision", "2023")
  })
})
