/**
 * Paginated lists: page after page as a Stream, up to `maxPages`, or collected whole (a cursor the server refuses
 * as invalid on a later page restarts the listing once from the first page, for a whole snapshot).
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
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
 * @internal
 */
export interface Pagination {
  readonly paginate: <T>(
    method: string,
    fetchPage: (cursor: string | undefined) => Effect.Effect<Page<T>, McpError.McpClientError>,
    refused?: CursorRefused
  ) => Stream.Stream<T, McpError.McpClientError>
  readonly collect: <T>(
    pages: (refused: CursorRefused) => Stream.Stream<T, McpError.McpClientError>,
    method: string
  ) => Effect.Effect<ReadonlyArray<T>, McpError.McpClientError>
}

/**
 * The params of a page request.
 *
 * @internal
 */
export const cursorParams = (cursor: string | undefined) => cursor === undefined ? undefined : { cursor }

/**
 * @internal
 */
export const make = (maxPages: number, spanAttributes: Readonly<Record<string, unknown>>): Pagination => {
  const paginate = <T>(
    method: string,
    fetchPage: (cursor: string | undefined) => Effect.Effect<Page<T>, McpError.McpClientError>,
    refused?: CursorRefused
  ): Stream.Stream<T, McpError.McpClientError> =>
    Stream.paginateChunkEffect({ cursor: undefined as string | undefined, page: 0 }, (state) =>
      Effect.flatMap(
        refused === undefined || state.page === 0
          ? fetchPage(state.cursor)
          : Effect.tapError(fetchPage(state.cursor), (error) =>
            Effect.sync(() => {
              if (error._tag === "McpError" && error.code === McpSchema.ErrorCode.InvalidParams) refused.value = true
            })),
        (page) => {
          const chunk = Chunk.fromIterable(page.items)
          if (page.nextCursor === undefined) return Effect.succeed([chunk, Option.none()] as const)
          if (state.page + 1 >= maxPages) {
            return Effect.fail(
              new McpError.ProtocolError({
                reason: "InvalidResult",
                method,
                detail: `more than ${maxPages} pages; raise maxPages to fetch them all`
              })
            )
          }
          return Effect.succeed([chunk, Option.some({ cursor: page.nextCursor, page: state.page + 1 })] as const)
        }
      ))

  const collect = <T>(
    pages: (refused: CursorRefused) => Stream.Stream<T, McpError.McpClientError>,
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
      Effect.map((chunk): ReadonlyArray<T> => Chunk.toReadonlyArray(chunk)),
      Effect.withSpan(`McpClient ${method} (all pages)`, {
        kind: "client",
        attributes: { ...spanAttributes, "rpc.method": method }
      })
    )

  return { paginate, collect }
}
