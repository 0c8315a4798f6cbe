/**
 * Validates what the client puts on the wire against the official MCP JSON Schemas of each revision, kept in
 * `packages/client/test/spec/<revision>/schema.json` (vendored, see the README there). The first three
 * revisions are JSON Schema draft-07 (`definitions`), 2025-11-25 and 2026-07-28 are 2020-12 (`$defs`).
 *
 * Schemas are read and compiled on first use and cached for the life of the test worker.
 */
import { Ajv } from "ajv"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

/**
 * The revisions there is a schema for, oldest first.
 */
export const REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] as const

export type Revision = typeof REVISIONS[number]

export const isRevision = (value: string): value is Revision => (REVISIONS as ReadonlyArray<string>).includes(value)

export type ValidationResult = { readonly ok: true } | { readonly ok: false; readonly errors: string }

/** The repository root: this file is `<root>/packages/client/test/utils/schemaValidator.ts`. */
export const repositoryRoot = Url.fileURLToPath(new URL("../../../../", import.meta.url))

/** Where the schemas live: `test/spec` of the client package. */
export const specDirectory = Url.fileURLToPath(new URL("../spec/", import.meta.url))

export const schemaPath = (revision: Revision): string => Path.join(specDirectory, revision, "schema.json")

const DRAFT_07: ReadonlySet<Revision> = new Set(["2024-11-05", "2025-03-26", "2025-06-18"])

/** The definitions container of a revision's schema. */
export const definitionsKey = (revision: Revision): "definitions" | "$defs" =>
  DRAFT_07.has(revision) ? "definitions" : "$defs"

type Json = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

interface Compiled {
  readonly ajv: Ajv
  readonly definitions: Json
  readonly validators: Map<string, (value: unknown) => ValidationResult>
  /** Client request method → definition name (members of `ClientRequest`). */
  readonly requests: ReadonlyMap<string, string>
  /** Client notification method → definition name (members of `ClientNotification`). */
  readonly notifications: ReadonlyMap<string, string>
  /** Server request method → definition name (members of `ServerRequest`; none in 2026-07-28). */
  readonly serverRequests: ReadonlyMap<string, string>
}

const cache = new Map<Revision, Compiled | string>()

const refName = (ref: unknown): string | undefined =>
  typeof ref === "string" ? ref.slice(ref.lastIndexOf("/") + 1) : undefined

const methodOf = (definition: unknown): string | undefined => {
  if (!isObject(definition) || !isObject(definition.properties)) return undefined
  const method = definition.properties.method
  return isObject(method) && typeof method.const === "string" ? method.const : undefined
}

/**
 * Maps each method of a union definition (`ClientRequest`, `ClientNotification`, `ServerRequest`) to the name of the
 * member definition with that `method` const. A "union" with a single member is written inline by the schema
 * generator (2026-07-28 `ClientNotification` is the cancelled notification itself): the named definition with the
 * same `method` const is preferred then.
 */
const membersByMethod = (definitions: Json, union: string): Map<string, string> => {
  const result = new Map<string, string>()
  const definition = definitions[union]
  if (!isObject(definition)) return result
  const names = Array.isArray(definition.anyOf)
    ? definition.anyOf.flatMap((member) => {
      const name = isObject(member) ? refName(member.$ref) : undefined
      return name === undefined ? [] : [name]
    })
    : [union]
  for (const name of names) {
    const method = methodOf(definitions[name])
    if (method === undefined) continue
    const named = name === union
      ? Object.keys(definitions).find((other) => other !== union && methodOf(definitions[other]) === method)
      : undefined
    result.set(method, named ?? name)
  }
  return result
}

const load = (revision: Revision): Compiled | string => {
  const cached = cache.get(revision)
  if (cached !== undefined) return cached
  let compiled: Compiled | string
  try {
    const schema: unknown = JSON.parse(Fs.readFileSync(schemaPath(revision), "utf8"))
    const definitions = isObject(schema) ? schema[definitionsKey(revision)] : undefined
    if (!isObject(schema) || !isObject(definitions)) {
      compiled = `${schemaPath(revision)} has no ${definitionsKey(revision)}`
    } else {
      const options = { strict: false, allErrors: true, validateFormats: true } as const
      const ajv = DRAFT_07.has(revision) ? new Ajv(options) : new Ajv2020(options)
      addFormats.default(ajv)
      ajv.addSchema(schema, revision)
      compiled = {
        ajv,
        definitions,
        validators: new Map(),
        requests: membersByMethod(definitions, "ClientRequest"),
        notifications: membersByMethod(definitions, "ClientNotification"),
        serverRequests: membersByMethod(definitions, "ServerRequest")
      }
    }
  } catch (error) {
    compiled = `cannot load ${schemaPath(revision)}: ${String(error)}`
  }
  cache.set(revision, compiled)
  return compiled
}

const validatorFor = (compiled: Compiled, revision: Revision, name: string) => {
  const cached = compiled.validators.get(name)
  if (cached !== undefined) return cached
  const validate = compiled.ajv.getSchema(`${revision}#/${definitionsKey(revision)}/${name}`)
  const validator = (value: unknown): ValidationResult => {
    if (validate === undefined) return { ok: false, errors: `${revision} has no definition ${name}` }
    if (validate(value)) return { ok: true }
    const errors = (validate.errors ?? [])
      .map((error) => `${name}${error.instancePath} ${error.message ?? error.keyword}`)
      .join("; ")
    return { ok: false, errors }
  }
  compiled.validators.set(name, validator)
  return validator
}

const fail = (errors: string): ValidationResult => ({ ok: false, errors })

const all = (results: ReadonlyArray<ValidationResult>): ValidationResult => {
  const errors = results.flatMap((result) => result.ok ? [] : [result.errors])
  return errors.length === 0 ? { ok: true } : fail(errors.join("; "))
}

/**
 * The names of every definition of a revision's schema.
 */
export const definitionNames = (revision: Revision): ReadonlyArray<string> => {
  const compiled = load(revision)
  return typeof compiled === "string" ? [] : Object.keys(compiled.definitions)
}

/**
 * Validates a value against one named definition (`CallToolRequest`, `DiscoverResult`, ...) of a revision.
 */
export const validateDefinition = (revision: Revision, definition: string, value: unknown): ValidationResult => {
  const compiled = load(revision)
  if (typeof compiled === "string") return fail(compiled)
  if (!(definition in compiled.definitions)) return fail(`${revision} has no definition ${definition}`)
  return validatorFor(compiled, revision, definition)(value)
}

/**
 * The methods a client may send in a revision: requests (`ClientRequest`) and notifications (`ClientNotification`),
 * each with the definition that describes it.
 */
export const clientMethods = (revision: Revision): {
  readonly requests: ReadonlyMap<string, string>
  readonly notifications: ReadonlyMap<string, string>
} => {
  const compiled = load(revision)
  return typeof compiled === "string"
    ? { requests: new Map(), notifications: new Map() }
    : { requests: compiled.requests, notifications: compiled.notifications }
}

/** The result definition that answers each server-to-client request of the legacy revisions. */
const RESULT_OF_SERVER_REQUEST: Readonly<Record<string, string>> = {
  "ping": "EmptyResult",
  "roots/list": "ListRootsResult",
  "sampling/createMessage": "CreateMessageResult",
  "elicitation/create": "ElicitResult",
  "tasks/get": "GetTaskResult",
  "tasks/result": "GetTaskPayloadResult",
  "tasks/list": "ListTasksResult",
  "tasks/cancel": "CancelTaskResult"
}

const versionFromInput = (revision: string): Revision | string =>
  isRevision(revision) ? revision : `no schema for revision ${revision}`

/**
 * Validates one message the CLIENT sends, in the given revision:
 *
 * - a request by its method, against the `ClientRequest` member with that `method` const (and the JSON-RPC request
 *   envelope, which the 2024-11-05 and 2025-03-26 member definitions leave out);
 * - a notification likewise, against the `ClientNotification` members;
 * - a response to a server request: an error against `JSONRPCError` (draft-07 revisions) or `JSONRPCErrorResponse`;
 *   a success against `JSONRPCResponse` or `JSONRPCResultResponse`, its `result` against the result type of
 *   `respondingTo` (the server request's method) when given, else against `ClientResult`. The 2026-07-28 client
 *   sends no responses (servers send no requests), so any response is refused there.
 *
 * A method the revision does not let a client send is not ok.
 */
export const validateClientMessage = (
  revision: Revision | string,
  message: unknown,
  options?: { readonly respondingTo?: string | undefined }
): ValidationResult => {
  const version = versionFromInput(revision)
  if (!isRevision(version)) return fail(version)
  const compiled = load(version)
  if (typeof compiled === "string") return fail(compiled)
  if (!isObject(message)) return fail("not a JSON object")
  const check = (name: string) => validatorFor(compiled, version, name)(message)

  if ("method" in message) {
    const method = message.method
    if (typeof method !== "string") return fail("method is not a string")
    if ("id" in message) {
      const definition = compiled.requests.get(method)
      return definition === undefined
        ? fail(`${method} is not a client request in ${version}`)
        : all([check("JSONRPCRequest"), check(definition)])
    }
    const definition = compiled.notifications.get(method)
    return definition === undefined
      ? fail(`${method} is not a client notification in ${version}`)
      : all([check("JSONRPCNotification"), check(definition)])
  }

  if ("result" in message || "error" in message) {
    if (compiled.serverRequests.size === 0) {
      return fail(`a ${version} client sends no responses: the server sends no requests in this revision`)
    }
    if ("error" in message) {
      return check("JSONRPCError" in compiled.definitions ? "JSONRPCError" : "JSONRPCErrorResponse")
    }
    const envelope = check(
      "JSONRPCResultResponse" in compiled.definitions ? "JSONRPCResultResponse" : "JSONRPCResponse"
    )
    const respondingTo = options?.respondingTo
    if (respondingTo === undefined) {
      return all([envelope, validatorFor(compiled, version, "ClientResult")(message.result)])
    }
    const resultDefinition = RESULT_OF_SERVER_REQUEST[respondingTo]
    if (!compiled.serverRequests.has(respondingTo) || resultDefinition === undefined) {
      return fail(`${respondingTo} is not a server request in ${version}`)
    }
    return all([envelope, validatorFor(compiled, version, resultDefinition)(message.result)])
  }

  return fail("neither a request, a notification nor a response")
}
