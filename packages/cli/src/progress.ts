/**
 * The progress display on stderr: a bar redrawn in place on a terminal, one line per report otherwise.
 *
 * @since 0.1.0
 */
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Output from "./output.js"
import * as Text from "./terminalText.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface ProgressDisplay {
  /** Pass as the call's `onProgress`. */
  readonly onProgress: (progress: McpSchema.Progress) => Effect.Effect<void>
  /** Clears the bar (when one is drawn) so that what follows starts on a clean line. */
  readonly clear: Effect.Effect<void>
}

const barWidth = 30

/**
 * Renders one progress report as a bar line (without a newline).
 *
 * @since 0.1.0
 * @category formatting
 */
export const renderBar = (progress: McpSchema.Progress, columns: number): string => {
  const total = progress.total
  const message = progress.message !== undefined ? ` ${Text.line(progress.message)}` : ""
  if (total === undefined || !(total > 0)) {
    return truncate(`[${"·".repeat(barWidth)}] ${progress.progress}${message}`, columns)
  }
  const ratio = Math.max(0, Math.min(1, progress.progress / total))
  const filled = Math.round(ratio * barWidth)
  const percent = `${Math.round(ratio * 100)}%`.padStart(4)
  return truncate(
    `[${"#".repeat(filled)}${"-".repeat(barWidth - filled)}] ${percent} ${progress.progress}/${total}${message}`,
    columns
  )
}

const truncate = (text: string, columns: number) => text.length < columns ? text : text.slice(0, columns - 1)

/**
 * Renders one progress report as a plain log line.
 *
 * @since 0.1.0
 * @category formatting
 */
export const renderLine = (progress: McpSchema.Progress): string =>
  `progress ${progress.progress}${progress.total !== undefined ? `/${progress.total}` : ""}${
    progress.message !== undefined ? ` ${Text.line(progress.message)}` : ""
  }`

/**
 * A display for one call. `quiet` shows nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: { readonly quiet: boolean }): Effect.Effect<ProgressDisplay> =>
  Effect.gen(function*() {
    const drawn = yield* Ref.make(false)
    const tty = process.stderr.isTTY === true
    if (options.quiet) return { onProgress: () => Effect.void, clear: Effect.void }
    const columns = () => typeof process.stderr.columns === "number" ? process.stderr.columns : 80
    return {
      onProgress: (progress) =>
        tty
          ? Effect.andThen(Ref.set(drawn, true), Output.stderrRaw(`\r\u001b[2K${renderBar(progress, columns())}`))
          : Output.stderr(renderLine(progress)),
      clear: Effect.flatMap(
        Ref.getAndSet(drawn, false),
        (wasDrawn) => wasDrawn ? Output.stderrRaw("\r\u001b[2K") : Effect.void
      )
    }
  })
