/** @internal */
import * as Option from "effect/Option"

/**
 * A parsed URI template. Only the two expression forms resource templates use in practice are supported
 * (RFC 6570 level 1 `{name}`, which stops at `/`, `?` and `#`, and level 2 `{+name}`, which takes the rest);
 * any other text is matched literally.
 *
 * @internal
 */
export interface UriTemplate {
  readonly template: string
  readonly variables: ReadonlyArray<string>
  readonly match: (uri: string) => Option.Option<Readonly<Record<string, string>>>
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const decode = (text: string): Option.Option<string> => {
  try {
    return Option.some(decodeURIComponent(text))
  } catch {
    return Option.none()
  }
}

/** @internal */
export const parse = (template: string): UriTemplate => {
  const variables: Array<string> = []
  let pattern = "^"
  let last = 0
  for (const expression of template.matchAll(/\{(\+?)([A-Za-z0-9_.]+)\}/g)) {
    pattern += escapeRegExp(template.slice(last, expression.index))
    pattern += expression[1] === "+" ? "(.+)" : "([^/?#]+)"
    variables.push(expression[2])
    last = expression.index + expression[0].length
  }
  pattern += `${escapeRegExp(template.slice(last))}$`
  const regexp = new RegExp(pattern)
  return {
    template,
    variables,
    match: (uri) => {
      const found = regexp.exec(uri)
      if (found === null) return Option.none()
      const values: Record<string, string> = {}
      for (let i = 0; i < variables.length; i++) {
        const value = decode(found[i + 1])
        if (Option.isNone(value)) return Option.none()
        values[variables[i]] = value.value
      }
      return Option.some(values)
    }
  }
}
