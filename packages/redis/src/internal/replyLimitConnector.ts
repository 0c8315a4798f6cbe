/**
 * An ioredis `Connector` (its public `Connector` option) whose connections hand ioredis a stream that checks every
 * chunk of replies with a {@link ReplyScanner} before ioredis's parser gets it.
 *
 * ioredis attaches its parser to the stream a connector resolves with (`stream.prependListener("data", …)`): a
 * listener of our own on the socket would run after the parser, and could not keep a chunk from it. So the
 * connector resolves with a `Duplex` in front of the socket, which passes on what the scanner accepts and, on a
 * refusal, passes on the replies before the refused one in that chunk, then destroys itself and the socket with
 * an error. ioredis sees a connection closed with an error: it fails or retries the commands in flight as its
 * options say (the store's own connection fails them: `maxRetriesPerRequest: 0`) and reconnects with its
 * `retryStrategy`. The bytes of the refused reply never reach the parser.
 *
 * The stream has what ioredis 5 uses of a socket: `connecting`, `remoteAddress`, `remotePort`, `setNoDelay`,
 * `setKeepAlive`, `setTimeout` (and its `timeout` event), the `connect` and `secureConnect` events, and the
 * stream's own `write`, `end`, `destroy`, `data`, `error` and `close`. Over TLS it sits in front of the
 * `TLSSocket`, so it sees the decrypted replies. Through sentinels, ioredis's `SentinelConnector` finds the master
 * and connects to it, and the stream goes in front of that connection; the connections to the sentinels
 * themselves are opened by ioredis and are not checked.
 *
 * @internal
 */
import { AbstractConnector, SentinelConnector } from "ioredis"
import type { RedisOptions } from "ioredis"
import type { Buffer } from "node:buffer"
import * as Net from "node:net"
import { Duplex } from "node:stream"
import * as Tls from "node:tls"
import { type ReplyLimits, ReplyScanner } from "./replyScanner.js"

type ConnectorConstructor = NonNullable<RedisOptions["Connector"]>
type ErrorEmitter = Parameters<AbstractConnector["connect"]>[0]
/** What ioredis's connector type promises (a `Socket`); ioredis uses only what {@link CheckedStream} has. */
type NetStream = Awaited<ReturnType<AbstractConnector["connect"]>>

/** ioredis's message for a connection closed before it was made (it keeps such errors quiet while closing). */
const CONNECTION_CLOSED = "Connection is closed."

/** A stream in front of a socket, passing on only replies the scanner accepts. */
class CheckedStream extends Duplex {
  constructor(
    private readonly socket: Net.Socket,
    scanner: ReplyScanner,
    onRefused: (reason: string) => void
  ) {
    super({ decodeStrings: false, allowHalfOpen: false })
    socket.on("data", (chunk: Buffer) => {
      if (this.destroyed) return
      const refusal = scanner.scan(chunk)
      if (refusal === undefined) {
        if (!this.push(chunk)) socket.pause()
        return
      }
      // the replies before the refused one answer their commands
      if (refusal.replyStart > 0) this.push(chunk.subarray(0, refusal.replyStart))
      onRefused(refusal.reason)
      this.destroy(new Error(`refused ${refusal.reason}; the connection is closed`))
    })
    socket.on("end", () => this.push(null))
    // kept for the socket's whole life: an error after this stream is gone is no one's to throw
    socket.on("error", (error) => this.destroy(error))
    socket.on("close", () => this.destroy())
    socket.on("connect", () => this.emit("connect"))
    socket.on("secureConnect", () => this.emit("secureConnect"))
    socket.on("timeout", () => this.emit("timeout"))
  }

  get connecting(): boolean {
    return this.socket.connecting
  }

  get remoteAddress(): string | undefined {
    return this.socket.remoteAddress
  }

  get remotePort(): number | undefined {
    return this.socket.remotePort
  }

  setNoDelay(noDelay?: boolean): this {
    this.socket.setNoDelay(noDelay)
    return this
  }

  setKeepAlive(enable?: boolean, initialDelay?: number): this {
    this.socket.setKeepAlive(enable, initialDelay)
    return this
  }

  setTimeout(timeout: number, callback?: () => void): this {
    this.socket.setTimeout(timeout)
    if (callback !== undefined) {
      if (timeout === 0) this.removeListener("timeout", callback)
      else this.once("timeout", callback)
    }
    return this
  }

  override _read(): void {
    this.socket.resume()
  }

  override _write(chunk: Buffer | string, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.socket.write(chunk, encoding)) callback()
    else this.socket.once("drain", () => callback())
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.socket.end()
    callback()
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.socket.destroy()
    callback(error)
  }
}

/**
 * A `Connector` class for ioredis's options: each connection it makes is checked against `limits`, and
 * `onRefused` hears the reason of each refusal (before the connection closes).
 *
 * @internal
 */
export const make = (limits: ReplyLimits, onRefused: (reason: string) => void): ConnectorConstructor =>
  class ReplyLimitConnector extends AbstractConnector {
    private readonly options: RedisOptions
    /** Finds the master through the sentinels and connects to it, when the options name sentinels. */
    private readonly sentinel: SentinelConnector | undefined
    private readonly closeTimeout: number
    /** The stream of the current connection (ioredis's own `stream` field is typed as a socket). */
    private checked: CheckedStream | undefined

    constructor(options: unknown) {
      // ioredis passes a connector its whole options, defaults applied
      const redisOptions = options as RedisOptions
      const closeTimeout = redisOptions.disconnectTimeout ?? 2000
      super(closeTimeout)
      this.options = redisOptions
      this.closeTimeout = closeTimeout
      // as ioredis chooses: any `sentinels` given (an empty list is refused by the sentinel connector)
      this.sentinel = redisOptions.sentinels ? new SentinelConnector(redisOptions) : undefined
    }

    override check(info: { readonly role?: string }): boolean {
      return this.sentinel === undefined ? true : this.sentinel.check(info)
    }

    connect(emit: ErrorEmitter): Promise<NetStream> {
      const socket = this.sentinel === undefined ? this.open() : this.sentinel.connect(emit)
      return socket.then((socket) => {
        socket.once("error", (error) => {
          this.firstError = error
        })
        const stream = new CheckedStream(socket, new ReplyScanner(limits), onRefused)
        this.checked = stream
        return stream as unknown as NetStream
      })
    }

    override disconnect(): void {
      // the sentinel connector ends the master's socket (which closes the stream) and stops its failover detector
      if (this.sentinel !== undefined) return this.sentinel.disconnect()
      this.connecting = false
      const stream = this.checked
      if (stream === undefined) return
      const timer = setTimeout(() => stream.destroy(), this.closeTimeout)
      stream.once("close", () => clearTimeout(timer))
      stream.end()
    }

    /** A socket to one server, as ioredis's own connector opens it (a Unix socket, or TCP, with TLS if asked). */
    private open(): Promise<Net.Socket> {
      const options = this.options
      this.connecting = true
      return new Promise((resolve, reject) => {
        // as ioredis does: a disconnect called in the same tick cancels the connection
        process.nextTick(() => {
          if (!this.connecting) return reject(new Error(CONNECTION_CLOSED))
          try {
            // ioredis applies its defaults (port 6379, host localhost) before a connector sees the options
            const address: Net.NetConnectOpts = options.path ? { path: options.path } : {
              port: options.port ?? 6379,
              ...(options.host == null ? {} : { host: options.host }),
              ...(options.family == null ? {} : { family: options.family })
            }
            resolve(options.tls ? Tls.connect({ ...address, ...options.tls }) : Net.createConnection(address))
          } catch (error) {
            reject(error)
          }
        })
      })
    }
  }
