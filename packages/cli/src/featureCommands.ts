/**
 * The commands on a server's features, each a connection, one MCP call and its output: `probe`, `tools
 * list|call|describe`, `resources list|templates|read`, `prompts list|get` and `complete`, and how they find a
 * tool or a prompt by name and read the reference of `complete`.
 *
 * @since 0.1.0
 */
import type * as McpClient from "@conduit-mcp/client/McpClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Arguments from "./arguments.js"
import { parseReference } from "./commandLine.js"
import type * as Connection from "./connection.js"
import * as Describe from "./describe.js"
import { ToolFailed, UsageError } from "./errors.js"
import * as Output from "./output.js"
import * as Progress from "./progress.js"
import * as ResourceOutput from "./resourceOutput.js"
import * as Tasks from "./tasks.js"
import { withClient } from "./withClient.js"

// ---------------------------------------------------------------------------------------------------------------
// Arguments

const nameList = (names: ReadonlyArray<string>): string =>
  names.length === 0 ? "none" : names.length > 12 ? `${names.slice(0, 12).join(", ")}, ...` : names.join(", ")

// The tool, from the list (also what lets the client check the tool's structured output against its schema).
const findTool = (client: McpClient.McpClientService, name: string) =>
  Effect.flatMap(client.listTools(), (tools) => {
    const tool = tools.find((candidate) => candidate.name === name)
    return tool !== undefined
      ? Effect.succeed(tool)
      : Effect.fail(new UsageError({ message: `unknown tool ${JSON.stringify(name)} (tools: ${nameList(tools.map((t) => t.name))})` }))
  })

const findPrompt = (client: McpClient.McpClientService, name: string) =>
  Effect.flatMap(client.listPrompts(), (prompts) => {
    const prompt = prompts.find((candidate) => candidate.name === name)
    return prompt !== undefined
      ? Effect.succeed(prompt)
      : Effect.fail(
        new UsageError({ message: `unknown prompt ${JSON.stringify(name)} (prompts: ${nameList(prompts.map((p) => p.name))})` })
      )
  })

// ---------------------------------------------------------------------------------------------------------------
// Commands

/**
 * `probe`: the era, protocol version, transport, server info and capabilities.
 *
 * @since 0.1.0
 * @category commands
 */
export const probe = (connection: Connection.ConnectionOptions) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const session = yield* client.session
      const result = Output.probeResult(session)
      yield* resolved.json ? Output.json(result) : Output.stdout(Output.probe(result, session.transport.target))
    }))

/**
 * `tools list`.
 *
 * @since 0.1.0
 * @category commands
 */
export const toolsList = (connection: Connection.ConnectionOptions) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.listTools(),
      (tools) => resolved.json ? Output.json({ tools }) : Output.stdout(Output.tools(tools))
    ))

/**
 * `tools call`: progress on stderr, as a task when the tool runs as one (or `--detach`).
 *
 * @since 0.1.0
 * @category commands
 */
export const toolsCall = (
  connection: Connection.ConnectionOptions,
  name: string,
  json: Option.Option<string>,
  arg: ReadonlyArray<string>,
  detach = false
) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const tool = yield* findTool(client, name)
      const args = yield* Effect.fromResult(Arguments.toolArguments(tool, json, arg))
      // a tool that runs as a task (or --detach): the task's status on stderr, or its id
      const asTask = yield* Tasks.callTool(client, tool, args, { detach, json: resolved.json })
      if (Option.isSome(asTask)) return
      const progress = yield* Progress.make({ quiet: false })
      const result = yield* client.callTool({ name, arguments: args }, {
        onProgress: progress.onProgress,
        // a tool that keeps reporting progress is still working: each report restarts the timeout
        resetTimeoutOnProgress: true
      }).pipe(
        Effect.ensuring(progress.clear)
      )
      yield* resolved.json ? Output.json(result) : Output.stdout(Output.callResult(result))
      if (result.isError === true) return yield* new ToolFailed({ tool: name })
    }))

/**
 * `tools describe`.
 *
 * @since 0.1.0
 * @category commands
 */
export const toolsDescribe = (connection: Connection.ConnectionOptions, name: string) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      findTool(client, name),
      (tool) => resolved.json ? Output.json(tool) : Output.stdout(Describe.tool(tool))
    ))

/**
 * `resources list`.
 *
 * @since 0.1.0
 * @category commands
 */
export const resourcesList = (connection: Connection.ConnectionOptions) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.listResources(),
      (resources) => resolved.json ? Output.json({ resources }) : Output.stdout(Output.resources(resources))
    ))

/**
 * `resources templates`.
 *
 * @since 0.1.0
 * @category commands
 */
export const resourcesTemplates = (connection: Connection.ConnectionOptions) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.listResourceTemplates(),
      (resourceTemplates) =>
        resolved.json ? Output.json({ resourceTemplates }) : Output.stdout(Output.templates(resourceTemplates))
    ))

/**
 * `resources read`: text on a terminal; the bytes as they are to a file, a pipe or `--output`.
 *
 * @since 0.1.0
 * @category commands
 */
export const resourcesRead = (connection: Connection.ConnectionOptions, uri: string, output: Option.Option<string>) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const result = yield* client.readResource({ uri })
      if (Option.isSome(output)) return yield* ResourceOutput.toFile(uri, result, output.value, resolved.json)
      if (resolved.json) return yield* Output.json(result)
      // a file or a pipe gets a binary resource's bytes as they are
      if (process.stdout.isTTY !== true && ResourceOutput.hasBlob(result)) {
        return yield* ResourceOutput.toStdout(ResourceOutput.bytes(result))
      }
      yield* Output.stdout(Output.readResult(result))
    }))

/**
 * `prompts list`.
 *
 * @since 0.1.0
 * @category commands
 */
export const promptsList = (connection: Connection.ConnectionOptions) =>
  withClient(connection, (client, resolved) =>
    Effect.flatMap(
      client.listPrompts(),
      (prompts) => resolved.json ? Output.json({ prompts }) : Output.stdout(Output.prompts(prompts))
    ))

/**
 * `prompts get`.
 *
 * @since 0.1.0
 * @category commands
 */
export const promptsGet = (
  connection: Connection.ConnectionOptions,
  name: string,
  json: Option.Option<string>,
  arg: ReadonlyArray<string>
) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const prompt = yield* findPrompt(client, name)
      const args = yield* Effect.fromResult(Arguments.promptArguments(prompt, json, arg))
      const result = yield* client.getPrompt({ name, arguments: args })
      yield* resolved.json ? Output.json(result) : Output.stdout(Output.promptResult(result))
    }))

/**
 * `complete`.
 *
 * @since 0.1.0
 * @category commands
 */
export const complete = (
  connection: Connection.ConnectionOptions,
  ref: string,
  argument: string,
  value: string,
  arg: ReadonlyArray<string>
) =>
  withClient(connection, (client, resolved) =>
    Effect.gen(function*() {
      const context = Object.fromEntries(yield* Effect.fromResult(Arguments.parseKeyValues(arg)))
      const result = yield* client.complete({
        ref: parseReference(ref),
        argument: { name: argument, value },
        ...(Object.keys(context).length > 0 ? { context: { arguments: context } } : {})
      })
      yield* resolved.json ? Output.json(result) : Output.stdout(Output.completion(result))
    }))
