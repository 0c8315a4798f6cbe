/**
 * The identity of a stdio server's child process, for the result cache: two connections whose children differ in
 * their command, arguments, environment or working directory may get different answers to the same request (an
 * `ACCOUNT_TOKEN` in the environment is a credential), so their private cached results are kept apart.
 *
 * The identity is taken from the command the spawner starts, as it starts it: its variables, and the parent's
 * under them when the environment extends the parent's (`envPolicy: "inherit"`), read at that moment; its working
 * directory, and the parent's (which a relative one, and a command found through `PATH` or by a relative path,
 * depend on). It is hashed only when the cache asks for it, with a key of this process's own
 * (`digest.processDigest`): the partition name in the store reveals nothing of the environment and cannot be matched
 * by hashing guesses, and no other process shares it.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as ChildProcess from "effect/process/ChildProcess"
import * as Redacted from "effect/Redacted"
import { processDigest } from "./digest.js"

interface Parent {
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly cwd?: (() => string) | undefined
}

/** The running process, where there is one (the spawner's environment and working directory default to it). */
const parentProcess = (): Parent | undefined => (globalThis as { readonly process?: Parent | undefined }).process

const parentDirectory = (parent: Parent | undefined): string | null => {
  try {
    return parent?.cwd?.() ?? null
  } catch {
    // (the directory was removed: the child would start without one anyway)
    return null
  }
}

/**
 * What makes the child of `command` as text: command, arguments, working directories, and the environment it gets,
 * sorted by name. It holds the environment's values: it is only ever hashed.
 *
 * @internal
 */
export const identityText = (command: ChildProcess.StandardCommand): string => {
  const parent = parentProcess()
  const { cwd, env, extendEnv } = command.options
  const environment = new Map<string, string>()
  // (as the spawner builds it: no `env` is the parent's environment; else `env`, over the parent's with `extendEnv`)
  if (env === undefined || extendEnv === true) {
    for (const [name, value] of Object.entries(parent?.env ?? {})) {
      if (value !== undefined) environment.set(name, value)
    }
  }
  for (const [name, value] of Object.entries(env ?? {})) {
    if (value === undefined) environment.delete(name)
    else environment.set(name, Redacted.isRedacted(value) ? Redacted.value(value) : value)
  }
  const sorted = [...environment].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
  return JSON.stringify([
    "stdio",
    command.command,
    command.args.map((arg) => Redacted.isRedacted(arg) ? Redacted.value(arg) : arg),
    [parentDirectory(parent), cwd ?? null],
    sorted
  ])
}

/**
 * The partition of private cached results of the child `command` starts, computed when first asked for: its
 * identity, read now, under this process's key.
 *
 * @internal
 */
export const partitionOf = (command: ChildProcess.Command): Effect.Effect<Effect.Effect<string>> => {
  if (command._tag !== "StandardCommand") {
    // (the transport starts one command; a pipeline has no single identity: it is given a partition of its own)
    return Effect.succeed(Effect.succeed(`stdio-own:${globalThis.crypto.randomUUID()}`))
  }
  const text = identityText(command)
  return Effect.cached(Effect.map(processDigest(text), (digest) => `stdio:${digest}`))
}
