/**
 * Runs `conduit --version` once before the tests, so that the bundle the binary builds on its first run is
 * built once here, not by many test processes at the same time.
 */
import * as ChildProcess from "node:child_process"
import * as Path from "node:path"
import * as Url from "node:url"

export default function setup(): void {
  const bin = Path.join(Path.dirname(Url.fileURLToPath(import.meta.url)), "..", "..", "bin", "conduit.mjs")
  const result = ChildProcess.spawnSync(process.execPath, [bin, "--version"], { encoding: "utf8" })
  if (result.status !== 0) {
    process.stderr.write(`conduit --version failed (${result.status}):\n${result.stderr}\n`)
  }
}
