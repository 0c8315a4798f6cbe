// Conduit as a promise host drives it: the same client and ManagedRuntime as conduit.mjs, but every call is its own
// `runtime.runPromise`, issued from the promise pool the SDK clients use (common.mjs `manyWith` and
// `sequenceWith`): how a Node service whose handlers are promises calls an Effect library.
import { connect as connectFibers } from "./conduit.mjs"

export { load } from "./conduit.mjs"

export const connect = async (options) => {
  const { many: _many, sequence: _sequence, ...promiseOnly } = await connectFibers(options)
  return promiseOnly
}
