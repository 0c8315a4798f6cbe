/**
 * Splits a command line into words the way a POSIX shell does, without running one: whitespace separates
 * words, single quotes keep everything literally, double quotes keep everything but `\` before `"`, `\`, `$`
 * and a backquote, and a backslash outside quotes escapes the next character (a backslash-newline is removed).
 * Variables, globs and operators are not expanded: `$HOME` or `|` are ordinary characters.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"

/**
 * @since 0.1.0
 * @category models
 */
export type SplitError = "UnterminatedSingleQuote" | "UnterminatedDoubleQuote" | "TrailingBackslash"

const isSpace = (char: string) => char === " " || char === "\t" || char === "\n" || char === "\r"

/**
 * @since 0.1.0
 * @category parsing
 */
export const split = (line: string): Result.Result<ReadonlyArray<string>, SplitError> => {
  const words: Array<string> = []
  let current = ""
  // a word exists once any character or quote of it was seen: `''` is one empty word
  let inWord = false
  let index = 0
  while (index < line.length) {
    const char = line[index]
    if (isSpace(char)) {
      if (inWord) {
        words.push(current)
        current = ""
        inWord = false
      }
      index++
    } else if (char === "'") {
      const end = line.indexOf("'", index + 1)
      if (end < 0) return Result.fail("UnterminatedSingleQuote")
      current += line.slice(index + 1, end)
      inWord = true
      index = end + 1
    } else if (char === "\"") {
      inWord = true
      index++
      let closed = false
      while (index < line.length) {
        const inner = line[index]
        if (inner === "\"") {
          closed = true
          index++
          break
        }
        if (inner === "\\" && index + 1 < line.length) {
          const next = line[index + 1]
          if (next === "\"" || next === "\\" || next === "$" || next === "`") {
            current += next
            index += 2
            continue
          }
          if (next === "\n") {
            index += 2
            continue
          }
        }
        current += inner
        index++
      }
      if (!closed) return Result.fail("UnterminatedDoubleQuote")
    } else if (char === "\\") {
      if (index + 1 >= line.length) return Result.fail("TrailingBackslash")
      const next = line[index + 1]
      if (next !== "\n") {
        current += next
        inWord = true
      }
      index += 2
    } else {
      current += char
      inWord = true
      index++
    }
  }
  if (inWord) words.push(current)
  return Result.succeed(words)
}

/**
 * Quotes one word so that {@link split} (and a POSIX shell) reads it back unchanged.
 *
 * @since 0.1.0
 * @category formatting
 */
export const quote = (word: string): string =>
  word.length > 0 && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
