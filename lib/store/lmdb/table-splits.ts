/**
 * Split points of an embedded table (Store.splits). range-split.ts bisects the key space into
 * pieces of whole rows (several per wanted range); each piece's entries are counted by LMDB
 * itself (a count, no values read), and a short walk of its first entries gives its bytes per
 * entry and rows per entry; groupPieces then balances the ranges by those sizes. Keys that start
 * with a hash (HASH, HASH_PREFIX, salted FORMATTED) and skewed ones both end up balanced, since the
 * sizes are counted, not assumed from the key space.
 */
import type { Database } from 'lmdb';
import { groupPieces, type KeySplit } from '../key-splits.js';
import { rowKeyEnd, unescape } from './cell-key.js';
import { splitRange } from './range-split.js';

/** Pieces per wanted range: finer pieces balance better; each costs a count and a short walk. */
const PIECES_PER_RANGE = 8;
const MAX_PIECES = 2048;
/** Entries walked per piece to learn its entry size and rows per entry. */
const SAMPLE_ENTRIES = 64;
/** Rounds of splitting oversized pieces again (each round at most multiplies a piece by PIECES_PER_RANGE). */
const REFINE_ROUNDS = 4;

export function tableSplits(db: Database<Buffer, Buffer>, parts: number): KeySplit[] {
  let pieces = splitRange(db, undefined, undefined, Math.min(MAX_PIECES, parts * PIECES_PER_RANGE)).map((r) => measure(db, r));
  // Bisection follows the key space, so a dense cluster (many keys behind one prefix) can land in
  // one piece: a piece holding more than half a range's share is split again within its own keys.
  for (let round = 0; round < REFINE_ROUNDS && pieces.length < MAX_PIECES; round++) {
    const share = pieces.reduce((sum, p) => sum + p.bytes, 0) / parts;
    const next: Piece[] = [];
    for (const p of pieces) {
      const finer = p.bytes > share / 2 ? splitRange(db, p.start, p.end, PIECES_PER_RANGE) : [];
      if (finer.length > 1) next.push(...finer.map((r) => measure(db, r)));
      else next.push(p);
    }
    if (next.length === pieces.length) break;
    pieces = next;
  }
  return groupPieces(
    pieces.map((p) => ({ start: rowKeyOfBound(p.start), end: rowKeyOfBound(p.end), estimatedBytes: p.bytes, estimatedRows: p.rows })),
    parts,
  );
}

interface Piece {
  readonly start?: Buffer;
  readonly end?: Buffer;
  readonly bytes: number;
  readonly rows: number;
}

/** A piece's size: its entries counted by LMDB, times what a short walk of its first entries found per entry. */
function measure(db: Database<Buffer, Buffer>, range: { start?: Buffer; end?: Buffer }): Piece {
  const entries = db.getKeysCount({ start: range.start, end: range.end });
  const sample = sampleOf(db, range.start, range.end);
  const perEntry = sample.entries === 0 ? 0 : sample.bytes / sample.entries;
  const rowsPerEntry = sample.entries === 0 ? 0 : sample.rows / sample.entries;
  return { start: range.start, end: range.end, bytes: entries * perEntry, rows: entries * rowsPerEntry };
}

/** Bytes, entries and distinct rows among the first SAMPLE_ENTRIES entries of [start, end). */
function sampleOf(db: Database<Buffer, Buffer>, start: Buffer | undefined, end: Buffer | undefined): { bytes: number; entries: number; rows: number } {
  let bytes = 0;
  let entries = 0;
  let rows = 0;
  let previous: Buffer | undefined;
  for (const { key, value } of db.getRange({ start, end, limit: SAMPLE_ENTRIES })) {
    const k = key as Buffer;
    const row = k.subarray(0, rowKeyEnd(k));
    if (previous === undefined || !previous.equals(row)) rows++;
    // Copied: lmdb-js may reuse the key's memory on the next read.
    previous = Buffer.from(row);
    bytes += k.length + (value as Buffer).length;
    entries++;
  }
  return { bytes, entries, rows };
}

/** A piece bound from range-split.ts (a row prefix `esc(rowKey) 00 00`) as the row key it starts. */
function rowKeyOfBound(bound: Buffer | undefined): Buffer | undefined {
  return bound === undefined ? undefined : unescape(bound, 0, bound.length);
}
