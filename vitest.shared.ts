import type { ViteUserConfig } from "vitest/config"

const config: ViteUserConfig = {
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    fakeTimers: { toFake: undefined }
  }
}

export default config
