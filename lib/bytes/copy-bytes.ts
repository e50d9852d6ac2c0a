/**
 * Copies `src[start, end)` into `out` at `p` (room reserved); the new position. A short span is
 * copied a byte at a time in JavaScript: a native copy (Buffer.copy, TypedArray.set) costs a call
 * of ~12 ns, more than the bytes of a typical cell value or key. Used by the row document writer
 * and the Arrow fill for the stored values they copy.
 */
export function copyBytes(out: Uint8Array, p: number, src: Uint8Array, start: number, end: number): number {
  if (end - start < 48) {
    for (let i = start; i < end; i++) out[p++] = src[i]!;
    return p;
  }
  out.set(src.subarray(start, end), p);
  return p + end - start;
}
