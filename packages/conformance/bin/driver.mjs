#!/usr/bin/env node
// Starts the conformance driver: `npm run --silent conformance-driver -- <server-url>` from the repository root, or
// this file as the harness's `--command`. The bundle is (re)built first when the sources changed. When
// CONDUIT_CONFORMANCE_LOG names a file, one JSON line per run records the scenario, revision and exit status
// there (suite and requirements runs of the harness ignore exit statuses; the runner reads this record).
import * as Fs from "node:fs"
import * as Url from "node:url"
import { bundle, ensureBundle } from "./build.mjs"

const log = process.env.CONDUIT_CONFORMANCE_LOG
if (log !== undefined && log.length > 0) {
  process.on("exit", (code) => {
    const record = {
      scenario: process.env.MCP_CONFORMANCE_SCENARIO ?? null,
      version: process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? null,
      url: process.argv.at(-1) ?? null,
      code
    }
    Fs.appendFileSync(log, `${JSON.stringify(record)}\n`)
  })
}

await ensureBundle()
await import(Url.pathToFileURL(bundle).href)
