/** @internal */

/**
 * Joins byte chunks into one array, copying each byte once; a single chunk is returned as it is. `size` is their
 * total length when the caller already counted it.
 *
 * @internal
 */
export const concatBytes = (chunks: ReadonlyArray<Uint8Array>, size?: number): Uint8Array => {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0]
  let total = size ?? 0
  if (size === undefined) for (const chunk of chunks) total += chunk.length
  const out = new Uint8Array(total)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.length
  }
  return out
}
