/**
 * The bytes of a resource, for `resources read --output <file>` and for a stdout that is not a terminal: text
 * contents as UTF-8, blob contents decoded from base64, the parts one after the other. Bytes written to a file or a
 * pipe are the server's exactly; only a terminal gets text made safe (see output.ts).
 *
 * @since 0.1.0
 */
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import { SystemFailure } from "./errors.js"
import { ExitCode } from "./errors.js"
import * as Output from "./output.js"
import * as Text from "./terminalText.js"

/**
 * Whether any part of the result is binary (a blob).
 *
 * @since 0.1.0
 * @category resources
 */
export const hasBlob = (result: McpSchema.ReadResourceResult): boolean =>
  result.contents.some((contents) => "blob" in contents && typeof contents.blob === "string")

/**
 * The bytes of every part, in order.
 *
 * @since 0.1.0
 * @category resources
 */
export const bytes = (result: McpSchema.ReadResourceResult): Uint8Array => {
  const parts = result.contents.map((contents) =>
    "blob" in contents && typeof contents.blob === "string"
      ? Buffer.from(contents.blob, "base64")
      : Buffer.from("text" in contents && typeof contents.text === "string" ? contents.text : "", "utf8")
  )
  return Buffer.concat(parts)
}

/**
 * Writes the bytes to stdout as they are (stdout is a file or a pipe).
 *
 * @since 0.1.0
 * @category resources
 */
export const toStdout = (data: Uint8Array): Effect.Effect<void> =>
  Effect.andThen(
    Effect.flatMap(Effect.service(Output.BeforeWrite), (before) => before),
    Effect.callback<void>((resume) => {
      process.stdout.write(data, () => resume(Effect.void))
    })
  )

/**
 * Writes the bytes to `file` and says so on stderr (under `--json`, as `{"uri","file","bytes"}` on stdout).
 *
 * @since 0.1.0
 * @category resources
 */
export const toFile = (
  uri: string,
  result: McpSchema.ReadResourceResult,
  file: string,
  json: boolean
): Effect.Effect<void, SystemFailure, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const data = bytes(result)
    yield* fs.writeFile(file, data).pipe(
      Effect.mapError((error) =>
        new SystemFailure({ message: `cannot write ${file}: ${error.message}`, exitCode: ExitCode.Usage })
      )
    )
    const types = [...new Set(result.contents.flatMap((contents) => contents.mimeType !== undefined ? [contents.mimeType] : []))]
    yield* json
      ? Output.json({ uri, file, bytes: data.length })
      : Output.stderr(
        `wrote ${data.length} bytes${types.length > 0 ? ` (${Text.line(types.join(", "))})` : ""} of ` +
          `${Text.line(uri)} to ${Text.line(file)}`
      )
  })
