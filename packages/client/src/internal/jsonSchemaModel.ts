/** @internal */

/**
 * The dialects the validator understands. A schema without `$schema` is read in the configured default.
 *
 * @internal
 */
export type Dialect = "2020-12" | "draft-07"

/**
 * Why a schema could not be compiled, or a validation could not finish.
 *
 * @internal
 */
export type FailureReason =
  | "UnsupportedDialect"
  | "InvalidSchema"
  | "RemoteRef"
  | "UnresolvedRef"
  | "UnsupportedKeyword"
  | "DepthExceeded"
  | "BudgetExceeded"

/**
 * @internal
 */
export interface Failure {
  readonly reason: FailureReason
  readonly detail: string
  readonly schemaPath?: string | undefined
}

/**
 * One reason a value does not match: where in the value (a JSON pointer), which keyword, and where that keyword
 * sits in the schema (a JSON pointer fragment of the document).
 *
 * @internal
 */
export interface Issue {
  readonly instancePath: string
  readonly schemaPath: string
  readonly keyword: string
  readonly message: string
}

/**
 * @internal
 */
export interface Options {
  readonly maxDepth: number
  readonly maxSteps: number
  readonly maxIssues: number
  readonly formats: "annotation" | "assert"
  readonly defaultDialect: Dialect
}

/**
 * The annotations a schema left on one instance, as far as `unevaluatedProperties` and `unevaluatedItems` need
 * them: the properties and items some keyword already applied a subschema to.
 *
 * @internal
 */
export interface Evaluated {
  props: Set<string> | undefined
  allProps: boolean
  /** Items `[0, items)` were evaluated (prefixItems, items-array). */
  items: number
  allItems: boolean
  /** Items `contains` matched. */
  itemSet: Set<number> | undefined
}

/**
 * @internal
 */
export const evaluated = (): Evaluated => ({
  props: undefined,
  allProps: false,
  items: 0,
  allItems: false,
  itemSet: undefined
})

/**
 * Adds what a successful in-place subschema evaluated to its parent's record.
 *
 * @internal
 */
export const mergeEvaluated = (into: Evaluated, from: Evaluated): void => {
  if (from.allProps) into.allProps = true
  else if (from.props !== undefined) {
    if (into.props === undefined) into.props = new Set(from.props)
    else for (const key of from.props) into.props.add(key)
  }
  if (from.allItems) into.allItems = true
  if (from.items > into.items) into.items = from.items
  if (from.itemSet !== undefined) {
    if (into.itemSet === undefined) into.itemSet = new Set(from.itemSet)
    else for (const index of from.itemSet) into.itemSet.add(index)
  }
}

/**
 * The state of one validation run. `collect` is false inside branches whose failures are not the value's issues
 * (anyOf, oneOf, not, if, contains), and once enough issues were gathered: then every check may stop at its first
 * failure. `aborted` ends the run: every node entered afterwards fails at once, so the recursion unwinds without
 * further work.
 *
 * @internal
 */
export interface Context {
  steps: number
  depth: number
  collect: boolean
  aborted: Failure | undefined
  readonly maxSteps: number
  readonly maxDepth: number
  readonly maxIssues: number
  readonly tracking: boolean
  readonly issues: Array<Issue>
  /** The instance location of the value being checked, as keys and indices. */
  readonly path: Array<string | number>
}

/**
 * @internal
 */
export const makeContext = (options: Options, tracking: boolean, collect: boolean): Context => ({
  steps: 0,
  depth: 0,
  collect,
  aborted: undefined,
  maxSteps: options.maxSteps,
  maxDepth: options.maxDepth,
  maxIssues: options.maxIssues,
  tracking,
  issues: [],
  path: []
})

/**
 * Ends the run with a typed failure. Returns false so a check can `return abort(...)`.
 *
 * @internal
 */
export const abort = (ctx: Context, reason: "DepthExceeded" | "BudgetExceeded", schemaPath: string): false => {
  if (ctx.aborted === undefined) {
    ctx.aborted = {
      reason,
      detail: reason === "DepthExceeded"
        ? `validation nested deeper than ${ctx.maxDepth} levels at ${instancePointer(ctx.path) || "/"}`
        : `validation needed more than ${ctx.maxSteps} steps`,
      schemaPath
    }
  }
  ctx.collect = false
  return false
}

/**
 * Charges `cost` steps to the run's budget. False when the budget is spent (the run is then aborted).
 *
 * @internal
 */
export const charge = (ctx: Context, cost: number, schemaPath: string): boolean => {
  ctx.steps += cost
  return ctx.steps <= ctx.maxSteps || abort(ctx, "BudgetExceeded", schemaPath)
}

/**
 * Escapes one reference token of a JSON pointer (RFC 6901).
 *
 * @internal
 */
export const escapeToken = (token: string | number): string =>
  typeof token === "number" ? String(token) : token.replace(/~/g, "~0").replace(/\//g, "~1")

/**
 * @internal
 */
export const instancePointer = (path: ReadonlyArray<string | number>): string => {
  let out = ""
  for (const token of path) out += "/" + escapeToken(token)
  return out
}

/**
 * Records an issue when the run collects them. Returns false so a check can `return report(...)`.
 *
 * @internal
 */
export const report = (ctx: Context, keyword: string, schemaPath: string, message: string): false => {
  if (ctx.collect && ctx.aborted === undefined) {
    ctx.issues.push({ instancePath: instancePointer(ctx.path), schemaPath, keyword, message })
    if (ctx.issues.length >= ctx.maxIssues) ctx.collect = false
  }
  return false
}
