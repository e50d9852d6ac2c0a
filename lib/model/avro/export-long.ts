/**
 * The Avro export's long type: avsc's default long refuses values beyond 2^53 and the codec's
 * exact one (avro-types.ts) takes only bigints; this one takes a number (timestamps, writer schema
 * ids and long values are numbers where safe: 11 BigInts a bench row fewer) or a bigint, and reads
 * bigints, as the codec's does.
 *
 * A number below 2^52 in magnitude (where avsc's integer writer is exact) is written by avsc's own
 * writer; any other long as its zigzag varint (the Avro specification's encoding) made from 32-bit
 * halves. Through the public custom-long hook alone (LongType.__with), every long became 8 bytes
 * that avsc then packed: ~15% of a scan thread's Avro export (--cpu-prof, 200,000 bench rows:
 * 2.55 against 2.17 us a row), hence one reach into avsc's writer (lib/deps/internals.ts).
 */
import avro from 'avsc';
import { isInt64 } from '../cells/int64.js';
import { withAvroWrite } from '../../deps/internals.js';
import type { AvroType } from './avro-types.js';

/** Numbers below this in magnitude zigzag exactly as doubles (2|n| + 1 stays within 2^53). */
const EXACT = 2 ** 52;
const BIG_EXACT = 2n ** 52n;
const TWO_28 = 2 ** 28;
/** One buffer per varint length (1-10 bytes): avsc copies the bytes out at once (writeFixed). */
const BY_LENGTH = Array.from({ length: 11 }, (_, n) => Buffer.alloc(n));
const MASK_32 = 0xffffffffn;

/** The varint of a zigzag value `hi` * 2^28 + `lo` (`lo` below 2^28, `hi` below 2^31): 32-bit steps only. */
function varint(hi: number, lo: number): Buffer {
  if (hi === 0) {
    let length = 1;
    for (let v = lo >>> 7; v !== 0; v >>>= 7) length++;
    const out = BY_LENGTH[length]!;
    for (let i = 0; i < length - 1; i++, lo >>>= 7) out[i] = (lo & 0x7f) | 0x80;
    out[length - 1] = lo;
    return out;
  }
  let length = 5;
  for (let v = hi >>> 7; v !== 0; v >>>= 7) length++;
  const out = BY_LENGTH[length]!;
  for (let i = 0; i < 4; i++, lo >>>= 7) out[i] = (lo & 0x7f) | 0x80;
  for (let i = 4; i < length - 1; i++, hi >>>= 7) out[i] = (hi & 0x7f) | 0x80;
  out[length - 1] = hi;
  return out;
}

/** The zigzag varint of any 64-bit integer. */
function bigintBytes(n: bigint): Buffer {
  const z = BigInt.asUintN(64, (n << 1n) ^ (n >> 63n));
  const high = Number(z >> 32n);
  const low = Number(z & MASK_32);
  // Regrouped as 36 + 28 bits; the top 36 bits as hi (below 2^36: split again when over 2^31).
  const lo = low % TWO_28;
  const hi = high * 16 + Math.floor(low / TWO_28);
  return hi < 2 ** 31 ? varint(hi, lo) : wideVarint(hi, lo);
}

/** varint() for a `hi` of 31 to 36 bits. */
function wideVarint(hi: number, lo: number): Buffer {
  let length = 5;
  for (let v = hi; v >= 128; v = Math.floor(v / 128)) length++;
  const out = BY_LENGTH[length]!;
  for (let i = 0; i < 4; i++, lo >>>= 7) out[i] = (lo & 0x7f) | 0x80;
  for (let i = 4; i < length - 1; i++, hi = Math.floor(hi / 128)) out[i] = (hi % 128) | 0x80;
  out[length - 1] = hi;
  return out;
}

/** The integer of a zigzag varint. */
function fromVarint(buf: Buffer): bigint {
  let z = 0n;
  for (let i = buf.length - 1; i >= 0; i--) z = (z << 7n) | BigInt(buf[i]! & 0x7f);
  return (z & 1n) === 0n ? z >> 1n : -(z >> 1n) - 1n;
}

const isValid = (v: unknown): boolean => (typeof v === 'number' ? Number.isSafeInteger(v) : typeof v === 'bigint' && isInt64(v));

const EXACT_LONG = avro.types.LongType.__with(
  {
    fromBuffer: fromVarint,
    toBuffer: (n: number | bigint) => bigintBytes(BigInt(n)),
    fromJSON: (v: unknown) => {
      if (typeof v === 'bigint' || (typeof v === 'number' && Number.isSafeInteger(v))) return v;
      throw new Error(`not a 64-bit integer: ${String(v)}`);
    },
    toJSON: (n: number | bigint) => n,
    isValid,
    compare: (a: number | bigint, b: number | bigint) => (a < b ? -1 : a > b ? 1 : 0),
  },
  true,
) as unknown as AvroType;

/** The export's long: numbers below 2^52 in magnitude by avsc's own integer writer (no buffer), the rest as EXACT_LONG. */
export const EXPORT_LONG = withAvroWrite(EXACT_LONG, (tap, v) => {
  if (typeof v === 'number' && v > -EXACT && v < EXACT && Number.isInteger(v)) tap.writeLong(v);
  // A bigint of that range too (a LONG entity id component, one a bench row: 4% of a scan thread).
  else if (typeof v === 'bigint' && v > -BIG_EXACT && v < BIG_EXACT) tap.writeLong(Number(v));
  else if (isValid(v)) tap.writeFixed(bigintBytes(BigInt(v as number | bigint)));
  else throw new Error(`invalid "long": ${String(v)}`);
});
