/**
 * K6, completions: an argument completion is asked for on every keystroke, so the client answers the same question
 * once. Identical requests made at once share one request to the server, and a result is kept for a short time
 * (`completionCacheTtl`, 5 s by default). The results are forgotten when a new session starts and when the
 * server's prompts or resources change.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"

type Outcome = Exit.Exit<McpSchema.CompleteResult, McpError.McpClientError>

interface Entry {
  /** When the result was received (undefined while the request runs). */
  at: number | undefined
  readonly outcome: Deferred.Deferred<McpSchema.CompleteResult, McpError.McpClientError>
}

/**
 * @internal
 */
export interface Completions {
  /** The result of `run` for these params: a recent one, the one being fetched, or a new one. */
  readonly complete: (
    params: Readonly<Record<string, unknown>>,
    run: Effect.Effect<McpSchema.CompleteResult, McpError.McpClientError>
  ) => Effect.Effect<McpSchema.CompleteResult, McpError.McpClientError>
  /** Forgets every result. */
  readonly forget: () => void
}

/**
 * @internal
 */
export const make = (ttlMillis: number): Completions => {
  const entries = new Map<string, Entry>()
  const maxEntries = 256

  const complete: Completions["complete"] = (params, run) => {
    if (ttlMillis <= 0) return run
    return Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const key = JSON.stringify(params)
      const found = entries.get(key)
      if (found !== undefined && (found.at === undefined || now - found.at < ttlMillis)) {
        // a request that ran for another caller, unless that caller gave up on it
        return Effect.flatMap(Deferred.await(found.outcome), Effect.succeed).pipe(
          Effect.catchCause(() => run)
        )
      }
      return Effect.flatMap(Deferred.make<McpSchema.CompleteResult, McpError.McpClientError>(), (outcome) => {
        const entry: Entry = { at: undefined, outcome }
        if (entries.size >= maxEntries) entries.clear()
        entries.set(key, entry)
        return Effect.onExit(run, (exit: Outcome) =>
          Effect.flatMap(Clock.currentTimeMillis, (at) => {
            // only a result is kept; a failure or an interruption leaves nothing behind
            if (Exit.isSuccess(exit)) entry.at = at
            else if (entries.get(key) === entry) entries.delete(key)
            return Deferred.done(outcome, exit)
          }))
      })
    })
  }

  return { complete, forget: () => entries.clear() }
}
