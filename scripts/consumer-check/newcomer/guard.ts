// What every case of this folder shares: a check that fails with a sentence, and a runner that prints the case's
// name with "ok" or with what regressed (and sets a failing exit code).
import { Cause, Data, Effect, Exit } from "effect"

/** A behaviour a newcomer relies on is gone: `what` says which. */
export class Regression extends Data.TaggedError("Regression")<{ readonly what: string }> {
  override get message(): string {
    return this.what
  }
}

export const expect = (ok: boolean, what: string): Effect.Effect<void, Regression> =>
  ok ? Effect.void : Effect.fail(new Regression({ what }))

export const expectEqual = (actual: unknown, expected: unknown, what: string): Effect.Effect<void, Regression> =>
  expect(
    JSON.stringify(actual) === JSON.stringify(expected),
    `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`
  )

export const run = (item: string, program: Effect.Effect<unknown, unknown>): Promise<void> =>
  Effect.runPromiseExit(program).then((exit) => {
    if (Exit.isSuccess(exit)) {
      process.stdout.write(`${item}: ok\n`)
    } else {
      process.stderr.write(`${item}: FAILED: ${Cause.pretty(exit.cause)}\n`)
      process.exitCode = 1
    }
  })
