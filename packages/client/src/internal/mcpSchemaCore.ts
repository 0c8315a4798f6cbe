/**
 * MCP types of the lifecycle and of content (re-exported by `McpSchema`): implementations and icons, capabilities,
 * the initialize and discover results, content blocks and resource contents.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as SchemaTransformation from "effect/SchemaTransformation"

/**
 * Decoding options for MCP results: the first issue is reported. Members a schema does not name are kept by the
 * MCP object schemas themselves (see {@link Open}), whatever the options.
 *
 * @since 0.1.0
 * @category decoding
 */
export const preserve: SchemaAST.ParseOptions = { errors: "first" }

/** @internal */
export const JsonObject = Schema.Record(Schema.String, Schema.Unknown)
/** @internal */
export const Meta = Schema.optional(JsonObject)

/**
 * An MCP object: the members it names are decoded, every other member is kept as it came (a later revision's
 * additions reach the caller). Effect 4's decoding options can only drop or refuse unknown members, so the schemas
 * carry this themselves, as a string index signature of unknown values. The JSON-RPC envelope is not open: its
 * decoding drops what it does not name.
 *
 * @internal
 */
export const Open = <const Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.StructWithRest(Schema.Struct(fields), [JsonObject])

/**
 * @since 0.1.0
 * @category models
 */
export const Icon = Open({
  src: Schema.String,
  mimeType: Schema.optional(Schema.String),
  sizes: Schema.optional(Schema.Array(Schema.String)),
  theme: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Icon = typeof Icon.Type

const safeImageData = /^data:image\/(png|jpeg|jpg|gif|webp)(;[^,]*)?,/i

/**
 * Whether an icon may reach a user interface: an `https:` URL, or a `data:` URI of a raster image type (PNG, JPEG,
 * GIF, WebP); a declared `mimeType` must be an image type. Every other scheme (`javascript:`, `file:`, `http:`,
 * SVG data that can carry scripts, …) is unsafe (2025-11-25 `basic/index.mdx`: clients MUST reject unsafe URI
 * schemes).
 *
 * @since 0.1.0
 * @category icons
 */
export const isSafeIcon = (icon: Icon): boolean => {
  if (icon.mimeType !== undefined && !icon.mimeType.toLowerCase().startsWith("image/")) return false
  const src = icon.src.trim()
  if (safeImageData.test(src)) return true
  if (!/^https:/i.test(src)) return false
  try {
    return new URL(src).protocol === "https:"
  } catch {
    return false
  }
}

/**
 * A list of icons as a server sends it, decoded to the safe ones only (see {@link isSafeIcon}).
 *
 * @since 0.1.0
 * @category icons
 */
export const Icons = Schema.Array(Icon).pipe(
  Schema.decodeTo(
    Schema.Array(Icon),
    SchemaTransformation.transform<ReadonlyArray<Icon>, ReadonlyArray<Icon>>({
      decode: (icons) => icons.filter(isSafeIcon),
      encode: (icons) => icons
    })
  )
)

/**
 * Name and version of a client or server (self-reported: for display and logs only).
 *
 * @since 0.1.0
 * @category models
 */
export const Implementation = Open({
  name: Schema.String,
  version: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  websiteUrl: Schema.optional(Schema.String),
  icons: Schema.optional(Icons)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Implementation = typeof Implementation.Type

/**
 * @since 0.1.0
 * @category models
 */
export const ServerCapabilities = Open({
  tools: Schema.optional(Open({ listChanged: Schema.optional(Schema.Boolean) })),
  prompts: Schema.optional(Open({ listChanged: Schema.optional(Schema.Boolean) })),
  resources: Schema.optional(
    Open({ subscribe: Schema.optional(Schema.Boolean), listChanged: Schema.optional(Schema.Boolean) })
  ),
  completions: Schema.optional(JsonObject),
  logging: Schema.optional(JsonObject),
  experimental: Schema.optional(JsonObject),
  extensions: Schema.optional(JsonObject),
  tasks: Schema.optional(JsonObject)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ServerCapabilities = typeof ServerCapabilities.Type

/**
 * @since 0.1.0
 * @category models
 */
export const ClientCapabilities = Open({
  roots: Schema.optional(Open({ listChanged: Schema.optional(Schema.Boolean) })),
  sampling: Schema.optional(JsonObject),
  elicitation: Schema.optional(JsonObject),
  experimental: Schema.optional(JsonObject),
  extensions: Schema.optional(JsonObject),
  tasks: Schema.optional(JsonObject)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ClientCapabilities = typeof ClientCapabilities.Type

/**
 * @since 0.1.0
 * @category models
 */
export const InitializeResult = Open({
  protocolVersion: Schema.String,
  capabilities: ServerCapabilities,
  serverInfo: Implementation,
  instructions: Schema.optional(Schema.String),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export type InitializeResult = typeof InitializeResult.Type

/**
 * The answer to `server/discover` (2026-07-28).
 *
 * @since 0.1.0
 * @category models
 */
export const DiscoverResult = Open({
  resultType: Schema.optional(Schema.String),
  supportedVersions: Schema.Array(Schema.String),
  capabilities: ServerCapabilities,
  instructions: Schema.optional(Schema.String),
  ttlMs: Schema.optional(Schema.Number),
  cacheScope: Schema.optional(Schema.String),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export type DiscoverResult = typeof DiscoverResult.Type

/** @internal */
export const Annotations = Open({
  audience: Schema.optional(Schema.Array(Schema.String)),
  priority: Schema.optional(Schema.Number),
  lastModified: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export const TextContent = Open({
  type: Schema.Literal("text"),
  text: Schema.String,
  annotations: Schema.optional(Annotations),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export const ImageContent = Open({
  type: Schema.Literal("image"),
  data: Schema.String,
  mimeType: Schema.String,
  annotations: Schema.optional(Annotations),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export const AudioContent = Open({
  type: Schema.Literal("audio"),
  data: Schema.String,
  mimeType: Schema.String,
  annotations: Schema.optional(Annotations),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export const TextResourceContents = Open({
  uri: Schema.String,
  mimeType: Schema.optional(Schema.String),
  text: Schema.String,
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export const BlobResourceContents = Open({
  uri: Schema.String,
  mimeType: Schema.optional(Schema.String),
  blob: Schema.String,
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export const ResourceContents = Schema.Union([TextResourceContents, BlobResourceContents])

/**
 * @since 0.1.0
 * @category models
 */
export type ResourceContents = typeof ResourceContents.Type

/**
 * @since 0.1.0
 * @category models
 */
export const EmbeddedResource = Open({
  type: Schema.Literal("resource"),
  resource: ResourceContents,
  annotations: Schema.optional(Annotations),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export const ResourceLink = Open({
  type: Schema.Literal("resource_link"),
  uri: Schema.String,
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String),
  size: Schema.optional(Schema.Number),
  annotations: Schema.optional(Annotations),
  _meta: Meta
})

const knownContentTypes: ReadonlyArray<string> = ["text", "image", "audio", "resource", "resource_link"]

declare const UnknownContentTypeId: unique symbol

/**
 * The `type` of a content block this client does not know: a string at run time (never one of the known types),
 * opaque to the compiler, so that comparing a block's `type` with a known one (`block.type === "text"`, a `switch`)
 * narrows a `ContentBlock` to that block alone. Read it with `String(block.type)`.
 *
 * @since 1.0.0
 * @category models
 */
export interface UnknownContentType {
  readonly [UnknownContentTypeId]: "UnknownContentType"
}

/**
 * A content block a newer revision defines and this client does not know yet; kept as it came. Its `type` is never
 * one of the known ones: a `text` block without its text is invalid, not unknown.
 *
 * @since 0.1.0
 * @category models
 */
export const UnknownContent = Open({
  type: Schema.String.check(
    Schema.makeFilter((type: string) => !knownContentTypes.includes(type), {
      expected: "a content type other than text, image, audio, resource and resource_link"
    })
  ) as unknown as Schema.Codec<UnknownContentType, string>
})

/**
 * @since 0.1.0
 * @category models
 */
export const ContentBlock = Schema.Union([
  TextContent,
  ImageContent,
  AudioContent,
  EmbeddedResource,
  ResourceLink,
  UnknownContent
])

/**
 * @since 0.1.0
 * @category models
 */
export type ContentBlock = typeof ContentBlock.Type
