/**
 * The table of requests waiting for their answers: ids, deadlines, and the one outcome of each.
 *
 * A request is registered before it is sent and leaves the table exactly once: answered (`settleResponse`,
 * `fail`, `complete`), timed out (its deadline), failed with every other (`failAll`, when the connection closes),
 * or given up by its caller (`abandon`). The caller waits with `await`, which is settled by whichever comes first.
 *
 * Deadlines: one timer fiber serves every request's timeout, so a call forks no timer of its own (four fibers per
 * call before, the largest cost of the request path in the benchmark's profile). The timer sleeps until the
 * earliest deadline, fails the requests whose deadline passed with `RequestTimeout`, and goes on until none is
 * left; a request due before the timer wakes restarts it. A request whose timeout restarts on progress has a
 * watchdog of its own instead.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import * as McpError from "../../McpError.js"
import * as DeadlineTimer from "../deadlineTimer.js"
import type * as McpSchema from "../../McpSchema.js"

/**
 * The outcome of a request as its caller receives it.
 *
 * @internal
 */
export type Reply = Effect.Effect<unknown, McpError.RequestError>

/**
 * A request waiting for its answer: settled once, by the answer, a failure or its deadline.
 *
 * @internal
 */
export interface Entry {
  readonly id: McpSchema.RequestId
  readonly method: string
  readonly onProgress: ((progress: McpSchema.Progress) => Effect.Effect<void>) | undefined
  /** When the request last heard from the server (its start, then each progress notification). */
  lastActivity: number
  /** The outcome, once settled. */
  outcome: Exit.Exit<unknown, McpError.RequestError> | undefined
  /** Resumes the caller waiting for the outcome, while one waits. */
  resume: ((outcome: Exit.Exit<unknown, McpError.RequestError>) => void) | undefined
  /** When the request times out, if a fixed deadline applies (not for one whose timeout restarts on progress). */
  readonly deadline: number | undefined
  readonly timeoutMillis: number
  /** The timeout restarts on progress: a watchdog of its own instead of the deadline. */
  readonly watched: boolean
  /** The longest a watched request may take in all (default ten times its timeout). */
  readonly maxTotalMillis: number | undefined
  /** The era probe, which a JSON-RPC error with a foreign or null id answers. */
  readonly probe: boolean
  /** The timer's handle on the request's deadline, while the timer watches it. */
  watch: DeadlineTimer.Watch<Entry> | undefined
}

/**
 * How a request waits.
 *
 * @internal
 */
export interface Timing {
  /** Undefined: no timeout at all. */
  readonly timeoutMillis: number | undefined
  /** Progress restarts the timeout, up to `maxTotalMillis` (default ten times the timeout). */
  readonly resetOnProgress: boolean
  readonly maxTotalMillis: number | undefined
  /** The era probe. */
  readonly probe?: boolean | undefined
}

/**
 * @internal
 */
export interface RequestTable {
  /** Registers a request under `id` (the next number when none), its deadline counted from `now`. */
  readonly register: (
    method: string,
    now: number,
    timing: Timing,
    onProgress: ((progress: McpSchema.Progress) => Effect.Effect<void>) | undefined,
    id?: McpSchema.RequestId | undefined
  ) => Entry
  /**
   * The pending era probe, if any: a server that cannot read its id (some accept only integers, or only strings)
   * answers it with a JSON-RPC error whose id is null or another one.
   */
  readonly pendingProbe: () => Entry | undefined
  /** The pending request with this id, if any. */
  readonly get: (id: McpSchema.RequestId | null) => Entry | undefined
  /** Settles the pending request (found with `get`) a response answers: its result, or its JSON-RPC error. */
  readonly settleResponse: (message: McpSchema.JsonRpcResponse, entry: Entry) => void
  /** Fails the pending request with this id, if any. */
  readonly fail: (id: McpSchema.RequestId, error: McpError.RequestError) => void
  /** Completes the pending request with this id with a value, if it is pending. */
  readonly succeed: (id: McpSchema.RequestId, value: unknown) => void
  /** Fails every pending request (the connection closed). */
  readonly failAll: (error: McpError.RequestError) => void
  /**
   * The outcome of a registered request, failed with `RequestTimeout` when its deadline passes first. Call it once,
   * when the wait starts; an interrupted wait leaves the entry behind for `abandon`.
   */
  readonly await: (entry: Entry) => Reply
  /**
   * `await` for a caller that is not a fiber (the promise client): `onOutcome` is told the outcome, at once when
   * it is already there. Not for a request whose timeout restarts on progress (its watchdog is a fiber). Gives back
   * the effect that makes the timer wake by the request's deadline when it must be run, for the caller to run.
   */
  readonly listen: (
    entry: Entry,
    onOutcome: (outcome: Exit.Exit<unknown, McpError.RequestError>) => void
  ) => Effect.Effect<void> | undefined
  /** A request answered: its entry leaves the table. */
  readonly completed: (entry: Entry) => void
  /** A request given up or failed: its entry leaves the table. True when it was still pending. */
  readonly abandon: (entry: Entry) => boolean
  /** How many requests are pending. */
  readonly size: () => number
}

const settle = (entry: Entry, outcome: Exit.Exit<unknown, McpError.RequestError>): void => {
  if (entry.outcome !== undefined) return
  entry.outcome = outcome
  const resume = entry.resume
  if (resume !== undefined) {
    entry.resume = undefined
    resume(outcome)
  }
}

const outcomeOf = (entry: Entry): Reply =>
  entry.outcome ?? Effect.callback<unknown, McpError.RequestError>((resume) => {
    entry.resume = resume
  })

const errorOf = (
  entry: Entry,
  error: { readonly code: number; readonly message: string; readonly data?: unknown }
): McpError.McpError =>
  new McpError.McpError({
    code: error.code,
    message: error.message,
    method: entry.method,
    ...(error.data !== undefined ? { data: error.data } : {})
  })

/**
 * A request table whose timer runs in the Scope.
 *
 * @internal
 */
export const make: Effect.Effect<RequestTable, never, Scope.Scope> = Effect.map(Effect.scope, (scope) => {
  const pending = new Map<McpSchema.RequestId, Entry>()
  let nextId = 1

  const timer = DeadlineTimer.make<Entry>(
    scope,
    (entry, now) => entry.deadline ?? now,
    (entry) =>
      Effect.sync(() =>
        settle(
          entry,
          Exit.fail(new McpError.RequestTimeout({ method: entry.method, timeoutMillis: entry.timeoutMillis }))
        )
      )
  )
  /**
   * The timer watches the request's deadline; gives back the effect that restarts the timer when the request is due
   * before it wakes (the only case the timer fiber is restarted), for the caller to run.
   */
  const watchDeadline = (entry: Entry, at: number): Effect.Effect<void> | undefined => {
    if (entry.watch === undefined || !entry.watch.linked) entry.watch = timer.watch(entry)
    return timer.wakesBy(at) ? undefined : timer.arm(at)
  }
  const unwatch = (entry: Entry): void => {
    if (entry.watch === undefined) return
    timer.forget(entry.watch)
    entry.watch = undefined
  }

  /** A request whose timeout restarts on progress: its own watchdog, up to its total budget. */
  const watched = (entry: Entry): Reply => {
    const timeout = entry.timeoutMillis
    const maxTotal = entry.maxTotalMillis ?? timeout * 10
    const watchdog = Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      entry.lastActivity = start
      while (true) {
        const now = yield* Clock.currentTimeMillis
        const deadline = Math.min(entry.lastActivity + timeout, start + maxTotal)
        if (now >= deadline) {
          return yield* Effect.fail(new McpError.RequestTimeout({ method: entry.method, timeoutMillis: timeout }))
        }
        yield* Effect.sleep(Duration.millis(deadline - now))
      }
    })
    return Effect.raceFirst(Effect.suspend(() => outcomeOf(entry)), watchdog)
  }

  const remove = (entry: Entry): boolean => {
    unwatch(entry)
    // (an id may be registered again, by a new request, once its entry left)
    if (pending.get(entry.id) !== entry) return false
    pending.delete(entry.id)
    return true
  }

  return {
    register: (method, now, timing, onProgress, id) => {
      const timeout = timing.timeoutMillis
      const entry: Entry = {
        id: id ?? nextId++,
        method,
        onProgress,
        lastActivity: 0,
        outcome: undefined,
        resume: undefined,
        deadline: timeout !== undefined && !timing.resetOnProgress ? now + timeout : undefined,
        timeoutMillis: timeout ?? 0,
        watched: timeout !== undefined && timing.resetOnProgress,
        maxTotalMillis: timing.maxTotalMillis,
        probe: timing.probe === true,
        watch: undefined
      }
      pending.set(entry.id, entry)
      return entry
    },
    get: (id) => id === null ? undefined : pending.get(id),
    pendingProbe: () => {
      for (const entry of pending.values()) if (entry.probe) return entry
      return undefined
    },
    settleResponse: (message, entry) => {
      remove(entry)
      settle(entry, "error" in message ? Exit.fail(errorOf(entry, message.error)) : Exit.succeed(message.result))
    },
    fail: (id, error) => {
      const entry = pending.get(id)
      if (entry === undefined) return
      remove(entry)
      settle(entry, Exit.fail(error))
    },
    succeed: (id, value) => {
      const entry = pending.get(id)
      if (entry === undefined) return
      remove(entry)
      settle(entry, Exit.succeed(value))
    },
    failAll: (error) => {
      const entries = [...pending.values()]
      pending.clear()
      for (const entry of entries) {
        unwatch(entry)
        settle(entry, Exit.fail(error))
      }
    },
    await: (entry) => {
      if (entry.deadline !== undefined) {
        const arm = watchDeadline(entry, entry.deadline)
        return arm === undefined ? outcomeOf(entry) : Effect.flatMap(arm, () => outcomeOf(entry))
      }
      return entry.watched ? watched(entry) : outcomeOf(entry)
    },
    listen: (entry, onOutcome) => {
      const arm = entry.deadline === undefined ? undefined : watchDeadline(entry, entry.deadline)
      if (entry.outcome !== undefined) onOutcome(entry.outcome)
      else entry.resume = onOutcome
      return arm
    },
    completed: (entry) => {
      remove(entry)
    },
    abandon: (entry) => {
      entry.resume = undefined
      return remove(entry)
    },
    size: () => pending.size
  }
})
