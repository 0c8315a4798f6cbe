/**
 * A call's span and metrics: `McpClient <method>` spans (annotated with the call's tool), the request latency
 * histogram (`Metric.timer`) and the failure counter, tagged by method, transport and error tag.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type * as Tracer from "effect/Tracer"
import type * as McpError from "../../McpError.js"

/**
 * Request latency in milliseconds, tagged by method and transport: the histogram `Metric.timer` makes (same name,
 * boundaries and `time_unit` attribute, so the same metric), with all of its attributes given as one constant set,
 * built once per method (not merged again at every update).
 */
const requestDuration = Metric.histogram("mcp_client_request_duration", {
  boundaries: Metric.exponentialBoundaries({ start: 0.5, factor: 2, count: 35 }),
  description: "time from sending a request to its result"
})

/** Failed requests, tagged by method, transport and error tag. */
const requestErrors = Metric.counter("mcp_client_request_errors", {
  description: "requests that failed, by error tag",
  incremental: true
})

/**
 * The metrics of one method, tagged once.
 *
 * @internal
 */
export interface MethodMetrics {
  readonly duration: Metric.Histogram<Duration.Duration>
  readonly errorsBy: (errorTag: string) => Metric.Counter<number>
}

/**
 * @internal
 */
export interface Telemetry {
  readonly metricsFor: (method: string) => MethodMetrics
  readonly spanOptionsFor: (method: string) => Tracer.SpanOptions
  /**
   * Runs a call in its span (`McpClient <method>`, annotated with the call's tool) and records its latency and its
   * failure by error tag.
   */
  readonly instrument: <A>(
    method: string,
    tool: string | undefined,
    body: Effect.Effect<A, McpError.McpClientError>
  ) => Effect.Effect<A, McpError.McpClientError>
}

/**
 * @internal
 */
export const make = (
  transport: McpError.TransportKind,
  spanAttributes: Readonly<Record<string, unknown>>
): Telemetry => {
  // tagged by method and transport, built once per method
  const metricCache = new Map<string, MethodMetrics>()
  const metricsFor = (method: string): MethodMetrics => {
    let metrics = metricCache.get(method)
    if (metrics === undefined) {
      const byTag = new Map<string, Metric.Counter<number>>()
      metrics = {
        duration: Metric.mapInput(
          Metric.withAttributes(requestDuration, { time_unit: "milliseconds", method, transport }),
          (duration: Duration.Duration) => Duration.toMillis(duration)
        ),
        errorsBy: (errorTag) => {
          let counter = byTag.get(errorTag)
          if (counter === undefined) {
            counter = Metric.withAttributes(requestErrors, { method, transport, error: errorTag })
            byTag.set(errorTag, counter)
          }
          return counter
        }
      }
      metricCache.set(method, metrics)
    }
    return metrics
  }

  const spanOptionsCache = new Map<string, Tracer.SpanOptions>()
  const spanOptionsFor = (method: string): Tracer.SpanOptions => {
    let spanOptions = spanOptionsCache.get(method)
    if (spanOptions === undefined) {
      spanOptions = {
        kind: "client",
        attributes: { ...spanAttributes, "rpc.method": method },
        captureStackTrace: false
      }
      spanOptionsCache.set(method, spanOptions)
    }
    return spanOptions
  }

  const instrument = <A>(
    method: string,
    tool: string | undefined,
    body: Effect.Effect<A, McpError.McpClientError>
  ): Effect.Effect<A, McpError.McpClientError> => {
    const metrics = metricsFor(method)
    const spanned = body.pipe(
      Effect.tapError((error) => Metric.update(metrics.errorsBy(error._tag), 1)),
      Effect.trackDuration(metrics.duration),
      Effect.withSpan(`McpClient ${method}`, spanOptionsFor(method))
    )
    // the tool annotates the call's span and every span under it
    return tool === undefined ? spanned : Effect.annotateSpans(spanned, "mcp.tool", tool)
  }

  return { metricsFor, spanOptionsFor, instrument }
}
