/**
 * The identity of a stdio server's child process, for the result cache: two connections whose children differ in
 * their command, arguments, environment or working directory may get different answers to the same request (an
 * `ACCOUNT_TOKEN` in the environment is a credential), so their private cached results are kept apart.
 *
 * The identity is taken from the command the executor starts, as it starts it: its variables, and the parent's
 * under them when the environment extends the parent's (`envPolicy: "inherit"`), read at that moment; its working
 * directory, and the parent's (which a relative one, and a command found through `PATH` or by a relative path,
 * depend on). It is hashed only when the cache asks for it, with a key of this process's own
 * (`digest.processDigest`): the partition name in the store reveals nothing of the environment and cannot be matched
 * by hashing guesses, and no other process shares it.
 *
 * @internal
 */
import type * as Command from "@effect/platform/Command"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import { processDigest } from "./digest.js"

interface Parent {
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly cwd?: (() => string) | undefined
}

/** The running process, where there is one (the executor's environment and working directory default to it). */
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
export const identityText = (command: Command.StandardCommand): string => {
  const parent = parentProcess()
  const environment = new Map<string, string>()
  if (command.extendEnv) {
    for (const [name, value] of Object.entries(parent?.env ?? {})) {
      if (value !== undefined) environment.set(name, value)
    }
  }
  for (const [name, value] of HashMap.toEntries(command.env)) environment.set(name, value)
  const sorted = [...environment].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
  return JSON.stringify([
    "stdio",
    command.command,
    command.args,
    [parentDirectory(parent), Option.getOrNull(command.cwd)],
    sorted
  ])
}

/**
 * The partition of private cached results of the child `command` starts, computed when first asked for: its
 * identity, read now, under this process's key.
 *
 * @internal
 */
export const partitionOf = (command: Command.Command): Effect.Effect<Effect.Effect<string>> => {
  if (command._tag !== "StandardCommand") {
    // (the transport starts one command; a pipeline has no single identity: it is given a partition of its own)
    return Effect.succeed(Effect.succeed(`stdio-own:${globalThis.crypto.randomUUID()}`))
  }
  const text = identityText(command)
  return Effect.cached(Effect.map(processDigest(text), (digest) => `stdio:${digest}`))
}
