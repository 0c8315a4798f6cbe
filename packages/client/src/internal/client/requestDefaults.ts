/**
 * Request options in force for every request made under them (`McpClient.withRequestDefaults`), below each call's
 * own: read from the calling fiber where a request's options become its send options, so every method honours them,
 * present and future, without a wrapper per method.
 *
 * @internal
 */
import * as Context from "effect/Context"
import type * as McpClient from "../../McpClient.js"

/** @internal */
export const none: McpClient.RequestDefaults = {}

/** @internal */
export const Current: Context.Reference<McpClient.RequestDefaults> = Context.Reference<McpClient.RequestDefaults>(
  "@conduit-mcp/client/McpClient/CurrentRequestDefaults",
  { defaultValue: () => none }
)

/** `inner` over `outer`: a member `inner` sets wins; `meta` entries are merged (`inner`'s win). */
export const combine = (
  outer: McpClient.RequestDefaults,
  inner: McpClient.RequestDefaults
): McpClient.RequestDefaults => {
  const out: { -readonly [K in keyof McpClient.RequestDefaults]: McpClient.RequestDefaults[K] } = { ...outer }
  if (inner.timeout !== undefined) out.timeout = inner.timeout
  if (inner.resetTimeoutOnProgress !== undefined) out.resetTimeoutOnProgress = inner.resetTimeoutOnProgress
  if (inner.maxTotalTimeout !== undefined) out.maxTotalTimeout = inner.maxTotalTimeout
  if (inner.meta !== undefined) out.meta = outer.meta === undefined ? inner.meta : { ...outer.meta, ...inner.meta }
  return out
}

/**
 * A call's options with the defaults below them (the same object when there are none), made by `copy` so that
 * what the options object carries (who observes its ids) goes with it.
 *
 * @internal
 */
export const apply = <O extends McpClient.RequestOptions>(
  defaults: McpClient.RequestDefaults,
  options: O | undefined,
  copy: (options: O | undefined, merged: McpClient.RequestOptions) => McpClient.RequestOptions
): McpClient.RequestOptions | undefined => {
  if (defaults === none) return options
  const merged = combine(defaults, options ?? {})
  return copy(options, { ...options, ...merged })
}
