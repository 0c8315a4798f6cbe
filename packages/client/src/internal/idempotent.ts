/**
 * The requests that only read, which a server may receive twice with no harm: the client re-issues one lost with
 * its response stream, and the HTTP transport re-sends one whose connection was closed under it before any
 * answer. Anything else (a tool call above all) may have run on the server, so losing it is reported instead.
 * Each method's definition (`mcpMethods.ts`) says which it is.
 *
 * @internal
 */
import { methodOf } from "./mcpMethods.js"

/** @internal */
export const isIdempotent = (method: string): boolean => methodOf(method)?.idempotent === true
