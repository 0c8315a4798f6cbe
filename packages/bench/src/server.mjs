// The fixed opponent of every benchmarked client: a small MCP server written without any SDK, so that no
// client meets a server built from its own code. It serves both eras (the legacy `initialize` handshake and
// modern `server/discover` with per-request `_meta`) over stdio or over HTTP on 127.0.0.1.
//
//   node server.mjs --stdio
//   node server.mjs --http [--port N]     prints {"port":N} on stdout once listening
//
// Tools: `echo` {text} → the text; `blob` {bytes} → a text of that many bytes; `sleep` {ms, text?} → the
// text after ms milliseconds. Answers are built as strings from cached parts so the server stays cheap: it
// runs on its own core and must not be what limits a client.
import * as http from "node:http"

const MODERN = "2026-07-28"
const LEGACY = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
const META_VERSION = "io.modelcontextprotocol/protocolVersion"
const serverInfo = { name: "bench-server", version: "1.0.0" }

const tools = [
  {
    name: "echo",
    description: "Returns its text",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
  },
  {
    name: "blob",
    description: "Returns a text of the given number of bytes",
    inputSchema: { type: "object", properties: { bytes: { type: "integer" } }, required: ["bytes"] }
  },
  {
    name: "sleep",
    description: "Returns its text after the given number of milliseconds",
    inputSchema: {
      type: "object",
      properties: { ms: { type: "integer" }, text: { type: "string" } },
      required: ["ms"]
    }
  }
]

const listLegacy = JSON.stringify({ tools })
// modern cacheable results carry ttlMs and cacheScope; 0 means "do not cache"
const listModern = JSON.stringify({ resultType: "complete", tools, ttlMs: 0, cacheScope: "private" })
const discoverResult = JSON.stringify({
  resultType: "complete",
  supportedVersions: [MODERN, ...LEGACY],
  capabilities: { tools: {} },
  ttlMs: 0,
  cacheScope: "private",
  _meta: { "io.modelcontextprotocol/serverInfo": serverInfo }
})

const textResult = (text, modern) =>
  `{${modern ? "\"resultType\":\"complete\"," : ""}"content":[{"type":"text","text":${JSON.stringify(text)}}]}`

// blob results by size and era: a 16 MiB string is built once
const blobs = new Map()
const blobResult = (bytes, modern) => {
  const key = `${bytes}:${modern}`
  let result = blobs.get(key)
  if (result === undefined) {
    const unit = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-_"
    const text = unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes)
    result = textResult(text, modern)
    blobs.set(key, result)
  }
  return result
}

const answer = (id, result) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`
const failure = (id, code, message) => JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })

const isModern = (params) =>
  typeof params === "object" && params !== null && typeof params._meta === "object" && params._meta !== null &&
  params._meta[META_VERSION] === MODERN

/**
 * Answers one request. Calls `reply` with the response line (no newline), now or later (sleep).
 * `reply` receives extra information for HTTP: whether the request opened a legacy session.
 */
const handle = (message, reply) => {
  const { id, method, params } = message
  const modern = isModern(params)
  switch (method) {
    case "initialize": {
      const requested = params?.protocolVersion
      const version = LEGACY.includes(requested) ? requested : LEGACY[0]
      return reply(
        answer(id, JSON.stringify({ protocolVersion: version, capabilities: { tools: {} }, serverInfo })),
        true
      )
    }
    case "server/discover":
      return reply(answer(id, discoverResult))
    case "ping":
      return reply(answer(id, modern ? "{\"resultType\":\"complete\"}" : "{}"))
    case "tools/list":
      return reply(answer(id, modern ? listModern : listLegacy))
    case "tools/call": {
      const name = params?.name
      const args = params?.arguments ?? {}
      if (name === "echo") return reply(answer(id, textResult(String(args.text ?? ""), modern)))
      if (name === "blob") return reply(answer(id, blobResult(Number(args.bytes ?? 0), modern)))
      if (name === "sleep") {
        setTimeout(() => reply(answer(id, textResult(String(args.text ?? ""), modern))), Number(args.ms ?? 0))
        return
      }
      return reply(failure(id, -32602, `unknown tool ${name}`))
    }
    default:
      return reply(failure(id, -32601, `method not found: ${method}`))
  }
}

const isRequest = (message) =>
  typeof message === "object" && message !== null && typeof message.method === "string" && "id" in message

// --- stdio: newline-delimited JSON, the answers to one input chunk written at once
const serveStdio = () => {
  let pending = []
  let out = []
  let flushing = false
  const flush = () => {
    flushing = false
    if (out.length === 0) return
    const text = out.join("")
    out = []
    process.stdout.write(text)
  }
  const reply = (line) => {
    out.push(line, "\n")
    if (!flushing) {
      flushing = true
      queueMicrotask(flush)
    }
  }
  const onLine = (line) => {
    if (line.length === 0) return
    let message
    try {
      message = JSON.parse(line)
    } catch {
      return
    }
    if (isRequest(message)) handle(message, reply)
  }
  process.stdin.on("data", (chunk) => {
    let start = 0
    let index
    while ((index = chunk.indexOf(0x0a, start)) !== -1) {
      if (pending.length === 0) {
        onLine(chunk.toString("utf8", start, index))
      } else {
        pending.push(chunk.subarray(start, index))
        onLine(Buffer.concat(pending).toString("utf8"))
        pending = []
      }
      start = index + 1
    }
    if (start < chunk.length) pending.push(chunk.subarray(start))
  })
  process.stdin.on("end", () => process.exit(0))
  process.stdout.on("error", () => process.exit(0))
}

// --- HTTP: one POST per message, JSON answers, legacy sessions by header, no standalone stream
const serveHttp = (port) => {
  let sessions = 0
  const server = http.createServer((req, res) => {
    if (req.method === "GET") {
      res.writeHead(405, { allow: "POST, DELETE" }).end()
      return
    }
    if (req.method === "DELETE") {
      res.writeHead(200).end()
      return
    }
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST, DELETE" }).end()
      return
    }
    const parts = []
    req.on("data", (chunk) => parts.push(chunk))
    req.on("end", () => {
      let message
      try {
        message = JSON.parse(parts.length === 1 ? parts[0].toString("utf8") : Buffer.concat(parts).toString("utf8"))
      } catch {
        res.writeHead(400, { "content-type": "application/json" }).end(failure(null, -32700, "parse error"))
        return
      }
      if (!isRequest(message)) {
        res.writeHead(202).end()
        return
      }
      handle(message, (line, opensSession) => {
        const headers = { "content-type": "application/json" }
        if (opensSession) headers["mcp-session-id"] = `bench-session-${++sessions}`
        res.writeHead(200, headers).end(line)
      })
    })
  })
  server.keepAliveTimeout = 60_000
  server.headersTimeout = 61_000
  server.listen(port, "127.0.0.1", () => {
    process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`)
  })
  const stop = () => server.close(() => process.exit(0))
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
}

const argv = process.argv.slice(2)
if (argv.includes("--http")) {
  const at = argv.indexOf("--port")
  serveHttp(at === -1 ? 0 : Number(argv[at + 1]))
} else {
  serveStdio()
}
