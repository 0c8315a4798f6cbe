import { defineConfig } from "vitest/config"
import projects from "./vitest.workspace.js"

// vitest.workspace.ts is the one list of the packages' test projects; vitest 4 and later no longer read a workspace
// file by themselves (an unfiltered run would collect nothing and exit 0), so the root config takes it as `projects`.
// `npm test` (scripts/test-all.mjs) also fails when fewer test files run than the packages hold.
export default defineConfig({ test: { projects: [...projects] } })
