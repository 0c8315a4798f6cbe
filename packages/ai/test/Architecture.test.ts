/**
 * The package's module graph, checked on the sources: no internal module value-imports a public module that
 * imports it back.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

const src = Url.fileURLToPath(new URL("../src/", import.meta.url))

/** Every source module, by its path under src/ without the extension (`internal/toolkit`). */
const modules: ReadonlyArray<string> = Fs.readdirSync(src, { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".ts"))
  .map((file) => file.split(Path.sep).join("/").replace(/\.ts$/, ""))
  .sort()

/** The source without comments (their examples import from the package, as a user would). */
const codeOf = (module: string): string =>
  Fs.readFileSync(Path.join(src, `${module}.ts`), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")

/** The modules of this package a module imports for their values (`import type` left out). */
const valueImportsOf = (module: string): ReadonlyArray<string> =>
  [...codeOf(module).matchAll(/^(?:import|export)\s+(type\s+)?[^"';]*?from\s+"(\.[^"]+)"/gm)]
    .filter((match) => match[1] === undefined)
    .map((match) => Path.posix.normalize(Path.posix.join(Path.posix.dirname(module), match[2]!)).replace(/\.js$/, ""))

const reach = (from: string): ReadonlySet<string> => {
  const reached = new Set<string>()
  const visit = (module: string): void => {
    if (reached.has(module) || !modules.includes(module)) return
    reached.add(module)
    for (const target of valueImportsOf(module)) visit(target)
  }
  visit(from)
  return reached
}

describe("module graph", () => {
  it("finds the modules it checks", () => {
    assert.include(modules, "McpToolkit")
    assert.include(modules, "internal/toolkit")
    assert.include(valueImportsOf("McpToolkit"), "internal/toolkit")
  })

  it("no internal module value-imports a public module that imports it back (a value import cycle)", () => {
    // the values an internal module needs (schemas, tags, error classes) live in a leaf beside it, which the public
    // module re-exports
    const cycles = modules.filter((module) => module.startsWith("internal/")).flatMap((module) =>
      valueImportsOf(module)
        .filter((target) => !target.startsWith("internal/") && reach(target).has(module))
        .map((target) => `${module} → ${target} → … → ${module}`)
    )
    assert.deepStrictEqual(cycles, [])
  })
})
