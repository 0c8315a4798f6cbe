/** @internal */
import * as Result from "effect/Result"

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const TIME = /^(\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/
const HOST_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/
const HEXTET = /^[0-9a-fA-F]{1,4}$/

const daysIn = (year: number, month: number): number =>
  month === 2
    ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28)
    : [4, 6, 9, 11].includes(month)
    ? 30
    : 31

const isDate = (text: string): boolean => {
  const match = DATE.exec(text)
  if (match === null) return false
  const year = Number(match[1])
  const month = Number(match[2])
  const day = Number(match[3])
  return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month)
}

const isTime = (text: string): boolean => {
  const match = TIME.exec(text)
  if (match === null) return false
  const hour = Number(match[1])
  const minute = Number(match[2])
  const second = Number(match[3])
  const offsetHour = match[6] === undefined ? 0 : Number(match[6])
  const offsetMinute = match[7] === undefined ? 0 : Number(match[7])
  if (hour > 23 || minute > 59 || second > 60 || offsetHour > 23 || offsetMinute > 59) return false
  if (second < 60) return true
  // A leap second is 23:59:60 in UTC.
  const sign = match[5].startsWith("-") ? -1 : 1
  const utc = ((hour * 60 + minute - sign * (offsetHour * 60 + offsetMinute)) % 1440 + 1440) % 1440
  return utc === 23 * 60 + 59
}

const isDateTime = (text: string): boolean => {
  const separator = text.search(/[Tt ]/)
  return separator === 10 && isDate(text.slice(0, 10)) && isTime(text.slice(11))
}

const isHostname = (text: string): boolean => {
  const name = text.endsWith(".") ? text.slice(0, -1) : text
  return name.length > 0 && name.length <= 253 && name.split(".").every((label) => HOST_LABEL.test(label))
}

const isIpv6 = (text: string): boolean => {
  let address = text
  let groups = 8
  const lastColon = address.lastIndexOf(":")
  if (address.includes(".")) {
    if (!IPV4.test(address.slice(lastColon + 1))) return false
    address = address.slice(0, lastColon + 1) + "0"
    groups = 7
  }
  const halves = address.split("::")
  if (halves.length > 2) return false
  const parts = (half: string) => half === "" ? [] : half.split(":")
  if (halves.length === 1) {
    const all = parts(address)
    return all.length === groups && all.every((part) => HEXTET.test(part))
  }
  const head = parts(halves[0])
  const tail = parts(halves[1])
  return head.length + tail.length < groups && [...head, ...tail].every((part) => HEXTET.test(part))
}

const isEmail = (text: string): boolean => {
  const at = text.lastIndexOf("@")
  if (at <= 0) return false
  const local = text.slice(0, at)
  const domain = text.slice(at + 1)
  return (/^"(?:[^"\\\r\n]|\\.)*"$/.test(local) || /^[^\s@"]+$/.test(local)) &&
    (isHostname(domain) || /^\[[^\s\]]+\]$/.test(domain))
}

const isRegex = (text: string): boolean => Result.isSuccess(Result.try(() => new RegExp(text, "u")))

/**
 * The formats checked when format assertion is on. Lenient on purpose: they catch values of the wrong shape
 * (a date that is not a date, a URI without a scheme), not every corner of the RFCs. Any other format name is
 * an annotation.
 *
 * @internal
 */
export const formats: ReadonlyMap<string, (text: string) => boolean> = new Map([
  ["date", isDate],
  ["time", isTime],
  ["date-time", isDateTime],
  ["email", isEmail],
  ["hostname", isHostname],
  ["ipv4", (text: string) => IPV4.test(text)],
  ["ipv6", isIpv6],
  ["uri", (text: string) => URI.test(text)],
  ["uri-reference", (text: string) => !/\s/.test(text)],
  ["uuid", (text: string) => UUID.test(text)],
  ["regex", isRegex]
])
