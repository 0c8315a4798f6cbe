/**
 * A module loaded when first used: the effect imports it on its first run and answers the same module, without
 * awaiting, on every later one. The `import()` stays in the caller's file, so the module's path is written there
 * (and `test/Architecture.test.ts` sees it is loaded lazily). A leaf: it imports nothing of Conduit's.
 *
 * @internal
 */
import * as Effect from "effect/Effect"

/** @internal */
export const lazyImport = <M>(load: () => Promise<M>): Effect.Effect<M> => {
  let module: M | undefined
  return Effect.suspend(() =>
    module !== undefined ? Effect.succeed(module) : Effect.map(Effect.promise(load), (loaded) => (module = loaded))
  )
}
