/**
 * A scripted Redis for the hostile tests: a loopback TCP server that reads the client's commands (RESP arrays of
 * bulk strings, across chunks) and answers them as a well-behaved Redis would, from a map of its own, except a
 * command naming a key that holds `hostile`: that one gets the test's answer, and nothing more is answered on
 * that connection. A real redis-server cannot be made to send a reply nested 100,000 deep, or one that announces
 * more than it holds.
 */
import * as Effect from "effect/Effect"
import { Buffer } from "node:buffer"
import * as Net from "node:net"

/** What the test's answer may do with the socket: write at once, or trickle. */
export type HostileAnswer = (socket: Net.Socket) => void

export interface ScriptedRedis {
  readonly port: number
  /** Connections accepted so far. */
  readonly connections: () => number
  /** Hostile answers started so far. */
  readonly hostileAnswers: () => number
}

/** One complete command at the start of `buffer`, and where it ends; nothing while it is incomplete. */
const readCommand = (buffer: Buffer): { readonly args: ReadonlyArray<Buffer>; readonly end: number } | undefined => {
  const line = (from: number) => {
    const cr = buffer.indexOf("\r\n", from, "latin1")
    return cr === -1 ? undefined : { text: buffer.toString("latin1", from + 1, cr), next: cr + 2 }
  }
  if (buffer.length === 0) return undefined
  if (buffer[0] !== 0x2a) throw new Error("the scripted Redis reads only RESP arrays")
  const header = line(0)
  if (header === undefined) return undefined
  const args: Array<Buffer> = []
  let at = header.next
  for (let i = 0; i < Number(header.text); i++) {
    const length = line(at)
    if (length === undefined) return undefined
    const end = length.next + Number(length.text)
    if (end + 2 > buffer.length) return undefined
    args.push(buffer.subarray(length.next, end))
    at = end + 2
  }
  return { args, end: at }
}

const bulk = (value: Buffer | undefined): Buffer | string =>
  value === undefined ? "$-1\r\n" : Buffer.concat([Buffer.from(`$${value.length}\r\n`), value, Buffer.from("\r\n")])

/** Starts the scripted Redis on a free loopback port; it closes with the Scope. */
export const scriptedRedis = (hostile: HostileAnswer) =>
  Effect.gen(function*() {
    const values = new Map<string, Buffer>()
    let connections = 0
    let hostileAnswers = 0
    const sockets = new Set<Net.Socket>()
    const answer = (args: ReadonlyArray<Buffer>): Buffer | string => {
      const name = args[0].toString("latin1").toUpperCase()
      const key = args[1]?.toString("latin1") ?? ""
      switch (name) {
        case "PING":
          return "+PONG\r\n"
        case "INFO":
          return bulk(Buffer.from("# Server\r\nredis_version:7.2.0\r\nloading:0\r\n"))
        case "GET":
          return bulk(values.get(key))
        case "SET":
          values.set(key, Buffer.from(args[2]))
          return "+OK\r\n"
        case "DEL":
        case "EXISTS": {
          const keys = args.slice(1).map((arg) => arg.toString("latin1"))
          const found = keys.filter((key) => values.has(key)).length
          if (name === "DEL") keys.forEach((key) => values.delete(key))
          return `:${found}\r\n`
        }
        case "SCAN":
          return "*2\r\n$1\r\n0\r\n*0\r\n"
        default:
          // CLIENT SETINFO, SELECT, AUTH, QUIT
          return "+OK\r\n"
      }
    }
    const server = yield* Effect.acquireRelease(
      Effect.callback<Net.Server>((resume) => {
        const created = Net.createServer((socket) => {
          connections++
          sockets.add(socket)
          socket.on("close", () => sockets.delete(socket))
          // the client closes a connection in the middle of an answer: that is the point
          socket.on("error", () => {})
          let pending: Buffer = Buffer.alloc(0)
          let spoiled = false
          socket.on("data", (data: Buffer) => {
            if (spoiled) return
            pending = pending.length === 0 ? data : Buffer.concat([pending, data])
            for (let command = readCommand(pending); command !== undefined; command = readCommand(pending)) {
              pending = pending.subarray(command.end)
              if (command.args.some((arg) => arg.includes("hostile"))) {
                spoiled = true
                hostileAnswers++
                hostile(socket)
                return
              }
              socket.write(answer(command.args))
            }
          })
        })
        created.listen(0, "127.0.0.1", () => resume(Effect.succeed(created)))
      }),
      (server) =>
        Effect.callback<void>((resume) => {
          for (const socket of sockets) socket.destroy()
          server.close(() => resume(Effect.void))
        })
    )
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    return { port, connections: () => connections, hostileAnswers: () => hostileAnswers } satisfies ScriptedRedis
  })

/**
 * Writes `head`, then `piece` again and again until `total` bytes of pieces are out or the client is gone, one
 * piece per turn of the event loop and never past the socket's buffer (the server's memory stays flat: its own
 * memory is the test's). `sent` reports the bytes of pieces written so far.
 */
export const trickle = (
  socket: Net.Socket,
  head: string,
  piece: Buffer,
  total: number,
  sent: (bytes: number) => void
): void => {
  let written = 0
  socket.write(head)
  const next = (): void => {
    if (socket.destroyed || written >= total) return
    written += piece.length
    sent(written)
    if (socket.write(piece)) setImmediate(next)
    else socket.once("drain", next)
  }
  next()
}
