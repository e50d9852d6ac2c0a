/**
 * Unsigned LEB128 varints (7 bits a byte, low first), as Kiji's UID storage writes schema ids
 * (docs/data-model.md, "What Kiji stored"): the stored cell values of both stores and the packed row batches use them.
 * Arithmetic, not 32-bit bit operations, so any safe integer encodes.
 */

/** Bytes of the varint of `n` (a non-negative safe integer). */
export function varintLength(n: number): number {
  let len = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    len++;
  }
  return len;
}

/** Writes the varint of `n` at `pos`; returns the position after it. */
export function writeVarint(out: Uint8Array, pos: number, n: number): number {
  while (n >= 0x80) {
    out[pos++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  out[pos++] = n;
  return pos;
}
