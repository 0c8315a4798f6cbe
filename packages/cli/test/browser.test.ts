/**
 * Opening a URL a server chose: whatever the platform, the URL is one argument of a program started without a
 * shell, so the characters a shell (or cmd.exe) would act on stay characters of the URL.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Browser from "../src/browser.js"

// legal in an https URL, and each meaningful to cmd.exe or a POSIX shell
const hostile = "https://x.example/?a&calc|whoami^&b=%PATH%&c=$(touch%20/tmp/x)`id`;d"
const shells = ["cmd", "cmd.exe", "powershell", "pwsh", "sh", "bash", "zsh", "start"]

describe("Browser", () => {
  it("no platform runs a shell, and the URL is the last argument, unchanged", () => {
    for (const platform of ["win32", "darwin", "linux", "freebsd"] as const) {
      const argv = Browser.argv(hostile, platform, undefined)
      assert.notInclude(shells, argv[0].toLowerCase(), platform)
      assert.strictEqual(argv[argv.length - 1], hostile, platform)
      // nothing but the URL itself carries its characters
      for (const word of argv.slice(0, -1)) assert.notMatch(word, /[&|^%$`;]/, platform)
    }
  })

  it("Windows hands the URL to the URL protocol handler, not to cmd /c start", () => {
    assert.deepStrictEqual(Browser.argv(hostile, "win32", undefined), [
      "rundll32",
      "url.dll,FileProtocolHandler",
      hostile
    ])
    assert.deepStrictEqual(Browser.argv(hostile, "darwin", undefined), ["open", hostile])
    assert.deepStrictEqual(Browser.argv(hostile, "linux", undefined), ["xdg-open", hostile])
  })

  it("$BROWSER is split into words without a shell, the URL appended as its own word", () => {
    assert.deepStrictEqual(Browser.argv(hostile, "win32", "firefox --new-tab"), ["firefox", "--new-tab", hostile])
    assert.deepStrictEqual(Browser.argv(hostile, "linux", "   "), ["xdg-open", hostile])
    // an unsplittable $BROWSER falls back to the platform's opener
    assert.deepStrictEqual(Browser.argv(hostile, "linux", "'broken"), ["xdg-open", hostile])
  })
})
