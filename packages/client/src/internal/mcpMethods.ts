/**
 * The request methods the client sends, one definition each: what every part of the client needs to know about a
 * method reads it from here (whether it may be sent twice, the capability it needs under `strict`, whether its
 * results may be cached, whether a modern server may answer it with `input_required` rounds, the field the
 * `Mcp-Name` header mirrors). Every definition has every fact (the compiler checks it): adding a method is its entry
 * here, its schema, the service member that sends it and its test. A client also knows the methods of extensions
 * it was asked to send by their definitions (`McpMethod`): its {@link Registry}.
 *
 * It imports only the wire model: the schemas of the results.
 *
 * @internal
 */

import * as Schema from "effect/Schema"
import type * as McpMethod from "../McpMethod.js"
import * as McpSchema from "../McpSchema.js"

/** A server capability a method needs under `strict`; `resources.subscribe` needs `resources.subscribe: true`. */
export type Capability = "tools" | "prompts" | "resources" | "resources.subscribe" | "completions" | "logging"

/** @internal */
export interface Method {
  /**
   * Only reads, so a server may receive it twice with no harm: the client re-issues it when it is lost with its
   * response stream, and the HTTP transport re-sends it when its connection closed before any answer. (A dropped
   * `subscriptions/listen` is opened again by the subscription itself, after a pause.)
   */
  readonly idempotent: boolean
  /** The capability a strict client needs the server to declare before sending it (`undefined`: none). */
  readonly capability: Capability | undefined
  /** Under `strict`, the page a server without the capability answers (a listing: empty); else it is refused. */
  readonly emptyPage: object | undefined
  /** Its complete results carry `ttlMs` and `cacheScope` (the 2026-07-28 caching page): the result cache keeps them. */
  readonly cacheable: boolean
  /** A 2026-07-28 server may answer it with `input_required` rounds. */
  readonly inputRounds: boolean
  /** The body field the `Mcp-Name` header mirrors (2026-07-28 HTTP). */
  readonly nameField: string | undefined
}

const plain: Method = {
  idempotent: false,
  capability: undefined,
  emptyPage: undefined,
  cacheable: false,
  inputRounds: false,
  nameField: undefined
}

const listing = (capability: Capability, emptyPage: object): Method => ({
  ...plain,
  idempotent: true,
  capability,
  emptyPage,
  cacheable: true
})

/**
 * A method of the specification: its facts, and the schema of its result (what the service's member that sends it
 * decodes; `Schema.Unknown` where the part that sends it decodes the result itself, as the task driver does with
 * schemas that load with it).
 *
 * @internal
 */
export interface Defined extends Method {
  readonly result: Schema.Codec<unknown, unknown>
}

const define = <const M extends Method, A, I>(facts: M, result: Schema.Codec<A, I>) => ({ ...facts, result })

/** @internal */
export const methods = {
  "initialize": define(plain, McpSchema.InitializeResult),
  "ping": define({ ...plain, idempotent: true }, McpSchema.EmptyResult),
  "server/discover": define({ ...plain, idempotent: true, cacheable: true }, McpSchema.DiscoverResult),
  "tools/list": define(listing("tools", { tools: [] }), McpSchema.ListToolsResult),
  "tools/call": define(
    { ...plain, capability: "tools", inputRounds: true, nameField: "name" },
    McpSchema.CallToolResult
  ),
  "prompts/list": define(listing("prompts", { prompts: [] }), McpSchema.ListPromptsResult),
  "prompts/get": define(
    { ...plain, idempotent: true, capability: "prompts", inputRounds: true, nameField: "name" },
    McpSchema.GetPromptResult
  ),
  "resources/list": define(listing("resources", { resources: [] }), McpSchema.ListResourcesResult),
  "resources/templates/list": define(
    listing("resources", { resourceTemplates: [] }),
    McpSchema.ListResourceTemplatesResult
  ),
  "resources/read": define(
    { ...plain, idempotent: true, capability: "resources", cacheable: true, inputRounds: true, nameField: "uri" },
    McpSchema.ReadResourceResult
  ),
  "resources/subscribe": define({ ...plain, capability: "resources.subscribe" }, McpSchema.EmptyResult),
  "resources/unsubscribe": define({ ...plain, capability: "resources.subscribe" }, McpSchema.EmptyResult),
  "completion/complete": define({ ...plain, idempotent: true, capability: "completions" }, McpSchema.CompleteResult),
  "logging/setLevel": define({ ...plain, capability: "logging" }, McpSchema.EmptyResult),
  "subscriptions/listen": define(plain, Schema.Unknown),
  "tasks/get": define({ ...plain, nameField: "taskId" }, Schema.Unknown),
  "tasks/update": define({ ...plain, nameField: "taskId" }, Schema.Unknown),
  "tasks/cancel": define({ ...plain, nameField: "taskId" }, Schema.Unknown),
  "tasks/result": define(plain, Schema.Unknown),
  "tasks/list": define(plain, Schema.Unknown)
} as const satisfies Readonly<Record<string, Defined>>

/** What a method of the specification answers, decoded by its entry's schema. @internal */
export type ResultOf<M extends MethodName> = (typeof methods)[M]["result"]["Type"]

/** @internal */
export type MethodName = keyof typeof methods

/** The definition of `method`, when the client knows it (an extension's method has none). @internal */
export const methodOf = (method: string): Method | undefined =>
  Object.hasOwn(methods, method) ? methods[method as MethodName] : undefined

/** The methods whose definitions say `fact`. @internal */
export const methodsWhere = (fact: (method: Method) => boolean): ReadonlySet<string> =>
  new Set(Object.entries(methods).flatMap(([name, method]) => fact(method) ? [name] : []))

/**
 * The methods one client knows: the specification's, and the extension methods it was asked to send by their
 * definitions. A definition that names one of the specification's methods leaves the client's facts for it in place.
 *
 * @internal
 */
export interface Registry {
  readonly of: (method: string) => Method | undefined
  /** Learns an extension method's facts (the last definition given for a name is the one in force). */
  readonly define: (definition: McpMethod.Any) => void
}

/** @internal */
export const registry = (): Registry => {
  let extensions: Map<string, Method> | undefined
  return {
    of: (method) => Object.hasOwn(methods, method) ? methods[method as MethodName] : extensions?.get(method),
    define: (definition) => {
      if (Object.hasOwn(methods, definition.method)) return
      const known = extensions?.get(definition.method)
      if (
        known !== undefined && known.idempotent === definition.idempotent &&
        known.inputRounds === definition.inputRounds && known.nameField === definition.nameField
      ) return
      ;(extensions ??= new Map()).set(definition.method, {
        ...plain,
        idempotent: definition.idempotent,
        inputRounds: definition.inputRounds,
        nameField: definition.nameField
      })
    }
  }
}

/** The specification's methods only, for what has no client (a transport used on its own). @internal */
export const builtIn: Registry = { of: methodOf, define: () => {} }
