/**
 * The requests that only read, which a server may receive twice with no harm: the client re-issues one lost with
 * its response stream, and the HTTP transport re-sends one whose connection was closed under it before any
 * answer. Anything else (a tool call above all) may have run on the server, so losing it is reported instead.
 *
 * `subscriptions/listen` only reads too, but a dropped listen stream is opened again by the subscription itself,
 * after a pause.
 *
 * @internal
 */
const idempotent: ReadonlySet<string> = new Set([
  "ping",
  "server/discover",
  "tools/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
  "completion/complete"
])

/** @internal */
export const isIdempotent = (method: string): boolean => idempotent.has(method)
