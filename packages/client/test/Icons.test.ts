/**
 * L7: only icons a user interface can show safely are decoded: `https:` URLs and raster `data:` images; every
 * other scheme is dropped wherever icons appear (tools, resources, templates, prompts, implementations).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as McpSchema from "../src/McpSchema.js"

const icons = [
  { src: "https://example.com/a.png", mimeType: "image/png" },
  { src: "data:image/jpeg;base64,/9j/4AAQ", sizes: ["48x48"] },
  { src: "data:image/png,raw" },
  { src: "javascript:alert(1)" },
  { src: "http://example.com/plain.png" },
  { src: "file:///etc/passwd" },
  { src: "data:image/svg+xml;base64,PHN2Zz4=" },
  { src: "data:text/html,<script>1</script>" },
  { src: "https://example.com/page.html", mimeType: "text/html" },
  { src: "https//broken" },
  { src: " javascript:1" }
]
const safe = [icons[0], icons[1], icons[2]]

const decode = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, value: unknown): S["Type"] =>
  Schema.decodeUnknownSync(schema, McpSchema.preserve)(value)

describe("icons (L7)", () => {
  it("isSafeIcon accepts https and raster data images only", () => {
    assert.deepStrictEqual(icons.filter(McpSchema.isSafeIcon), safe)
  })

  it("unsafe icons are dropped from every list that carries them", () => {
    const tools = decode(McpSchema.ListToolsResult, {
      tools: [{ name: "t", inputSchema: { type: "object" }, icons }]
    })
    assert.deepStrictEqual(tools.tools[0]?.icons, safe)
    const resources = decode(McpSchema.ListResourcesResult, { resources: [{ uri: "file:///a", name: "a", icons }] })
    assert.deepStrictEqual(resources.resources[0]?.icons, safe)
    const templates = decode(McpSchema.ListResourceTemplatesResult, {
      resourceTemplates: [{ uriTemplate: "file:///{x}", name: "x", icons }]
    })
    assert.deepStrictEqual(templates.resourceTemplates[0]?.icons, safe)
    const prompts = decode(McpSchema.ListPromptsResult, { prompts: [{ name: "p", icons }] })
    assert.deepStrictEqual(prompts.prompts[0]?.icons, safe)
    const server = decode(McpSchema.Implementation, { name: "s", version: "1", icons })
    assert.deepStrictEqual(server.icons, safe)
  })
})
