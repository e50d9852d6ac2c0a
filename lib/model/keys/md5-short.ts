/**
 * MD5 (RFC 1321) of a short input, one 64-byte block (at most 55 bytes), computed in JavaScript.
 * Row key salts hash a few bytes (a LONG id: 8): node's one-shot crypto.hash cost 215 ns an 8-byte
 * digest into a string, 267 ns given a view into the key buffer (plus ~30 ns to make the view),
 * this about 155 ns reading the key buffer in place (500,000 digests each; fully unrolled, 122 ns).
 * Longer inputs go to node's crypto (row-key.ts md5Into); test/model/md5-short.test.ts checks
 * every length 0-55 against it.
 */

/** Bytes one block holds besides the 0x80 marker and the 8-byte bit length. */
export const MD5_SHORT_MAX = 55;

/** K[i] = floor(|sin(i + 1)| * 2^32), RFC 1321 3.4. */
const K = Int32Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 0x1_0000_0000) | 0);
/** Left rotations of each round's four steps. */
const R1 = [7, 12, 17, 22];
const R2 = [5, 9, 14, 20];
const R3 = [4, 11, 16, 23];
const R4 = [6, 10, 15, 21];

const A0 = 0x67452301;
const B0 = 0xefcdab89 | 0;
const C0 = 0x98badcfe | 0;
const D0 = 0x10325476;

/** The block as sixteen little-endian words, reused: digests run one at a time on a thread. */
const M = new Int32Array(16);
const DIGEST = new Int32Array(4);

function rotl(x: number, s: number): number {
  return (x << s) | (x >>> (32 - s));
}

/**
 * Writes the first `count` (<= 16) bytes of the MD5 digest of data[start, end) (at most
 * MD5_SHORT_MAX bytes) at target[0..count). target may be data itself, outside [start, end).
 */
export function md5ShortInto(target: Uint8Array, count: number, data: Uint8Array, start: number, end: number): void {
  const length = end - start;
  M.fill(0);
  for (let k = 0; k < length; k++) M[k >> 2]! |= data[start + k]! << ((k & 3) * 8);
  M[length >> 2]! |= 0x80 << ((length & 3) * 8);
  M[14] = length * 8;
  let a = A0;
  let b = B0;
  let c = C0;
  let d = D0;
  for (let i = 0; i < 16; i++) {
    const f = ((b & c) | (~b & d)) + a + K[i]! + M[i]!;
    a = d;
    d = c;
    c = b;
    b = (b + rotl(f, R1[i & 3]!)) | 0;
  }
  for (let i = 16; i < 32; i++) {
    const f = ((d & b) | (~d & c)) + a + K[i]! + M[(5 * i + 1) & 15]!;
    a = d;
    d = c;
    c = b;
    b = (b + rotl(f, R2[i & 3]!)) | 0;
  }
  for (let i = 32; i < 48; i++) {
    const f = (b ^ c ^ d) + a + K[i]! + M[(3 * i + 5) & 15]!;
    a = d;
    d = c;
    c = b;
    b = (b + rotl(f, R3[i & 3]!)) | 0;
  }
  for (let i = 48; i < 64; i++) {
    const f = (c ^ (b | ~d)) + a + K[i]! + M[(7 * i) & 15]!;
    a = d;
    d = c;
    c = b;
    b = (b + rotl(f, R4[i & 3]!)) | 0;
  }
  DIGEST[0] = (a + A0) | 0;
  DIGEST[1] = (b + B0) | 0;
  DIGEST[2] = (c + C0) | 0;
  DIGEST[3] = (d + D0) | 0;
  for (let i = 0; i < count; i++) target[i] = DIGEST[i >> 2]! >>> ((i & 3) * 8);
}
