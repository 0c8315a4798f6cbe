// A headless "browser" for the OAuth tests: loads a URL, keeps cookies, follows redirects and submits the one
// POST form of each page it lands on (auto-posting forms, device-code confirmation), until a page has no form.
// Exits 0 when the last page loaded with a 2xx status. Usage: node browser.mjs <url>
const cookies = new Map()

const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join("; ")

const keepCookies = (response) => {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(";")
    const index = pair.indexOf("=")
    if (index > 0) cookies.set(pair.slice(0, index).trim(), pair.slice(index + 1).trim())
  }
}

const attribute = (tag, name) => new RegExp(`${name}="([^"]*)"`, "i").exec(tag)?.[1]

const unescape = (text) =>
  text.replaceAll("&amp;", "&").replaceAll("&quot;", "\"").replaceAll("&#39;", "'").replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")

/** The first `<form method="post">` of a page: its action and the name/value of its inputs. */
const postForm = (html, base) => {
  const match = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html)
  if (match === null || (attribute(match[1], "method") ?? "get").toLowerCase() !== "post") return undefined
  const fields = new URLSearchParams()
  for (const input of match[2].matchAll(/<input\b[^>]*>/gi)) {
    const name = attribute(input[0], "name")
    const value = attribute(input[0], "value")
    if (name !== undefined && value !== undefined) fields.append(name, unescape(value))
  }
  return { action: new URL(unescape(attribute(match[1], "action") ?? ""), base), fields }
}

let request = { url: new URL(process.argv[2]), method: "GET", body: undefined }
for (let step = 0; step < 30; step++) {
  const response = await fetch(request.url, {
    method: request.method,
    redirect: "manual",
    headers: {
      cookie: cookieHeader(),
      ...(request.body !== undefined ? { "content-type": "application/x-www-form-urlencoded" } : {})
    },
    body: request.body
  })
  keepCookies(response)
  const location = response.headers.get("location")
  if (response.status >= 300 && response.status < 400 && location !== null) {
    request = { url: new URL(location, request.url), method: "GET", body: undefined }
    continue
  }
  const text = await response.text()
  const form = (response.headers.get("content-type") ?? "").includes("html") ? postForm(text, request.url) : undefined
  if (form === undefined) process.exit(response.ok ? 0 : 1)
  request = { url: form.action, method: "POST", body: form.fields.toString() }
}
process.exit(1)
