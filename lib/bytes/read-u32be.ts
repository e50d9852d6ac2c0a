/** The big-endian u32 at `b[pos, pos + 4)`, read without a Buffer method (row keys' INTEGER and LONG components are big-endian). */
export function readU32BE(b: Uint8Array, pos: number): number {
  return ((b[pos]! << 24) | (b[pos + 1]! << 16) | (b[pos + 2]! << 8) | b[pos + 3]!) >>> 0;
}
