/**
 * `conduit` end to end against the embedded demo server (in-process): every command, `--json` output, and the
 * exit code of each error kind. Each check spawns the real binary.
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Cli from "./utils/cli.js"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

layer(Cli.layer, { excludeTestServices: true })("conduit with the embedded demo server", (it) => {
  it.effect("lists and calls tools, as text and as JSON", () =>
    Effect.gen(function*() {
      const [list, listJson, echo, echoJson, add, legacyEcho] = yield* Cli.runAll([
        ["tools", "list"],
        ["tools", "list", "--json"],
        ["tools", "call", "echo", "{\"text\":\"hi\"}"],
        ["tools", "call", "echo", "{\"text\":\"hi\"}", "--json"],
        ["tools", "call", "add", "--arg", "a=2", "--arg", "b=40", "--json"],
        ["--era", "legacy", "tools", "call", "echo", "--arg", "text=007", "--json"]
      ])
      assert.strictEqual(list.code, 0, list.stderr)
      for (const name of ["echo", "add", "slow", "confirm", "fail"]) assert.include(list.stdout, name)

      assert.strictEqual(listJson.code, 0, listJson.stderr)
      const tools = Cli.parseJson(listJson)
      assert.isTrue(isRecord(tools) && Array.isArray(tools.tools))
      const names = isRecord(tools) && Array.isArray(tools.tools)
        ? tools.tools.map((tool: unknown) => (isRecord(tool) ? tool.name : undefined))
        : []
      assert.deepStrictEqual(names, ["echo", "add", "slow", "research", "confirm", "touch", "fail"])

      assert.deepStrictEqual(echo, { code: 0, stdout: "hi\n", stderr: "" })

      assert.strictEqual(echoJson.code, 0, echoJson.stderr)
      const result = Cli.parseJson(echoJson)
      assert.isTrue(isRecord(result))
      if (isRecord(result)) {
        assert.deepStrictEqual(result.content, [{ type: "text", text: "hi" }])
        assert.strictEqual(result.resultType, "complete") // the modern era, negotiated by default
      }

      assert.strictEqual(add.code, 0, add.stderr)
      const sum = Cli.parseJson(add)
      assert.isTrue(isRecord(sum) && isRecord(sum.structuredContent) && sum.structuredContent.sum === 42)

      // a string property keeps "007" as text; the legacy result has no modern envelope
      assert.strictEqual(legacyEcho.code, 0, legacyEcho.stderr)
      assert.deepStrictEqual(Cli.parseJson(legacyEcho), { content: [{ type: "text", text: "007" }] })
    }))

  it.effect("probe reports era, version, transport, server info, capabilities and instructions", () =>
    Effect.gen(function*() {
      const [modern, legacy, pinned, text] = yield* Cli.runAll([
        ["probe", "--json"],
        ["--era", "legacy", "probe", "--json"],
        ["probe", "--json", "--protocol-version", "2025-06-18"],
        ["probe"]
      ])
      const probe = Cli.parseJson(modern)
      assert.isTrue(isRecord(probe))
      if (!isRecord(probe)) return
      assert.deepStrictEqual(Object.keys(probe), [
        "era",
        "protocolVersion",
        "transport",
        "serverInfo",
        "capabilities",
        "instructions"
      ])
      assert.strictEqual(probe.era, "modern")
      assert.strictEqual(probe.protocolVersion, "2026-07-28")
      assert.strictEqual(probe.transport, "in-process")
      assert.isTrue(isRecord(probe.serverInfo) && probe.serverInfo.name === "conduit-demo")
      assert.isTrue(isRecord(probe.capabilities) && isRecord(probe.capabilities.tools))
      assert.include(String(probe.instructions), "Demo server")

      const legacyProbe = Cli.parseJson(legacy)
      assert.isTrue(isRecord(legacyProbe) && legacyProbe.era === "legacy" && legacyProbe.protocolVersion === "2025-11-25")
      const pinnedProbe = Cli.parseJson(pinned)
      assert.isTrue(isRecord(pinnedProbe) && pinnedProbe.protocolVersion === "2025-06-18")

      assert.strictEqual(text.code, 0, text.stderr)
      assert.include(text.stdout, "conduit-demo")
      assert.include(text.stdout, "2026-07-28")
    }))

  it.effect("resources, templates, prompts and completion", () =>
    Effect.gen(function*() {
      const [resources, templates, read, readJson, prompts, prompt, completePrompt, completeTemplate] = yield* Cli
        .runAll([
          ["resources", "list", "--json"],
          ["resources", "templates", "--json"],
          ["resources", "read", "demo://notes/eras"],
          ["resources", "read", "demo://about", "--json"],
          ["prompts", "list"],
          ["prompts", "get", "greet", "{\"name\":\"Ada\"}", "--arg", "style=formal"],
          ["complete", "greet", "name", "a", "--json"],
          ["complete", "resource:demo://notes/{topic}", "topic", "e"]
        ])
      const resourceList = Cli.parseJson(resources)
      assert.isTrue(
        isRecord(resourceList) && Array.isArray(resourceList.resources) && isRecord(resourceList.resources[0]) &&
          resourceList.resources[0].uri === "demo://about"
      )
      const templateList = Cli.parseJson(templates)
      assert.isTrue(
        isRecord(templateList) && Array.isArray(templateList.resourceTemplates) &&
          isRecord(templateList.resourceTemplates[0]) &&
          templateList.resourceTemplates[0].uriTemplate === "demo://notes/{topic}"
      )
      assert.include(read.stdout, "two eras")
      const contents = Cli.parseJson(readJson)
      assert.isTrue(isRecord(contents) && Array.isArray(contents.contents) && contents.contents.length === 1)
      assert.include(prompts.stdout, "greet")
      assert.strictEqual(prompt.code, 0, prompt.stderr)
      assert.include(prompt.stdout, "formal greeting addressed to Ada")
      const completion = Cli.parseJson(completePrompt)
      assert.isTrue(
        isRecord(completion) && isRecord(completion.completion) &&
          JSON.stringify(completion.completion.values) === JSON.stringify(["Ada", "Alan"])
      )
      assert.strictEqual(completeTemplate.stdout, "effect\neras\n")
    }))

  it.effect("exit codes: 1 isError, 2 usage, 5 server error, 124 timeout", () =>
    Effect.gen(function*() {
      const [isError, isErrorJson, badJson, badOption, unknownTool, timeout, badTimeout, twoServers] = yield* Cli
        .runAll([
          ["tools", "call", "fail"],
          ["tools", "call", "fail", "--json"],
          ["tools", "call", "echo", "[1, 2]"],
          ["tools", "list", "--no-such-option"],
          ["tools", "call", "no-such-tool"],
          ["--timeout", "300ms", "tools", "call", "slow", "{\"steps\":100,\"delayMs\":2000}"],
          ["tools", "list", "--timeout", "soon"],
          ["--stdio", "x", "--url", "http://localhost:1/mcp", "probe"]
        ])
      assert.strictEqual(isError.code, 1)
      assert.include(isError.stdout, "the fail tool always fails")
      assert.include(isError.stderr, "reported an error")
      assert.strictEqual(isErrorJson.code, 1)
      const failed = Cli.parseJson(isErrorJson)
      assert.isTrue(isRecord(failed) && failed.isError === true)

      assert.strictEqual(badJson.code, 2)
      assert.include(badJson.stderr, "must be a JSON object")
      assert.strictEqual(badOption.code, 2)
      // an unknown tool is found before any call: a usage error on every server
      assert.strictEqual(unknownTool.code, 2)
      assert.include(unknownTool.stderr, "unknown tool \"no-such-tool\"")
      assert.strictEqual(timeout.code, 124, timeout.stderr)
      assert.include(timeout.stderr, "timed out")
      assert.strictEqual(badTimeout.code, 2)
      assert.strictEqual(twoServers.code, 2)
      assert.include(twoServers.stderr, "choose one server")
    }))

  it.effect("listen prints notifications until Ctrl-C, then exits 130", () =>
    Effect.gen(function*() {
      const running = yield* Cli.start(["listen", "--tools", "--prompts", "--json"])
      yield* running.awaitStderr("Ctrl-C stops")
      const stderr = yield* SubscriptionRef.get(running.stderr)
      assert.include(stderr, "notifications/tools/list_changed, notifications/prompts/list_changed")
      yield* running.signal("SIGINT")
      const result = yield* running.result
      assert.strictEqual(result.code, 130, result.stderr)
      assert.strictEqual(result.stdout, "") // the demo server announces no changes
    }))

  it.effect("--help documents the exit codes; progress is reported on stderr, never on stdout", () =>
    Effect.gen(function*() {
      const [help, slow] = yield* Cli.runAll([
        ["--help"],
        ["tools", "call", "slow", "{\"steps\":3,\"delayMs\":1}"]
      ])
      assert.strictEqual(help.code, 0)
      assert.include(help.stdout, "Exit codes:")
      for (const code of ["124", "130"]) assert.include(help.stdout, code)
      assert.strictEqual(slow.code, 0, slow.stderr)
      assert.strictEqual(slow.stdout, "done after 3 steps\n")
      assert.include(slow.stderr, "progress 1/3 step 1 of 3")
      assert.include(slow.stderr, "progress 3/3 step 3 of 3")
    }))
})
