/**
 * Reads streams in the background, as `Stream.runForEach` would, and lets another fiber catch up: `catchUp` handles,
 * at once and in order, everything the streams hold by the time it runs, and waits for nothing else.
 *
 * The shell needs it to print a background `listen`'s notifications in the order the server sent them relative to
 * a command's result. The client puts a notification in each reader's buffer as soon as it reads it, so when a
 * command has its result, every notification the server sent before that result waits in the listener's buffers;
 * but the listener's fiber is only scheduled to read them, and may run after the command printed its result. The
 * command runs `catchUp` before it prints (see `Output.BeforeWrite`), which handles those notifications first.
 *
 * How: each stream has at most one pull in flight, in a fiber of the listener's scope; `catchUp` and the
 * background loop settle finished pulls under one lock. `catchUp` replaces a pull still waiting by one started now
 * and run synchronously (`startImmediately`): a stream over a queue gives what the queue holds without waiting (a
 * fiber starts with a fresh operation budget, so such a short pull completes before it could yield). A waiting pull
 * is interrupted only where that loses nothing: a pull waiting on a queue takes nothing before it returns. A stream
 * built on its first pull (`Stream.unwrap`, as the client's `listen`) is not interrupted before it has given
 * something: interrupting it then would build it again.
 *
 * @since 1.0.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Pull from "effect/Pull"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"

/**
 * One stream to follow.
 *
 * @since 1.0.0
 * @category models
 */
export interface Source<A, E> {
  readonly stream: Stream.Stream<A, E>
  /**
   * Whether a pull may be interrupted before the stream gave anything: a stream over a queue (a client's
   * `subscribe`), not one built on its first pull.
   */
  readonly queueFromStart: boolean
  /** What is done with each element. */
  readonly handle: (element: A) => Effect.Effect<void>
  /** What a failure of this stream does; the stream then counts as ended. None: the failure ends `run` with it. */
  readonly recover?: ((error: E) => Effect.Effect<void, E>) | undefined
}

/**
 * @since 1.0.0
 * @category models
 */
export interface Follower<E> {
  /** Reads and handles until every stream ended; fails with the first failure not recovered. */
  readonly run: Effect.Effect<void, E>
  /** Handles, in the calling fiber, what the streams hold by now; never waits for more. */
  readonly catchUp: Effect.Effect<void>
}

interface State<A, E> {
  readonly source: Source<A, E>
  readonly pull: Effect.Effect<ReadonlyArray<A>, E | Cause.Done>
  pending: Fiber.Fiber<ReadonlyArray<A>, E | Cause.Done> | undefined
  interruptible: boolean
  ended: boolean
}

/**
 * Follows `sources`. Their handlers (and `recover`) run in the context of the fiber that made the follower,
 * whichever fiber runs them.
 *
 * @since 1.0.0
 * @category constructors
 */
export const make = <A, E>(
  sources: ReadonlyArray<Source<A, E>>
): Effect.Effect<Follower<E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const context = yield* Effect.context<never>()
    const lock = yield* Semaphore.make(1)
    const states: Array<State<A, E>> = []
    for (const source of sources) {
      const pull = yield* Stream.toPull(source.stream)
      states.push({ source, pull, pending: undefined, interruptible: source.queueFromStart, ended: false })
    }
    let failure: Cause.Cause<E> | undefined

    const settle = (state: State<A, E>, exit: Exit.Exit<ReadonlyArray<A>, E | Cause.Done>): Effect.Effect<void> => {
      if (Exit.isSuccess(exit)) {
        state.interruptible = true
        return Effect.provideContext(Effect.forEach(exit.value, state.source.handle, { discard: true }), context)
      }
      // a pull that catchUp interrupted took nothing
      if (Cause.hasInterruptsOnly(exit.cause)) return Effect.void
      state.ended = true
      if (Pull.isDoneCause(exit.cause)) return Effect.void
      const error = Cause.findErrorOption(exit.cause as Cause.Cause<E>)
      const recover = state.source.recover
      const recovered = recover !== undefined && Option.isSome(error)
        ? recover(error.value)
        : Effect.failCause(exit.cause as Cause.Cause<E>)
      return Effect.provideContext(recovered, context).pipe(
        Effect.catchCause((cause) => Effect.sync(() => failure ??= cause))
      )
    }

    // settles the stream's finished pull, then pulls until a pull has to wait; `now`: a waiting pull is replaced by
    // one that looks at what the stream holds now
    const advance = (state: State<A, E>, now: boolean): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (state.pending !== undefined) {
          const pending = state.pending
          let exit = pending.pollUnsafe()
          if (exit === undefined) {
            if (!now || !state.interruptible) return
            yield* Fiber.interrupt(pending)
            exit = yield* Fiber.await(pending)
          }
          state.pending = undefined
          yield* settle(state, exit)
        }
        while (!state.ended && failure === undefined) {
          const fiber = yield* Effect.forkIn(state.pull, scope, { startImmediately: true })
          const exit = fiber.pollUnsafe()
          if (exit === undefined) {
            state.pending = fiber
            return
          }
          // the follower's scope is closed: nothing more is read
          if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return
          yield* settle(state, exit)
        }
      })

    const step = (now: boolean) =>
      lock.withPermits(1)(Effect.forEach(states, (state) => advance(state, now), { discard: true }))

    const run: Effect.Effect<void, E> = Effect.gen(function*() {
      while (true) {
        yield* step(false)
        if (failure !== undefined) return yield* Effect.failCause(failure)
        const waiting = states.flatMap((state) => state.pending !== undefined ? [state.pending] : [])
        if (waiting.length === 0) return
        // wakes when a pull ends (catchUp interrupting a pull ends it too, and its next pull is then waited on)
        yield* Effect.raceAll(waiting.map((fiber) => Fiber.await(fiber)))
      }
    })

    return { run, catchUp: step(true) }
  })
