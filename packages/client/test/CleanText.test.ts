/**
 * SECURITY.md's "Clean logs" and "clean terminal", checked on the sources of every package that logs or displays
 * what a server (or an authorization server, or a client, for the server package) wrote: in each call that
 * reaches a log or a terminal, every expression interpolated into text (a template literal's `${…}`, a `+`
 * concatenation, an annotation's value, a value displayed as it is) goes through an escape helper, or is one of
 * the few expressions listed below as safe. The sources are parsed with the TypeScript compiler's parser (its
 * syntax tree, no type checking: a rule of this check can be read in the tree alone).
 *
 * Not looked into: what a call returns when it is written as it is (a formatter of its own, such as the CLI's
 * listings, which the CLI's hostile tests cover), a Cause or a record given to a log call after its message (the
 * application's logger renders it), and span attributes (exported to a tracer, not printed).
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as Logger from "effect/Logger"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import Ts from "typescript"
import * as McpClient from "../src/McpClient.js"
import * as StdioTransport from "../src/StdioTransport.js"
import { eventually } from "./utils/eventually.js"

const packages = Url.fileURLToPath(new URL("../../", import.meta.url))

/** The packages whose sources are checked: every one that runs beside a server, a client or a user. */
const CHECKED = ["client", "ai", "server", "cli", "redis"] as const

/** Every source file of a package, by its path under packages/. */
const sourcesOf = (pkg: string): ReadonlyArray<string> =>
  Fs.readdirSync(Path.join(packages, pkg, "src"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => `${pkg}/src/${file.split(Path.sep).join("/")}`)
    .sort()

// ---------------------------------------------------------------------------------------------------------------
// Where text meets a log or a terminal

type Sink =
  /** every argument is text written (a log call's parts, a write, a display) */
  | "text"
  /** the first argument is the message; later ones are rendered by the application's logger (a Cause, an error) */
  | "log"
  /** `Effect.logWithLevel`: the level, then the message and what the logger renders */
  | "logWithLevel"
  /** the values of an annotation record, or the value of a key-value annotation */
  | "annotation"

const LOG = /^Effect\.log(?:Trace|Debug|Info|Warning|Error|Fatal)?$/

/** What a call is, read from its callee as written. */
const sinkOf = (callee: string, file: string): Sink | undefined => {
  if (LOG.test(callee)) return "log"
  if (callee === "Effect.logWithLevel") return "logWithLevel"
  if (callee === "Effect.annotateLogs" || callee === "Effect.annotateLogsScoped") return "annotation"
  if (/^(?:console|Console)\.\w+$/.test(callee)) return "text"
  if (/^(?:globalThis\.)?process\.(?:stdout|stderr)\.write$/.test(callee)) return "text"
  // @effect/platform's Terminal, as the handlers and the CLI's prompts hold it
  if (/(?:^|\.)(?:terminal|Terminal)\.display$/.test(callee)) return "text"
  // the CLI's writers (output.ts), which filter what they write but let a newline through
  if (/^Output\.(?:stdout|stderr|stderrRaw)$/.test(callee)) return "text"
  if (file === "cli/src/output.ts" && /^(?:stdout|stderr|stderrRaw|stream\.write)$/.test(callee)) return "text"
  // the CLI's prompts (elicitation, sampling, the shell), which readline writes to the terminal as they are
  if (/^(?:prompter\.ask|reader\.read)$/.test(callee)) return "text"
  return undefined
}

// ---------------------------------------------------------------------------------------------------------------
// What makes text safe

/** The escape helpers: what they return has no control or invisible character a server wrote. */
const ESCAPES = new Set([
  // the library's (packages/client/src/internal/printable.ts; public as McpError.printable)
  "printable",
  "McpError.printable",
  // (and what is built on it: a URL normalised, a device code's text, the start of a value's JSON text)
  "printableUrl",
  "deviceCodeText",
  "codec.preview",
  // the CLI's (packages/cli/src/terminalText.ts)
  "Text.line",
  "Text.block",
  "Text.url",
  "Text.json",
  "Text.filter"
])

/**
 * Calls whose result is their arguments with something of our own around them: the argument is what is checked.
 * `String` of a number is a number; the CLI's styles wrap text in their own colour sequences.
 */
const TRANSPARENT = /^(?:String|(?:s|styles|Output\.styles\([^)]*\))\.(?:bold|dim|red|green|yellow|cyan))$/

/**
 * The CLI's formatters of server text, each built on the escape helpers (and covered by the CLI's hostile tests):
 * what they return is escaped.
 */
const FORMATTERS = new Set([
  // Text.block of an elicitation's message, each line marked as the server's (cli/src/elicitation.ts)
  "serverText",
  // a sampling request: Text.block of each text, Text.line of each MIME type, Text.json of the rest (sampling.ts)
  "describeRequest",
  // a progress bar: numbers and Text.line of the message (progress.ts)
  "renderBar",
  // a stored token: Text.line of each value the authorization server gave (auth.ts)
  "Auth.describeToken",
  // a project server's definition: Text.line of its command, env, cwd and headers, Text.url of its URL
  // (projectTrust.ts, used there and in localCommands.ts)
  "describe",
  "ProjectTrust.describe"
])

/**
 * Expressions that are safe though not escaped, each for the reason given: numbers and our own constants. Matched
 * against the expression as written; keep this list short.
 */
const SAFE: ReadonlyArray<readonly [RegExp, string]> = [
  [/\.(?:length|size)$/, "a count"],
  [/^(?:[\w.]+\.)?(?:status|pid|port|exitCode|attemptNumber|lineNumber|maxTokens|maxServerRequests|descendants)$/, "a number"],
  [/(?:^|\.)origin$/, "where conduit found a config file: the user's or the project's, a value of ours"],
  [/\._tag$/, "the tag of one of our errors"],
  [/(?:^|\.)era$/, "the era of a session, which the client classifies (legacy or modern)"],
  [/^(?:version|options\.version|DemoServer\.(?:name|version))$/, "conduit's own name and version"],
  [/^Math\.\w+\(/, "a number"]
]

/**
 * Writes that are raw on purpose, each for the reason given: matched against a finding as shown
 * (`file:line call: expression`, the line left out).
 */
const RAW_ON_PURPOSE: ReadonlyArray<readonly [string, string]> = [
  [
    "cli/src/resourceOutput.ts process.stdout.write: data",
    "a binary resource's bytes, written as they are only when stdout is a file or a pipe, never a terminal"
  ]
]

/** The entries of FORMATTERS and SAFE some source used (an entry no source uses is to be removed). */
const used = new Set<string>()

const textOf = (node: Ts.Node, source: Ts.SourceFile) => node.getText(source).replace(/\s+/g, " ")

const calleeOf = (call: Ts.CallExpression, source: Ts.SourceFile) => textOf(call.expression, source)

interface Finding {
  readonly file: string
  readonly line: number
  readonly call: string
  readonly expression: string
}

interface Context {
  readonly source: Ts.SourceFile
  /** The variable declarations and parameters of the file, by name. */
  readonly declarations: ReadonlyMap<string, ReadonlyArray<Ts.VariableDeclaration | Ts.ParameterDeclaration>>
  readonly resolving: Set<Ts.Node>
}

const declarationsOf = (source: Ts.SourceFile) => {
  const out = new Map<string, Array<Ts.VariableDeclaration | Ts.ParameterDeclaration>>()
  const add = (name: string, node: Ts.VariableDeclaration | Ts.ParameterDeclaration) =>
    out.set(name, [...(out.get(name) ?? []), node])
  const visit = (node: Ts.Node): void => {
    if (Ts.isVariableDeclaration(node) && Ts.isIdentifier(node.name)) add(node.name.text, node)
    else if (Ts.isParameter(node) && Ts.isIdentifier(node.name)) add(node.name.text, node)
    Ts.forEachChild(node, visit)
  }
  visit(source)
  return out
}

/** A parameter typed as a number, a boolean or a union of literals: a value of ours, not text. */
const isConstantType = (type: Ts.TypeNode): boolean =>
  type.kind === Ts.SyntaxKind.NumberKeyword || type.kind === Ts.SyntaxKind.BooleanKeyword ||
  (Ts.isLiteralTypeNode(type) && !Ts.isTemplateLiteralTypeNode(type)) ||
  (Ts.isUnionTypeNode(type) && type.types.every(isConstantType))

/** Where a declaration is seen: a parameter in its function, a `const` in its block (or loop, or file). */
const scopeOf = (declaration: Ts.VariableDeclaration | Ts.ParameterDeclaration): Ts.Node => {
  if (Ts.isParameter(declaration)) return declaration.parent
  let node: Ts.Node = declaration.parent
  while (
    !Ts.isBlock(node) && !Ts.isSourceFile(node) && !Ts.isCaseBlock(node) && !Ts.isForStatement(node) &&
    !Ts.isForOfStatement(node) && !Ts.isForInStatement(node) && !Ts.isFunctionLike(node)
  ) node = node.parent
  return node
}

/**
 * A name is as safe as its declaration, the innermost one whose scope holds it: a `const` as its value, a parameter
 * as its type (a `let`, an untyped parameter or a name from another module is not looked into, and so not safe).
 */
const isSafeName = (name: Ts.Identifier, context: Context): boolean => {
  const seen = (context.declarations.get(name.text) ?? []).flatMap((declaration) => {
    const scope = scopeOf(declaration)
    return scope.pos <= name.pos && name.end <= scope.end ? [{ declaration, width: scope.end - scope.pos }] : []
  })
  const declaration = seen.sort((a, b) => a.width - b.width)[0]?.declaration
  if (declaration === undefined) return false
  if (Ts.isParameter(declaration)) return declaration.type !== undefined && isConstantType(declaration.type)
  const list = declaration.parent
  const constant = Ts.isVariableDeclarationList(list) && (list.flags & Ts.NodeFlags.Const) !== 0
  if (!constant || declaration.initializer === undefined || context.resolving.has(declaration)) return false
  context.resolving.add(declaration)
  try {
    return unsafeParts(declaration.initializer, context, true).length === 0
  } finally {
    context.resolving.delete(declaration)
  }
}

const COMPARISON = new Set([
  Ts.SyntaxKind.EqualsEqualsEqualsToken,
  Ts.SyntaxKind.ExclamationEqualsEqualsToken,
  Ts.SyntaxKind.EqualsEqualsToken,
  Ts.SyntaxKind.ExclamationEqualsToken,
  Ts.SyntaxKind.LessThanToken,
  Ts.SyntaxKind.LessThanEqualsToken,
  Ts.SyntaxKind.GreaterThanToken,
  Ts.SyntaxKind.GreaterThanEqualsToken,
  Ts.SyntaxKind.InstanceOfKeyword,
  Ts.SyntaxKind.InKeyword
])

/**
 * The parts of `node` that are neither escaped nor safe. `interpolated` says that `node` is written into text (a
 * part of a template or a concatenation, an annotation's value); a value outside text (a record, a callback, a
 * Cause given to a log call) is the logger's to render and is not looked into.
 */
const unsafeParts = (node: Ts.Expression, context: Context, interpolated: boolean): Array<Ts.Node> => {
  const source = context.source
  const text = textOf(node, source)
  if (
    Ts.isStringLiteral(node) || Ts.isNoSubstitutionTemplateLiteral(node) || Ts.isNumericLiteral(node) ||
    node.kind === Ts.SyntaxKind.TrueKeyword || node.kind === Ts.SyntaxKind.FalseKeyword ||
    node.kind === Ts.SyntaxKind.NullKeyword || text === "undefined"
  ) return []
  if (Ts.isTemplateExpression(node)) {
    return node.templateSpans.flatMap((span) => unsafeParts(span.expression, context, true))
  }
  if (
    Ts.isParenthesizedExpression(node) || Ts.isAsExpression(node) || Ts.isNonNullExpression(node) ||
    Ts.isSpreadElement(node)
  ) return unsafeParts(node.expression, context, interpolated || Ts.isSpreadElement(node))
  // an array of parts (spread into a list of lines): each part is written
  if (Ts.isArrayLiteralExpression(node)) return node.elements.flatMap((element) => unsafeParts(element, context, true))
  if (Ts.isConditionalExpression(node)) {
    return [...unsafeParts(node.whenTrue, context, interpolated), ...unsafeParts(node.whenFalse, context, interpolated)]
  }
  // a negation or a comparison is a boolean
  if (Ts.isPrefixUnaryExpression(node) && node.operator === Ts.SyntaxKind.ExclamationToken) return []
  if (Ts.isBinaryExpression(node)) {
    const operator = node.operatorToken.kind
    if (COMPARISON.has(operator)) return []
    if (operator === Ts.SyntaxKind.PlusToken) {
      return [...unsafeParts(node.left, context, true), ...unsafeParts(node.right, context, true)]
    }
    if (
      operator === Ts.SyntaxKind.QuestionQuestionToken || operator === Ts.SyntaxKind.BarBarToken ||
      operator === Ts.SyntaxKind.AmpersandAmpersandToken
    ) return [...unsafeParts(node.left, context, interpolated), ...unsafeParts(node.right, context, interpolated)]
  }
  if (Ts.isCallExpression(node)) {
    const callee = calleeOf(node, source)
    if (ESCAPES.has(callee)) return []
    if (FORMATTERS.has(callee)) {
      used.add(callee)
      return []
    }
    if (TRANSPARENT.test(callee)) {
      return node.arguments.flatMap((argument) => unsafeParts(argument, context, interpolated))
    }
    if (Ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text
      const receiver = node.expression.expression
      // an array of parts joined: each part is written
      if (method === "join" && Ts.isArrayLiteralExpression(receiver)) {
        return receiver.elements.flatMap((element) => unsafeParts(element, context, true))
      }
      // parts made by a function of each item: what the function gives is written
      const [mapper] = node.arguments
      if (method === "map" && mapper !== undefined && Ts.isArrowFunction(mapper) && !Ts.isBlock(mapper.body)) {
        return unsafeParts(mapper.body, context, true)
      }
    }
  }
  const safe = SAFE.find(([pattern]) => pattern.test(text))
  if (safe !== undefined) {
    used.add(String(safe[0]))
    return []
  }
  if (Ts.isIdentifier(node) && isSafeName(node, context)) return []
  if (!interpolated) {
    // a value given as it is: only a read of a value (a name, a member) is text written as it is; a call (a
    // formatter of its own), a record or a callback is not looked into
    const read = Ts.isIdentifier(node) || Ts.isPropertyAccessExpression(node) || Ts.isElementAccessExpression(node)
    if (!read) return []
  }
  return [node]
}

/** Every log or display call of a file whose text holds something neither escaped nor safe. */
const findingsOf = (file: string): ReadonlyArray<Finding> => {
  const source = Ts.createSourceFile(
    file,
    Fs.readFileSync(Path.join(packages, file), "utf8"),
    Ts.ScriptTarget.Latest,
    true,
    Ts.ScriptKind.TS
  )
  const context: Context = { source, declarations: declarationsOf(source), resolving: new Set() }
  const out: Array<Finding> = []
  const report = (call: Ts.CallExpression, parts: ReadonlyArray<Ts.Node>) => {
    for (const part of parts) {
      out.push({
        file,
        line: source.getLineAndCharacterOfPosition(part.getStart(source)).line + 1,
        call: calleeOf(call, source),
        expression: textOf(part, source)
      })
    }
  }
  const visit = (node: Ts.Node): void => {
    if (Ts.isCallExpression(node)) {
      const sink = sinkOf(calleeOf(node, source), file)
      if (sink === "logWithLevel") {
        // (the level is a value of ours; the message follows)
        node.arguments.slice(1).forEach((argument, index) => {
          const bare = index === 0 || /\.message$/.test(textOf(argument, source))
          report(node, unsafeParts(argument, context, false).filter((part) => bare || part !== argument))
        })
      } else if (sink === "text" || sink === "log") {
        node.arguments.forEach((argument, index) => {
          // a log call's later arguments are rendered by the logger (a Cause, an error) unless they are text: a
          // template, a concatenation, or an error's message
          const bare = sink === "text" || index === 0 || /\.message$/.test(textOf(argument, source))
          report(node, unsafeParts(argument, context, false).filter((part) => bare || part !== argument))
        })
      } else if (sink === "annotation") {
        const [first, second] = node.arguments
        if (first !== undefined && Ts.isObjectLiteralExpression(first)) {
          for (const property of first.properties) {
            if (Ts.isPropertyAssignment(property)) report(node, unsafeParts(property.initializer, context, true))
            else if (Ts.isShorthandPropertyAssignment(property)) report(node, unsafeParts(property.name, context, true))
          }
        } else if (second !== undefined) report(node, unsafeParts(second, context, true))
      }
    }
    Ts.forEachChild(node, visit)
  }
  visit(source)
  return out
}

const show = (finding: Finding) => `${finding.file}:${finding.line} ${finding.call}: ${finding.expression}`

describe("server text in logs and displays", () => {
  it("finds the calls it checks", () => {
    const files = CHECKED.flatMap(sourcesOf)
    assert.include(files, "ai/src/internal/toolkit.ts")
    assert.include(files, "client/src/AuthorizationHandler.ts")
    // the check sees a raw interpolation, an escaped one, and a number
    const probe = "probe.ts"
    const parts = (code: string) => {
      const source = Ts.createSourceFile(probe, code, Ts.ScriptTarget.Latest, true, Ts.ScriptKind.TS)
      const call = (source.statements.at(-1) as Ts.ExpressionStatement).expression as Ts.CallExpression
      const context: Context = { source, declarations: declarationsOf(source), resolving: new Set() }
      return call.arguments.flatMap((argument) => unsafeParts(argument, context, false)).map((n) => textOf(n, source))
    }
    assert.deepStrictEqual(parts("Effect.logWarning(`left out: ${error.message}`)"), ["error.message"])
    assert.deepStrictEqual(parts("Effect.logWarning(printable(`left out: ${error.message}`))"), [])
    assert.deepStrictEqual(parts("terminal.display(\"code \" + code.userCode + ` (${text.length})`)"), [
      "code.userCode"
    ])
    assert.deepStrictEqual(parts("Output.stdout(handle.taskId)"), ["handle.taskId"])
    // a const is as safe as its value, seen where it is declared (not where another of its name is)
    const shadowed = "const cut = (text: string) => text\nconst text = printable(raw)\n"
    assert.deepStrictEqual(parts(`${shadowed}Effect.logInfo(\`said: \${text}\`)`), [])
    assert.deepStrictEqual(parts("const text = raw.trim()\nEffect.logInfo(`said: ${text}`)"), ["text"])
  })

  it("every expression written into a log or a terminal is escaped, or a number or a constant of ours", () => {
    const findings = CHECKED.flatMap(sourcesOf).flatMap(findingsOf).map(show)
    const onPurpose = (finding: string) => RAW_ON_PURPOSE.some(([raw]) => finding.replace(/:\d+ /, " ") === raw)
    assert.deepStrictEqual(findings.filter((finding) => !onPurpose(finding)), [])
    // each write raw on purpose is still there (an entry that matches nothing is to be removed)
    for (const [raw] of RAW_ON_PURPOSE) assert.isTrue(findings.some((f) => f.replace(/:\d+ /, " ") === raw), raw)
    assert.deepStrictEqual([...FORMATTERS, ...SAFE.map(([pattern]) => String(pattern))].filter((e) => !used.has(e)), [])
  }, 120_000) // parsing every package's sources takes seconds; more on a loaded machine
})

describe("server text in a log annotation", () => {
  const stray = Url.fileURLToPath(new URL("./fixtures/stdio/stray-answer.mjs", import.meta.url))

  it.live("the id of an answer to no request of ours is logged escaped", () =>
    Effect.gen(function*() {
      const logged: Array<string> = []
      const logger = Logger.make(({ fiber, message }) => {
        logged.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
        for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) logged.push(`${key}=${String(value)}`)
      })
      yield* Effect.gen(function*() {
        const mcp = yield* McpClient.McpClient
        yield* mcp.callTool({ name: "echo" }, { timeout: "20 seconds" })
        yield* eventually(() => logged.some((line) => line.includes("stray")), "the stray answer's log")
      }).pipe(
        Effect.provide(
          McpClient.layer({ healthCheckInterval: false, probeTimeout: "300 millis" }).pipe(
            Layer.provide(
              StdioTransport.layer({ command: process.execPath, args: [stray], closeTimeout: "500 millis" })
            ),
            Layer.provide(NodeServices.layer)
          )
        ),
        Effect.provide(Logger.layer([logger])),
        Effect.provideService(References.MinimumLogLevel, "All")
      )
      const id = logged.find((line) => line.startsWith("id=") && line.includes("stray"))
      assert.strictEqual(id, "id=\\x1b]0;owned\\x07\\x1b[2Jstray\\x9b31m\\u202e\\x0d")
    }))
})
