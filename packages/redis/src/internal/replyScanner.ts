/**
 * An incremental check of the RESP2 replies a Redis server sends, run on each chunk of the connection before
 * ioredis's reply parser (redis-parser) sees it.
 *
 * That parser recurses once per level of array nesting (a reply of `*1\r\n` nested a few thousand deep throws
 * `RangeError` inside the socket's data handler, which nothing catches: the process exits), buffers a bulk string
 * of whatever length the server announces, and allocates an array of whatever count the server announces. The
 * scanner follows the same framing and refuses, before the parser gets the bytes, a reply nested deeper than
 * `maxDepth` arrays, larger than `maxBytes` (a bulk string is refused at its header when the length it announces
 * does not fit), with more than `maxElements` array elements (refused at the array's header), or with a status,
 * error or number line longer than `maxLineBytes` (the parser copies an unfinished line again with every chunk).
 *
 * It accepts only what the parser frames the same way: a line must end with CR LF (the parser ends it at the first
 * CR and skips the next byte, whatever it is), a bulk string's payload must be followed by CR LF, lengths and
 * integers are decimal digits (`-1` alone for a null), and a reply starts with one of `+ - : $ *` (RESP3's types
 * are refused: ioredis speaks RESP2 and never sends `HELLO`). Every byte is looked at once, a bulk payload not
 * at all: the cost is linear in what arrives, whatever the chunking, and the state is a few numbers and one
 * count per open array.
 *
 * @internal
 */

/** @internal */
export interface ReplyLimits {
  /** Bytes of one reply, its framing and nested elements included. */
  readonly maxBytes: number
  /** Levels of arrays: a top-level array is level 1. */
  readonly maxDepth: number
  /** Array elements in one reply, at every level together. */
  readonly maxElements: number
  /** Bytes of a status or error line (without its CR LF). */
  readonly maxLineBytes: number
}

/** Why a reply was refused, and where it starts in the chunk that refused it (0 when it began in an earlier one). */
export interface Refusal {
  readonly reason: string
  readonly replyStart: number
}

const CR = 13
const LF = 10
const DIGIT_0 = 48
const DIGIT_9 = 57
const PLUS = 43
const MINUS = 45
const COLON = 58
const DOLLAR = 36
const STAR = 42

/** The most digits of a length or an integer (a signed 64-bit integer has 19). */
const MAX_DIGITS = 19

// what the scanner expects next
const TYPE = 0 // the type byte of a value
const LINE = 1 // the text of a status or error line, up to CR
const NUMBER = 2 // after `:`, `$` or `*`: an optional `-`, then digits up to CR
const LINE_END = 3 // LF after the CR of a line or a number
const PAYLOAD = 4 // the bytes of a bulk string
const PAYLOAD_CR = 5 // CR after a bulk string's bytes
const PAYLOAD_LF = 6 // LF after it
const REFUSED = 7

// what a line is
const TEXT = 0 // after `+` or `-`
const INTEGER = 1 // after `:`
const BULK_LENGTH = 2 // after `$`
const ARRAY_COUNT = 3 // after `*`

const hex = (byte: number): string => `0x${byte.toString(16).padStart(2, "0")}`

/** @internal */
export class ReplyScanner {
  private state = TYPE
  /** Elements still due in each open array, outermost first. */
  private readonly open: Array<number> = []
  /** Bytes of the current reply so far. */
  private bytes = 0
  /** Array elements announced in the current reply so far. */
  private elements = 0
  private lineBytes = 0
  private lineKind = TEXT
  private number = 0
  private digits = 0
  private negative = false
  /** Bytes of a bulk string's payload still to come. */
  private remaining = 0
  private refusal: Refusal | undefined

  constructor(private readonly limits: ReplyLimits) {}

  /**
   * Scans the next chunk. Returns nothing when every byte in it may reach the parser; otherwise the refusal, after
   * which the connection is to be closed (the scanner refuses everything after it).
   */
  scan(chunk: Uint8Array): Refusal | undefined {
    if (this.refusal !== undefined) return { reason: this.refusal.reason, replyStart: 0 }
    const limits = this.limits
    const length = chunk.length
    let start = 0
    let i = 0
    const refuse = (reason: string): Refusal => {
      this.state = REFUSED
      this.refusal = { reason, replyStart: start }
      return this.refusal
    }
    while (i < length) {
      switch (this.state) {
        case TYPE: {
          if (this.open.length === 0) {
            start = i
            this.bytes = 0
            this.elements = 0
          }
          const byte = chunk[i++]
          this.bytes++
          if (byte === PLUS || byte === MINUS) {
            this.state = LINE
            this.lineKind = TEXT
            this.lineBytes = 0
          } else if (byte === COLON || byte === DOLLAR || byte === STAR) {
            if (byte === STAR && this.open.length >= limits.maxDepth) {
              return refuse(`a reply nested deeper than ${limits.maxDepth} levels`)
            }
            this.state = NUMBER
            this.lineKind = byte === COLON ? INTEGER : byte === DOLLAR ? BULK_LENGTH : ARRAY_COUNT
            this.number = 0
            this.digits = 0
            this.negative = false
          } else {
            return refuse(`a reply that is not RESP2 (byte ${hex(byte)} where a value starts)`)
          }
          break
        }
        case LINE: {
          const cr = chunk.indexOf(CR, i)
          const end = cr === -1 ? length : cr
          this.lineBytes += end - i
          this.bytes += end - i
          i = end
          if (this.lineBytes > limits.maxLineBytes) {
            return refuse(`a status or error line longer than ${limits.maxLineBytes} bytes`)
          }
          if (cr !== -1) {
            i++
            this.bytes++
            this.state = LINE_END
          }
          break
        }
        case NUMBER: {
          const byte = chunk[i++]
          this.bytes++
          if (byte >= DIGIT_0 && byte <= DIGIT_9) {
            if (this.negative && this.lineKind !== INTEGER && (this.digits > 0 || byte !== DIGIT_0 + 1)) {
              return refuse("a reply that is not RESP2 (a negative length other than -1)")
            }
            if (++this.digits > MAX_DIGITS) return refuse("a reply that is not RESP2 (a number of more than 19 digits)")
            this.number = this.number * 10 + (byte - DIGIT_0)
            if (this.negative) break
            if (this.lineKind === BULK_LENGTH && this.number > limits.maxBytes) {
              return refuse(`a reply larger than maxReplyBytes (${limits.maxBytes} bytes)`)
            }
            if (this.lineKind === ARRAY_COUNT && this.number > limits.maxElements) {
              return refuse(`a reply of more than ${limits.maxElements} array elements`)
            }
          } else if (byte === MINUS && this.digits === 0 && !this.negative) {
            this.negative = true
          } else if (byte === CR && this.digits > 0) {
            this.state = LINE_END
          } else {
            return refuse("a reply that is not RESP2 (a malformed number)")
          }
          break
        }
        case LINE_END: {
          const byte = chunk[i++]
          this.bytes++
          if (byte !== LF) return refuse("a reply that is not RESP2 (CR without LF)")
          const refused = this.lineEnded()
          if (refused !== undefined) return refuse(refused)
          break
        }
        case PAYLOAD: {
          const take = Math.min(this.remaining, length - i)
          i += take
          this.bytes += take
          this.remaining -= take
          if (this.remaining === 0) this.state = PAYLOAD_CR
          break
        }
        case PAYLOAD_CR:
        case PAYLOAD_LF: {
          const byte = chunk[i++]
          this.bytes++
          if (byte !== (this.state === PAYLOAD_CR ? CR : LF)) {
            return refuse("a reply that is not RESP2 (a bulk string longer than its length)")
          }
          if (this.state === PAYLOAD_CR) this.state = PAYLOAD_LF
          else this.valueEnded()
          break
        }
        default:
          return refuse("a reply after a refused one")
      }
      // no header announces the size of an array: a reply of many values passes the bound as its bytes arrive
      if (this.bytes > limits.maxBytes) return refuse(`a reply larger than maxReplyBytes (${limits.maxBytes} bytes)`)
    }
    return undefined
  }

  /** A line or a number ended with CR LF: what it means for the values around it. */
  private lineEnded(): string | undefined {
    const count = this.negative ? -1 : this.number
    switch (this.lineKind) {
      case TEXT:
      case INTEGER:
        this.valueEnded()
        return undefined
      case BULK_LENGTH:
        if (count < 0) {
          this.valueEnded()
          return undefined
        }
        // the whole bulk string must fit: refused at its header rather than after buffering
        if (this.bytes + count + 2 > this.limits.maxBytes) {
          return `a reply larger than maxReplyBytes (${this.limits.maxBytes} bytes)`
        }
        this.remaining = count
        this.state = count === 0 ? PAYLOAD_CR : PAYLOAD
        return undefined
      default:
        if (count <= 0) {
          this.valueEnded()
          return undefined
        }
        this.elements += count
        if (this.elements > this.limits.maxElements) {
          return `a reply of more than ${this.limits.maxElements} array elements`
        }
        this.open.push(count)
        this.state = TYPE
        return undefined
    }
  }

  /** A value is complete: it fills a place in the innermost open array, which may complete it in turn. */
  private valueEnded(): void {
    this.state = TYPE
    const open = this.open
    while (open.length > 0) {
      const last = open.length - 1
      if (--open[last] > 0) return
      open.pop()
    }
  }
}
