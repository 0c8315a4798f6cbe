/**
 * Where `conduit` writes: results to stdout, everything else (messages, progress, prompts, logs) to stderr, and
 * how results read on a terminal. What a server controls is escaped where it is formatted (see terminalText.ts),
 * and every write goes through `Text.filter` as well: no control character but conduit's own styles reaches the
 * terminal.
 *
 * @since 0.1.0
 */
import type * as McpClient from "@conduit-mcp/client/McpClient"
import type * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Text from "./terminalText.js"

/**
 * What runs around every write while a prompt may be on screen (see {@link guardWrites}).
 *
 * @since 0.1.0
 * @category models
 */
export interface WriteGuard {
  readonly before: () => void
  readonly after: () => void
}

// the terminal is one for the whole process: so is the guard of its prompt
let guard: WriteGuard | undefined

/**
 * Runs `before` and `after` around every write until the Scope closes: the shell clears its prompt line before
 * conduit prints and draws it again after.
 *
 * @since 0.1.0
 * @category output
 */
export const guardWrites = (around: WriteGuard): Effect.Effect<void, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      guard = around
    }),
    () =>
      Effect.sync(() => {
        if (guard === around) guard = undefined
      })
  )

/**
 * What runs before each write of the fiber: in the shell, a command first lets the background `listen` print the
 * notifications that arrived before what the command prints (see follow.ts).
 *
 * @since 1.0.0
 * @category references
 */
export const BeforeWrite: Context.Reference<Effect.Effect<void>> = Context.Reference<Effect.Effect<void>>(
  "@conduit-mcp/cli/Output/BeforeWrite",
  { defaultValue: () => Effect.void }
)

const write = (stream: NodeJS.WriteStream, text: string, carriageReturn = false): Effect.Effect<void> =>
  Effect.andThen(
    Effect.flatMap(Effect.service(BeforeWrite), (before) => before),
    Effect.callback<void>((resume) => {
      const around = guard
      around?.before()
      // the callback runs once the chunk is handed to the OS, so an exit right after loses nothing
      stream.write(Text.filter(text, carriageReturn), () => resume(Effect.void))
      around?.after()
    })
  )

/**
 * Writes one line (or several) to stdout.
 *
 * @since 0.1.0
 * @category output
 */
export const stdout = (text: string): Effect.Effect<void> => write(process.stdout, text.endsWith("\n") ? text : `${text}\n`)

/**
 * Writes one line (or several) to stderr.
 *
 * @since 0.1.0
 * @category output
 */
export const stderr = (text: string): Effect.Effect<void> => write(process.stderr, text.endsWith("\n") ? text : `${text}\n`)

/**
 * Writes raw text to stderr (progress bars redraw their line).
 *
 * @since 0.1.0
 * @category output
 */
export const stderrRaw = (text: string): Effect.Effect<void> => write(process.stderr, text, true)

/**
 * Prints a value as JSON on stdout: the `--json` output.
 *
 * @since 0.1.0
 * @category output
 */
export const json = (value: unknown): Effect.Effect<void> => stdout(Text.json(value, 2))

const colorEnabled = (stream: NodeJS.WriteStream) =>
  stream.isTTY === true && process.env.NO_COLOR === undefined && process.env.TERM !== "dumb"

/**
 * ANSI styles, empty when the stream is not a color terminal.
 *
 * @since 0.1.0
 * @category formatting
 */
export const styles = (stream: NodeJS.WriteStream = process.stdout) => {
  const on = colorEnabled(stream)
  const wrap = (open: string, close: string) => (text: string) => on ? `\u001b[${open}m${text}\u001b[${close}m` : text
  return {
    bold: wrap("1", "22"),
    dim: wrap("2", "22"),
    red: wrap("31", "39"),
    green: wrap("32", "39"),
    yellow: wrap("33", "39"),
    cyan: wrap("36", "39")
  }
}

const width = (): number => {
  const columns = process.stdout.columns
  return typeof columns === "number" && columns > 20 ? columns : 100
}

const firstLine = (text: string | undefined): string => (text ?? "").split("\n")[0].trim()


// Breaks `text` into lines of at most `room` columns at spaces; a longer word is cut into pieces of `room`.
const wrapCell = (text: string, room: number): Array<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(" ").filter((w) => w.length > 0)) {
    for (let piece = word; piece.length > 0;) {
      if (line.length > 0 && line.length + 1 + piece.length > room) {
        lines.push(line)
        line = ""
      }
      if (line.length === 0 && piece.length > room) {
        lines.push(piece.slice(0, room))
        piece = piece.slice(room)
        continue
      }
      line = line.length === 0 ? piece : `${line} ${piece}`
      piece = ""
    }
  }
  if (line.length > 0 || lines.length === 0) lines.push(line)
  return lines
}

/**
 * Aligns rows in columns. On a terminal, the last column (a description) is wrapped to the terminal's width, its
 * further lines indented under it, so every column is kept and nothing is cut.
 *
 * @since 0.1.0
 * @category formatting
 */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const s = styles()
  const all = [header, ...rows.map((row) => row.map(Text.line))]
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? "").length)))
  const total = width()
  const last = header.length - 1
  const used = widths.slice(0, last).reduce((sum, w) => sum + w + 2, 0)
  // a description keeps at least 20 columns, even when the other columns leave less
  const room = Math.max(20, total - used - 1)
  const lines = all.flatMap((row, index) => {
    const lead = row.slice(0, last).map((cell, column) => {
      const padded = cell.padEnd(widths[column])
      return index === 0 ? padded : column === 0 ? s.bold(padded) : padded
    })
    const cell = row[last] ?? ""
    const parts = process.stdout.isTTY === true && index > 0 ? wrapCell(cell, room) : [cell]
    const first = [...lead, parts[0]].join("  ").trimEnd()
    return [index === 0 ? s.dim(first) : first, ...parts.slice(1).map((part) => `${" ".repeat(used)}${part}`)]
  })
  return lines.join("\n")
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// a loop over `items`, not a recursion: a server may nest them 20,000 deep
const schemaType = (schema: unknown): string => {
  let suffix = ""
  let record = schema
  for (let depth = 0; depth < 16; depth++) {
    if (!isRecord(record)) return `any${suffix}`
    if (Array.isArray(record.enum)) return `${record.enum.map((value) => Text.json(value)).join("|")}${suffix}`
    if (record.type === "array") {
      suffix += "[]"
      record = record.items
      continue
    }
    if (typeof record.type === "string") return `${record.type}${suffix}`
    if (Array.isArray(record.type)) return `${record.type.join("|")}${suffix}`
    return `any${suffix}`
  }
  return `…${suffix}`
}

/**
 * The properties of a tool's input schema as `name: type` (optional ones with `?`).
 *
 * @since 0.1.0
 * @category formatting
 */
export const argumentSummary = (inputSchema: Readonly<Record<string, unknown>>): string => {
  const properties = inputSchema.properties
  if (typeof properties !== "object" || properties === null) return ""
  const required = Array.isArray(inputSchema.required) ? inputSchema.required : []
  return Object.entries(properties).map(([key, value]) =>
    `${key}${required.includes(key) ? "" : "?"}: ${schemaType(value)}`
  ).join(", ")
}

/**
 * @since 0.1.0
 * @category formatting
 */
export const tools = (list: ReadonlyArray<McpSchema.Tool>): string =>
  list.length === 0
    ? "(no tools)"
    : table(
      ["NAME", "ARGUMENTS", "DESCRIPTION"],
      list.map((tool) => [tool.name, argumentSummary(tool.inputSchema), firstLine(tool.description ?? tool.title)])
    )

const contentBlock = (block: McpSchema.ContentBlock): string => {
  const s = styles()
  switch (block.type) {
    case "text":
      return "text" in block && typeof block.text === "string" ? Text.block(block.text) : ""
    case "image":
    case "audio": {
      const data = "data" in block && typeof block.data === "string" ? block.data : ""
      const mimeType = "mimeType" in block && typeof block.mimeType === "string" ? Text.line(block.mimeType) : "?"
      return s.dim(`[${block.type} ${mimeType}, ${Math.floor((data.length * 3) / 4)} bytes]`)
    }
    case "resource": {
      if (!("resource" in block) || typeof block.resource !== "object" || block.resource === null) {
        return s.dim("[resource]")
      }
      const resource = block.resource
      // with open MCP objects a malformed embedded resource decodes as an unknown block: its uri is checked here
      const uri = "uri" in resource && typeof resource.uri === "string" ? Text.line(resource.uri) : "?"
      const header = s.dim(`[resource ${uri}]`)
      return "text" in resource && typeof resource.text === "string" ? `${header}\n${Text.block(resource.text)}` : header
    }
    case "resource_link": {
      const uri = "uri" in block && typeof block.uri === "string" ? Text.line(block.uri) : "?"
      const linkName = "name" in block && typeof block.name === "string" ? ` ${Text.line(block.name)}` : ""
      return s.dim(`[link${linkName}] ${uri}`)
    }
    default:
      return s.dim(`[${Text.line(String(block.type))} content]`) + ` ${Text.json(block)}`
  }
}

/**
 * @since 0.1.0
 * @category formatting
 */
export const callResult = (result: McpSchema.CallToolResult): string => {
  const parts = result.content.map(contentBlock)
  if (result.structuredContent !== undefined && result.content.length === 0) {
    parts.push(Text.json(result.structuredContent, 2))
  }
  return parts.length === 0 ? styles().dim("(empty result)") : parts.join("\n")
}

/**
 * @since 0.1.0
 * @category formatting
 */
export const resources = (list: ReadonlyArray<McpSchema.Resource>): string =>
  list.length === 0
    ? "(no resources)"
    : table(
      ["URI", "NAME", "TYPE", "DESCRIPTION"],
      list.map((resource) => [
        resource.uri,
        resource.title ?? resource.name,
        resource.mimeType ?? "",
        firstLine(resource.description)
      ])
    )

/**
 * @since 0.1.0
 * @category formatting
 */
export const templates = (list: ReadonlyArray<McpSchema.ResourceTemplate>): string =>
  list.length === 0
    ? "(no resource templates)"
    : table(
      ["URI TEMPLATE", "NAME", "TYPE", "DESCRIPTION"],
      list.map((template) => [
        template.uriTemplate,
        template.title ?? template.name,
        template.mimeType ?? "",
        firstLine(template.description)
      ])
    )

/**
 * @since 0.1.0
 * @category formatting
 */
export const readResult = (result: McpSchema.ReadResourceResult): string => {
  const s = styles()
  const many = result.contents.length > 1
  return result.contents.map((contents) => {
    const type = contents.mimeType ? ` (${Text.line(contents.mimeType)})` : ""
    const header = many ? `${s.dim(`--- ${Text.line(contents.uri)}${type}`)}\n` : ""
    if ("text" in contents && typeof contents.text === "string") return header + Text.block(contents.text)
    const blob = "blob" in contents && typeof contents.blob === "string" ? contents.blob : ""
    return header + s.dim(`[binary ${Text.line(contents.mimeType ?? "")}, ${Math.floor((blob.length * 3) / 4)} bytes; use --output <file> or --json]`)
  }).join("\n")
}

/**
 * @since 0.1.0
 * @category formatting
 */
export const prompts = (list: ReadonlyArray<McpSchema.Prompt>): string =>
  list.length === 0
    ? "(no prompts)"
    : table(
      ["NAME", "ARGUMENTS", "DESCRIPTION"],
      list.map((prompt) => [
        prompt.name,
        (prompt.arguments ?? []).map((argument) => `${argument.name}${argument.required === true ? "" : "?"}`).join(
          ", "
        ),
        firstLine(prompt.description ?? prompt.title)
      ])
    )

/**
 * @since 0.1.0
 * @category formatting
 */
export const promptResult = (result: McpSchema.GetPromptResult): string => {
  const s = styles()
  const lines: Array<string> = []
  if (result.description !== undefined) lines.push(s.dim(Text.block(result.description)))
  for (const message of result.messages) {
    lines.push(`${s.bold(`[${Text.line(message.role)}]`)} ${contentBlock(message.content)}`)
  }
  return lines.join("\n")
}

/**
 * @since 0.1.0
 * @category formatting
 */
export const completion = (result: McpSchema.CompleteResult): string => {
  const values = result.completion.values
  const more = result.completion.hasMore === true
    ? styles().dim(`(${result.completion.total ?? "more"} in total)`)
    : undefined
  return [values.length === 0 ? "(no completions)" : values.map(Text.line).join("\n"), ...(more !== undefined ? [more] : [])].join(
    "\n"
  )
}

/**
 * What `probe --json` prints.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProbeResult {
  readonly era: McpSchema.Era
  readonly protocolVersion: string
  readonly transport: string
  readonly serverInfo: McpSchema.Implementation | null
  readonly capabilities: McpSchema.ServerCapabilities
  readonly instructions: string | null
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const probeResult = (session: McpClient.ServerSession): ProbeResult => ({
  era: session.era,
  protocolVersion: session.protocolVersion,
  transport: session.transport.binding,
  serverInfo: session.serverInfo ?? null,
  capabilities: session.capabilities,
  instructions: session.instructions ?? null
})

/**
 * @since 0.1.0
 * @category formatting
 */
export const probe = (result: ProbeResult, target: string): string => {
  const s = styles()
  const info = result.serverInfo
  const capabilities = Object.entries(result.capabilities).filter(([, value]) => value !== undefined).map((
    [key, value]
  ) => {
    const flags = typeof value === "object" && value !== null
      ? Object.entries(value).filter(([, flag]) => flag === true).map(([flag]) => flag)
      : []
    return flags.length > 0 ? `${key} (${flags.join(", ")})` : key
  })
  const rows: Array<[string, string]> = [
    [
      "server",
      info === null
        ? "(unknown)"
        : Text.line(`${info.title ?? info.name} ${info.version}${info.title ? ` (${info.name})` : ""}`)
    ],
    ["era", result.era],
    ["protocol", result.protocolVersion],
    ["transport", `${result.transport} ${s.dim(target)}`],
    ["capabilities", capabilities.length > 0 ? capabilities.join(", ") : "(none)"]
  ]
  const labelWidth = Math.max(...rows.map(([label]) => label.length))
  const lines = rows.map(([label, value]) => `${s.dim(label.padEnd(labelWidth))}  ${value}`)
  if (result.instructions !== null) lines.push("", s.dim("instructions"), Text.block(result.instructions))
  return lines.join("\n")
}

/**
 * A server notification as one line.
 *
 * @since 0.1.0
 * @category formatting
 */
export const notification = (value: McpSchema.ServerNotification): string => {
  const s = styles()
  const time = new Date().toISOString().slice(11, 23)
  const params = value.params === undefined ? "" : ` ${Text.json(value.params)}`
  return `${s.dim(time)} ${s.cyan(Text.line(value.method))}${params}`
}
