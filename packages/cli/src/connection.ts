/**
 * From the server-selection options to a connected `McpClient`: the embedded demo server (in-process) when no
 * server is named, a child process for `--stdio`, HTTP for `--url`, or an entry of an `mcpServers` config file.
 *
 * @since 0.1.0
 */
import * as ElicitationHandler from "@conduit-mcp/client/ElicitationHandler"
import * as HttpTransport from "@conduit-mcp/client/HttpTransport"
import * as InProcessTransport from "@conduit-mcp/client/InProcessTransport"
import * as McpClient from "@conduit-mcp/client/McpClient"
import * as McpSchema from "@conduit-mcp/client/McpSchema"
import * as RootsProvider from "@conduit-mcp/client/RootsProvider"
import * as SamplingHandler from "@conduit-mcp/client/SamplingHandler"
import * as StdioTransport from "@conduit-mcp/client/StdioTransport"
import type * as Transport from "@conduit-mcp/client/Transport"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Path from "effect/Path"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import type * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"
import type * as Terminal from "effect/Terminal"
import * as NodePath from "node:path"
import * as Url from "node:url"
import * as Auth from "./auth.js"
import * as DemoServer from "./demoServer.js"
import * as Elicitation from "./elicitation.js"
import { type CliError, UsageError } from "./errors.js"
import * as Sampling from "./sampling.js"
import * as ServerConfig from "./serverConfig.js"
import * as Output from "./output.js"
import * as ProjectTrust from "./projectTrust.js"
import * as ShellWords from "./shellWords.js"
import * as Text from "./terminalText.js"
import * as TaskStoreFile from "./taskStore.js"
import * as Trace from "./trace.js"

/**
 * The connection options every client command takes (on the command or before it).
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectionOptions {
  readonly stdio: Option.Option<string>
  readonly url: Option.Option<string>
  readonly config: Option.Option<string>
  readonly server: Option.Option<string>
  readonly era: Option.Option<McpClient.EraOption>
  readonly protocolVersion: Option.Option<string>
  readonly header: ReadonlyArray<string>
  /** `KEY=VALUE` variables for a stdio server, added to its allow-listed environment. */
  readonly env: ReadonlyArray<string>
  /** The working directory of a stdio server. */
  readonly cwd: Option.Option<string>
  readonly timeout: Option.Option<string>
  readonly json: boolean
  /** Directories shown to the server as roots. */
  readonly root: ReadonlyArray<string>
  /** Print every JSON-RPC message on stderr. */
  readonly trace: boolean
  /** Print what a stdio server writes to its stderr. */
  readonly verbose: boolean
}

/**
 * Merges the options given before the command with those given after it; the later ones win.
 *
 * @since 0.1.0
 * @category combinators
 */
export const merge = (outer: ConnectionOptions, inner: ConnectionOptions): ConnectionOptions => ({
  stdio: Option.orElse(inner.stdio, () => outer.stdio),
  url: Option.orElse(inner.url, () => outer.url),
  config: Option.orElse(inner.config, () => outer.config),
  server: Option.orElse(inner.server, () => outer.server),
  era: Option.orElse(inner.era, () => outer.era),
  protocolVersion: Option.orElse(inner.protocolVersion, () => outer.protocolVersion),
  header: [...outer.header, ...inner.header],
  env: [...outer.env, ...inner.env],
  cwd: Option.orElse(inner.cwd, () => outer.cwd),
  root: [...outer.root, ...inner.root],
  timeout: Option.orElse(inner.timeout, () => outer.timeout),
  json: outer.json || inner.json,
  trace: outer.trace || inner.trace,
  verbose: outer.verbose || inner.verbose
})

/**
 * The server to talk to.
 *
 * @since 0.1.0
 * @category models
 */
export type Target =
  | { readonly _tag: "Demo" }
  | {
    readonly _tag: "Stdio"
    readonly command: string
    readonly args: ReadonlyArray<string>
    readonly env: Readonly<Record<string, string>> | undefined
    readonly cwd: string | undefined
  }
  | {
    readonly _tag: "Http"
    readonly url: URL
    /** Every header but Authorization, which is held (redacted) in `bearer`. */
    readonly headers: Readonly<Record<string, string>>
    readonly bearer: Redacted.Redacted<string> | undefined
  }

/**
 * Everything needed to connect.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolved {
  readonly target: Target
  readonly era: McpClient.EraOption
  readonly protocolVersion: McpSchema.ProtocolVersion | undefined
  readonly timeout: Duration.Duration | undefined
  readonly json: boolean
  /** The `--root` directories, as roots (`file://` URIs of absolute paths). */
  readonly roots: ReadonlyArray<RootsProvider.Root>
  readonly trace: boolean
  readonly verbose: boolean
}

/**
 * Reads a duration: `500ms`, `30s`, `2m`, `1h`, a bare number of seconds, or an Effect duration such as
 * `10 seconds`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseDuration = (text: string): Result.Result<Duration.Duration, string> => {
  const trimmed = text.trim()
  const short = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(trimmed)
  if (short !== null) {
    const value = Number(short[1])
    const unit = short[2] ?? "s"
    const millis = unit === "ms" ? value : unit === "s" ? value * 1000 : unit === "m" ? value * 60_000 : value * 3_600_000
    return millis > 0 ? Result.succeed(Duration.millis(millis)) : Result.fail("must be positive")
  }
  const decoded = Duration.fromInput(trimmed as Duration.Input)
  if (Option.isSome(decoded) && Duration.isFinite(decoded.value) && Duration.toMillis(decoded.value) > 0) {
    return Result.succeed(decoded.value)
  }
  return Result.fail(`not a duration: ${JSON.stringify(text)} (try 30s, 500ms, 2m)`)
}

/**
 * Reads `-e KEY=VALUE` variables (the value may be empty, and may hold `=`).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseVariables = (
  items: ReadonlyArray<string>
): Result.Result<Readonly<Record<string, string>>, string> => {
  const out: Record<string, string> = {}
  for (const item of items) {
    const equals = item.indexOf("=")
    const key = equals < 0 ? "" : item.slice(0, equals)
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return Result.fail(`--env must be KEY=VALUE, got ${JSON.stringify(item)}`)
    out[key] = item.slice(equals + 1)
  }
  return Result.succeed(out)
}

/**
 * Reads `Name: value` headers.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseHeaders = (lines: ReadonlyArray<string>): Result.Result<Record<string, string>, string> => {
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(":")
    const name = colon > 0 ? line.slice(0, colon).trim() : ""
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      return Result.fail(`--header must be "Name: value", got ${JSON.stringify(line)}`)
    }
    headers[name] = line.slice(colon + 1).trim()
  }
  return Result.succeed(headers)
}

const usage = (message: string) => new UsageError({ message })

const parseUrl = (text: string): Effect.Effect<URL, UsageError> =>
  Effect.try({ try: () => new URL(text), catch: () => usage(`not a URL: ${JSON.stringify(text)}`) }).pipe(
    Effect.filterOrFail(
      (url) => url.protocol === "http:" || url.protocol === "https:",
      (url) => usage(`only http and https URLs are supported, got ${url.protocol}`)
    )
  )

// `--server <name>` alone: the first known config file that names it, the user's before the project's; a project's
// entry runs only once approved, and a file whose entry is shadowed is named on stderr
const findKnown = (name: string, ask: ProjectTrust.Ask | undefined) =>
  Effect.gen(function*() {
    const found = yield* ServerConfig.discover()
    const picked = ServerConfig.pick(found, name)
    if (picked !== undefined) {
      const { chosen, shadowed } = picked
      const entry = yield* ServerConfig.load(chosen.path, name)
      for (const other of shadowed) {
        yield* Output.stderr(
          `conduit: server ${Text.line(JSON.stringify(name))} is taken from ${Text.line(chosen.path)} ` +
            `(${chosen.origin}); the one of ${Text.line(other.path)} (${other.origin}) is ignored`
        )
      }
      if (chosen.origin === "project") yield* ProjectTrust.ensureApproved(chosen.path, name, entry, ask)
      return entry
    }
    const known = found.flatMap((file) => Object.keys(file.servers))
    return yield* usage(
      `no server named ${JSON.stringify(name)} in the known config files` +
        (found.length === 0
          ? ` (none exists: ${ServerConfig.knownLocations().join(", ")}); give --config <file>`
          : ` (they have: ${known.join(", ")}; conduit servers lists them)`)
    )
  })

/**
 * Checks the options and finds the target. A server of a project's config file (found by `--server <name>` alone)
 * must be approved: `ask` puts the question to a person at a terminal; without it, an unapproved one is refused.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolve = (
  options: ConnectionOptions,
  ask?: ProjectTrust.Ask | undefined
): Effect.Effect<Resolved, UsageError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const chosen = [
      Option.isSome(options.stdio) ? "--stdio" : undefined,
      Option.isSome(options.url) ? "--url" : undefined,
      Option.isSome(options.config) ? "--config" : undefined
    ].filter((flag) => flag !== undefined)
    if (chosen.length > 1) return yield* usage(`choose one server: ${chosen.join(" and ")} were both given`)
    if (Option.isSome(options.config) && Option.isNone(options.server)) {
      const names = Object.keys(yield* ServerConfig.readAll(options.config.value))
      return yield* usage(
        `--config needs --server <name> to pick one of its servers: ${names.length > 0 ? names.join(", ") : "(it lists none)"}` +
          ` (conduit servers --config ${options.config.value} describes them)`
      )
    }
    const headers = yield* Effect.fromResult(Result.mapError(parseHeaders(options.header), usage))
    const hasHeaders = Object.keys(headers).length > 0
    const variables = yield* Effect.fromResult(Result.mapError(parseVariables(options.env), usage))
    const cwd = Option.getOrUndefined(options.cwd)

    let target: Target
    if (Option.isSome(options.stdio)) {
      const words = ShellWords.split(options.stdio.value)
      if (Result.isFailure(words)) return yield* usage(`--stdio: cannot split the command line (${words.failure})`)
      if (words.success.length === 0) return yield* usage("--stdio needs a command line")
      const [command, ...args] = words.success
      target = { _tag: "Stdio", command, args, env: variables, cwd }
    } else if (Option.isSome(options.url)) {
      target = { _tag: "Http", url: yield* parseUrl(options.url.value), ...yield* splitAuthorization(headers) }
    } else if (Option.isSome(options.server)) {
      const entry = Option.isSome(options.config)
        ? yield* ServerConfig.load(options.config.value, options.server.value)
        : yield* findKnown(options.server.value, ask)
      if (entry.url !== undefined) {
        target = {
          _tag: "Http",
          url: yield* parseUrl(entry.url),
          ...yield* splitAuthorization({ ...entry.headers, ...headers })
        }
      } else {
        target = {
          _tag: "Stdio",
          command: entry.command ?? "",
          args: entry.args ?? [],
          env: { ...entry.env, ...variables },
          cwd: cwd ?? entry.cwd
        }
      }
    } else {
      target = { _tag: "Demo" }
    }
    if (hasHeaders && target._tag !== "Http") return yield* usage("--header only applies to HTTP servers (--url)")
    if ((options.env.length > 0 || cwd !== undefined) && target._tag !== "Stdio") {
      return yield* usage("--env and --cwd only apply to stdio servers (--stdio, or a config entry with a command)")
    }

    let protocolVersion: McpSchema.ProtocolVersion | undefined
    if (Option.isSome(options.protocolVersion)) {
      const version = options.protocolVersion.value
      if (!McpSchema.isLegacyVersion(version) && !McpSchema.isModernVersion(version)) {
        return yield* usage(
          `unknown protocol version ${version}; known: ${[...McpSchema.MODERN_VERSIONS, ...McpSchema.LEGACY_VERSIONS].join(", ")}`
        )
      }
      protocolVersion = version
    }
    const era = Option.getOrElse(options.era, (): McpClient.EraOption => "auto")
    if (protocolVersion !== undefined && era !== "auto" && McpSchema.eraOf(protocolVersion) !== era) {
      return yield* usage(`--protocol-version ${protocolVersion} is not of the ${era} era`)
    }
    const timeout = Option.isSome(options.timeout)
      ? yield* Effect.fromResult(Result.mapError(parseDuration(options.timeout.value), (reason) => usage(`--timeout: ${reason}`)))
      : undefined
    const fs = yield* FileSystem.FileSystem
    const roots: Array<RootsProvider.Root> = []
    for (const directory of options.root) {
      const absolute = NodePath.resolve(directory)
      const isDirectory = yield* fs.stat(absolute).pipe(
        Effect.map((info) => info.type === "Directory"),
        Effect.orElseSucceed(() => false)
      )
      if (!isDirectory) return yield* usage(`--root ${directory}: not a directory`)
      roots.push({ uri: Url.pathToFileURL(absolute).href, name: NodePath.basename(absolute) || absolute })
    }
    return { target, era, protocolVersion, timeout, json: options.json, roots, trace: options.trace, verbose: options.verbose }
  })

/**
 * A short description of the target for messages.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describeTarget = (target: Target): string => {
  switch (target._tag) {
    case "Demo":
      return "the embedded demo server"
    case "Stdio":
      return [target.command, ...target.args].map(ShellWords.quote).join(" ")
    case "Http":
      return target.url.href
  }
}

/**
 * The services a command runs with (NodeServices gives them all).
 *
 * @since 0.1.0
 * @category models
 */
export type Platform = ChildProcessSpawner.ChildProcessSpawner | FileSystem.FileSystem | Path.Path | Terminal.Terminal | Stdio.Stdio

/**
 * Takes the Authorization header out of the others: the user's own `Authorization: Bearer <token>` (on the
 * command line or in a config entry) becomes the transport's bearer token, redacted from then on (never logged,
 * printed or traced). Another scheme is refused: the transport sends only bearer credentials.
 *
 * @since 0.1.0
 * @category parsing
 */
export const splitAuthorization = (
  all: Readonly<Record<string, string>>
): Effect.Effect<
  { readonly headers: Readonly<Record<string, string>>; readonly bearer: Redacted.Redacted<string> | undefined },
  UsageError
> => {
  const headers: Record<string, string> = {}
  let bearer: Redacted.Redacted<string> | undefined
  for (const [name, value] of Object.entries(all)) {
    if (name.toLowerCase() !== "authorization") {
      headers[name] = value
      continue
    }
    const match = /^Bearer[ \t]+([^\s]+)$/i.exec(value.trim())
    if (match === null) {
      // the value is a secret: the message never repeats it
      return Effect.fail(new UsageError({ message: "an Authorization header must be \"Bearer <token>\" (other schemes are not sent)" }))
    }
    bearer = Redacted.make(match[1])
  }
  return Effect.succeed({ headers, bearer })
}

const httpTransport = (target: Extract<Target, { readonly _tag: "Http" }>) =>
  Layer.unwrap(Effect.gen(function*() {
    // a token from `conduit login` is sent unless the command line already gives an Authorization header
    const bearerToken = target.bearer !== undefined ? Option.some(target.bearer) : yield* Auth.storedBearer(target.url)
    return HttpTransport.layer({
      url: target.url,
      headers: target.headers,
      ...(Option.isSome(bearerToken) ? { bearerToken: bearerToken.value } : {})
    }).pipe(Layer.provide(NodeHttpClient.layerUndici))
  }))

// --verbose: each line a stdio server writes to its stderr, marked as the server's
const showServerStderr = Layer.effectDiscard(Effect.flatMap(StdioTransport.StdioProcess, (process) =>
  process.stderr.pipe(
    Stream.runForEach((line) => Output.stderr(`${Output.styles(globalThis.process.stderr).dim("[server stderr]")} ${Text.line(line)}`)),
    Effect.forkScoped
  )))

const transportLayer = (
  resolved: Resolved
): Layer.Layer<Transport.Transport, CliError, Platform> => {
  const target = resolved.target
  switch (target._tag) {
    case "Demo":
      return Layer.unwrap(Effect.map(DemoServer.make(), InProcessTransport.layer))
    case "Stdio":
      return Layer.provideMerge(resolved.verbose ? showServerStderr : Layer.empty, StdioTransport.layer({
        command: target.command,
        args: target.args,
        env: target.env,
        cwd: target.cwd,
        // a command line tool exits promptly (Ctrl-C, --timeout): the server gets a short grace after its stdin
        // closes, then SIGTERM, then SIGKILL (the library's defaults are 2 seconds each)
        closeTimeout: Duration.millis(150),
        termTimeout: Duration.millis(150)
      }))
    case "Http":
      return httpTransport(target)
  }
}

const stdioProbeTimeout = Duration.seconds(10)

/**
 * The client layer for a resolved target. The elicitation handler is interactive when `interactive` holds.
 *
 * @since 0.1.0
 * @category layers
 */
export const clientLayer = (
  resolved: Resolved,
  options: {
    readonly interactive: boolean
    readonly version: string
    /** Asks the questions of forms (the shell's line reader); one is opened per form otherwise. */
    readonly prompter?: Elicitation.Prompter | undefined
  }
): Layer.Layer<McpClient.McpClient, CliError, Platform> =>
  McpClient.layer({
    clientInfo: { name: "conduit", version: options.version },
    era: resolved.era,
    protocolVersion: resolved.protocolVersion,
    requestTimeout: resolved.timeout,
    initializeTimeout: resolved.timeout,
    // a child process may take seconds to start (npx, a loaded machine): a short era probe would mistake a
    // slow modern server for a legacy one
    probeTimeout: resolved.target._tag === "Stdio" ? (resolved.timeout ?? stdioProbeTimeout) : resolved.timeout,
    // one command, one connection: a lost connection is reported, not retried, and a first connection that
    // fails (a wrong command or URL, a server that is down) is reported at once
    reconnect: false,
    retryFirstConnection: false,
    healthCheckInterval: false,
    elicitation: ElicitationHandler.ElicitationHandler,
    // the sampling capability is declared either way (servers then show the tools that need it); a person
    // answers on a terminal, and the request is declined otherwise
    sampling: SamplingHandler.SamplingHandler,
    // the client declares the roots capability only when there are roots to show
    ...(resolved.roots.length > 0 ? { roots: RootsProvider.fixed(resolved.roots) } : {}),
    // tasks in both designs: a task-required tool is run as one, and a modern server may answer with one; the
    // tasks started are kept on disk, for `tasks result|list` in a later run
    tasks: { enabled: true },
    taskStore: TaskStoreFile.durable()
  }).pipe(
    Layer.provide(Layer.mergeAll(
      resolved.trace ? Layer.provide(Trace.layer, transportLayer(resolved)) : transportLayer(resolved),
      Elicitation.layer({ interactive: options.interactive, prompter: options.prompter }),
      Sampling.layer({ interactive: options.interactive, prompter: options.prompter })
    ))
  )
