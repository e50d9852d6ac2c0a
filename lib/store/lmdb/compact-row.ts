/**
 * The embedded store keeps a row as ONE LMDB entry under the row's prefix key (`esc(rowKey) 00 00`,
 * cell-key.ts): a compact row holding every version of every column, with the newest version of
 * each column already rendered as the revision 3 response bytes. A point get or a scan at the
 * default `versions=1` then reads one entry per row and copies bytes (one entry per row instead of
 * one per cell: a point get read 5 cell entries, a scan iterated 5M entries for 1M rows).
 *
 * A row too large for that (over MAX_COMPACT_ROW_BYTES, e.g. a map family with 100,000
 * qualifiers) is "spilled": its entry holds only TAG_SPILLED and its cells are cell entries as
 * before (cell-key.ts, ../cell-value.ts), so a write never rewrites a large value. Data directories
 * written before compact rows hold cell entries without a row entry ("legacy" rows): they are read
 * like spilled rows and turned compact when written or upgraded (lmdb-store.ts).
 *
 * Compact row, little-endian:
 *
 *   0  u8   TAG_COMPACT        1  u8  FORMAT_VERSION      2  u16 columns (n)
 *   4  u32  text bytes (T)     8  u32 older versions (h)  12 u16 entity id end (E)   14 u16 0
 *   16 f64  oldest newest-version timestamp               24 f64 newest timestamp
 *      (a timestamp above 2^53-1 rounded outward: at or below the oldest, at or above the newest)
 *   32 text:  {"entityId":<id>,"cells":{"fam":{"q":[<fragment>],"q2":[...]},"fam2":...}}\r\n
 *      (exactly what a revision 3 scan sends for the row's newest versions; E is where
 *      `,"cells":{` starts, so revisions 1 and 2 replace the entity id)
 *   32+T  n column entries of 24 bytes, in stored order:
 *      u32 fragment start, u32 fragment end (`{"timestamp":..,"value":..,"writer_schema":..}`),
 *      u16 quoted family bytes (0: same family as the previous column), u16 quoted qualifier bytes,
 *      u32 schema id (bit 31: counter), u32 timestamp high, u32 timestamp low
 *      (the quoted qualifier ends 2 bytes before the fragment, `:[`; the quoted family ends 2 bytes
 *      before the qualifier, `:{`)
 *   then h older versions, by column then newest first:
 *      u16 column index, u32 schema id (bit 31: counter), u32 ts high, u32 ts low, u32 json bytes, json
 */
import { ByteWriter, digitCount } from '../../bytes/byte-writer.js';
import { doubleAtOrAbove, doubleAtOrBelow, timestampDigits, UNSAFE_HIGH_WORD, writeTimestampLE } from '../../model/cells/timestamp.js';
import type { Timestamp } from '../../model/types.js';
import { COUNTER_SCHEMA_ID } from '../cell-value.js';
import { RowModel, type StoredColumn, type StoredVersion } from './row-model.js';

export const TAG_COMPACT = 0x52; // 'R'
export const TAG_SPILLED = 0x53; // 'S'
const FORMAT_VERSION = 1;
export const HEADER_BYTES = 32;
export const COLUMN_BYTES = 24;
const COUNTER_BIT = 0x8000_0000;
const TWO_32 = 0x1_0000_0000;

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

const enc = (s: string): Buffer => Buffer.from(s, 'latin1');
export const ENTITY_ID_OPEN = enc('{"entityId":');
export const CELLS_OPEN = enc(',"cells":{');
/** A newest version's fragment: FRAG_TIMESTAMP <ts> FRAG_VALUE <json> FRAG_SCHEMA <id> `}`. */
export const FRAG_TIMESTAMP = '{"timestamp":';
export const FRAG_VALUE = ',"value":';
export const FRAG_SCHEMA = ',"writer_schema":';

/** Where a fragment's value starts: after `{"timestamp":<ts>,"value":`. */
export function valueStartOf(fragStart: number, timestamp: Timestamp): number {
  return fragStart + FRAG_TIMESTAMP.length + (typeof timestamp === 'number' ? digitCount(timestamp) : timestampDigits(timestamp)) + FRAG_VALUE.length;
}

/** Bytes of `,"writer_schema":<id>` at a fragment's end (before its closing brace). */
export function schemaPartBytes(schemaId: number): number {
  return FRAG_SCHEMA.length + digitCount(schemaId);
}

// One encoder buffer per thread: rows are encoded one at a time and copied out.
const scratch = new ByteWriter(64 * 1024);

function schemaWord(v: StoredVersion): number {
  return (v.schemaId | (v.counter ? COUNTER_BIT : 0)) >>> 0;
}

/**
 * The compact row of `model` (at least one column) for the row whose revision 3 entity id text is
 * `entityIdJson`: a Buffer of its own. The text is built as one string; when it is ASCII (the
 * common case: every offset in characters is one in bytes) it is written in one copy, else piece
 * by piece to track byte offsets. Piecewise writes cost 9-13 us a row for the benchmark's 5-column
 * rows (.scratch micro-benchmark, loaded machine), the one-string path about a fifth of that.
 */
export function encodeCompactRow(model: RowModel, entityIdJson: string): Buffer {
  return encodeAscii(model, entityIdJson) ?? encodePiecewise(model, entityIdJson);
}

/** Names as JSON strings, remembered: a table's rows mostly repeat the same few columns. */
const quoted = new Map<string, string>();
function quote(name: string): string {
  let q = quoted.get(name);
  if (q === undefined) {
    q = JSON.stringify(name);
    if (quoted.size >= 10_000) quoted.clear();
    quoted.set(name, q);
  }
  return q;
}

/** encodeCompactRow for rows whose text and values are ASCII; undefined for any other row. */
function encodeAscii(model: RowModel, entityIdJson: string): Buffer | undefined {
  const columns = model.columns;
  const n = columns.length;
  if (n === 0) return undefined;
  const marks = new Array<number>(n * 4);
  let text = '{"entityId":' + entityIdJson;
  const entityIdEnd = text.length;
  text += ',"cells":{';
  let family: string | undefined;
  let oldest = Infinity;
  let newest = -Infinity;
  let historyBytes = 0;
  let historyCount = 0;
  for (let i = 0; i < n; i++) {
    const c = columns[i]!;
    const v = c.versions[0]!;
    let famBytes = 0;
    if (c.family !== family) {
      if (family !== undefined) text += ']},';
      const quoted = quote(c.family);
      famBytes = quoted.length;
      text += quoted + ':{';
      family = c.family;
    } else {
      text += '],';
    }
    const qualifier = quote(c.qualifier);
    text += qualifier + ':[';
    const fragStart = text.length;
    text += '{"timestamp":' + v.timestamp + ',"value":' + v.json + ',"writer_schema":' + v.schemaId + '}';
    marks[i * 4] = fragStart;
    marks[i * 4 + 1] = text.length;
    marks[i * 4 + 2] = famBytes;
    marks[i * 4 + 3] = qualifier.length;
    // The header keeps doubles: a bigint is rounded outward, so a range check never wrongly passes.
    if (v.timestamp < oldest) oldest = doubleAtOrBelow(v.timestamp);
    if (v.timestamp > newest) newest = doubleAtOrAbove(v.timestamp);
    for (let k = 1; k < c.versions.length; k++) {
      historyBytes += 18 + c.versions[k]!.json.length;
      historyCount++;
    }
  }
  text += ']}}}\r\n';
  const textBytes = text.length;
  // As many UTF-8 bytes as UTF-16 units only when every unit is below 0x80.
  if (Buffer.byteLength(text) !== textBytes) return undefined;
  const size = HEADER_BYTES + textBytes + n * COLUMN_BYTES + historyBytes;
  const b = Buffer.allocUnsafe(size);
  b.write(text, HEADER_BYTES, 'latin1');
  let p = HEADER_BYTES + textBytes;
  for (let i = 0; i < n; i++, p += COLUMN_BYTES) {
    const v = columns[i]!.versions[0]!;
    b.writeUInt32LE(marks[i * 4]!, p);
    b.writeUInt32LE(marks[i * 4 + 1]!, p + 4);
    b.writeUInt16LE(marks[i * 4 + 2]!, p + 8);
    b.writeUInt16LE(marks[i * 4 + 3]!, p + 10);
    b.writeUInt32LE(schemaWord(v), p + 12);
    writeTimestamp(b, p + 16, v.timestamp);
  }
  for (let i = 0; i < n; i++) {
    const versions = columns[i]!.versions;
    for (let k = 1; k < versions.length; k++) {
      const v = versions[k]!;
      b.writeUInt16LE(i, p);
      b.writeUInt32LE(schemaWord(v), p + 2);
      writeTimestamp(b, p + 6, v.timestamp);
      const len = b.write(v.json, p + 18, 'latin1');
      if (len !== Buffer.byteLength(v.json)) return undefined;
      b.writeUInt32LE(len, p + 14);
      p += 18 + len;
    }
  }
  writeCompactHeader(b, n, textBytes, historyCount, entityIdEnd, oldest, newest);
  return b;
}

/** Writes a compact row's 32-byte header at `at` (plain-line.ts writes rows without a RowModel, in place). */
export function writeCompactHeader(
  b: Buffer,
  n: number,
  textBytes: number,
  history: number,
  entityIdEnd: number,
  oldest: number,
  newest: number,
  at = 0,
): void {
  b[at] = TAG_COMPACT;
  b[at + 1] = FORMAT_VERSION;
  b.writeUInt16LE(n, at + 2);
  b.writeUInt32LE(textBytes, at + 4);
  b.writeUInt32LE(history, at + 8);
  b.writeUInt16LE(entityIdEnd, at + 12);
  b.writeUInt16LE(0, at + 14);
  b.writeDoubleLE(n > 0 ? oldest : 0, at + 16);
  b.writeDoubleLE(n > 0 ? newest : 0, at + 24);
}

/** encodeCompactRow for any row: text written piece by piece, tracking byte offsets. */
function encodePiecewise(model: RowModel, entityIdJson: string): Buffer {
  const w = scratch;
  w.pos = HEADER_BYTES;
  const columns = model.columns;
  const n = columns.length;
  const marks = new Array<number>(n * 4);
  w.ascii('{"entityId":');
  w.text(entityIdJson);
  const entityIdEnd = w.pos - HEADER_BYTES;
  w.ascii(',"cells":{');
  let family: string | undefined;
  let oldest = Infinity;
  let newest = -Infinity;
  let history = 0;
  for (let i = 0; i < n; i++) {
    const c = columns[i]!;
    const v = c.versions[0]!;
    let famBytes = 0;
    if (c.family !== family) {
      if (family !== undefined) w.ascii(']},');
      const famStart = w.pos;
      w.text(JSON.stringify(c.family));
      famBytes = w.pos - famStart;
      w.ascii(':{');
      family = c.family;
    } else {
      w.ascii('],');
    }
    const qualStart = w.pos;
    w.text(JSON.stringify(c.qualifier));
    const qualBytes = w.pos - qualStart;
    w.ascii(':[');
    const fragStart = w.pos - HEADER_BYTES;
    w.ascii(FRAG_TIMESTAMP);
    w.ascii(String(v.timestamp));
    w.ascii(FRAG_VALUE);
    w.text(v.json);
    w.ascii(FRAG_SCHEMA);
    w.ascii(String(v.schemaId));
    w.ascii('}');
    marks[i * 4] = fragStart;
    marks[i * 4 + 1] = w.pos - HEADER_BYTES;
    marks[i * 4 + 2] = famBytes;
    marks[i * 4 + 3] = qualBytes;
    // The header keeps doubles: a bigint is rounded outward, so a range check never wrongly passes.
    if (v.timestamp < oldest) oldest = doubleAtOrBelow(v.timestamp);
    if (v.timestamp > newest) newest = doubleAtOrAbove(v.timestamp);
    history += c.versions.length - 1;
  }
  w.ascii(n > 0 ? ']}}}\r\n' : '}}\r\n');
  const textBytes = w.pos - HEADER_BYTES;
  w.room(n * COLUMN_BYTES);
  let b = w.buf;
  for (let i = 0; i < n; i++) {
    const v = columns[i]!.versions[0]!;
    const p = w.pos;
    b.writeUInt32LE(marks[i * 4]!, p);
    b.writeUInt32LE(marks[i * 4 + 1]!, p + 4);
    b.writeUInt16LE(marks[i * 4 + 2]!, p + 8);
    b.writeUInt16LE(marks[i * 4 + 3]!, p + 10);
    b.writeUInt32LE(schemaWord(v), p + 12);
    writeTimestamp(b, p + 16, v.timestamp);
    w.pos += COLUMN_BYTES;
  }
  for (let i = 0; i < n; i++) {
    const versions = columns[i]!.versions;
    for (let k = 1; k < versions.length; k++) {
      const v = versions[k]!;
      w.room(18 + v.json.length * 3);
      b = w.buf;
      const p = w.pos;
      b.writeUInt16LE(i, p);
      b.writeUInt32LE(schemaWord(v), p + 2);
      writeTimestamp(b, p + 6, v.timestamp);
      const len = b.write(v.json, p + 18, 'utf8');
      b.writeUInt32LE(len, p + 14);
      w.pos = p + 18 + len;
    }
  }
  b = w.buf;
  writeCompactHeader(b, n, textBytes, history, entityIdEnd, oldest, newest);
  return Buffer.from(b.subarray(0, w.pos));
}

function writeTimestamp(b: Buffer, pos: number, ts: Timestamp): void {
  if (typeof ts === 'bigint') return writeTimestampLE(b, pos, ts);
  const hi = Math.floor(ts / TWO_32);
  b.writeUInt32LE(hi, pos);
  b.writeUInt32LE(ts - hi * TWO_32, pos + 4);
}

export function readTimestamp(b: Uint8Array, pos: number): Timestamp {
  const hi = (b[pos]! | (b[pos + 1]! << 8) | (b[pos + 2]! << 16) | (b[pos + 3]! << 24)) >>> 0;
  const lo = (b[pos + 4]! | (b[pos + 5]! << 8) | (b[pos + 6]! << 16) | (b[pos + 7]! << 24)) >>> 0;
  // Above 2^53-1 (a high word of 2^21 or more) only a bigint is exact.
  return hi < UNSAFE_HIGH_WORD ? hi * TWO_32 + lo : (BigInt(hi) << 32n) | BigInt(lo);
}

export function readU32(b: Uint8Array, pos: number): number {
  return (b[pos]! | (b[pos + 1]! << 8) | (b[pos + 2]! << 16) | (b[pos + 3]! << 24)) >>> 0;
}

export function readU16(b: Uint8Array, pos: number): number {
  return b[pos]! | (b[pos + 1]! << 8);
}

/** The header fields of a compact row held in `b[at, ...)`. */
export interface CompactHeader {
  readonly columns: number;
  readonly textBytes: number;
  readonly history: number;
  readonly entityIdEnd: number;
  readonly oldest: number;
  readonly newest: number;
}

export function isCompact(b: Uint8Array, at = 0): boolean {
  return b[at] === TAG_COMPACT;
}

/** The row's revision 3 entity id text (from the stored text). */
export function entityIdJsonOf(b: Buffer): string {
  return b.toString('utf8', HEADER_BYTES + ENTITY_ID_OPEN.length, HEADER_BYTES + readU16(b, 12));
}

/** Decodes every version of a compact row (`b` is the whole entry value). */
export function decodeCompactRow(b: Buffer): RowModel {
  if (b[0] !== TAG_COMPACT || b[1] !== FORMAT_VERSION) throw new Error(`corrupt compact row: tag ${b[0]}, format ${b[1]}`);
  const n = readU16(b, 2);
  const textBytes = readU32(b, 4);
  const history = readU32(b, 8);
  const text = HEADER_BYTES;
  let dir = text + textBytes;
  const columns: StoredColumn[] = [];
  let family = '';
  for (let i = 0; i < n; i++, dir += COLUMN_BYTES) {
    const fragStart = text + readU32(b, dir);
    const fragEnd = text + readU32(b, dir + 4);
    const famBytes = readU16(b, dir + 8);
    const qualBytes = readU16(b, dir + 10);
    const word = readU32(b, dir + 12);
    const timestamp = readTimestamp(b, dir + 16);
    const qualStart = fragStart - 2 - qualBytes;
    if (famBytes > 0) family = JSON.parse(b.toString('utf8', qualStart - 2 - famBytes, qualStart - 2)) as string;
    const qualifier = JSON.parse(b.toString('utf8', qualStart, qualStart + qualBytes)) as string;
    const schemaId = word & ~COUNTER_BIT;
    const json = b.toString('utf8', valueStartOf(fragStart, timestamp), fragEnd - 1 - schemaPartBytes(schemaId));
    columns.push({ family, qualifier, versions: [{ timestamp, schemaId, counter: (word & COUNTER_BIT) !== 0, json }] });
  }
  let p = dir;
  for (let k = 0; k < history; k++) {
    const column = columns[readU16(b, p)]!;
    const word = readU32(b, p + 2);
    const timestamp = readTimestamp(b, p + 6);
    const len = readU32(b, p + 14);
    const json = b.toString('utf8', p + 18, p + 18 + len);
    column.versions.push({ timestamp, schemaId: word & ~COUNTER_BIT, counter: (word & COUNTER_BIT) !== 0, json });
    p += 18 + len;
  }
  return new RowModel(columns);
}

/** Whether a version's schema word marks a counter; its schema id. */
export function schemaOfWord(word: number): { schemaId: number; counter: boolean } {
  return { schemaId: word & ~COUNTER_BIT, counter: (word & COUNTER_BIT) !== 0 };
}

export { COUNTER_BIT, COUNTER_SCHEMA_ID };
