/**
 * Prototype safety of what a server sends. `JSON.parse` keeps a member named `__proto__` as an own data property,
 * harmless while the object is only read; but a copy made by assignment (`out[key] = value`) hands that value to
 * the `__proto__` setter, which makes it the copy's prototype. Effect Schema's decode copies so (a `Record`, and a
 * `Struct` decoded with `onExcessProperty: "preserve"`, as every MCP result is), and so do `Object.assign` and the
 * usual deep merges: the copy then answers keys it does not have (an `allowed-tools` in a skill's listed
 * frontmatter, an `isAdmin` in a tool's structured content) and loses the methods of `Object.prototype`. Such a
 * member cannot survive a copy as data, so it is removed where a frame is decoded, before any schema or consumer
 * sees it; no other member is touched (`constructor` and `prototype` are plain data when assigned).
 *
 * @internal
 */

/**
 * Whether JSON text may hold a member named `__proto__`: the name itself, or a `\u` escape of one of its
 * characters (`_`, `p`, `r`, `o`, `t`), which `JSON.parse` turns into the same name. A cheap scan that is false for
 * almost every frame, so the walk below runs only when it may find something.
 */
export const mayHold = (text: string): boolean =>
  text.includes("__proto__") || (text.includes("\\u00") && escaped.test(text))

const escaped = /\\u00(?:5[fF]|6[fF]|7[024])/

/**
 * Removes every own `__proto__` member of every object in a value as `JSON.parse` builds it (plain objects and
 * arrays), without recursion (the value may be nested as deep as the frame limit allows). Returns how many it
 * removed.
 */
export const remove = (value: unknown): number => {
  if (typeof value !== "object" || value === null) return 0
  let removed = 0
  const stack: Array<object> = [value]
  while (stack.length > 0) {
    const current = stack.pop()!
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) {
        const element: unknown = current[i]
        if (typeof element === "object" && element !== null) stack.push(element)
      }
      continue
    }
    if (Object.hasOwn(current, "__proto__")) {
      // deletes the own data property; the object's prototype is not the setter's to change here
      delete (current as { __proto__?: unknown }).__proto__
      removed++
    }
    for (const member of Object.values(current)) {
      if (typeof member === "object" && member !== null) stack.push(member)
    }
  }
  return removed
}

/**
 * `JSON.parse` for text from a server, with its `__proto__` members removed (see the module's note). Throws what
 * `JSON.parse` throws.
 */
export const parse = (text: string): unknown => {
  const parsed: unknown = JSON.parse(text)
  if (mayHold(text)) remove(parsed)
  return parsed
}
