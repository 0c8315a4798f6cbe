/**
 * The method registry (`internal/mcpMethods.ts`): every request a client sends by the specification has a
 * definition, and the parts of the client that read it agree with it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Url from "node:url"
import * as CapabilityGate from "../src/internal/client/capabilityGate.js"
import { isIdempotent } from "../src/internal/idempotent.js"
import { standardHeaders } from "../src/internal/mcpHeaders.js"
import { methodOf, methods } from "../src/internal/mcpMethods.js"
import * as ResultCache from "../src/ResultCache.js"

const revisions = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]

/** The `method` of each member of a revision's `ClientRequest` union. */
const clientRequests = (revision: string): ReadonlyArray<string> => {
  const schema = JSON.parse(
    Fs.readFileSync(Url.fileURLToPath(new URL(`./spec/${revision}/schema.json`, import.meta.url)), "utf8")
  ) as Record<"definitions" | "$defs", Record<string, { readonly anyOf?: ReadonlyArray<{ readonly $ref: string }> } & {
    readonly properties?: { readonly method?: { readonly const?: string } }
  }> | undefined>
  // (the definitions moved from `definitions` to `$defs` with the 2020-12 dialect)
  const definitions = schema.definitions ?? schema.$defs ?? {}
  const union = definitions.ClientRequest?.anyOf ?? []
  return union.map((member) => definitions[member.$ref.split("/").at(-1)!]?.properties?.method?.const ?? "")
}

describe("the method registry", () => {
  it("defines every request a client sends in every revision", () => {
    for (const revision of revisions) {
      const sent = clientRequests(revision)
      assert.isAbove(sent.length, 9, revision)
      assert.deepStrictEqual(sent.filter((method) => methodOf(method) === undefined), [], revision)
    }
    // an extension's method has no definition: sent as it is, never cached, gated or re-issued
    assert.isUndefined(methodOf("example/custom"))
    assert.isUndefined(methodOf("__proto__"))
    assert.isUndefined(methodOf("toString"))
  })

  it("is what the client's parts read", () => {
    for (const [name, method] of Object.entries(methods)) {
      assert.strictEqual(isIdempotent(name), method.idempotent, name)
      assert.strictEqual(ResultCache.isCacheableMethod(name), method.cacheable, name)
      const headers = standardHeaders({
        jsonrpc: "2.0",
        id: 1,
        method: name,
        params: { name: "n", uri: "u", taskId: "t" }
      })
      assert.strictEqual(
        headers._tag === "Headers" ? headers.headers["Mcp-Name"] : "refused",
        method.nameField === undefined ? undefined : ({ name: "n", uri: "u", taskId: "t" } as const)[method.nameField],
        name
      )
      // a strict client facing a server that declares nothing: a listing is empty, a gated method refused
      const verdict = CapabilityGate.check(name, {})
      assert.strictEqual(
        verdict?._tag,
        method.capability === undefined ? undefined : method.emptyPage === undefined ? "Refused" : "Empty",
        name
      )
    }
  })
})
