// The official SDK v1 client (@modelcontextprotocol/sdk 1.32): legacy only.
import { clientInfo } from "./common.mjs"

let lib
let wires

export const load = async (transport) => {
  const start = performance.now()
  lib = await import("@modelcontextprotocol/sdk/client/index.js")
  const libDone = performance.now()
  wires = transport === "stdio"
    ? await import("@modelcontextprotocol/sdk/client/stdio.js")
    : await import("@modelcontextprotocol/sdk/client/streamableHttp.js")
  return { importLibMs: libDone - start, importMs: performance.now() - start }
}

// the default limit (10 MiB) would refuse the 16 MiB result: use the limit Conduit has by default
const maxBufferSize = 64 * 1024 * 1024

export const connect = async ({ transport, era, command, args, url }) => {
  if (era !== "legacy") throw new Error("SDK v1 speaks only the legacy era")
  const client = new lib.Client(clientInfo, {})
  const wire = transport === "stdio"
    ? new wires.StdioClientTransport({ command, args, stderr: "inherit", maxBufferSize })
    : new wires.StreamableHTTPClientTransport(new URL(url))
  await client.connect(wire)
  return {
    listTools: () => client.listTools(),
    call: (name, args, timeoutMs) =>
      client.callTool({ name, arguments: args }, undefined, timeoutMs === undefined ? undefined : { timeout: timeoutMs }),
    close: () => client.close()
  }
}
