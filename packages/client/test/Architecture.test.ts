/**
 * The rules of ARCHITECTURE.md, checked on the sources: which layer may import which, public entry points of
 * Effect only, and the size of the client core's modules.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import Ts from "typescript"

const src = Url.fileURLToPath(new URL("../src/", import.meta.url))

/** Every source module, by its path under src/ without the extension (`internal/client/cache`). */
const modules: ReadonlyArray<string> = Fs.readdirSync(src, { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".ts"))
  .map((file) => file.split(Path.sep).join("/").replace(/\.ts$/, ""))
  .sort()

const sourceOf = (module: string): string => Fs.readFileSync(Path.join(src, `${module}.ts`), "utf8")

/** The source without comments (their examples import from the package, as a user would). */
const codeOf = (module: string): string =>
  sourceOf(module).replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")

interface Import {
  readonly target: string
  readonly typeOnly: boolean
}

/** The imports of a module: package specifiers as written, relative ones resolved to module paths. */
const importsOf = (module: string): ReadonlyArray<Import> => {
  const out: Array<Import> = []
  for (const match of codeOf(module).matchAll(/^(?:import|export)\s+(type\s+)?[^"';]*?from\s+"([^"]+)"/gm)) {
    const specifier = match[2]!
    const target = specifier.startsWith(".")
      ? Path.posix.normalize(Path.posix.join(Path.posix.dirname(module), specifier)).replace(/\.js$/, "")
      : specifier
    out.push({ target, typeOnly: match[1] !== undefined })
  }
  return out
}

const isTransportBinding = (module: string) =>
  ["StdioTransport", "HttpTransport", "InProcessTransport", "internal/inProcessTransport"].includes(module) ||
  /^internal\/http/.test(module)

const isClientCore = (module: string) =>
  module === "McpClient" || module === "internal/client" || module.startsWith("internal/client/")

const violations = (
  from: (module: string) => boolean,
  forbidden: (imported: Import) => boolean
): ReadonlyArray<string> =>
  modules.filter(from).flatMap((module) =>
    importsOf(module).filter(forbidden).map((imported) => `${module} → ${imported.target}`)
  )

describe("ARCHITECTURE.md", () => {
  it("finds the modules it checks", () => {
    assert.include(modules, "Transport")
    assert.include(modules, "internal/client/requestTable")
    assert.include(modules, "internal/httpModern")
    assert.deepInclude(importsOf("internal/client"), { target: "internal/client/requestTable", typeOnly: false })
  })

  it("layer 1: McpSchema (with its internal parts), McpError and McpMethod import no other module of the package", () => {
    const isWireModel = (m: string) => m === "McpSchema" || m.startsWith("internal/mcpSchema")
    // (but two leaves: the escape of server text, public as `McpError.printable`, and the removal of `__proto__`
    // members, public as `McpSchema.parseJson`)
    const isLeaf = (m: string) => m === "internal/printable" || m === "internal/protoKeys"
    assert.deepStrictEqual(
      violations(
        (m) => isWireModel(m) || m === "McpError" || m === "McpMethod",
        (i) => !i.target.includes("/") || (modules.includes(i.target) && !isWireModel(i.target) && !isLeaf(i.target))
      ),
      []
    )
    assert.deepStrictEqual(violations(isLeaf, () => true), [])
    assert.deepInclude(importsOf("McpSchema"), { target: "internal/mcpSchemaJsonRpc", typeOnly: false })
  })

  it("layer 2: Transport imports only the wire model", () => {
    assert.deepStrictEqual(
      violations((m) => m === "Transport", (i) => modules.includes(i.target) && !["McpSchema", "McpError"].includes(i.target)),
      []
    )
  })

  it("transports never import the client", () => {
    assert.deepStrictEqual(violations(isTransportBinding, (i) => isClientCore(i.target)), [])
  })

  it("the client reaches transports only through the Transport contract (no value import of a binding)", () => {
    assert.deepStrictEqual(
      violations((m) => isClientCore(m) || m === "internal/negotiation", (i) => isTransportBinding(i.target) && !i.typeOnly),
      []
    )
  })

  it("only public entry points of effect and @effect/*, and no other workspace package", () => {
    assert.deepStrictEqual(
      violations(() => true, (i) =>
        /(^|\/)internal(\/|$)/.test(i.target) && !modules.includes(i.target) ||
        /^effect\/(src|dist)\b/.test(i.target) ||
        /^@conduit-mcp\//.test(i.target)),
      []
    )
  })

  it("no private key of Effect or the platform is read or written", () => {
    // a module's path names at most a folder and the module (`effect/http/HttpClient`); a key names more
    // (`effect/http/HttpClient/RequestScope`), or starts with `~` (`~effect/http/HttpClient`)
    const key = /"(~effect\/|effect\/(?:[a-z]+\/)?[A-Z][A-Za-z]*\/[A-Za-z]|@effect\/platform[^"]*\/[A-Za-z]+\/[A-Za-z]+")/
    const offenders = modules.filter((module) => key.test(sourceOf(module)))
    assert.deepStrictEqual(offenders, [])
  })

  it("the client core's modules and the HTTP bindings stay under 600 lines", () => {
    const long = modules
      .filter((m) => m === "internal/client" || m.startsWith("internal/client/") || m === "internal/negotiation" || /^internal\/http/.test(m))
      .map((m) => [m, sourceOf(m).split("\n").length] as const)
      .filter(([, lines]) => lines > 600)
    assert.deepStrictEqual(long, [])
  })
  it("a module used only for its types is imported with `import type` (a value import loads it at run time)", () => {
    // the compiler keeps every value import as written (verbatimModuleSyntax); without that option it drops the
    // imports that no value uses: the two outputs differ exactly by the imports that load a module for nothing
    const specifiersOf = (code: string) =>
      [...code.matchAll(/^(?:import|export)\s[^"';]*?from\s+"([^"]+)"/gm)].map((match) => match[1]!)
    const emitted = (module: string, verbatimModuleSyntax: boolean) =>
      specifiersOf(
        Ts.transpileModule(sourceOf(module), {
          fileName: `${module}.ts`,
          compilerOptions: { module: Ts.ModuleKind.ESNext, target: Ts.ScriptTarget.ES2022, verbatimModuleSyntax }
        }).outputText
      )
    const typeOnly = modules.flatMap((module) => {
      const used = emitted(module, false)
      return emitted(module, true).filter((specifier) => !used.includes(specifier)).map((s) => `${module} → ${s}`)
    })
    assert.deepStrictEqual(typeOnly, [])
    // (transpiling every module twice takes seconds, and ran out of 30 s in a whole-suite run on a loaded machine)
  }, 120_000)

  it("no internal module value-imports a public module that imports it back (a value import cycle)", () => {
    // an internal module needs values (error classes, tags, constructors) from a leaf beside it, which the public
    // module re-exports; importing them from the public module that imports the internal one is a cycle, whose
    // order of evaluation decides whether a class is defined yet when a module body uses it
    const reach = (from: string): ReadonlySet<string> => {
      const reached = new Set<string>()
      const visit = (module: string): void => {
        if (reached.has(module) || !modules.includes(module)) return
        reached.add(module)
        for (const imported of importsOf(module)) if (!imported.typeOnly) visit(imported.target)
      }
      visit(from)
      return reached
    }
    const cycles = modules.filter((module) => module.startsWith("internal/")).flatMap((module) =>
      importsOf(module)
        .filter((imported) => !imported.typeOnly && modules.includes(imported.target))
        .filter((imported) => !imported.target.startsWith("internal/") && reach(imported.target).has(module))
        .map((imported) => `${module} → ${imported.target} → … → ${module}`)
    )
    assert.deepStrictEqual(cycles, [])
  })

  it("what loads once used stays out of the static imports of McpClient and the transports", () => {
    // value imports only: a type import costs nothing at run time, and `import()` is not matched
    const reached = new Set<string>()
    const visit = (module: string): void => {
      if (reached.has(module) || !modules.includes(module)) return
      reached.add(module)
      for (const imported of importsOf(module)) if (!imported.typeOnly) visit(imported.target)
    }
    for (const entry of ["McpClient", "StdioTransport", "HttpTransport", "InProcessTransport"]) visit(entry)
    const lazy = (m: string) =>
      /^internal\/jsonSchema/.test(m) || m === "JsonSchema" || m === "internal/resultCache" || m === "ResultCache" ||
      /^internal\/oauth/.test(m) || m === "OAuth" ||
      m === "McpTasks" || m === "TaskStore" || m === "internal/client/taskCalls" || m === "internal/client/tasks" ||
      m === "internal/httpSse" || m === "internal/wwwAuthenticate"
    assert.deepStrictEqual([...reached].filter(lazy).sort(), [])
  })
})
