// What every client adapter shares: the protocol constants of the benchmark and the promise-based drivers.
export const MODERN = "2026-07-28"
export const LEGACY = "2025-11-25"
export const clientInfo = { name: "conduit-bench", version: "1.0.0" }
export const now = () => performance.now()

/** Runs `n` calls of `call`, at most `concurrency` at a time. */
export const manyWith = async (call, n, concurrency) => {
  let started = 0
  const worker = async () => {
    while (started < n) {
      started++
      await call()
    }
  }
  const workers = []
  for (let i = 0; i < Math.min(concurrency, n); i++) workers.push(worker())
  await Promise.all(workers)
}

/** Runs `n` calls one after the other and returns each one's latency in milliseconds. */
export const sequenceWith = async (call, n) => {
  const latencies = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const start = now()
    await call()
    latencies[i] = now() - start
  }
  return latencies
}

/** The text of the first content block of a tools/call result; throws when the shape is wrong. */
export const textOf = (result) => {
  const block = result?.content?.[0]
  if (block?.type !== "text" || typeof block.text !== "string") {
    throw new Error(`unexpected tools/call result: ${JSON.stringify(result).slice(0, 200)}`)
  }
  return block.text
}
