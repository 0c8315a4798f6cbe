/**
 * How many requests of one HTTP transport are out at once.
 *
 * Each request (a POST that expects an answer) holds a place from the moment it is sent until its answer was read
 * (or dropped); a request that finds no place waits its turn, in order. Notifications and responses take no place.
 * Over HTTP/1.1 a request being answered occupies a connection, so the places bound the connections the transport
 * opens at once: a burst of 10 000 calls reuses a few hundred kept-alive connections instead of opening 10 000
 * sockets, which overflows the accept queue of a server (whose kernel then resets some of them: calls lost with
 * `ECONNRESET`).
 *
 * A bound must not deadlock a server that holds its answers until many calls are in flight (more than there are
 * places), nor a call that waits on another: when no place has been given back for `stall`, the bound is doubled,
 * and doubled again after each further `stall` without progress, until the queue is empty; then the bound is back
 * to `places`. A server that holds its answers thus sees a burst arrive in steps (256, 512, 1 024… requests after
 * 0, 1, 2… stall periods: 10 000 are all out after 6 periods, where a bound grown by `places` each period took 39)
 * rather than all at once, and nothing waits for ever.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"

/**
 * @internal
 */
export interface Admission {
  /**
   * Runs `send` (one request, whose answer is read in the current Scope) in a place, waiting for one when all are
   * taken. The place is given back when the Scope closes, once the answer was read or dropped.
   */
  readonly admit: <A, E, R>(send: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R | Scope.Scope>
}

/** A request waiting for a place. */
interface Waiter {
  admitted: boolean
  resume: (() => void) | undefined
}

/** The default number of places. */
export const defaultPlaces = 256

/**
 * How long a full window may make no progress before the queue is let through further. Long enough that a busy
 * client (a process starved of CPU, a long garbage collection) is not taken for a stalled server, short enough
 * that a server holding its answers until many calls are in flight gets them within seconds.
 */
export const stall = Duration.seconds(1)

/**
 * @internal
 */
export const make = (places: number): Admission => {
  let busy = 0
  let limit = places
  // given-back places so far: the watcher compares it to see progress
  let returned = 0
  let watching = false
  const queue: Array<Waiter | undefined> = []
  let head = 0

  const waitingCount = () => queue.length - head

  const next = (): Waiter | undefined => {
    while (head < queue.length) {
      const waiter = queue[head]
      queue[head++] = undefined
      if (head > 1024 && head * 2 > queue.length) {
        queue.splice(0, head)
        head = 0
      }
      if (waiter !== undefined && waiter.resume !== undefined) return waiter
    }
    return undefined
  }

  const letThrough = () => {
    while (busy < limit) {
      const waiter = next()
      if (waiter === undefined) break
      busy++
      waiter.admitted = true
      const resume = waiter.resume!
      waiter.resume = undefined
      resume()
    }
    if (waitingCount() === 0) limit = places
  }

  const giveBack = () => {
    busy--
    returned++
    letThrough()
  }

  /** Watches a non-empty queue: a window that made no progress for `stall` is doubled. */
  const watch: Effect.Effect<void> = Effect.suspend(() => {
    const seen = returned
    return Effect.flatMap(Effect.sleep(stall), () => {
      if (waitingCount() === 0) {
        watching = false
        return Effect.void
      }
      if (returned === seen) {
        limit *= 2
        letThrough()
      }
      return watch
    })
  })

  const wait = (waiter: Waiter): Effect.Effect<void> =>
    Effect.callback<void>((resume) => {
      waiter.resume = () => resume(Effect.void)
      queue.push(waiter)
      return Effect.sync(() => {
        // interrupted while waiting: the place it was given, if any, goes back
        waiter.resume = undefined
        if (waiter.admitted) {
          waiter.admitted = false
          giveBack()
        }
      })
    })

  const admit: Admission["admit"] = (send) =>
    Effect.flatMap(Effect.scope, (scope) => {
      const waiter: Waiter = { admitted: false, resume: undefined }
      // the place is given back when the Scope closes, however the request and its answer end (registered before
      // the place is taken: nothing can come between them)
      const release = Scope.addFinalizer(
        scope,
        Effect.sync(() => {
          if (waiter.admitted) {
            waiter.admitted = false
            giveBack()
          }
        })
      )
      return Effect.andThen(
        release,
        Effect.suspend(() => {
          if (busy < limit && waitingCount() === 0) {
            busy++
            waiter.admitted = true
            return send
          }
          const waiting = wait(waiter)
          if (watching) return Effect.andThen(waiting, send)
          watching = true
          return Effect.andThen(Effect.andThen(Effect.forkDetach(watch), waiting), send)
        })
      )
    })

  return { admit }
}
