/**
 * The bytes of a line or an event that waits for the rest of it, across chunks, held in memory proportional to
 * their number whatever the chunks are. A piece of at least `SMALL` bytes is held as it is (the chunk's own bytes,
 * or a copy of them when the chunk may be reused); small pieces are gathered into blocks that grow by doubling up
 * to `BLOCK` bytes. So a line a server trickles one byte per chunk costs about two bytes per byte, where an object
 * per piece cost a hundred and more, and each byte is copied a bounded number of times. A line's first piece is
 * referenced, not copied, until a small piece follows it (a line split across two chunks, the common case, is
 * joined once, as before).
 *
 * @internal
 */

const SMALL = 4096
const BLOCK = 64 * 1024

/** @internal */
export interface PendingBytes {
  /** The bytes held. */
  readonly size: () => number
  /**
   * Holds `piece` after what is held. `copy`: the piece is a view on a buffer its producer may reuse, so its bytes
   * must be copied; else the piece is referenced when it may be, and must not be mutated.
   */
  readonly add: (piece: Uint8Array, copy: boolean) => void
  /** The last byte held, if any. */
  readonly lastByte: () => number | undefined
  /** What is held followed by `tail`, cut to `limit` bytes, in one array; nothing is held after. */
  readonly take: (tail: Uint8Array, limit: number) => Uint8Array
  readonly clear: () => void
  /** Bytes copied so far (gathering small pieces, growing blocks, joining), for the tests of linear work. */
  readonly copied: () => number
}

/** @internal */
export const make = (): PendingBytes => {
  let pieces: Array<Uint8Array> = []
  // the block small pieces are gathered into, after `pieces`
  let open: Uint8Array | undefined
  let openLength = 0
  let bytes = 0
  let copied = 0

  // the last block closed had grown to a whole block: the next one starts whole (the line is long and trickled)
  let lastBlockFull = false

  // a block less than half used is kept as a copy of what it holds, so that a block holds at most twice its bytes
  const close = () => {
    if (open === undefined) return
    lastBlockFull = open.length === BLOCK
    if (2 * openLength < open.length) {
      pieces.push(open.slice(0, openLength))
      copied += openLength
    } else {
      pieces.push(open.subarray(0, openLength))
    }
    open = undefined
    openLength = 0
  }

  const gather = (piece: Uint8Array) => {
    const needed = openLength + piece.length
    if (open !== undefined && needed > open.length) {
      if (needed <= BLOCK) {
        const grown = new Uint8Array(Math.min(BLOCK, Math.max(2 * open.length, needed)))
        grown.set(open.subarray(0, openLength))
        copied += openLength
        open = grown
      } else {
        close()
      }
    }
    if (open === undefined) {
      open = new Uint8Array(lastBlockFull ? BLOCK : Math.min(BLOCK, Math.max(256, 2 * piece.length)))
    }
    open.set(piece, openLength)
    openLength += piece.length
    copied += piece.length
  }

  const add = (piece: Uint8Array, copy: boolean) => {
    if (piece.length === 0) return
    bytes += piece.length
    if (piece.length >= SMALL) {
      close()
      if (copy) copied += piece.length
      pieces.push(copy ? piece.slice() : piece)
      return
    }
    if (open === undefined && pieces.length === 0 && !copy) {
      pieces.push(piece)
      return
    }
    // the only piece held is a small one referenced as it came (nothing else leaves one small piece alone
    // without a block after it): it joins the block with this one
    if (open === undefined && pieces.length === 1 && pieces[0]!.length < SMALL) gather(pieces.pop()!)
    gather(piece)
  }

  const lastByte = (): number | undefined => {
    if (open !== undefined && openLength > 0) return open[openLength - 1]
    const last = pieces[pieces.length - 1]
    return last === undefined ? undefined : last[last.length - 1]
  }

  const clear = () => {
    pieces = []
    open = undefined
    openLength = 0
    lastBlockFull = false
    bytes = 0
  }

  const take = (tail: Uint8Array, limit: number): Uint8Array => {
    if (bytes === 0) return tail.length > limit ? tail.subarray(0, limit) : tail
    close()
    const total = Math.min(bytes + tail.length, limit)
    const out = new Uint8Array(total)
    let offset = 0
    for (const part of pieces) {
      if (offset >= total) break
      const piece = part.length > total - offset ? part.subarray(0, total - offset) : part
      out.set(piece, offset)
      offset += piece.length
    }
    if (offset < total) {
      const piece = tail.length > total - offset ? tail.subarray(0, total - offset) : tail
      out.set(piece, offset)
      offset += piece.length
    }
    copied += offset
    clear()
    return out
  }

  return { size: () => bytes, add, lastByte, take, clear, copied: () => copied }
}
