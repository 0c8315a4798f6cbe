/**
 * How to run the real MCP servers the integration tests talk to over stdio, and what they offer. Every fact here
 * was checked by piping raw JSON-RPC lines to the servers; `RealServers.probe.test.ts` keeps checking the ones the
 * client's era detection depends on.
 *
 * - `everything`: `@modelcontextprotocol/server-everything` (built on the SDK v1 `@modelcontextprotocol/sdk`), a
 *   legacy-only server: it answers `server/discover` with `-32601` and stays up, so `initialize` then works on the
 *   same process.
 * - `sdkV2`: `fixtures/sdk-v2-server.ts`, a dual-era server built on the SDK v2 `@modelcontextprotocol/server` and its
 *   `serveStdio` entry. Its first message picks the era for the life of the process.
 *
 * Both exit (code 0) when their stdin closes. Commands use absolute paths, so they work from any working directory.
 */
import * as Module from "node:module"
import * as Path from "node:path"
import * as Url from "node:url"

const require = Module.createRequire(import.meta.url)

/** The repository root: this file is `<root>/packages/client/test/utils/realServers.ts`. */
export const repositoryRoot = Url.fileURLToPath(new URL("../../../../", import.meta.url))

/** The Node.js binary running the tests, used to start every server. */
export const node = process.execPath

export interface ServerCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
}

/** A stdio command line as one string (for logs and cache keys). */
export const commandLine = (server: ServerCommand): string => [server.command, ...server.args].join(" ")

// ---------------------------------------------------------------------------------------------------------------
// @modelcontextprotocol/server-everything

const everythingEntry = Path.join(
  Path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js"
)

/**
 * `@modelcontextprotocol/server-everything` 2026.8.31 over stdio (`node dist/index.js stdio`; `stdio` is also the
 * default). It writes "Starting default (STDIO) server..." to stderr on start.
 */
export const everything = {
  command: node,
  args: [everythingEntry, "stdio"],
  /** What `initialize` reports. */
  serverInfo: { name: "mcp-servers/everything", title: "Everything Reference Server", version: "2.0.0" },
  /** The newest version it speaks: its `initialize` answer to any version it does not know (2026-07-28 too). */
  latestVersion: "2025-11-25",
  /** Versions `initialize` accepts as asked (SDK v1 1.32). */
  supportedVersions: ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"],
  /**
   * Its answer to `server/discover` (with or without the modern `_meta`), before or after `initialize`: this JSON-RPC
   * error code, message "Method not found". The process stays up.
   */
  discoverErrorCode: -32601,
  tools: {
    /** `{ message: string }` → one text block `Echo: <message>`. */
    echo: { name: "echo", argument: "message", reply: (message: string) => `Echo: ${message}` },
    /**
     * `{ duration?: number (seconds, default 10, fractions allowed), steps?: number (default 5) }`. With
     * `_meta.progressToken` it sends `steps` `notifications/progress` (`progress` 1..steps, `total` steps, no
     * `message`), one every `duration / steps` seconds, then answers one text block
     * `Long running operation completed. Duration: <duration> seconds, Steps: <steps>.`
     */
    longRunning: { name: "trigger-long-running-operation", durationSeconds: "duration", steps: "steps" },
    /** `{ a: number, b: number }` → text `The sum of <a> and <b> is <a+b>.` */
    sum: { name: "get-sum" }
  },
  /**
   * Tools listed right after `initialize`. After `notifications/initialized` it registers capability-dependent
   * tools (`simulate-research-query` always) and sends `notifications/tools/list_changed`.
   */
  toolNames: [
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation"
  ],
  resources: {
    /** A listed static resource: `text/markdown`, the server's instructions document. */
    staticDocument: { uri: "demo://resource/static/document/instructions.md", mimeType: "text/markdown" },
    /**
     * Template `demo://resource/dynamic/text/{resourceId}` (not listed by `resources/list`, only by
     * `resources/templates/list`): any positive integer id reads as `text/plain`
     * `Resource <id>: This is a plaintext resource created at <time>`.
     */
    dynamicText: (id: number) => `demo://resource/dynamic/text/${id}`,
    dynamicTextTemplate: "demo://resource/dynamic/text/{resourceId}",
    dynamicBlobTemplate: "demo://resource/dynamic/blob/{resourceId}"
  },
  prompts: {
    /** No arguments → one user message `This is a simple prompt without arguments.` */
    simple: { name: "simple-prompt" },
    /** `{ city (required), state? }` → one user message `What's weather in <city>[, <state>]?` */
    withArguments: {
      name: "args-prompt",
      required: "city",
      optional: "state",
      text: (city: string) => `What's weather in ${city}?`
    }
  }
} as const

// ---------------------------------------------------------------------------------------------------------------
// The SDK v2 dual-era fixture

/** `tsx` resolved to a file URL, so `--import` does not depend on the child's working directory. */
const tsxLoader = Url.pathToFileURL(require.resolve("tsx")).href

/** Absolute path of `fixtures/sdk-v2-server.ts`. */
export const sdkV2ServerPath = Url.fileURLToPath(new URL("../fixtures/sdk-v2-server.ts", import.meta.url))

/**
 * The dual-era fixture (`@modelcontextprotocol/server` 2.4.0, `serveStdio(factory)`) run with
 * `node --import <tsx> fixtures/sdk-v2-server.ts`. Its first answer comes 0.6 to 1 s after the start (TypeScript
 * compilation), up to about 3 s on a loaded machine: give the first request a generous timeout.
 *
 * Era selection by the FIRST message (then fixed for the process). A "claim" is an
 * `io.modelcontextprotocol/protocolVersion` key in `params._meta`; `_meta` without it counts as no claim at all.
 * - `server/discover` with a valid claim: answered with a `DiscoverResult` (`supportedVersions: ["2026-07-28"]`,
 *   `resultType: "complete"`, `ttlMs: 0`, `cacheScope: "private"`, `serverInfo` in `_meta`). The connection is only
 *   a probe until the next request: a modern request pins the modern era, a claim-less request or `initialize`
 *   throws the probe away and pins the legacy era (that request is served as legacy).
 * - any other request with a valid claim pins the modern era and is served.
 * - `initialize` without a claim, or any claim-less message (`ping`, `tools/call`, even `server/discover`
 *   without a claim, which then gets `-32601`): legacy era. Legacy requests are served even before `initialize`.
 * - a claim naming an unknown version (`2099-01-01`, or a legacy one like `2025-11-25`): `-32022`
 *   `Unsupported protocol version: <v>`, `data: { supported: ["2026-07-28"], requested: <v> }`; still undecided.
 * - a claim without `io.modelcontextprotocol/clientCapabilities`, or with a non-object one: `-32602`
 *   `Invalid _meta envelope for protocol revision 2026-07-28: <key>: <problem>` (`missing`, ...),
 *   `data: { envelope: { key, problem } }`; still undecided.
 *
 * Once modern: every request needs `_meta` with `io.modelcontextprotocol/protocolVersion` AND
 * `io.modelcontextprotocol/clientCapabilities` (`clientInfo` optional); missing `_meta` gets `-32602` `Request is
 * missing the required _meta envelope ...`, a missing key `-32602` `Invalid _meta envelope ...`. The version in later
 * requests is not checked again. `initialize` gets `-32022` with `data.supported: ["2026-07-28"]`; `ping` gets
 * `-32601`. Results carry `resultType: "complete"` and `_meta["io.modelcontextprotocol/serverInfo"]`.
 *
 * Once legacy: `initialize` answers the version asked for when it knows it (2024-11-05 to 2025-11-25), else
 * `2025-11-25` (for a 2026-07-28 `protocolVersion` too); `server/discover` gets `-32601`. Legacy requests need no
 * `_meta`.
 *
 * Both eras: an unknown tool is `-32602` `Tool <name> not found`; an unknown resource `-32602`
 * `Resource not found: <uri>` with `data.uri`; bad tool arguments are a tool result with `isError: true`; a request
 * named by `notifications/cancelled` is never answered; unparsable lines are dropped silently.
 */
export const sdkV2 = {
  command: node,
  args: ["--import", tsxLoader, sdkV2ServerPath],
  serverInfo: { name: "conduit-sdk-v2-fixture", version: "1.0.0" },
  modernVersion: "2026-07-28",
  legacyVersion: "2025-11-25",
  /** The modern `_meta` keys every modern request must carry. */
  requiredMeta: ["io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities"],
  errors: { missingMeta: -32602, invalidMeta: -32602, unsupportedVersion: -32022, methodNotFound: -32601 },
  tools: {
    /** `{ message: string }` → one text block `Echo: <message>`. */
    echo: { name: "echo", argument: "message", reply: (message: string) => `Echo: ${message}` },
    /**
     * `{ steps?: integer (default 3), intervalMs?: integer (default 10) }`. With `_meta.progressToken` it sends
     * `steps` `notifications/progress` (`progress` 1..steps, `total` steps, `message` `step <n>`), then answers
     * `completed <steps> steps`.
     */
    progress: {
      name: "progress",
      steps: "steps",
      intervalMs: "intervalMs",
      reply: (steps: number) => `completed ${steps} steps`
    },
    /** `{ ms?: integer (default 60000) }` → `waited <ms> ms` after `ms`; never answers once cancelled. */
    wait: { name: "wait", argument: "ms", reply: (ms: number) => `waited ${ms} ms` }
  },
  toolNames: ["echo", "progress", "wait"],
  resources: {
    /** Listed; reads as `text/plain` `hello from the SDK v2 fixture`. */
    greeting: { uri: "fixture://greeting", mimeType: "text/plain", text: "hello from the SDK v2 fixture" }
  },
  prompts: {
    /** `{ name (required) }` → one user message `Say hello to <name>.` */
    greet: { name: "greet", argument: "name", text: (name: string) => `Say hello to ${name}.` }
  }
} as const
