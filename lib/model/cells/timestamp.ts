/**
 * Cell timestamps: Java longs 0..2^63-1 (ms), kept exact. A timestamp is a `number` when it is a
 * safe integer (every clock time, and what hot paths compare and print) and a `bigint` only above
 * 2^53-1 (KijiREST's load tool writes random longs), never the other way round, so `===` compares
 * two timestamps exactly and `<`/`>` work across the two kinds. Stored as 8-byte integers.
 */
import type { Timestamp } from '../types.js';

/** The largest timestamp, Java's Long.MAX_VALUE. */
export const MAX_TIMESTAMP = 9223372036854775807n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const TWO_32 = 0x1_0000_0000;
/** The high 32 bits from which a timestamp is no longer a safe integer (2^53 / 2^32). */
export const UNSAFE_HIGH_WORD = 0x20_0000;

/** The canonical form of an integer timestamp: a number when safe, else the bigint. */
export function timestampOf(value: bigint): Timestamp {
  return value <= MAX_SAFE ? Number(value) : value;
}

/**
 * A timestamp from a JSON value (exact-json gives bigints above 2^53-1), as KijiREST took a cell's
 * `timestamp`: Jackson bound it into a Java Long, reading a number with a fraction or exponent as
 * a double truncated toward zero (Python's `Put(timestamp=time.time()*1000)` sends
 * 1795827221153.123) and a string of digits as the number ("1000"). The result must lie in
 * 0..2^63-1: a negative number is not one, however small its fraction. Undefined when it is not one.
 */
export function timestampFromJson(value: unknown): Timestamp | undefined {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) return value >= 0 ? value : undefined;
    if (!(value >= 0) || !Number.isFinite(value)) return undefined;
    const whole = Math.trunc(value);
    // Beyond 2^53 a double is integral already: the long is that double's value, as Java's (long) cast gives.
    return Number.isSafeInteger(whole) ? whole : BigInt(whole) <= MAX_TIMESTAMP ? timestampOf(BigInt(whole)) : undefined;
  }
  if (typeof value === 'bigint') return value >= 0n && value <= MAX_TIMESTAMP ? timestampOf(value) : undefined;
  if (typeof value === 'string') return timestampFromText(value);
  return undefined;
}

/** A timestamp written in decimal digits (query parameters); undefined when it is not one. */
export function timestampFromText(text: string): Timestamp | undefined {
  if (!/^[0-9]{1,19}$/.test(text)) return undefined;
  const value = BigInt(text);
  return value <= MAX_TIMESTAMP ? timestampOf(value) : undefined;
}

/** The later of two timestamps. */
export function laterOf(a: Timestamp, b: Timestamp): Timestamp {
  return a >= b ? a : b;
}

/** Writes the timestamp as u32 high then u32 low, little-endian (the compact row's layout). */
export function writeTimestampLE(b: Buffer, pos: number, ts: Timestamp): void {
  if (typeof ts === 'number') {
    const hi = Math.floor(ts / TWO_32);
    b.writeUInt32LE(hi, pos);
    b.writeUInt32LE(ts - hi * TWO_32, pos + 4);
  } else {
    b.writeUInt32LE(Number(ts >> 32n), pos);
    b.writeUInt32LE(Number(ts & 0xffffffffn), pos + 4);
  }
}

export function readTimestampLE(b: Uint8Array, pos: number): Timestamp {
  const hi = (b[pos]! | (b[pos + 1]! << 8) | (b[pos + 2]! << 16) | (b[pos + 3]! << 24)) >>> 0;
  const lo = (b[pos + 4]! | (b[pos + 5]! << 8) | (b[pos + 6]! << 16) | (b[pos + 7]! << 24)) >>> 0;
  return hi < UNSAFE_HIGH_WORD ? hi * TWO_32 + lo : (BigInt(hi) << 32n) | BigInt(lo);
}

/** Decimal digits of a timestamp. */
export function timestampDigits(ts: Timestamp): number {
  if (typeof ts === 'bigint') return ts.toString().length;
  let d = 1;
  while (ts >= 10) {
    ts = Math.floor(ts / 10);
    d++;
  }
  return d;
}

/**
 * The largest double at or below `ts` / the smallest at or above it: bounds kept as doubles (the
 * compact row's oldest and newest) must not claim a cell is inside a range it is outside of.
 */
export function doubleAtOrBelow(ts: Timestamp): number {
  if (typeof ts === 'number') return ts;
  const d = Number(ts);
  return BigInt(d) > ts ? nextDouble(d, -1) : d;
}

export function doubleAtOrAbove(ts: Timestamp): number {
  if (typeof ts === 'number') return ts;
  const d = Number(ts);
  return BigInt(d) < ts ? nextDouble(d, 1) : d;
}

/** The adjacent double of a positive finite double, up (1) or down (-1). */
function nextDouble(d: number, direction: 1 | -1): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, d);
  view.setBigUint64(0, view.getBigUint64(0) + BigInt(direction));
  return view.getFloat64(0);
}
