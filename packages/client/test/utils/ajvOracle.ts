/**
 * Ajv as a reference verdict for the JsonSchema tests: `ajv/dist/2020` for 2020-12 schemas, `ajv` for draft-07.
 * Formats are not validated (the validator treats `format` as an annotation by default), strict mode is off (so
 * unknown keywords are ignored, as the dialects require).
 */
import { Ajv } from "ajv"
import type { AnySchema } from "ajv"
import { Ajv2020 } from "ajv/dist/2020.js"

export type Dialect = "2020-12" | "draft-07"

/** A verdict, or why Ajv gave none: it refused the schema (`compile`) or crashed validating (`run`). */
export type Verdict = boolean | { readonly error: string; readonly stage: "compile" | "run" }

const options = { strict: false, validateFormats: false, allErrors: false } as const

export interface Oracle {
  readonly verdict: (schema: unknown, value: unknown) => Verdict
  /** Registers a document that later schemas reference as `key#/…`, compiled once. */
  readonly addDocument: (key: string, document: unknown) => void
}

const isSchema = (value: unknown): value is AnySchema =>
  typeof value === "boolean" || (typeof value === "object" && value !== null && !Array.isArray(value))

/** A fresh pair of Ajv instances (each one keeps every schema it compiled, so long runs make new ones). */
export const make = (dialect: Dialect): Oracle => {
  const ajv = dialect === "2020-12" ? new Ajv2020(options) : new Ajv(options)
  return {
    addDocument: (key, document) => {
      if (isSchema(document)) ajv.addSchema(document, key)
    },
    verdict: (schema, value) => {
      if (!isSchema(schema)) return { error: "not a schema", stage: "compile" }
      let validate: (value: unknown) => unknown
      try {
        validate = ajv.compile(schema)
      } catch (error) {
        return { error: String(error), stage: "compile" }
      }
      try {
        return validate(value) === true
      } catch (error) {
        // Ajv generates code; on some compositions that code throws (a ReferenceError on an undeclared variable).
        return { error: String(error), stage: "run" }
      }
    }
  }
}
