/**
 * LMDB key of one cell:
 *
 *   esc(rowKey) 00 00 | family 00 | esc(qualifier) 00 00 | be64(2^64 - 1 - timestamp)
 *
 * `esc` writes 00 as 00 FF, so the 00 00 terminator sorts before any continuation: keys keep
 * row-key byte order (a key that is a prefix of another sorts first), a row's cells are contiguous,
 * and each column's versions sort newest first. Family names never contain 00 (name pattern).
 */

import { UNSAFE_HIGH_WORD } from '../../model/cells/timestamp.js';
import type { Timestamp } from '../../model/types.js';

/** LMDB's compiled-in key limit (docs/architecture.md, "The embedded store"): no cell key or row prefix is longer. */
export const LMDB_MAX_KEY = 1978;

const TS_BYTES = 8;
const TWO_32 = 0x1_0000_0000;

/** Bytes `esc(bytes) 00 00` takes. */
function escapedLength(bytes: Uint8Array): number {
  let n = bytes.length + 2;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0) n++;
  return n;
}

function writeEscaped(out: Buffer, pos: number, bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    out[pos++] = b;
    if (b === 0) out[pos++] = 0xff;
  }
  out[pos++] = 0;
  out[pos++] = 0;
  return pos;
}

/** `esc(rowKey) 00 00`: the prefix of every cell of the row. */
export function rowPrefix(rowKey: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(escapedLength(rowKey));
  writeEscaped(out, 0, rowKey);
  return out;
}

/** The prefix of every cell of one family of a row. */
export function familyPrefix(rowKey: Uint8Array, family: string): Buffer {
  const fam = Buffer.from(family, 'utf8');
  const out = Buffer.allocUnsafe(escapedLength(rowKey) + fam.length + 1);
  let pos = writeEscaped(out, 0, rowKey);
  pos += fam.copy(out, pos);
  out[pos] = 0;
  return out;
}

/** The prefix of every version of one column of a row. */
export function columnPrefix(rowKey: Uint8Array, family: string, qualifier: string): Buffer {
  const fam = Buffer.from(family, 'utf8');
  const qual = Buffer.from(qualifier, 'utf8');
  const out = Buffer.allocUnsafe(escapedLength(rowKey) + fam.length + 1 + escapedLength(qual));
  let pos = writeEscaped(out, 0, rowKey);
  pos += fam.copy(out, pos);
  out[pos++] = 0;
  writeEscaped(out, pos, qual);
  return out;
}

export function cellKey(rowKey: Uint8Array, family: string, qualifier: string, timestamp: Timestamp): Buffer {
  const prefix = columnPrefix(rowKey, family, qualifier);
  const out = Buffer.allocUnsafe(prefix.length + TS_BYTES);
  prefix.copy(out, 0);
  writeInvertedTimestamp(out, prefix.length, timestamp);
  return out;
}

/**
 * The cell key of a column and timestamp in the row whose escaped prefix (rowPrefix) is given:
 * one allocation, for writing many cells of one row.
 */
export function cellKeyIn(rowPrefixBytes: Buffer, family: string, qualifier: string, timestamp: Timestamp): Buffer {
  if (qualifier.includes('\0')) return cellKeyFromPrefix(rowPrefixBytes, family, qualifier, timestamp);
  const famLen = Buffer.byteLength(family, 'utf8');
  const qualLen = Buffer.byteLength(qualifier, 'utf8');
  const p = rowPrefixBytes.length;
  const out = Buffer.allocUnsafe(p + famLen + 1 + qualLen + 2 + TS_BYTES);
  rowPrefixBytes.copy(out, 0);
  let pos = p + out.write(family, p, 'utf8');
  out[pos++] = 0;
  pos += out.write(qualifier, pos, 'utf8');
  out[pos++] = 0;
  out[pos++] = 0;
  writeInvertedTimestamp(out, pos, timestamp);
  return out;
}

/**
 * Builds the cell keys of one row after another into one reusable buffer: `key` returns a view
 * that is valid until the next call. For writes that hand the key to LMDB at once (putSync inside
 * a write transaction copies key and value before returning). The import spent 3% of its time in
 * Buffer allocation and 10% in GC with one new key per cell (profile of 200,000 rows).
 */
export class CellKeyScratch {
  private buf = Buffer.allocUnsafe(4096);
  private rowBytes: Buffer = this.buf.subarray(0, 0);
  private rowEnd = 0;

  /** Starts the row whose escaped prefix (rowPrefix) is given. */
  setRow(rowPrefixBytes: Buffer): void {
    this.rowBytes = rowPrefixBytes;
    this.rowEnd = rowPrefixBytes.length;
    if (this.rowEnd + 64 > this.buf.length) this.buf = Buffer.allocUnsafe(2 * (this.rowEnd + 64));
    rowPrefixBytes.copy(this.buf, 0);
  }

  /** The key of a cell of the current row (a view into the scratch buffer). */
  key(family: string, qualifier: string, timestamp: Timestamp): Buffer {
    // Worst case of the UTF-8 text (3 bytes per UTF-16 unit); a qualifier holding 00 is escaped.
    const worst = this.rowEnd + 3 * (family.length + qualifier.length) + 3 + TS_BYTES;
    if (worst > this.buf.length || qualifier.includes('\0')) return cellKeyIn(this.rowBytes, family, qualifier, timestamp);
    const out = this.buf;
    let pos = this.rowEnd + out.write(family, this.rowEnd, 'utf8');
    out[pos++] = 0;
    pos += out.write(qualifier, pos, 'utf8');
    out[pos++] = 0;
    out[pos++] = 0;
    writeInvertedTimestamp(out, pos, timestamp);
    return out.subarray(0, pos + TS_BYTES);
  }
}

function cellKeyFromPrefix(rowPrefixBytes: Buffer, family: string, qualifier: string, timestamp: Timestamp): Buffer {
  const fam = Buffer.from(family, 'utf8');
  const qual = Buffer.from(qualifier, 'utf8');
  const out = Buffer.allocUnsafe(rowPrefixBytes.length + fam.length + 1 + escapedLength(qual) + TS_BYTES);
  let pos = rowPrefixBytes.copy(out, 0);
  pos += fam.copy(out, pos);
  out[pos++] = 0;
  pos = writeEscaped(out, pos, qual);
  writeInvertedTimestamp(out, pos, timestamp);
  return out;
}

/**
 * Whether the cell key is within LMDB's key limit, without encoding anything when a bound settles
 * it: escaping at most doubles the row key's bytes, and a UTF-16 unit of a name is at most 3 bytes
 * once encoded and escaped (only U+0000, one byte, is escaped, to two). The exact length (a Buffer
 * of the qualifier) cost 1.3% of an import's parsing thread, for keys far below the limit.
 */
export function cellKeyFits(rowKey: Uint8Array, family: string, qualifier: string): boolean {
  const bound = 2 * rowKey.length + 2 + 3 * family.length + 1 + 3 * qualifier.length + 2 + TS_BYTES;
  return bound <= LMDB_MAX_KEY || cellKeyLength(rowKey, family, qualifier) <= LMDB_MAX_KEY;
}

/** The length of the whole cell key, to check against LMDB's key limit before writing. */
export function cellKeyLength(rowKey: Uint8Array, family: string, qualifier: string): number {
  return escapedLength(rowKey) + Buffer.byteLength(family) + 1 + escapedLength(Buffer.from(qualifier, 'utf8')) + TS_BYTES;
}

export function writeInvertedTimestamp(out: Buffer, pos: number, timestamp: Timestamp): void {
  if (typeof timestamp === 'bigint') {
    out.writeBigUInt64BE(0xffffffffffffffffn - timestamp, pos);
    return;
  }
  const hi = Math.floor(timestamp / TWO_32);
  const lo = timestamp - hi * TWO_32;
  out.writeUInt32BE(0xffffffff - hi, pos);
  out.writeUInt32BE(0xffffffff - lo, pos + 4);
}

export function readInvertedTimestamp(key: Uint8Array, pos: number): Timestamp {
  const hi = (0xffffffff - ((key[pos]! << 24) | (key[pos + 1]! << 16) | (key[pos + 2]! << 8) | key[pos + 3]!)) >>> 0;
  const lo = 0xffffffff - (((key[pos + 4]! << 24) | (key[pos + 5]! << 16) | (key[pos + 6]! << 8) | key[pos + 7]!) >>> 0);
  // Above 2^53-1 (a high word of 2^21 or more) only a bigint is exact.
  return hi >>> 0 < UNSAFE_HIGH_WORD ? (hi >>> 0) * TWO_32 + lo : (BigInt(hi >>> 0) << 32n) | BigInt(lo);
}

/** Where the escaped row key of a cell key ends: the index just past its 00 00 terminator. */
export function rowKeyEnd(key: Uint8Array): number {
  let i = 0;
  for (;;) {
    const b = key[i++];
    if (b === 0) {
      if (key[i] === 0) return i + 1;
      i++; // 00 FF = escaped 00
    } else if (b === undefined) {
      throw new Error('corrupt cell key: no row terminator');
    }
  }
}

/**
 * Removes the escaping of `key[start, end - 2)` into `out` from its start, without a new Buffer
 * (scan threads unescape each row's key into one scratch buffer); returns the row key's length.
 * `out` must hold `end - 2 - start` bytes.
 */
export function unescapeInto(out: Uint8Array, key: Uint8Array, start: number, end: number): number {
  const stop = end - 2;
  let o = 0;
  for (let i = start; i < stop; i++) {
    const b = key[i]!;
    out[o++] = b;
    if (b === 0) i++;
  }
  return o;
}

/** Removes the escaping of `key[start, end - 2)` (the escaped part before a 00 00 terminator). */
export function unescape(key: Uint8Array, start: number, end: number): Buffer {
  let zeros = 0;
  for (let i = start; i < end - 2; i++) if (key[i] === 0) zeros++;
  if (zeros === 0) return Buffer.from(key.subarray(start, end - 2));
  const out = Buffer.allocUnsafe(end - 2 - start - zeros);
  unescapeInto(out, key, start, end);
  return out;
}

/** Parsed tail of a cell key after the row part. */
export interface CellKeyTail {
  family: string;
  qualifier: string;
  timestamp: Timestamp;
}

/** Decodes family, qualifier and timestamp of a cell key whose row part ends at `rowEnd`. */
export function parseCellTail(key: Uint8Array, rowEnd: number): CellKeyTail {
  const buf = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  let i = rowEnd;
  while (key[i] !== 0) i++;
  const family = buf.toString('latin1', rowEnd, i);
  const qualStart = i + 1;
  const tsPos = key.length - TS_BYTES;
  let qualifier: string;
  let hasZero = false;
  for (let j = qualStart; j < tsPos - 2; j++)
    if (key[j] === 0) {
      hasZero = true;
      break;
    }
  qualifier = hasZero ? unescape(key, qualStart, tsPos).toString('utf8') : buf.toString('utf8', qualStart, tsPos - 2);
  return { family, qualifier, timestamp: readInvertedTimestamp(key, tsPos) };
}
