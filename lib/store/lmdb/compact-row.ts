/**
 * The embedded store keeps a row as ONE LMDB entry under the row's prefix key (`esc(rowKey) 00 00`,
 * cell-key.ts): a compact row holding every version of every column. A point get or a scan reads
 * one entry per row (one per cell was 5 entries a point get, 5M a scan of 1M rows).
 *
 * It holds the row's cells, not a response: names, timestamps, schema ids and each value's JSON
 * text, with no entity id, no cells map and no framing. How a row is rendered (the revision, a
 * field, NDJSON's LF) is the renderer's business (lib/rows/row-document.ts), never a migration.
 * Rows written by releases before this format (version 1 held the revision 3 response itself) are
 * read through compact-row-v1.ts and rewritten in this format by the upgrade `serve` runs.
 *
 * A row too large for that (over MAX_COMPACT_ROW_BYTES, e.g. a map family with 100,000
 * qualifiers) is "spilled": its entry holds only TAG_SPILLED and its cells are cell entries
 * (cell-key.ts, ../cell-value.ts), so a write never rewrites a large value. Data directories
 * written before compact rows hold cell entries without a row entry ("legacy" rows): they are read
 * like spilled rows and turned compact when written or upgraded (lmdb-store.ts).
 *
 * Compact row, format 2, little-endian:
 *
 *   0  u8  TAG_COMPACT      1  u8  FORMAT_VERSION (2)      2  u16 columns (n)
 *   4  u32 older versions (h)
 *   8  f64 oldest newest-version timestamp      16 f64 newest timestamp
 *      (a timestamp above 2^53-1 rounded outward: at or below the oldest, at or above the newest)
 *   24 n column records, in stored order (family, then qualifier by UTF-8 bytes), each the
 *      column's newest version:
 *        u16 family bytes (0: the previous column's family)   u16 qualifier bytes
 *        u32 schema id (bit 31: counter)   u32 timestamp high   u32 timestamp low   u32 value bytes
 *        then the family name (UTF-8), the qualifier (UTF-8) and the value's JSON text
 *   then h older versions, by column then newest first:
 *      u16 column index, u32 schema id (bit 31: counter), u32 ts high, u32 ts low, u32 json bytes, json
 */
import { ByteWriter } from '../../bytes/byte-writer.js';
import { doubleAtOrAbove, doubleAtOrBelow } from '../../model/cells/timestamp.js';
import type { Timestamp } from '../../model/types.js';
import { COUNTER_SCHEMA_ID } from '../cell-value.js';
import { decodeCompactRowV1 } from './compact-row-v1.js';
import { readTimestamp, readU16, readU32, writeTimestamp } from './le-bytes.js';
import { RowModel, type StoredColumn, type StoredVersion } from './row-model.js';
import type { NameCache } from './name-cache.js';

export const TAG_COMPACT = 0x52; // 'R'
export const TAG_SPILLED = 0x53; // 'S'
export const FORMAT_VERSION = 2;
export const HEADER_BYTES = 24;
/** A column record's fixed part, before its names and value. */
export const COLUMN_HEAD_BYTES = 20;
/** An older version's fixed part, before its JSON. */
const HISTORY_HEAD_BYTES = 18;
export const COUNTER_BIT = 0x8000_0000;

/**
 * Rows whose compact encoding is larger are spilled to cell entries. 16 KiB: a write re-encodes
 * the whole row (about 1 us per 100 bytes), so a row of this size costs a write ~0.2 ms; rows of
 * typical tables (a few columns and versions, the demo and bench tables: 0.3-2 KB) stay far below.
 */
export const MAX_COMPACT_ROW_BYTES = 16 * 1024;

/** Columns a compact row can count (u16); a row of more is spilled (it is far over the size bound too). */
export const MAX_COMPACT_COLUMNS = 0xffff;

/** The value of a spilled row's entry. */
export const SPILLED_VALUE: Buffer = Buffer.from([TAG_SPILLED]);

// One encoder buffer per thread: rows are encoded one at a time and copied out.
const scratch = new ByteWriter(64 * 1024);

export function schemaWord(v: StoredVersion): number {
  return (v.schemaId | (v.counter ? COUNTER_BIT : 0)) >>> 0;
}

/** The compact row of `model` (at least one column), as a Buffer of its own. */
export function encodeCompactRow(model: RowModel): Buffer {
  const w = scratch;
  w.pos = HEADER_BYTES;
  const columns = model.columns;
  const n = columns.length;
  let family: string | undefined;
  let oldest = Infinity;
  let newest = -Infinity;
  let history = 0;
  for (let i = 0; i < n; i++) {
    const c = columns[i]!;
    const v = c.versions[0]!;
    w.room(COLUMN_HEAD_BYTES);
    const head = w.pos;
    w.pos += COLUMN_HEAD_BYTES;
    const famStart = w.pos;
    if (c.family !== family) w.text(c.family);
    const famBytes = w.pos - famStart;
    w.text(c.qualifier);
    const qualBytes = w.pos - famStart - famBytes;
    w.text(v.json);
    writeColumnHead(w.buf, head, famBytes, qualBytes, schemaWord(v), v.timestamp, w.pos - famStart - famBytes - qualBytes);
    family = c.family;
    // The header keeps doubles: a bigint is rounded outward, so a range check never wrongly passes.
    if (v.timestamp < oldest) oldest = doubleAtOrBelow(v.timestamp);
    if (v.timestamp > newest) newest = doubleAtOrAbove(v.timestamp);
    history += c.versions.length - 1;
  }
  for (let i = 0; i < n; i++) {
    const versions = columns[i]!.versions;
    for (let k = 1; k < versions.length; k++) {
      const v = versions[k]!;
      w.room(HISTORY_HEAD_BYTES);
      const p = w.pos;
      w.pos += HISTORY_HEAD_BYTES;
      w.text(v.json);
      const b = w.buf;
      b.writeUInt16LE(i, p);
      b.writeUInt32LE(schemaWord(v), p + 2);
      writeTimestamp(b, p + 6, v.timestamp);
      b.writeUInt32LE(w.pos - p - HISTORY_HEAD_BYTES, p + 14);
    }
  }
  writeCompactHeader(w.buf, n, history, oldest, newest);
  return Buffer.from(w.buf.subarray(0, w.pos));
}

/** Writes a column record's fixed part at `at` (plain-line.ts writes records in place too). */
export function writeColumnHead(b: Buffer, at: number, famBytes: number, qualBytes: number, word: number, ts: Timestamp, valueBytes: number): void {
  b.writeUInt16LE(famBytes, at);
  b.writeUInt16LE(qualBytes, at + 2);
  b.writeUInt32LE(word, at + 4);
  writeTimestamp(b, at + 8, ts);
  b.writeUInt32LE(valueBytes, at + 16);
}

/** Writes a compact row's header at `at` (plain-line.ts writes rows without a RowModel, in place). */
export function writeCompactHeader(b: Buffer, n: number, history: number, oldest: number, newest: number, at = 0): void {
  b[at] = TAG_COMPACT;
  b[at + 1] = FORMAT_VERSION;
  b.writeUInt16LE(n, at + 2);
  b.writeUInt32LE(history, at + 4);
  b.writeDoubleLE(n > 0 ? oldest : 0, at + 8);
  b.writeDoubleLE(n > 0 ? newest : 0, at + 16);
}

/** A compact row of any format (the row entry of a row that is not spilled). */
export function isCompact(b: Uint8Array, at = 0): boolean {
  return b[at] === TAG_COMPACT;
}

/** A compact row in the current format (not one the upgrade still has to rewrite). */
export function isCurrentCompact(b: Uint8Array): boolean {
  return b[0] === TAG_COMPACT && b[1] === FORMAT_VERSION;
}

/**
 * Decodes every version of a compact row of either format (`b` is the whole entry value);
 * `names`, when given, decodes the family and qualifier names (a scan's rows repeat them).
 */
export function decodeCompactRow(b: Buffer, names?: NameCache): RowModel {
  if (b[0] !== TAG_COMPACT) throw new Error(`corrupt compact row: tag ${b[0]}`);
  if (b[1] !== FORMAT_VERSION) return decodeCompactRowV1(b);
  const n = readU16(b, 2);
  const history = readU32(b, 4);
  const columns: StoredColumn[] = [];
  let family = '';
  let p = HEADER_BYTES;
  for (let i = 0; i < n; i++) {
    const famBytes = readU16(b, p);
    const qualBytes = readU16(b, p + 2);
    const word = readU32(b, p + 4);
    const timestamp = readTimestamp(b, p + 8);
    const valueBytes = readU32(b, p + 16);
    p += COLUMN_HEAD_BYTES;
    if (famBytes > 0) family = names !== undefined ? names.text(b, p, p + famBytes) : b.toString('utf8', p, p + famBytes);
    p += famBytes;
    const qualifier = names !== undefined ? names.text(b, p, p + qualBytes) : b.toString('utf8', p, p + qualBytes);
    p += qualBytes;
    const json = b.toString('utf8', p, p + valueBytes);
    p += valueBytes;
    columns.push({ family, qualifier, versions: [{ timestamp, schemaId: word & ~COUNTER_BIT, counter: (word & COUNTER_BIT) !== 0, json }] });
  }
  for (let k = 0; k < history; k++) {
    const column = columns[readU16(b, p)]!;
    const word = readU32(b, p + 2);
    const timestamp = readTimestamp(b, p + 6);
    const len = readU32(b, p + 14);
    const json = b.toString('utf8', p + HISTORY_HEAD_BYTES, p + HISTORY_HEAD_BYTES + len);
    column.versions.push({ timestamp, schemaId: word & ~COUNTER_BIT, counter: (word & COUNTER_BIT) !== 0, json });
    p += HISTORY_HEAD_BYTES + len;
  }
  return new RowModel(columns);
}

export { COUNTER_SCHEMA_ID, readTimestamp, readU16, readU32 };
