import { assert, describe, it } from "@effect/vitest"
import { Buffer } from "node:buffer"
import { type Refusal, type ReplyLimits, ReplyScanner } from "../src/internal/replyScanner.js"

const limits: ReplyLimits = { maxBytes: 1_024, maxDepth: 8, maxElements: 100, maxLineBytes: 64 }

/** Scans `text` cut into chunks of the given sizes (the last size repeats); the first refusal, if any. */
const scan = (text: string | Buffer, sizes: ReadonlyArray<number>, options: ReplyLimits = limits) => {
  const bytes = typeof text === "string" ? Buffer.from(text, "latin1") : text
  const scanner = new ReplyScanner(options)
  for (let at = 0, index = 0; at < bytes.length; index++) {
    const size = sizes[Math.min(index, sizes.length - 1)]
    const refusal = scanner.scan(bytes.subarray(at, at + size))
    if (refusal !== undefined) return { refusal, index }
    at += size
  }
  return undefined
}

/** Whole, byte by byte, and in uneven cuts: the verdict is the same however the bytes arrive. */
const cuts: ReadonlyArray<ReadonlyArray<number>> = [[1 << 30], [1], [2], [3, 7, 1, 5], [13, 1, 2]]

const accepted = (text: string | Buffer, options?: ReplyLimits) => {
  for (const sizes of cuts) assert.isUndefined(scan(text, sizes, options)?.refusal, `cut ${sizes.join(",")}`)
}

const refused = (text: string | Buffer, reason: string | RegExp, options?: ReplyLimits): Refusal => {
  const verdicts = cuts.map((sizes) => scan(text, sizes, options))
  for (const verdict of verdicts) {
    assert.isDefined(verdict)
    if (typeof reason === "string") assert.strictEqual(verdict!.refusal.reason, reason)
    else assert.match(verdict!.refusal.reason, reason)
  }
  return verdicts[0]!.refusal
}

describe("ReplyScanner", () => {
  it("accepts the RESP2 replies the store and ioredis get, however they are cut", () => {
    accepted("+OK\r\n")
    accepted("-ERR unknown command 'x', with args beginning with: \r\n")
    accepted(":0\r\n:-42\r\n:9223372036854775807\r\n")
    accepted("$-1\r\n$0\r\n\r\n$5\r\nhello\r\n$4\r\n\r\n\r\n\r\n")
    accepted("*-1\r\n*0\r\n")
    // SCAN: the next cursor and a page of keys
    accepted("*2\r\n$4\r\n1536\r\n*3\r\n$3\r\nc:a\r\n$3\r\nc:b\r\n$3\r\nc:c\r\n")
    // CLUSTER SLOTS of Redis 7: four levels
    accepted("*1\r\n*3\r\n:0\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n:7000\r\n$2\r\nid\r\n*2\r\n$8\r\nhostname\r\n$1\r\nh\r\n")
    // a line may hold anything but CR LF (the store escapes what an error says)
    accepted("-ERR \u001b]0;x\u0007\n\u009b\r\n")
  })

  it("refuses an array nested deeper than maxDepth, at its header", () => {
    accepted(`${"*1\r\n".repeat(8)}:1\r\n`)
    const deep = `${"*1\r\n".repeat(100_000)}:1\r\n`
    const refusal = refused(deep, "a reply nested deeper than 8 levels")
    assert.strictEqual(refusal.replyStart, 0)
    // whole, the scan stopped at the ninth `*`: what follows is never looked at
    const whole = scan(deep, [1 << 30])!
    assert.strictEqual(whole.index, 0)
    // byte by byte, the ninth `*` is the 33rd byte
    assert.strictEqual(scan(deep, [1])!.index, 32)
    // a null or empty array counts as a level too, and levels close again as arrays fill
    refused(`${"*1\r\n".repeat(8)}*0\r\n`, "a reply nested deeper than 8 levels")
    accepted(`*2\r\n${"*1\r\n".repeat(7)}:1\r\n${"*1\r\n".repeat(7)}:2\r\n`)
  })

  it("refuses a bulk string that does not fit in maxBytes at its header, and a reply that grows past it", () => {
    // `$1015\r\n` + 1015 bytes + CR LF: 1,024 bytes, the bound
    accepted(`$1015\r\n${"a".repeat(1015)}\r\n`)
    const over = refused(`$1016\r\n${"a".repeat(1016)}\r\n`, "a reply larger than maxReplyBytes (1024 bytes)")
    assert.strictEqual(over.replyStart, 0)
    // refused at the header: the first chunk of 300 MB announced is enough, even before its CR LF
    assert.isDefined(new ReplyScanner(limits).scan(Buffer.from("$314572800\r\n")))
    assert.isDefined(new ReplyScanner(limits).scan(Buffer.from("$31457280")))
    // each bulk string fits, together they do not: refused at the header of the first that cannot
    const bulks = `*50\r\n${`$20\r\n${"b".repeat(20)}\r\n`.repeat(50)}`
    refused(bulks, "a reply larger than maxReplyBytes (1024 bytes)")
    assert.isAtMost(scan(bulks, [1])!.index, 1_023)
    // integers announce no size: refused at the byte that passes the bound
    const roomy = { ...limits, maxElements: 1_000 }
    const integers = `*300\r\n${":1234567\r\n".repeat(300)}`
    refused(integers, "a reply larger than maxReplyBytes (1024 bytes)", roomy)
    assert.strictEqual(scan(integers, [1], roomy)!.index, 1_024)
    // the bound is per reply: two replies of 1,000 bytes pass
    accepted(`$993\r\n${"a".repeat(993)}\r\n`.repeat(2))
  })

  it("refuses an array announcing more than maxElements elements, at its header, counting every level", () => {
    const huge = refused("*2000000000\r\n:1\r\n", "a reply of more than 100 array elements")
    assert.strictEqual(huge.replyStart, 0)
    assert.isDefined(new ReplyScanner(limits).scan(Buffer.from("*2000000000")))
    accepted(`*100\r\n${":1\r\n".repeat(100)}`)
    refused(`*2\r\n*60\r\n${":1\r\n".repeat(60)}*40\r\n${":1\r\n".repeat(40)}`, "a reply of more than 100 array elements")
  })

  it("refuses a status or error line longer than maxLineBytes", () => {
    accepted(`+${"o".repeat(64)}\r\n`)
    refused(`-${"e".repeat(65)}\r\n`, "a status or error line longer than 64 bytes")
    // no CR ever comes: refused once the line is past the bound
    assert.isDefined(scan(`+${"o".repeat(10_000)}`, [1]))
  })

  it("refuses what is not RESP2 as the parser frames it", () => {
    // RESP3's map, set, push, null, boolean, double, big number, verbatim string and attribute
    for (const type of "%~>_#,(=|") refused(`${type}1\r\n`, /^a reply that is not RESP2 \(byte 0x[0-9a-f]{2} where/)
    refused("+OK\rX", /CR without LF/)
    refused("$3\r\nabcd\r\n", /longer than its length/)
    refused("$3\r\nabc\n\r", /longer than its length/)
    refused(":12a\r\n", /malformed number/)
    refused(":\r\n", /malformed number/)
    refused(":-\r\n", /malformed number/)
    refused(":+1\r\n", /malformed number/)
    refused("$-2\r\n", /negative length/)
    refused("*-10\r\n", /negative length/)
    refused(`:${"1".repeat(20)}\r\n`, /more than 19 digits/)
    refused(`$${"0".repeat(20)}\r\n\r\n`, /more than 19 digits/)
  })

  it("tells where the refused reply starts in its chunk, so the replies before it are passed on", () => {
    const scanner = new ReplyScanner(limits)
    assert.isUndefined(scanner.scan(Buffer.from("+OK\r\n$2\r\nab\r\n*1\r\n")))
    // the array begun in the previous chunk is refused: nothing of this chunk belongs to an earlier reply
    assert.strictEqual(scanner.scan(Buffer.from(`${"*1\r\n".repeat(8)}:1\r\n`))?.replyStart, 0)
    const fresh = new ReplyScanner(limits)
    const refusal = fresh.scan(Buffer.from(`+OK\r\n:1\r\n${"*1\r\n".repeat(9)}`))
    assert.strictEqual(refusal?.replyStart, 9)
    // and after a refusal, nothing more is accepted
    assert.isDefined(fresh.scan(Buffer.from("+OK\r\n")))
  })
})
