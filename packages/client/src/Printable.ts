/**
 * Text a server controls, made fit for a log line: what the client itself does to every server string it logs,
 * for packages and applications that log server text of their own (`@conduit-mcp/ai` logs the tools it leaves
 * out). Control and invisible characters become visible escapes (`\x1b`, `\u202e`, `\u{e0041}`).
 *
 * @example
 * ```ts
 * import { Printable } from "@conduit-mcp/client"
 * import { Effect } from "effect"
 *
 * const logTool = (name: string) => Effect.logInfo(Printable.printable(`using tool ${name}`))
 * ```
 *
 * @since 0.2.0
 */
import * as internal from "./internal/printable.js"

/**
 * Escapes every C0 and C1 control, DEL, format and default-ignorable character and line or paragraph separator as
 * a visible escape, so a log printed to a terminal carries no escape sequence, carriage return, bidirectional
 * override or hidden text from a server.
 *
 * @since 0.2.0
 * @category escaping
 */
export const printable: (text: string) => string = internal.printable
