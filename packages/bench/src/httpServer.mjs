// The benchmark server (server.mjs) over HTTP on 127.0.0.1, in a child process, for the scripts that measure in
// their own process: resolves once it listens.
import { spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const serverScript = path.join(path.dirname(fileURLToPath(import.meta.url)), "server.mjs")

export const startHttpServer = async () => {
  const server = spawn(process.execPath, [serverScript, "--http"], { stdio: ["ignore", "pipe", "inherit"] })
  const port = await new Promise((resolve) =>
    server.stdout.once("data", (chunk) => resolve(JSON.parse(chunk.toString("utf8").split("\n")[0]).port))
  )
  return { server, port, url: `http://127.0.0.1:${port}/mcp` }
}
