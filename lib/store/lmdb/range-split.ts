/**
 * Splits a scan's key range into contiguous parts of whole rows, so one large scan can be rendered
 * on several threads and still be sent in row order. LMDB keeps no key ranks, so boundaries come
 * from interpolating between the range's first and last keys and seeking to the first row at or
 * after each probe: Kiji row keys mostly start with a hash (HASH, HASH_PREFIX, salted FORMATTED),
 * which spreads them evenly; skewed keys give uneven parts, never wrong ones.
 */
import type { Database } from 'lmdb';
import { prefixEnd } from '../key-range.js';
import { rowKeyEnd } from './cell-key.js';

/** A part of a scan: cell keys in [start, end); undefined = open. */
export interface KeyRange {
  readonly start?: Buffer;
  readonly end?: Buffer;
}

/** Bytes after the common prefix that the interpolation looks at (6 bytes fit a double exactly). */
const PROBE_BYTES = 6;

/** The first key of [start, end), or undefined when the range is empty. */
function firstKey(db: Database<Buffer, Buffer>, start: Buffer | undefined, end: Buffer | undefined): Buffer | undefined {
  // Copied: lmdb-js may reuse the key's memory on the next read.
  for (const key of db.getKeys({ start, end, limit: 1 })) return Buffer.from(key as Buffer);
  return undefined;
}

/** The last key of [start, end). */
function lastKey(db: Database<Buffer, Buffer>, start: Buffer | undefined, end: Buffer | undefined): Buffer | undefined {
  // Reverse ranges run from `start` down to `end`; the upper bound may be included, so skip it.
  for (const key of db.getKeys({ start: end, end: start, reverse: true, limit: 2 })) {
    const k = key as Buffer;
    if (end === undefined || Buffer.compare(k, end) < 0) return Buffer.from(k);
  }
  return undefined;
}

function readProbe(key: Buffer, at: number): number {
  let v = 0;
  for (let i = 0; i < PROBE_BYTES; i++) v = v * 256 + (key[at + i] ?? 0);
  return v;
}

function probeKey(prefix: Buffer, value: number): Buffer {
  const out = Buffer.alloc(prefix.length + PROBE_BYTES);
  prefix.copy(out);
  let v = value;
  for (let i = PROBE_BYTES - 1; i >= 0; i--) {
    out[prefix.length + i] = v % 256;
    v = Math.floor(v / 256);
  }
  return out;
}

/** The row prefix (escaped row key and terminator) of a cell key: sorts before all of the row's cells and after every earlier row's. */
function rowStartOf(key: Buffer): Buffer {
  return key.subarray(0, rowKeyEnd(key));
}

/**
 * Splits [start, end) into at most `parts` ranges that each hold whole rows, in key order; fewer
 * when the range has fewer rows. Bisects: each half is split again between its own first and
 * last keys, so keys crowded behind a long shared prefix still spread over the parts.
 */
export function splitRange(db: Database<Buffer, Buffer>, start: Buffer | undefined, end: Buffer | undefined, parts: number): KeyRange[] {
  const out: KeyRange[] = [];
  bisect(db, start, end, parts, out);
  return out;
}

function bisect(db: Database<Buffer, Buffer>, start: Buffer | undefined, end: Buffer | undefined, parts: number, out: KeyRange[]): void {
  const middle = parts < 2 ? undefined : middleRow(db, start, end);
  if (middle === undefined) {
    out.push({ start, end });
    return;
  }
  const half = Math.floor(parts / 2);
  bisect(db, start, middle, half, out);
  bisect(db, middle, end, parts - half, out);
}

/** The start of a row about halfway between the range's first and last keys, after its first row; undefined for fewer than two rows. */
function middleRow(db: Database<Buffer, Buffer>, start: Buffer | undefined, end: Buffer | undefined): Buffer | undefined {
  const first = firstKey(db, start, end);
  const last = first === undefined ? undefined : lastKey(db, start, end);
  if (first === undefined || last === undefined) return undefined;
  const firstRow = rowStartOf(first);
  const lastRow = rowStartOf(last);
  if (firstRow.equals(lastRow)) return undefined;
  let common = 0;
  while (common < first.length && common < last.length && first[common] === last[common]) common++;
  const low = readProbe(first, common);
  const high = readProbe(last, common);
  const probe = probeKey(first.subarray(0, common), low + Math.floor((high - low) / 2));
  const found = Buffer.compare(probe, first) > 0 ? firstKey(db, probe, end) : undefined;
  const bound = found === undefined ? lastRow : rowStartOf(found);
  if (Buffer.compare(bound, firstRow) > 0) return bound;
  // The probe fell inside the first row: the next row starts the second half.
  const after = prefixEnd(firstRow);
  const next = after === undefined ? undefined : firstKey(db, after, end);
  return next === undefined ? undefined : rowStartOf(next);
}
