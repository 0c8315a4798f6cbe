/**
 * A real `redis-server` for the tests: started on a free loopback port without persistence, owned by the
 * caller's Scope (closing it stops the server). Also: a self-signed certificate made with `openssl` for a TLS
 * port, a cluster of two masters, and a sentinel watching a server.
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { Redis } from "ioredis"
import * as Net from "node:net"

/** A port nothing listens on right now (the kernel picks it, the probe socket is closed again). */
export const freePort: Effect.Effect<number> = Effect.callback((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(port === 0 ? Effect.die(new Error("no free port")) : Effect.succeed(port)))
  })
})

const accepts = (port: number) =>
  Effect.callback<void, Error>((resume) => {
    const socket = Net.createConnection({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.void)
    })
    socket.once("error", (error) => {
      socket.destroy()
      resume(Effect.fail(error))
    })
  })

/** Files of a self-signed certificate for 127.0.0.1 and localhost, and the certificate itself (its own CA). */
export interface Certificate {
  readonly certFile: string
  readonly keyFile: string
  readonly pem: string
}

/** Starts `redis-server` and waits until it accepts connections (on its TLS port when `tls` is given). */
export const startRedis = (
  options: {
    readonly port?: number
    readonly args?: ReadonlyArray<string>
    readonly tls?: Certificate
  } = {}
) =>
  Effect.gen(function*() {
    const port = options.port ?? (yield* freePort)
    const listen = options.tls === undefined ? ["--port", String(port)] : [
      "--port",
      "0",
      "--tls-port",
      String(port),
      "--tls-cert-file",
      options.tls.certFile,
      "--tls-key-file",
      options.tls.keyFile,
      "--tls-ca-cert-file",
      options.tls.certFile,
      "--tls-auth-clients",
      "no"
    ]
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const process = yield* spawner.spawn(ChildProcess.make("redis-server", [
      ...listen,
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--loglevel",
      "warning",
      ...(options.args ?? [])
    ], { forceKillAfter: "5 seconds" }))
    yield* Effect.forkScoped(Stream.runDrain(process.stdout))
    yield* Effect.forkScoped(Stream.runDrain(process.stderr))
    yield* accepts(port).pipe(
      Effect.retry(Schedule.max([Schedule.spaced("50 millis"), Schedule.recurs(200)])),
      Effect.orDie
    )
    return { port, process }
  })

/** A self-signed certificate made by `openssl` in a temporary directory owned by the Scope. */
export const makeCertificate = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const directory = yield* fs.makeTempDirectoryScoped({ prefix: "conduit-redis-tls-" })
  const certFile = path.join(directory, "cert.pem")
  const keyFile = path.join(directory, "key.pem")
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const code = yield* spawner.exitCode(ChildProcess.make("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    keyFile,
    "-out",
    certFile,
    "-days",
    "1",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=IP:127.0.0.1,DNS:localhost"
  ], { stdout: "inherit", stderr: "inherit" }))
  if (code !== 0) return yield* Effect.die(new Error(`openssl exited with ${code}`))
  const pem = yield* fs.readFileString(certFile)
  return { certFile, keyFile, pem } satisfies Certificate
})

/** An ioredis client for setting servers up and looking inside them, closed with the Scope. */
export const adminClient = (port: number, options: { readonly username?: string; readonly password?: string } = {}) =>
  Effect.acquireRelease(
    Effect.sync(() => new Redis({ host: "127.0.0.1", port, ...options })),
    (client) => Effect.sync(() => client.disconnect())
  )

export const call = <A>(run: () => Promise<A>) => Effect.promise(run)

/**
 * Two masters, slots 0–8191 on the first and 8192–16383 on the second, ready once both report `cluster_state:ok`.
 */
export const startCluster = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const directory = yield* fs.makeTempDirectoryScoped({ prefix: "conduit-redis-cluster-" })
  const node = (name: string) =>
    Effect.gen(function*() {
      const bus = yield* freePort
      const { port } = yield* startRedis({
        args: [
          "--cluster-enabled",
          "yes",
          "--cluster-port",
          String(bus),
          "--cluster-config-file",
          `${name}.conf`,
          "--dir",
          directory
        ]
      })
      return { port, bus, admin: yield* adminClient(port) }
    })
  const first = yield* node("first")
  const second = yield* node("second")
  yield* call(() => first.admin.call("CLUSTER", "ADDSLOTSRANGE", "0", "8191"))
  yield* call(() => second.admin.call("CLUSTER", "ADDSLOTSRANGE", "8192", "16383"))
  yield* call(() => first.admin.call("CLUSTER", "MEET", "127.0.0.1", String(second.port), String(second.bus)))
  const clusterOk = (admin: Redis) =>
    Effect.filterOrFail(
      call(() => admin.call("CLUSTER", "INFO")),
      (info) => String(info).includes("cluster_state:ok"),
      () => "cluster not ready"
    )
  yield* Effect.zip(clusterOk(first.admin), clusterOk(second.admin)).pipe(
    Effect.retry(Schedule.max([Schedule.spaced("50 millis"), Schedule.recurs(400)])),
    Effect.orDie
  )
  return { nodes: [first, second] }
})

/** A sentinel (`redis-server --sentinel`) watching the server on `masterPort` as the master named `name`. */
export const startSentinel = (masterPort: number, name: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    // a sentinel rewrites its configuration file: it gets one of its own
    const directory = yield* fs.makeTempDirectoryScoped({ prefix: "conduit-redis-sentinel-" })
    const config = path.join(directory, "sentinel.conf")
    const port = yield* freePort
    yield* fs.writeFileString(
      config,
      `port ${port}\nbind 127.0.0.1\ndir ${directory}\nsentinel monitor ${name} 127.0.0.1 ${masterPort} 1\n`
    )
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const process = yield* spawner.spawn(
      ChildProcess.make("redis-server", [config, "--sentinel", "--loglevel", "warning"], { forceKillAfter: "5 seconds" })
    )
    yield* Effect.forkScoped(Stream.runDrain(process.stdout))
    yield* Effect.forkScoped(Stream.runDrain(process.stderr))
    yield* accepts(port).pipe(
      Effect.retry(Schedule.max([Schedule.spaced("50 millis"), Schedule.recurs(200)])),
      Effect.orDie
    )
    return { port }
  })
