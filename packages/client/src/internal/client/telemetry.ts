/**
 * A call's span and metrics: `McpClient <method>` spans (annotated with the call's tool), the request latency
 * histogram (`Metric.timer`) and the failure counter, tagged by method, transport and error tag.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"
import type * as MetricState from "effect/MetricState"
import type * as Tracer from "effect/Tracer"
import type * as McpError from "../../McpError.js"

/**
 * Request latency in milliseconds, tagged by method and transport: the histogram `Metric.timer` makes (same name,
 * boundaries and `time_unit` label, so the same metric), with all of its labels given as one constant set. The
 * registry finds a metric's state by the identity of its label array: `Metric.timer`'s own `time_unit` tag, merged
 * with the method's at every update, makes a new array and a registry lookup per request (14 → 19 µs CPU per stdio
 * call at 64 in flight with `packages/bench/src/fibers.mjs`), one constant set makes it once per method.
 */
const requestDuration = Metric.histogram(
  "mcp_client_request_duration",
  MetricBoundaries.exponential({ start: 0.5, factor: 2, count: 35 }),
  "time from sending a request to its result"
)
const timeUnit = MetricLabel.make("time_unit", "milliseconds")

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
  readonly duration: Metric.Metric<
    MetricKeyType.MetricKeyType.Histogram,
    Duration.Duration,
    MetricState.MetricState.Histogram
  >
  readonly errorsBy: (errorTag: string) => Metric.Metric.Counter<number>
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
      const byTag = new Map<string, Metric.Metric.Counter<number>>()
      metrics = {
        duration: requestDuration.pipe(
          Metric.taggedWithLabels([
            timeUnit,
            MetricLabel.make("method", method),
            MetricLabel.make("transport", transport)
          ]),
          Metric.mapInput(Duration.toMillis)
        ),
        errorsBy: (errorTag) => {
          let counter = byTag.get(errorTag)
          if (counter === undefined) {
            counter = requestErrors.pipe(
              Metric.tagged("method", method),
              Metric.tagged("transport", transport),
              Metric.tagged("error", errorTag)
            )
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
      Effect.tapError((error) => Metric.increment(metrics.errorsBy(error._tag))),
      Metric.trackDuration(metrics.duration),
      Effect.withSpan(`McpClient ${method}`, spanOptionsFor(method))
    )
    // the tool annotates the call's span and every span under it
    return tool === undefined ? spanned : Effect.annotateSpans(spanned, "mcp.tool", tool)
  }

  return { metricsFor, spanOptionsFor, instrument }
}
