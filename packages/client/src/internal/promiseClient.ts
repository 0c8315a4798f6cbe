/**
 * The promise client: each call a promise, settled from the client's fast path by callback (no fiber per call),
 * or from the service's effect run in the runtime when the fast path does not apply.
 *
 * Why (packages/bench/README.md, "The promise client"): a fiber started per call from a promise (`runPromise`)
 * costs ~6.4 µs in Effect itself, about as much again as the rest of a call over stdio.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Runtime from "effect/Runtime"
import type * as McpPromiseClient from "../McpPromiseClient.js"
import * as McpClient from "../McpClient.js"
import * as Direct from "./client/direct.js"
import type * as FastPath from "./client/fastPath.js"

/** What a promise rejects with: the typed error, else the defect, else the interruption. */
const rejection = <E>(cause: Cause.Cause<E>): unknown => Cause.squash(cause)

/** The client's request options, from a promise caller's. */
const requestOptions = (
  options: McpPromiseClient.PromiseRequestOptions | undefined
): McpClient.RequestOptions | undefined => {
  if (options === undefined) return undefined
  const { maxTotalTimeout, meta, onProgress, resetTimeoutOnProgress, timeout } = options
  if (
    timeout === undefined && resetTimeoutOnProgress === undefined && maxTotalTimeout === undefined &&
    onProgress === undefined && meta === undefined
  ) {
    return undefined
  }
  return {
    timeout,
    resetTimeoutOnProgress,
    maxTotalTimeout,
    meta,
    onProgress: onProgress === undefined ? undefined : (progress) => Effect.sync(() => onProgress(progress))
  }
}

/** @internal */
export const fromRuntime = (
  runtime: Runtime.Runtime<McpClient.McpClient>,
  close: () => Promise<void> = () => Promise.resolve()
): McpPromiseClient.McpPromiseClient => {
  const client = Context.get(runtime.context, McpClient.McpClient)
  const direct = Direct.of(client)
  const runFork = Runtime.runFork(runtime)
  // a fiber of the runtime, only read: its fiber refs are those of every fiber the runtime starts
  const view: Fiber.RuntimeFiber<unknown, unknown> = Runtime.runSync(runtime)(
    Effect.withFiberRuntime((fiber) => Effect.succeed(fiber))
  )
  const directRuntime: FastPath.DirectRuntime = {
    fiber: view,
    run: (effect, onExit) => runFork(effect).addObserver(onExit)
  }

  /** Settles a promise from a call: the fast path when it applies, else the effect. */
  const call = <A>(
    signal: AbortSignal | undefined,
    start: ((onExit: Direct.OnExit<A>) => Direct.Handle | undefined) | undefined,
    effect: () => Effect.Effect<A, unknown>
  ): Promise<A> =>
    new Promise<A>((resolve, reject) => {
      if (signal?.aborted === true) return reject(signal.reason)
      let onAbort: (() => void) | undefined
      let done = false
      const onExit = (exit: Exit.Exit<A, unknown>) => {
        done = true
        if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort)
        if (Exit.isSuccess(exit)) resolve(exit.value)
        else reject(rejection(exit.cause))
      }
      const handle = start?.(onExit)
      if (handle !== undefined) {
        if (signal !== undefined) {
          onAbort = () => {
            reject(signal.reason)
            handle.abort()
          }
        }
      } else {
        const fiber = runFork(effect())
        fiber.addObserver(onExit)
        if (signal !== undefined) {
          onAbort = () => {
            reject(signal.reason)
            fiber.unsafeInterruptAsFork(FiberId.none)
          }
        }
      }
      if (onAbort !== undefined && !done) signal?.addEventListener("abort", onAbort, { once: true })
    })

  return {
    client,
    callTool: (params, options) => {
      const wire = requestOptions(options)
      return call(
        options?.signal,
        direct === undefined ? undefined : (onExit) => direct.callTool(directRuntime, params, wire, onExit),
        () => client.callTool(params, wire)
      )
    },
    readResource: (uri, options) => {
      const wire = requestOptions(options)
      return call(
        options?.signal,
        direct === undefined ? undefined : (onExit) => direct.readResource(directRuntime, uri, wire, onExit),
        () => client.readResource(uri, wire)
      )
    },
    getPrompt: (params, options) => {
      const wire = requestOptions(options)
      return call(
        options?.signal,
        direct === undefined ? undefined : (onExit) => direct.getPrompt(directRuntime, params, wire, onExit),
        () => client.getPrompt(params, wire)
      )
    },
    complete: (params, options) =>
      call(options?.signal, undefined, () => client.complete(params, requestOptions(options))),
    listTools: (options) => call(options?.signal, undefined, () => client.listTools(requestOptions(options))),
    listResources: (options) => call(options?.signal, undefined, () => client.listResources(requestOptions(options))),
    listResourceTemplates: (options) =>
      call(options?.signal, undefined, () => client.listResourceTemplates(requestOptions(options))),
    listPrompts: (options) => call(options?.signal, undefined, () => client.listPrompts(requestOptions(options))),
    ping: (options) => call(options?.signal, undefined, () => client.ping(requestOptions(options))),
    run: (use, options) => call(options?.signal, undefined, () => use(client)),
    close
  }
}

/** @internal */
export const make = <E>(layer: Layer.Layer<McpClient.McpClient, E>): Promise<McpPromiseClient.McpPromiseClient> => {
  const managed = ManagedRuntime.make(layer)
  return Effect.runPromiseExit(managed.runtimeEffect).then((exit) =>
    Exit.isSuccess(exit)
      ? fromRuntime(exit.value, () => managed.dispose())
      : managed.dispose().then(() => Promise.reject(rejection(exit.cause)))
  )
}
