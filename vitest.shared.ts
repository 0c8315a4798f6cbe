import * as Path from "node:path"
import * as Url from "node:url"
import type { ViteUserConfig } from "vitest/config"

const packages = Url.fileURLToPath(new URL("./packages/", import.meta.url))

const config: ViteUserConfig = {
  resolve: {
    // the workspace's own packages run from their TypeScript sources (their `exports` name the built files)
    alias: [
      { find: /^@conduit-mcp\/(client|server|redis|ai)$/, replacement: Path.join(packages, "$1", "src", "index.ts") },
      { find: /^@conduit-mcp\/(client|server|redis|ai)\/(.*)$/, replacement: Path.join(packages, "$1", "src", "$2.ts") }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    fakeTimers: { toFake: undefined },
    // fixture programs the tests start with tsx resolve the workspace packages to their sources too
    env: { TSX_TSCONFIG_PATH: Url.fileURLToPath(new URL("./tsconfig.base.json", import.meta.url)) }
  }
}

export default config
