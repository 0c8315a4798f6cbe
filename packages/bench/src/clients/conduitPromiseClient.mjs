// Conduit through its promise client (`McpPromiseClient`): the same client and layers as conduit.mjs, made with
// `McpPromiseClient.make`, every call a promise issued from the promise pool the SDK clients use (common.mjs
// `manyWith` and `sequenceWith`). The usual calls take the client's fast path without a fiber per call; compare
// conduitPromise.mjs, a `runtime.runPromise` per call.
import { clientLayer, library, load as loadConduit } from "./conduit.mjs"

export const load = (transport) => loadConduit(transport, ["McpPromiseClient.js"])

export const connect = async (options) => {
  const client = await library().McpPromiseClient.make(clientLayer(options))
  return {
    listTools: () => client.listTools(),
    call: (name, args, timeoutMs) =>
      client.callTool({ name, arguments: args }, timeoutMs === undefined ? undefined : { timeout: timeoutMs }),
    close: () => client.close()
  }
}
