import { defineProject, mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

export default mergeConfig(
  shared,
  defineProject({
    // every test spawns the real binary, several times: give a loaded machine room
    test: { name: "cli", globalSetup: ["test/utils/globalSetup.ts"], testTimeout: 90_000 }
  })
)
