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
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as McpClient from "../McpClient.js"
import * as McpError from "../McpError.js"
import type * as McpMethod from "../McpMethod.js"
import type * as McpPromiseClient from "../McpPromiseClient.js"
import * as Direct from "./client/direct.js"
import { LinkedList } from "./linkedList.js"
import * as ToolResultInternal from "./toolResult.js"
import type * as FastPath from "./client/fastPath.js"
import type * as Requester from "./client/requester.js"

/** What a promise rejects with: the typed error, else the defect, else the interruption. */
const rejection = <E>(cause: Cause.Cause<E>): unknown => Cause.squash(cause)

/**
 * What every fiber started in the context reads: `Effect.runForkWith` gives a new fiber the context, references
 * (clock, tracer, tracer flags, span annotations, metric attributes) included. A context never changes, so each
 * reference is looked up once (a call reads several).
 */
const viewOf = (context: Context.Context<never>): Requester.FiberView => {
  const values = new Map<unknown, unknown>()
  return {
    context,
    getRef: <A>(ref: Context.Reference<A>): A => {
      if (values.has(ref)) return values.get(ref) as A
      const value = Context.get(context, ref)
      values.set(ref, value)
      return value
    }
  }
}

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
export const fromRuntime = <R>(
  context: Context.Context<R | McpClient.McpClient>,
  dispose?: () => Promise<void>
): McpPromiseClient.McpPromiseClient<R | McpClient.McpClient> => {
  const client = Context.get(context, McpClient.McpClient)
  const direct = Direct.of(client)
  const runFork = Effect.runForkWith(context)
  // every fiber started for a caller, so that closing the client ends what still waits
  const fibers = new Set<Fiber.Fiber<unknown, unknown>>()
  let closed = false
  const start = <A, E>(effect: Effect.Effect<A, E, R | McpClient.McpClient>, onExit: (exit: Exit.Exit<A, E>) => void) => {
    const fiber = runFork(effect)
    fibers.add(fiber)
    fiber.addObserver((exit) => {
      fibers.delete(fiber)
      onExit(exit)
    })
    return fiber
  }
  const directRuntime: FastPath.DirectRuntime = {
    fiber: viewOf(context as Context.Context<never>),
    run: (effect, onExit) => {
      const fiber = start(effect, onExit)
      return () => fiber.interruptUnsafe()
    }
  }
  const closedError = () =>
    new McpError.TransportError({
      transport: direct?.kind ?? "in-process",
      reason: "Closed",
      detail: "the client was closed"
    })

  // every call still waiting: closing the client rejects it (a linked list: a Set of the calls' closures gives each
  // a hash code, a call into the VM per call; see linkedList.ts)
  const waiting = new LinkedList<() => void>()

  /** Settles a promise from a call: the fast path when it applies, else the effect. */
  const call = <A>(
    options: McpPromiseClient.PromiseRequestOptions | undefined,
    effect: (wire: McpClient.RequestOptions | undefined) => Effect.Effect<A, unknown, R | McpClient.McpClient>,
    fast?: (
      calls: Direct.DirectCalls,
      wire: McpClient.RequestOptions | undefined,
      onExit: Direct.OnExit<A>
    ) => Direct.Handle | undefined
  ): Promise<A> => {
    const wire = requestOptions(options)
    const signal = options?.signal
    return new Promise<A>((resolve, reject) => {
      if (closed) return reject(closedError())
      if (signal?.aborted === true) return reject(signal.reason)
      // how to give the call up once it started; an abort or a close while it starts (a progress handler, an
      // answer given inside the send) is carried out as soon as it has
      let stop: (() => void) | undefined
      let stopRequested = false
      let done = false
      const requestStop = () => {
        if (stop !== undefined) stop()
        else stopRequested = true
      }
      const onAbort = signal === undefined ? undefined : () => {
        reject(signal.reason)
        requestStop()
      }
      const giveUp = () => {
        reject(closedError())
        requestStop()
      }
      const node = waiting.add(giveUp)
      const onExit = (exit: Exit.Exit<A, unknown>) => {
        done = true
        if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort)
        waiting.remove(node)
        if (Exit.isSuccess(exit)) resolve(exit.value)
        else reject(rejection(exit.cause))
      }
      if (onAbort !== undefined) signal?.addEventListener("abort", onAbort, { once: true })
      const handle = direct === undefined ? undefined : fast?.(direct, wire, onExit)
      if (handle !== undefined) {
        stop = handle.abort
      } else {
        const fiber = start(effect(wire), onExit)
        stop = () => fiber.interruptUnsafe()
      }
      if (stopRequested && !done) stop()
    })
  }

  let closing: Promise<void> | undefined
  const close = (): Promise<void> => (closing ??= closeOnce())
  const closeOnce = async (): Promise<void> => {
    closed = true
    // what still waits is rejected and given up (cancelled on the wire), then the client's resources are released
    for (const node of waiting.nodes()) node.value()
    waiting.clear()
    await Promise.all(
      [...fibers].map((fiber) => new Promise<void>((resolve) => fiber.addObserver(() => resolve())))
    )
    if (dispose !== undefined) await dispose()
  }

  return {
    client,
    callTool: (params, options) => {
      const called = call(
        options,
        (wire) => client.callTool(params, wire),
        (calls, wire, onExit) => calls.callTool(directRuntime, params, wire, onExit)
      )
      return options?.isError === "fail"
        ? called.then((result) =>
          result.isError === true ? Promise.reject(ToolResultInternal.toolFailed(params.name, result)) : result
        )
        : called
    },
    readResource: (params, options) =>
      call(
        options,
        (wire) => client.readResource(params, wire),
        (calls, wire, onExit) => calls.readResource(directRuntime, params.uri, wire, onExit)
      ),
    getPrompt: (params, options) =>
      call(
        options,
        (wire) => client.getPrompt(params, wire),
        (calls, wire, onExit) => calls.getPrompt(directRuntime, params, wire, onExit)
      ),
    complete: (params, options) => call(options, (wire) => client.complete(params, wire)),
    listTools: (options) => call(options, (wire) => client.listTools(wire)),
    listResources: (options) => call(options, (wire) => client.listResources(wire)),
    listResourceTemplates: (options) => call(options, (wire) => client.listResourceTemplates(wire)),
    listPrompts: (options) => call(options, (wire) => client.listPrompts(wire)),
    ping: (options) => call(options, (wire) => client.ping(wire)),
    request: <M extends McpMethod.Any>(method: M, params?: McpMethod.Params<M>, options?: McpPromiseClient.PromiseRequestOptions) =>
      call(options, (wire) =>
        (client.request as (
          method: M,
          params: unknown,
          options: McpClient.RequestOptions | undefined
        ) => Effect.Effect<McpMethod.Result<M>, McpError.McpClientError>)(method, params, wire)),
    run: (use, options) => call(options, () => use(client)),
    close
  }
}

/** @internal */
export const make = <R, E>(
  layer: Layer.Layer<R | McpClient.McpClient, E>
): Promise<McpPromiseClient.McpPromiseClient<R | McpClient.McpClient>> => {
  const managed = ManagedRuntime.make(layer)
  return Effect.runPromiseExit(managed.contextEffect).then((exit) =>
    Exit.isSuccess(exit)
      ? fromRuntime<R>(exit.value, () => managed.dispose())
      : managed.dispose().then(() => Promise.reject(rejection(exit.cause)))
  )
}
