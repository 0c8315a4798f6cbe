/**
 * `conduit tools describe <name>`: one tool as readable text — its description, annotations, and its input and
 * output schemas as an indented list of properties (type, required, default, allowed values, description).
 * Nesting is shown to a fixed depth, so a hostile schema cannot make the output (or the stack) unbounded.
 *
 * @since 0.1.0
 */
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as Text from "./terminalText.js"

type Json = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const maxDepth = 6
const maxProperties = 200

const typeOf = (schema: Json, depth: number): string => {
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => Text.json(v)).join(" | ")
  if ("const" in schema) return Text.json(schema.const)
  const types = Array.isArray(schema.type) ? schema.type.map(String) : typeof schema.type === "string" ? [schema.type] : []
  if (types.includes("array") && isRecord(schema.items) && depth < maxDepth) {
    return types.map((t) => t === "array" ? `list of ${typeOf(schema.items as Json, depth + 1)}` : t).join(" | ")
  }
  if (types.length > 0) return types.join(" | ")
  if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) {
    const options = (Array.isArray(schema.anyOf) ? schema.anyOf : schema.oneOf as Array<unknown>).filter(isRecord)
    return depth < maxDepth ? options.map((option) => typeOf(option, depth + 1)).join(" | ") : "one of several"
  }
  return "any"
}

const properties = (schema: Json, indent: string, depth: number, budget: { left: number }): Array<string> => {
  const props = isRecord(schema.properties) ? schema.properties : {}
  const required = Array.isArray(schema.required) ? schema.required : []
  const lines: Array<string> = []
  for (const [name, raw] of Object.entries(props)) {
    if (budget.left-- <= 0) {
      lines.push(`${indent}…`)
      break
    }
    const property = isRecord(raw) ? raw : {}
    const facts = [
      typeOf(property, depth),
      required.includes(name) ? "required" : "optional",
      ...("default" in property ? [`default ${Text.json(property.default)}`] : []),
      ...(typeof property.minimum === "number" ? [`min ${property.minimum}`] : []),
      ...(typeof property.maximum === "number" ? [`max ${property.maximum}`] : []),
      ...(typeof property.format === "string" ? [`format ${property.format}`] : []),
      ...(typeof property.pattern === "string" ? [`pattern ${property.pattern}`] : [])
    ]
    const description = typeof property.description === "string" ? ` — ${property.description.split("\n")[0]}` : ""
    lines.push(`${indent}${Text.line(`${name} (${facts.join(", ")})${description}`)}`)
    const nested = isRecord(property.items) && isRecord(property.items.properties) ? property.items : property
    if (isRecord(nested.properties)) {
      if (depth + 1 >= maxDepth) lines.push(`${indent}  …`)
      else lines.push(...properties(nested, `${indent}  `, depth + 1, budget))
    }
  }
  return lines
}

const schemaLines = (title: string, schema: unknown): Array<string> => {
  if (!isRecord(schema)) return []
  const lines = properties(schema, "  ", 0, { left: maxProperties })
  return [`${title}:`, ...(lines.length > 0 ? lines : [`  (${typeOf(schema, 0)}, no named properties)`])]
}

/**
 * The text `tools describe` prints for one tool.
 *
 * @since 0.1.0
 * @category formatting
 */
export const tool = (tool: McpSchema.Tool): string => {
  const lines = [Text.line(tool.title !== undefined && tool.title !== tool.name ? `${tool.name} — ${tool.title}` : tool.name)]
  if (tool.description !== undefined && tool.description.trim() !== "") lines.push("", Text.block(tool.description.trim()))
  const annotations = isRecord(tool.annotations) ? Object.entries(tool.annotations) : []
  if (annotations.length > 0) {
    lines.push("", "Annotations:", ...annotations.map(([key, value]) => `  ${Text.line(key)}: ${Text.json(value)}`))
  }
  lines.push("", ...schemaLines("Arguments", tool.inputSchema))
  const output = schemaLines("Structured result", tool.outputSchema)
  if (output.length > 0) lines.push("", ...output)
  return lines.join("\n")
}
