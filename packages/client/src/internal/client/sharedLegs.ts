/**
 * C3: identical cacheable reads made at once run as one request (the result cache coalesces them), but each caller
 * keeps what is its own: its deadline and its progress handler.
 *
 * The shared request runs without a deadline of its own and asks the server for progress; every caller waiting on
 * it is a member of its group, and each progress notification reaches every member's handler (and restarts the
 * timeout of a member whose timeout restarts on progress). Each member waits under its own deadline: a caller
 * whose deadline passes fails with `RequestTimeout` and stops waiting, while the others go on waiting; the result
 * cache interrupts (and so cancels) the shared request once no caller waits any more.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"

type ProgressHandler = (progress: McpSchema.Progress) => Effect.Effect<void>

/**
 * How one caller waits.
 *
 * @internal
 */
export interface Timing {
  /** Undefined: no deadline. */
  readonly timeoutMillis: number | undefined
  readonly resetOnProgress: boolean
  /** The ceiling when progress restarts the timeout (default ten times the timeout). */
  readonly maxTotalMillis: number | undefined
}

interface Member {
  readonly onProgress: ProgressHandler | undefined
  /** When this member last heard of the shared request (its start, then each progress notification). */
  lastActivity: number
}

/**
 * @internal
 */
export interface SharedLegs {
  /**
   * Runs `wait` (which may start the shared request or join one under way) as a member of the group `name`, under
   * the caller's own deadline. `wait` is given the progress handler the shared request must be sent with: it
   * hands each notification to every member of the group.
   */
  readonly join: <A, E>(
    name: string,
    method: string,
    timing: Timing,
    onProgress: ProgressHandler | undefined,
    wait: (fanOut: ProgressHandler) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E | McpError.RequestTimeout>
}

const fanOutTo = (members: Set<Member>): ProgressHandler => (progress) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.forEach([...members], (member) => {
      member.lastActivity = now
      const callback = member.onProgress
      // one caller's failing callback keeps neither the others' nor the connection from going on
      return callback === undefined ? Effect.void : Effect.catchCause(
        Effect.suspend(() => callback(progress)),
        (cause) => Effect.logWarning("a progress callback failed", cause)
      )
    }, { discard: true }))

/** `wait` under one member's deadline. */
const bounded = <A, E>(
  wait: Effect.Effect<A, E>,
  method: string,
  timing: Timing,
  member: Member
): Effect.Effect<A, E | McpError.RequestTimeout> => {
  const timeout = timing.timeoutMillis
  if (timeout === undefined) return wait
  const timedOut = () => new McpError.RequestTimeout({ method, timeoutMillis: timeout })
  if (!timing.resetOnProgress) {
    return Effect.timeoutOrElse(wait, { duration: Duration.millis(timeout), orElse: () => Effect.fail(timedOut()) })
  }
  const maxTotal = timing.maxTotalMillis ?? timeout * 10
  const watchdog = Effect.gen(function*() {
    const start = member.lastActivity
    while (true) {
      const now = yield* Clock.currentTimeMillis
      const deadline = Math.min(member.lastActivity + timeout, start + maxTotal)
      if (now >= deadline) return yield* Effect.fail(timedOut())
      yield* Effect.sleep(Duration.millis(deadline - now))
    }
  })
  return Effect.raceFirst(wait, watchdog)
}

/**
 * @internal
 */
export const make = (): SharedLegs => {
  /** The members of each group, by the shared request's identity (one group per identity at a time). */
  const groups = new Map<string, Set<Member>>()
  return {
    join: (name, method, timing, onProgress, wait) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const member: Member = { onProgress, lastActivity: now }
          let members = groups.get(name)
          if (members === undefined) {
            members = new Set()
            groups.set(name, members)
          }
          const group = members
          group.add(member)
          return restore(bounded(wait(fanOutTo(group)), method, timing, member)).pipe(
            Effect.ensuring(Effect.sync(() => {
              group.delete(member)
              if (group.size === 0 && groups.get(name) === group) groups.delete(name)
            }))
          )
        })
      )
  }
}
