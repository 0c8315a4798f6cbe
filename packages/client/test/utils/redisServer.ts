/**
 * A real `redis-server` for the tests: started on a free loopback port without persistence, owned by the
 * caller's Scope (closing it stops the server).
 */
import * as Command from "@effect/platform/Command"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Net from "node:net"

/** A port nothing listens on right now (the kernel picks it, the probe socket is closed again). */
export const freePort: Effect.Effect<number> = Effect.async((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(port === 0 ? Effect.dieMessage("no free port") : Effect.succeed(port)))
  })
})

const accepts = (port: number) =>
  Effect.async<void, Error>((resume) => {
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

/** Starts `redis-server` and waits until it accepts connections. */
export const startRedis = (options: { readonly port?: number; readonly args?: ReadonlyArray<string> } = {}) =>
  Effect.gen(function*() {
    const port = options.port ?? (yield* freePort)
    const process = yield* Command.make(
      "redis-server",
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--loglevel",
      "warning",
      ...(options.args ?? [])
    ).pipe(Command.start)
    yield* Effect.forkScoped(Stream.runDrain(process.stdout))
    yield* Effect.forkScoped(Stream.runDrain(process.stderr))
    yield* accepts(port).pipe(
      Effect.retry(Schedule.intersect(Schedule.spaced("50 millis"), Schedule.recurs(200))),
      Effect.orDie
    )
    return { port, process }
  })
