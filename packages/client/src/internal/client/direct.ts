/**
 * The calls a promise client makes without a fiber of their own (`McpPromiseClient`): the client's fast path with
 * the caller waiting on a callback. They attach to the client service they belong to in a weak map, kept out of
 * the public `McpClientService`; a service made elsewhere (a test's stub layer) has none, and the promise client
 * then runs every call as an effect.
 *
 * @internal
 */
import type * as Exit from "effect/Exit"
import type * as McpClient from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as FastPath from "./fastPath.js"

/** A call under way: `abort` gives it up (its caller no longer waits), as an interrupted fiber would. */
export interface Handle {
  readonly abort: () => void
}

/** Tells a call's outcome. */
export type OnExit<A> = (exit: Exit.Exit<A, McpError.McpClientError>) => void

/**
 * Each starts the call and gives back its handle, or undefined when the call cannot go this way now (the promise
 * client then runs the service's effect).
 *
 * @internal
 */
export interface DirectCalls {
  /** The client's transport. */
  readonly kind: McpError.TransportKind
  readonly callTool: (
    runtime: FastPath.DirectRuntime,
    params: McpClient.CallToolParams,
    options: McpClient.RequestOptions | undefined,
    onExit: OnExit<McpSchema.CallToolResult>
  ) => Handle | undefined
  readonly readResource: (
    runtime: FastPath.DirectRuntime,
    uri: string,
    options: McpClient.RequestOptions | undefined,
    onExit: OnExit<McpSchema.ReadResourceResult>
  ) => Handle | undefined
  readonly getPrompt: (
    runtime: FastPath.DirectRuntime,
    params: McpClient.GetPromptParams,
    options: McpClient.RequestOptions | undefined,
    onExit: OnExit<McpSchema.GetPromptResult>
  ) => Handle | undefined
}

const registry = new WeakMap<object, DirectCalls>()

/** Attaches the direct calls to a client service; answers the service. @internal */
export const attach = <S extends object>(service: S, calls: DirectCalls): S => {
  registry.set(service, calls)
  return service
}

/** @internal */
export const of = (service: object): DirectCalls | undefined => registry.get(service)
