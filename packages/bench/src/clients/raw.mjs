// The practical limit: a hand-written JSON-RPC client with no validation beyond what the benchmark checks.
// stdio: newline framing over the child's pipes. HTTP: undici's Pool with keep-alive, one connection per call
// in flight.
import { clientInfo, LEGACY, MODERN } from "./common.mjs"

let childProcess
let undici

export const load = async (transport) => {
  const start = performance.now()
  if (transport === "stdio") childProcess = await import("node:child_process")
  else undici = await import("undici")
  const elapsed = performance.now() - start
  return { importLibMs: elapsed, importMs: elapsed }
}

const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": clientInfo,
  "io.modelcontextprotocol/clientCapabilities": {}
}

const paramsFor = (era, params) => era === "modern" ? { ...params, _meta: modernMeta } : params

const resultOf = (message) => {
  if (message.error !== undefined) throw new Error(`JSON-RPC error ${message.error.code}: ${message.error.message}`)
  return message.result
}

const connectStdio = async ({ era, command, args }) => {
  const child = childProcess.spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] })
  const pending = new Map()
  let nextId = 1
  let parts = []
  const onLine = (line) => {
    if (line.length === 0) return
    const message = JSON.parse(line)
    const entry = pending.get(message.id)
    if (entry === undefined) return
    pending.delete(message.id)
    entry(message)
  }
  child.stdout.on("data", (chunk) => {
    let start = 0
    let index
    while ((index = chunk.indexOf(0x0a, start)) !== -1) {
      if (parts.length === 0) {
        onLine(chunk.toString("utf8", start, index))
      } else {
        parts.push(chunk.subarray(start, index))
        onLine(Buffer.concat(parts).toString("utf8"))
        parts = []
      }
      start = index + 1
    }
    if (start < chunk.length) parts.push(chunk.subarray(start))
  })
  const exited = new Promise((resolve) => child.on("exit", resolve))
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++
      pending.set(id, (message) => {
        try {
          resolve(resultOf(message))
        } catch (error) {
          reject(error)
        }
      })
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params: paramsFor(era, params) })}\n`)
    })
  const notify = (method) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method })}\n`)
  if (era === "legacy") {
    await request("initialize", { protocolVersion: LEGACY, capabilities: {}, clientInfo })
    notify("notifications/initialized")
  } else {
    await request("server/discover", {})
  }
  return {
    listTools: () => request("tools/list", {}),
    call: (name, args) => request("tools/call", { name, arguments: args }),
    close: async () => {
      child.stdin.end()
      await exited
    }
  }
}

const connectHttp = async ({ era, url }) => {
  const target = new URL(url)
  const pool = new undici.Pool(target.origin, { connections: 64, pipelining: 1, keepAliveTimeout: 60_000 })
  const path = target.pathname
  let nextId = 1
  let session
  const headersFor = (method, name) => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }
    if (era === "modern") {
      headers["mcp-protocol-version"] = MODERN
      headers["mcp-method"] = method
      if (name !== undefined) headers["mcp-name"] = name
    } else if (session !== undefined) {
      headers["mcp-session-id"] = session
      headers["mcp-protocol-version"] = LEGACY
    }
    return headers
  }
  const post = async (method, params, id) => {
    const body = JSON.stringify(
      id === undefined
        ? { jsonrpc: "2.0", method }
        : { jsonrpc: "2.0", id, method, params: paramsFor(era, params) }
    )
    const response = await pool.request({ path, method: "POST", headers: headersFor(method, params?.name), body })
    return response
  }
  const request = async (method, params) => {
    const response = await post(method, params, nextId++)
    const text = await response.body.text()
    if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`)
    if (method === "initialize") session = response.headers["mcp-session-id"]
    return resultOf(JSON.parse(text))
  }
  if (era === "legacy") {
    await request("initialize", { protocolVersion: LEGACY, capabilities: {}, clientInfo })
    const response = await post("notifications/initialized", undefined, undefined)
    await response.body.dump()
  } else {
    await request("server/discover", {})
  }
  return {
    listTools: () => request("tools/list", {}),
    call: (name, args) => request("tools/call", { name, arguments: args }),
    close: async () => {
      if (session !== undefined) {
        const response = await pool.request({ path, method: "DELETE", headers: { "mcp-session-id": session } })
        await response.body.dump()
      }
      await pool.close()
    }
  }
}

export const connect = (options) => options.transport === "stdio" ? connectStdio(options) : connectHttp(options)
