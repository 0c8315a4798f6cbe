/**
 * Paginated lists: page after page as a Stream, or collected whole (a cursor the server refuses as invalid on a
 * later page restarts the listing once from the first page, for a whole snapshot).
 *
 * Every listing has a total budget across its pages: at most `maxPages` pages, `maxItems` items and `maxBytes`
 * bytes (the items measured as compact JSON, see {@link measure}, with the cursors kept to notice a repeat). A
 * page that would pass a budget is not emitted: the listing fails with a `ProtocolError` whose reason is
 * `ListingBudgetExceeded` and whose `budget` names the option. A cursor the server gave before in the same listing
 * fails it with `RepeatedCursor` (it would page forever). A collected listing that fails returns nothing: what
 * it held is dropped with it, so a listing never holds more than its budget and the page being checked.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"

/**
 * One page of a list.
 *
 * @internal
 */
export interface Page<T> {
  readonly items: ReadonlyArray<T>
  readonly nextCursor: string | undefined
}

/**
 * Set when a page after the first was refused as invalid params: its cursor was no longer good.
 *
 * @internal
 */
export interface CursorRefused {
  value: boolean
}

/**
 * The total budget of one listing.
 *
 * @internal
 */
export interface Budget {
  readonly maxPages: number
  readonly maxItems: number
  readonly maxBytes: number
}

/**
 * The defaults of the client's options `maxPages`, `maxListItems` and `maxListBytes`.
 *
 * @internal
 */
export const defaultBudget: Budget = { maxPages: 100, maxItems: 50_000, maxBytes: 32 * 1024 * 1024 }

/**
 * @internal
 */
export interface Pagination {
  readonly paginate: <T, E = McpError.McpClientError>(
    method: string,
    fetchPage: (cursor: string | undefined) => Effect.Effect<Page<T>, E>,
    refused?: CursorRefused
  ) => Stream.Stream<T, E | McpError.ProtocolError>
  readonly collect: <T, E = McpError.McpClientError>(
    pages: (refused: CursorRefused) => Stream.Stream<T, E>,
    method: string
  ) => Effect.Effect<ReadonlyArray<T>, E>
}

/**
 * The params of a page request.
 *
 * @internal
 */
export const cursorParams = (cursor: string | undefined) => cursor === undefined ? undefined : { cursor }

/**
 * The length of a decoded value written as compact JSON, each character of a string counted once (escapes are not
 * expanded), or the first count past `limit`: the walk stops there, so it takes at most `limit` + 1 steps whatever
 * the value (each value it visits counts at least one). What a listing keeps is the decoded items, so that is
 * what is measured; the frames they came in are bounded by the transport and dropped once decoded. Iterative:
 * any depth.
 *
 * @internal
 */
export const measure = (value: unknown, limit: number): number => {
  let total = 0
  const stack: Array<unknown> = [value]
  while (stack.length > 0 && total <= limit) {
    const next = stack.pop()
    switch (typeof next) {
      case "string":
        total += next.length + 2
        break
      case "number":
        // (at most 24 characters; the shortest that fits is cheap enough and exact)
        total += Number.isFinite(next) ? String(next).length : 4
        break
      case "boolean":
        total += next ? 4 : 5
        break
      case "object": {
        if (next === null) {
          total += 4
        } else if (Array.isArray(next)) {
          total += 1 + Math.max(next.length, 1)
          for (let i = next.length - 1; i >= 0 && total <= limit; i--) stack.push(next[i])
        } else {
          const keys = Object.keys(next)
          total += 1 + Math.max(keys.length, 1)
          for (let i = keys.length - 1; i >= 0 && total <= limit; i--) {
            const key = keys[i]!
            total += key.length + 3
            stack.push((next as Record<string, unknown>)[key])
          }
        }
        break
      }
      default:
        // undefined, functions, symbols: not written
        break
    }
  }
  return total
}

const exceeded = (method: string, budget: McpError.ListingBudget, limit: number, detail: string) =>
  new McpError.ProtocolError({
    reason: "ListingBudgetExceeded",
    method,
    budget,
    limit,
    detail: `${detail}; raise ${budget} to fetch them all`
  })

/**
 * What one run of a listing has taken so far.
 */
interface Taken {
  pages: number
  items: number
  bytes: number
  readonly cursors: Set<string>
}

/**
 * Checks one page against what the listing has taken: the error to fail with, or undefined (the page is then
 * counted, and its cursor kept).
 */
const check = (
  method: string,
  budget: Budget,
  taken: Taken,
  page: Page<unknown>
): McpError.ProtocolError | undefined => {
  const items = taken.items + page.items.length
  if (items > budget.maxItems) {
    return exceeded(method, "maxListItems", budget.maxItems, `more than ${budget.maxItems} items`)
  }
  const cursor = page.nextCursor
  const room = budget.maxBytes - taken.bytes
  const bytes = measure(page.items, room) + (cursor === undefined ? 0 : cursor.length)
  if (bytes > room) {
    return exceeded(method, "maxListBytes", budget.maxBytes, `more than ${budget.maxBytes} bytes of items and cursors`)
  }
  if (cursor !== undefined) {
    if (taken.cursors.has(cursor)) {
      return new McpError.ProtocolError({
        reason: "RepeatedCursor",
        method,
        detail: `page ${taken.pages + 1} gave a cursor an earlier page gave: the listing would never end`
      })
    }
    if (taken.pages + 1 >= budget.maxPages) {
      return exceeded(method, "maxPages", budget.maxPages, `more than ${budget.maxPages} pages`)
    }
    taken.cursors.add(cursor)
  }
  taken.pages++
  taken.items = items
  taken.bytes += bytes
  return undefined
}

/**
 * @internal
 */
export const make = (budget: Budget, spanAttributes: Readonly<Record<string, unknown>>): Pagination => {
  const paginate = <T, E = McpError.McpClientError>(
    method: string,
    fetchPage: (cursor: string | undefined) => Effect.Effect<Page<T>, E>,
    refused?: CursorRefused
  ): Stream.Stream<T, E | McpError.ProtocolError> =>
    // (what one run has taken is its own: a stream run twice starts from nothing each time)
    Stream.suspend(() => {
      const taken: Taken = { pages: 0, items: 0, bytes: 0, cursors: new Set() }
      return Stream.paginate(undefined as string | undefined, (cursor) =>
        Effect.flatMap(
          refused === undefined || taken.pages === 0
            ? fetchPage(cursor)
            : Effect.tapError(fetchPage(cursor), (error) =>
              Effect.sync(() => {
                if (error instanceof McpError.McpError && error.code === McpSchema.ErrorCode.InvalidParams) {
                  refused.value = true
                }
              })),
          (page): Effect.Effect<
            readonly [ReadonlyArray<T>, Option.Option<string>],
            McpError.ProtocolError
          > => {
            const error = check(method, budget, taken, page)
            if (error !== undefined) return Effect.fail(error)
            return Effect.succeed([page.items, Option.fromNullishOr(page.nextCursor)] as const)
          }
        ))
    })

  const collect = <T, E = McpError.McpClientError>(
    pages: (refused: CursorRefused) => Stream.Stream<T, E>,
    method: string
  ) =>
    Effect.suspend(() => {
      const refused: CursorRefused = { value: false }
      return Effect.catchIf(
        Stream.runCollect(pages(refused)),
        () => refused.value,
        () => Stream.runCollect(pages({ value: false }))
      )
    }).pipe(
      Effect.withSpan(`McpClient ${method} (all pages)`, {
        kind: "client",
        attributes: { ...spanAttributes, "rpc.method": method }
      })
    )

  return { paginate, collect }
}
