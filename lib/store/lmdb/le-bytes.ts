/** Little-endian fields of the stored rows (compact-row.ts), read without a DataView or a Buffer method call. */
import { UNSAFE_HIGH_WORD, writeTimestampLE } from '../../model/cells/timestamp.js';
import type { Timestamp } from '../../model/types.js';

const TWO_32 = 0x1_0000_0000;

/** A timestamp as two u32 words, high first (each little-endian). */
export function writeTimestamp(b: Buffer, pos: number, ts: Timestamp): void {
  if (typeof ts === 'bigint') return writeTimestampLE(b, pos, ts);
  const hi = Math.floor(ts / TWO_32);
  b.writeUInt32LE(hi, pos);
  b.writeUInt32LE(ts - hi * TWO_32, pos + 4);
}

export function readTimestamp(b: Uint8Array, pos: number): Timestamp {
  const hi = readU32(b, pos);
  const lo = readU32(b, pos + 4);
  // Above 2^53-1 (a high word of 2^21 or more) only a bigint is exact.
  return hi < UNSAFE_HIGH_WORD ? hi * TWO_32 + lo : (BigInt(hi) << 32n) | BigInt(lo);
}

export function readU32(b: Uint8Array, pos: number): number {
  return (b[pos]! | (b[pos + 1]! << 8) | (b[pos + 2]! << 16) | (b[pos + 3]! << 24)) >>> 0;
}

export function readU16(b: Uint8Array, pos: number): number {
  return b[pos]! | (b[pos + 1]! << 8);
}
