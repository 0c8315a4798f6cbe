/**
 * The skills extension (`io.modelcontextprotocol/skills`, SEP-2640): a server publishes skills — a `SKILL.md`
 * with YAML frontmatter plus supporting files — and lists them with `skills/list`, each entry carrying the
 * skill's frontmatter and the `sha256:` digest and byte size of every file. Files are fetched lazily with
 * `resources/read`, and only when the skill is loaded: listing never reads a file.
 *
 * Every file read is verified before it is used: its byte length against the listed size, its content against
 * the listed digest, and for `SKILL.md` its frontmatter, field by field, against the listed frontmatter. Any
 * discrepancy refuses the skill with {@link SkillVerificationError}; nothing unverified is returned, and no
 * supporting file of a refused skill is read.
 *
 * @example
 * ```ts
 * import { McpClient, Skills } from "@conduit-mcp/client"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const client = yield* McpClient.McpClient
 *   if (!Skills.isSupported(yield* client.session)) return
 *   const [first] = yield* Skills.list()
 *   const skill = yield* Skills.load(first)
 *   return skill.body
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Codec from "./internal/codec.js"
import { Open } from "./internal/mcpSchemaCore.js"
import * as Frontmatter from "./internal/skillsFrontmatter.js"
import * as McpClient from "./McpClient.js"
import type * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * The extension identifier, as declared in `capabilities.extensions`.
 *
 * @since 0.1.0
 * @category constants
 */
export const extensionId = "io.modelcontextprotocol/skills"

/**
 * Client capabilities declaring support for the extension (merge them into `McpClientOptions.capabilities`).
 *
 * @since 0.1.0
 * @category constants
 */
export const clientCapabilities: McpSchema.ClientCapabilities = { extensions: { [extensionId]: {} } }

/**
 * Whether the server advertises the extension.
 *
 * @since 0.1.0
 * @category guards
 */
export const isSupported = (session: McpClient.ServerSession): boolean => {
  const declared = session.capabilities.extensions?.[extensionId]
  return typeof declared === "object" && declared !== null && !Array.isArray(declared)
}

/**
 * One file of a skill, as listed. Members it does not name are kept (as every MCP object is read).
 *
 * @since 0.1.0
 * @category models
 */
export const SkillFile = Open({
  uri: Schema.String,
  /** `sha256:` followed by the lowercase hex SHA-256 of the file's bytes. */
  digest: Schema.String,
  /** The file's length in bytes. */
  size: Schema.Natural,
  mimeType: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type SkillFile = typeof SkillFile.Type

/**
 * One skill, as `skills/list` describes it.
 *
 * @since 0.1.0
 * @category models
 */
export const SkillEntry = Open({
  /** The skill's `SKILL.md` (`skill://<name>/SKILL.md`). */
  uri: Schema.String,
  /** The skill's frontmatter, exactly as its `SKILL.md` must carry it. */
  frontmatter: Schema.Record(Schema.String, Schema.Unknown),
  /** Every file of the skill, `SKILL.md` included. */
  resources: Schema.Array(SkillFile)
})

/**
 * @since 0.1.0
 * @category models
 */
export type SkillEntry = typeof SkillEntry.Type

/**
 * A page of `skills/list`.
 *
 * @since 0.1.0
 * @category models
 */
export const ListSkillsResult = Open({
  skills: Schema.Array(SkillEntry),
  nextCursor: Schema.optional(Schema.String),
  ttlMs: Schema.optional(Schema.Number),
  cacheScope: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ListSkillsResult = typeof ListSkillsResult.Type

/**
 * A skill file failed verification, or is not one of the skill's listed files. The skill must not be used.
 *
 * @since 0.1.0
 * @category errors
 */
export class SkillVerificationError extends Schema.TaggedError<SkillVerificationError>(
  "@conduit-mcp/client/SkillVerificationError"
)("SkillVerificationError", {
  reason: Schema.Literals(["Size", "Digest", "UnsupportedDigest", "Frontmatter", "NotListed", "Content"]),
  uri: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `skill file ${this.uri} refused (${this.reason}): ${this.detail}`
  }
}

/**
 * @since 0.1.0
 * @category errors
 */
export type VerificationFailure = SkillVerificationError

/**
 * A file whose size and digest matched its listing.
 *
 * @since 0.1.0
 * @category models
 */
export interface VerifiedFile {
  readonly uri: string
  readonly mimeType: string | undefined
  readonly bytes: Uint8Array
}

/**
 * A loaded skill: its verified `SKILL.md`, split into frontmatter and body.
 *
 * @since 0.1.0
 * @category models
 */
export interface LoadedSkill {
  readonly entry: SkillEntry
  /** The whole `SKILL.md`. */
  readonly text: string
  readonly frontmatter: Readonly<Record<string, unknown>>
  /** The Markdown after the frontmatter. */
  readonly body: string
}

/**
 * Options of {@link list}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListOptions {
  /** The most pages to fetch (default 100). */
  readonly maxPages?: number | undefined
  /** The most skills to collect over all pages (default 50,000, as the client option). */
  readonly maxListItems?: number | undefined
  /** The most bytes of entries and cursors to hold over all pages (default 32 MiB, as the client option). */
  readonly maxListBytes?: number | undefined
  readonly request?: McpClient.RequestOptions | undefined
}

/**
 * One page of `skills/list`.
 *
 * @since 0.1.0
 * @category operations
 */
export const listPage: (
  cursor?: string | undefined,
  options?: McpClient.RequestOptions
) => Effect.Effect<ListSkillsResult, McpError.McpClientError, McpClient.McpClient> = Effect.fn("Skills.listPage", {
  attributes: { "rpc.method": "skills/list" }
})(function*(cursor?: string | undefined, options?: McpClient.RequestOptions) {
  const client = yield* McpClient.McpClient
  return yield* client.request("skills/list", cursor === undefined ? {} : { cursor }, ListSkillsResult, options)
})

/**
 * Every skill the server lists, following `nextCursor`. Reads no skill file. A listing within the client's listing
 * budget (`McpClient.collectPages`): past `maxPages` (default 100), `maxListItems` or `maxListBytes` it fails with
 * `ProtocolError` `ListingBudgetExceeded`, and a cursor the server gave before fails it with `RepeatedCursor`.
 *
 * @since 0.1.0
 * @category operations
 */
export const list: (
  options?: ListOptions
) => Effect.Effect<ReadonlyArray<SkillEntry>, McpError.McpClientError, McpClient.McpClient> = Effect.fn(
  "Skills.list"
)(function*(options?: ListOptions) {
  const client = yield* McpClient.McpClient
  return yield* McpClient.collectPages(
    "skills/list",
    (cursor) =>
      Effect.map(
        Effect.provideService(listPage(cursor, options?.request), McpClient.McpClient, client),
        (result) => ({ items: result.skills, nextCursor: result.nextCursor })
      ),
    { maxPages: options?.maxPages, maxListItems: options?.maxListItems, maxListBytes: options?.maxListBytes }
  )
})

const refuse = (reason: SkillVerificationError["reason"], uri: string, detail: string) =>
  Effect.fail(new SkillVerificationError({ reason, uri, detail }))

const utf8 = new TextEncoder()

const hex = (bytes: ArrayBuffer): string =>
  Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, "0")).join("")

/** Reads one listed file and checks its size, then its digest. */
const fetchVerified = (
  entry: SkillEntry,
  uri: string,
  options?: McpClient.RequestOptions
): Effect.Effect<VerifiedFile, SkillVerificationError | McpError.McpClientError, McpClient.McpClient> =>
  Effect.gen(function*() {
    const listed = entry.resources.find((file) => file.uri === uri)
    if (listed === undefined) return yield* refuse("NotListed", uri, `not among the files listed for ${entry.uri}`)
    const digest = /^sha256:([0-9a-fA-F]{64})$/.exec(listed.digest)
    if (digest === null) {
      return yield* refuse("UnsupportedDigest", uri, `the listed digest is not sha256:<64 hex digits>`)
    }
    const client = yield* McpClient.McpClient
    const result = yield* client.readResource({ uri }, options)
    const contents = result.contents.filter((item) => item.uri === uri)
    const item = contents.length === 1 ? contents[0] : result.contents.length === 1 ? result.contents[0] : undefined
    if (item === undefined) {
      return yield* refuse("Content", uri, `resources/read answered ${result.contents.length} contents for one file`)
    }
    // contents are open objects: a blob's extra `text` member is not its text
    let bytes: Uint8Array
    if ("text" in item && typeof item.text === "string") {
      bytes = utf8.encode(item.text)
    } else {
      const decoded: Result.Result<Uint8Array, unknown> = "blob" in item && typeof item.blob === "string"
        ? Base64.decode(item.blob)
        : Result.fail("no blob")
      if (Result.isFailure(decoded)) return yield* refuse("Content", uri, "the blob is not valid base64")
      bytes = decoded.success
    }
    // a size mismatch refuses the file whatever its digest
    if (bytes.byteLength !== listed.size) {
      return yield* refuse("Size", uri, `${bytes.byteLength} bytes read, ${listed.size} listed`)
    }
    const actual = hex(yield* Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", bytes)))
    if (actual !== digest[1].toLowerCase()) {
      return yield* refuse("Digest", uri, "the content does not match the listed sha256 digest")
    }
    return { uri, mimeType: item.mimeType, bytes }
  })

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true })

// a listed value comes as JSON from skills/list, which the frontmatter reader's depth limit never saw: shown
// through the codec's bounded preview (JSON.stringify overflows the stack on a value nested some thousands deep)
const describe = (value: unknown): string => value === undefined ? "undefined" : Codec.preview(value, 79)

/**
 * Loads a skill: reads its `SKILL.md` with `resources/read`, verifies size and digest against the listing,
 * then compares the frontmatter it carries with the listed frontmatter, field by field. Fails with
 * `SkillVerificationError` on any discrepancy; reads no supporting file.
 *
 * @since 0.1.0
 * @category operations
 */
export const load: (
  entry: SkillEntry,
  options?: McpClient.RequestOptions
) => Effect.Effect<LoadedSkill, SkillVerificationError | McpError.McpClientError, McpClient.McpClient> = Effect.fn(
  "Skills.load"
)(function*(entry: SkillEntry, options?: McpClient.RequestOptions) {
  yield* Effect.annotateCurrentSpan("mcp.skill", entry.uri)
  const file = yield* fetchVerified(entry, entry.uri, options)
  const text = yield* Effect.try({
    try: () => fatalUtf8.decode(file.bytes),
    catch: () => new SkillVerificationError({ reason: "Content", uri: entry.uri, detail: "SKILL.md is not UTF-8" })
  })
  const parts = Frontmatter.split(text)
  if (parts === undefined) return yield* refuse("Frontmatter", entry.uri, "SKILL.md has no frontmatter block")
  const parsed = Frontmatter.parse(parts.frontmatter)
  if (Result.isFailure(parsed)) {
    return yield* refuse("Frontmatter", entry.uri, `the frontmatter cannot be read: ${parsed.failure}`)
  }
  const carried = parsed.success
  const keys = [...new Set([...Object.keys(entry.frontmatter), ...Object.keys(carried)])]
  const differing = keys.filter((key) => !Frontmatter.equal(entry.frontmatter[key], carried[key]))
  if (differing.length > 0) {
    const details = differing.map((key) =>
      `${key}: listed ${describe(entry.frontmatter[key])}, file has ${describe(carried[key])}`
    )
    return yield* refuse("Frontmatter", entry.uri, `the frontmatter differs from the listing (${details.join("; ")})`)
  }
  return { entry, text, frontmatter: carried, body: parts.body }
})

/**
 * Reads one supporting file of a loaded skill, verified against its listing.
 *
 * @since 0.1.0
 * @category operations
 */
export const readFile: (
  entry: SkillEntry,
  uri: string,
  options?: McpClient.RequestOptions
) => Effect.Effect<VerifiedFile, SkillVerificationError | McpError.McpClientError, McpClient.McpClient> = Effect.fn(
  "Skills.readFile"
)(function*(entry: SkillEntry, uri: string, options?: McpClient.RequestOptions) {
  yield* Effect.annotateCurrentSpan({ "mcp.skill": entry.uri, "mcp.resource": uri })
  return yield* fetchVerified(entry, uri, options)
})
