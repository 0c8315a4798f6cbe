/**
 * C4: the URL pages a user consented to during one call. A server that needs the same page again (a 2026-07-28
 * `input_required` round, or a 2025-11-25 `-32042` after a retry) is not shown it again: the handler's manual
 * controls (`urlPending`: retry now, or cancel) decide when to go on, or, without them, a growing pause.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as ElicitationHandler from "../ElicitationHandler.js"

/**
 * @internal
 */
export interface UrlConsent {
  /** The pages (by URL) the user consented to. */
  readonly accepted: Set<string>
  /** How often a consented page was asked for again (the pause without manual controls grows with it). */
  repeats: number
}

/** @internal */
export const make = (): UrlConsent => ({ accepted: new Set(), repeats: 0 })

/** The pause before the n-th retry (from 0) without manual controls: 1 s, doubling, at most 30 s. @internal */
export const pauseBefore = (repeats: number): Duration.Duration =>
  Duration.millis(Math.min(1000 * 2 ** Math.min(repeats, 5), 30_000))

/**
 * A page the user already consented to, asked for again: the handler's manual controls decide, else the request
 * is retried after a pause. The user is not asked again.
 *
 * @internal
 */
export const again = (
  handler: ElicitationHandler.Service,
  request: ElicitationHandler.UrlRequest,
  context: ElicitationHandler.ElicitationContext,
  consent: UrlConsent
): Effect.Effect<"retry" | "cancel"> => {
  const pending = handler.urlPending
  if (pending !== undefined) return pending(request, context)
  const pause = pauseBefore(consent.repeats)
  consent.repeats += 1
  return Effect.as(Effect.sleep(pause), "retry" as const)
}
