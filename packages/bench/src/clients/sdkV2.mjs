// The official SDK v2 client (@modelcontextprotocol/client 2.4): legacy by default, modern when pinned.
import { clientInfo, MODERN } from "./common.mjs"

let lib
let stdio

export const load = async (transport) => {
  const start = performance.now()
  lib = await import("@modelcontextprotocol/client")
  const libDone = performance.now()
  if (transport === "stdio") stdio = await import("@modelcontextprotocol/client/stdio")
  return { importLibMs: libDone - start, importMs: performance.now() - start }
}

// the default limit (10 MiB) would refuse the 16 MiB result: use the limit Conduit has by default
const maxBufferSize = 64 * 1024 * 1024

// `ownAgent` gives the transport a fetch over an undici `Agent` of its own, closed with the client: new sockets per
// connect, as Conduit's `NodeHttpClient.layerUndici` per connect has (warmConnect.mjs, `sdk-v2-agent`); without
// it the SDK's fetch uses Node's global dispatcher, whose kept-alive sockets outlive the client.
export const connect = async ({ transport, era, command, args, url, ownAgent = false }) => {
  const undici = ownAgent ? await import("undici") : undefined
  const agent = undici === undefined ? undefined : new undici.Agent()
  const fetchOver = agent === undefined ? undefined : (input, init) => undici.fetch(input, { ...init, dispatcher: agent })
  const client = new lib.Client(
    clientInfo,
    era === "modern" ? { versionNegotiation: { mode: { pin: MODERN } } } : {}
  )
  const wire = transport === "stdio"
    ? new stdio.StdioClientTransport({ command, args, stderr: "inherit", maxBufferSize })
    : new lib.StreamableHTTPClientTransport(new URL(url), fetchOver === undefined ? undefined : { fetch: fetchOver })
  await client.connect(wire)
  return {
    listTools: () => client.listTools(),
    call: (name, args, timeoutMs) =>
      client.callTool({ name, arguments: args }, timeoutMs === undefined ? undefined : { timeout: timeoutMs }),
    close: async () => {
      await client.close()
      await agent?.close()
    }
  }
}
