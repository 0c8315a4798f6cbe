/**
 * A logger and a tracer that keep, as text, everything they are given (messages, annotations, causes, span
 * names, attributes, events and failed exits), for the tests that look for secrets where none may be.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"

const text = (value: unknown): string => {
  if (typeof value === "string") return value
  // a successful exit may hold an HTTP response, whose inspection would read its body: failures only
  if (Exit.isExit(value)) return Exit.isFailure(value) ? Cause.pretty(value.cause) + JSON.stringify(value.cause) : ""
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

export const makeCapture = () => {
  /** Everything captured (tests add what else they want searched, e.g. the errors they got). */
  const seen: Array<string> = []
  const logs: Array<string> = []
  const spans: Array<string> = []
  const log = (...lines: ReadonlyArray<string>) => {
    logs.push(...lines)
    seen.push(...lines)
  }
  const span = (...lines: ReadonlyArray<string>) => {
    spans.push(...lines)
    seen.push(...lines)
  }
  const logger = Logger.make(({ cause, fiber, message }) => {
    const annotations = fiber.getRef(References.CurrentLogAnnotations)
    log(text(message), text(Object.entries(annotations)), Cause.pretty(cause))
  })
  let id = 0
  const tracer = Tracer.make({
    span: ({ annotations, kind, links, name, parent }) => {
      const attributes = new Map<string, unknown>()
      const created: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: `span-${id++}`,
        traceId: "trace",
        parent,
        annotations,
        status: { _tag: "Started", startTime: 0n },
        attributes,
        links,
        sampled: true,
        kind,
        end: (_endTime, exit) => {
          span(name, text([...attributes]), text(exit))
        },
        attribute: (key, value) => {
          attributes.set(key, value)
        },
        event: (eventName, _time, eventAttributes) => {
          span(eventName, text(eventAttributes))
        },
        addLinks: () => {}
      }
      return created
    }
  })
  /** Runs `effect` with the capturing logger (every level) and tracer; its failures are kept too. */
  const observe = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    effect.pipe(
      Effect.tapCause((cause) => Effect.sync(() => seen.push(Cause.pretty(cause), JSON.stringify(cause)))),
      Effect.withTracer(tracer),
      Effect.provide(Logger.layer([logger])),
      Effect.provideService(References.MinimumLogLevel, "All")
    )
  return { seen, logs, spans, observe }
}
