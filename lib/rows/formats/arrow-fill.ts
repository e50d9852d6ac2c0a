/**
 * Record batches of the Arrow column plan (arrow-columns.ts) with the flat columns filled straight
 * into typed arrays: the same values (the plan's rowValues), the same schema (ArrowColumns' own),
 * and apache-arrow's makeData building the columns and its writer encoding them, so the IPC bytes
 * are the ones apache-arrow's builders give (ArrowColumns.builtBatchOf; test/rows/arrow-fill.test.ts
 * compares them byte for byte). ArrowColumns.batchOf fills every flat table's batches here (rows
 * from any store); a scan thread also adds a compact row's stored bytes (addStored).
 *
 * Why: a scan thread spent ~44% of a bench row's Arrow time in apache-arrow's builders (an append
 * per value through the builder's generic set/setValid, each string UTF-8 encoded into a new
 * array before being copied: 200,000 rows, one thread, --cpu-prof). Here a string is written
 * into the column's bytes in place and a number stored in its typed array. Only for tables whose
 * columns are all flat (ArrowBatchFill.fills): lists, maps, structs and unions are apache-arrow's
 * builders' (ArrowColumns.builtBatchOf).
 */
import type * as Arrow from 'apache-arrow';
import { arrow } from '../../deps/arrow.js';
import { copyBytes } from '../../bytes/copy-bytes.js';
import { readU32BE } from '../../bytes/read-u32be.js';
import { plainNumberReader } from '../../model/json/plain-number.js';
import { isPlainStringBytes } from '../../model/json/plain-string.js';
import type { RowKeyFormat, RowOut } from '../../model/types.js';
import { LayoutColumns, type DataColumn } from './layout-columns.js';

/** One column's values for one batch. */
interface ColumnFill {
  set(row: number, value: unknown): void;
  /**
   * A data column's cell from its stored JSON text `b[start, end)`: the value its plan's reader
   * gives (LayoutColumns.valueOf), read from the bytes where the text is plain.
   */
  setJson(row: number, b: Buffer, start: number, end: number): void;
  finish(length: number): Arrow.Data;
}

const NULL_TEXT = 0x6e; // 'n': the only JSON text starting so is null
const TRUE_TEXT = 0x74; // 't'
const TWO_32 = 0x1_0000_0000;

/** The fills' shared reference: the text read as the column's plan reads it. */
abstract class Fill {
  /** The data column whose cells setJson reads (undefined for row_key and the id components). */
  constructor(protected readonly column: DataColumn | undefined) {}

  abstract set(row: number, value: unknown): void;

  /** A null text of a nullable column. */
  protected isNull(b: Buffer, start: number): boolean {
    return this.column!.nullable && b[start] === NULL_TEXT;
  }

  protected setText(row: number, b: Buffer, start: number, end: number): void {
    this.set(row, LayoutColumns.valueOf(this.column!, b.toString('utf8', start, end)));
  }
}

/**
 * A bitmap's bytes for `rows` bits: rounded up to 64 bytes (64 at least), the size apache-arrow's
 * builders hand over and its writer writes whole, so the IPC bytes are the builders'.
 */
function bitmapBytes(rows: number): number {
  return Math.max(64, (((rows + 7) >> 3) + 63) & ~63);
}

/** A validity bitmap and its null count, shared by the flat fills. */
class Validity {
  bits: Uint8Array;
  nulls = 0;

  constructor(rows: number) {
    this.bits = new Uint8Array(bitmapBytes(rows));
  }

  valid(row: number): void {
    this.bits[row >> 3]! |= 1 << (row & 7);
  }

  /** The bitmap of the first `rows` rows, undefined when none is null (the writer then writes none). */
  of(rows: number): Uint8Array | undefined {
    return this.nulls > 0 ? this.bits.subarray(0, bitmapBytes(rows)) : undefined;
  }
}

class FixedFill extends Fill implements ColumnFill {
  private readonly validity: Validity;
  private readonly values: Int32Array | BigInt64Array | Float32Array | Float64Array;
  /** A long column's values as 32-bit words (little-endian pairs), written without a bigint; undefined for the other types. */
  private readonly words: Uint32Array | undefined;
  /** How setJson reads a plain text: an int, a long, or a decimal (double, float); NaN: not plain. */
  private readonly plain: (b: Buffer, start: number, end: number) => number;

  constructor(
    private readonly type: Arrow.DataType,
    rows: number,
    make: (rows: number) => Int32Array | BigInt64Array | Float32Array | Float64Array,
    column: DataColumn | undefined,
  ) {
    super(column);
    this.validity = new Validity(rows);
    this.values = make(rows);
    this.words = this.values instanceof BigInt64Array ? new Uint32Array(this.values.buffer, this.values.byteOffset, 2 * rows) : undefined;
    this.plain = plainNumberReader(column?.type.kind) ?? (() => NaN);
  }

  setJson(row: number, b: Buffer, start: number, end: number): void {
    if (this.isNull(b, start)) return this.set(row, null);
    const n = this.plain(b, start, end);
    if (n !== n) return this.setText(row, b, start, end);
    this.validity.valid(row);
    const words = this.words;
    if (words === undefined) this.values[row] = n;
    else {
      // A safe integer as two's complement words: what BigInt(text) stores, without the bigint.
      const high = Math.floor(n / TWO_32);
      words[2 * row] = n - high * TWO_32;
      words[2 * row + 1] = high;
    }
  }

  /** An int column's value (`low`), or a long column's value as its two's complement words (stored modulo 2^32 each). */
  setWords(row: number, high: number, low: number): void {
    this.validity.valid(row);
    const words = this.words;
    if (words === undefined) this.values[row] = low | 0;
    else {
      words[2 * row] = low;
      words[2 * row + 1] = high;
    }
  }

  set(row: number, value: unknown): void {
    if (value === null || value === undefined) {
      this.validity.nulls++;
      return;
    }
    this.validity.valid(row);
    // A long column's typed array takes bigints only (the plan gives bigints; a number is converted, as a builder does).
    (this.values as unknown as unknown[])[row] = this.words !== undefined && typeof value !== 'bigint' ? BigInt(value as number) : value;
  }

  finish(length: number): Arrow.Data {
    const { nulls } = this.validity;
    return arrow.makeData({ type: this.type as Arrow.Int, length, nullCount: nulls, nullBitmap: this.validity.of(length), data: this.values as Int32Array });
  }
}

class BoolFill extends Fill implements ColumnFill {
  private readonly validity: Validity;
  private readonly values: Uint8Array;

  constructor(
    private readonly type: Arrow.Bool,
    rows: number,
    column: DataColumn | undefined,
  ) {
    super(column);
    this.validity = new Validity(rows);
    this.values = new Uint8Array(bitmapBytes(rows));
  }

  setJson(row: number, b: Buffer, start: number, end: number): void {
    // A boolean's text is true or false (or null): its reader is `text === 'true'`.
    if (this.isNull(b, start)) this.set(row, null);
    else if (end - start === 4 && b[start] === TRUE_TEXT) this.set(row, true);
    else this.setText(row, b, start, end);
  }

  set(row: number, value: unknown): void {
    if (value === null || value === undefined) {
      this.validity.nulls++;
      return;
    }
    this.validity.valid(row);
    if (value) this.values[row >> 3]! |= 1 << (row & 7);
  }

  finish(length: number): Arrow.Data {
    const { nulls } = this.validity;
    return arrow.makeData({
      type: this.type,
      length,
      nullCount: nulls,
      nullBitmap: this.validity.of(length),
      data: this.values.subarray(0, bitmapBytes(length)),
    });
  }
}

/** Utf8 (strings written as UTF-8 in place) and Binary (Uint8Arrays copied). */
class BytesFill extends Fill implements ColumnFill {
  private readonly validity: Validity;
  private readonly offsets: Int32Array;
  private bytes: Buffer;
  private end = 0;
  /** What setJson copies as stored: a string's text between its quotes, or a json column's whole text. */
  private readonly kind: string | undefined;

  constructor(
    private readonly type: Arrow.Utf8 | Arrow.Binary,
    rows: number,
    column: DataColumn | undefined,
  ) {
    super(column);
    this.validity = new Validity(rows);
    this.offsets = new Int32Array(rows + 1);
    this.bytes = Buffer.allocUnsafeSlow(Math.max(64, rows * 16));
    this.kind = column?.type.kind;
  }

  setJson(row: number, b: Buffer, start: number, end: number): void {
    if (this.isNull(b, start)) return this.set(row, null);
    // Stored text is valid UTF-8 JSON: a plain string's bytes are its value's UTF-8.
    if (this.kind === 'string' && isPlainStringBytes(b, start, end)) this.copy(row, b, start + 1, end - 1);
    else if (this.kind === 'json') this.copy(row, b, start, end);
    else this.setText(row, b, start, end);
  }

  /** The bytes `b[start, end)` as the row's value. */
  copy(row: number, b: Buffer, start: number, end: number): void {
    this.validity.valid(row);
    this.room(end - start);
    this.end = copyBytes(this.bytes, this.end, b, start, end);
    this.offsets[row + 1] = this.end;
  }

  set(row: number, value: unknown): void {
    if (value === null || value === undefined) {
      this.validity.nulls++;
      this.offsets[row + 1] = this.end;
      return;
    }
    this.validity.valid(row);
    if (typeof value === 'string') {
      // At most 3 bytes a UTF-16 unit.
      this.room(value.length * 3);
      this.end += this.bytes.write(value, this.end, 'utf8');
    } else {
      const v = value as Uint8Array;
      this.room(v.length);
      this.bytes.set(v, this.end);
      this.end += v.length;
    }
    this.offsets[row + 1] = this.end;
  }

  private room(more: number): void {
    if (this.end + more <= this.bytes.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.bytes.length, this.end + more));
    this.bytes.copy(grown, 0, 0, this.end);
    this.bytes = grown;
  }

  finish(length: number): Arrow.Data {
    const { nulls } = this.validity;
    const data = new Uint8Array(this.bytes.buffer, this.bytes.byteOffset, this.end);
    return arrow.makeData({ type: this.type as Arrow.Utf8, length, nullCount: nulls, nullBitmap: this.validity.of(length), valueOffsets: this.offsets, data });
  }
}

/** A fill for a column of `type` (`column`: the data column it holds); undefined for a type not filled here (ArrowBatchFill.fills). */
function fillOf(type: Arrow.DataType, rows: number, column?: DataColumn): ColumnFill | undefined {
  switch (type.typeId) {
    case arrow.Type.Int: {
      const int = type as Arrow.Int;
      if (int.isSigned && int.bitWidth === 32) return new FixedFill(type, rows, (n) => new Int32Array(n), column);
      if (int.isSigned && int.bitWidth === 64) return new FixedFill(type, rows, (n) => new BigInt64Array(n), column);
      break;
    }
    case arrow.Type.Float: {
      const precision = (type as Arrow.Float).precision;
      if (precision === arrow.Precision.DOUBLE) return new FixedFill(type, rows, (n) => new Float64Array(n), column);
      if (precision === arrow.Precision.SINGLE) return new FixedFill(type, rows, (n) => new Float32Array(n), column);
      break;
    }
    case arrow.Type.Bool:
      return new BoolFill(type as Arrow.Bool, rows, column);
    case arrow.Type.Utf8:
    case arrow.Type.Binary:
      return new BytesFill(type as Arrow.Utf8 | Arrow.Binary, rows, column);
  }
  return undefined;
}

/**
 * A FORMATTED row key's components written into their columns from the key's bytes: an INTEGER
 * or LONG component as its words (no number or bigint), a STRING one of ASCII bytes copied. The
 * plan's own decoding (LayoutColumns.idValues: an array of components, a bigint a LONG, a string
 * a STRING) was ~7% of a scan thread's Parquet export. A key it cannot read so (a STRING component
 * with a byte past 0x7F, whose UTF-8 the plan checks; any key its format would refuse) is left to
 * the plan: fill() answers false having written nothing.
 */
class KeyIds {
  /** Per component: 0 STRING, 1 INTEGER, 2 LONG. */
  private readonly types: Uint8Array;
  /** The components' spans in the key being read (check() fills them). */
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;

  private constructor(
    private readonly hashSize: number,
    private readonly required: number,
    types: Uint8Array,
  ) {
    this.types = types;
    this.starts = new Int32Array(types.length);
    this.ends = new Int32Array(types.length);
  }

  /** The reader of `format`'s keys, or undefined when its components have no columns (RAW, HASH, suppressed materialization). */
  static of(format: RowKeyFormat): KeyIds | undefined {
    if (format.encoding !== 'FORMATTED' || format.suppressMaterialization) return undefined;
    const types = Uint8Array.from(format.components, (c) => (c.type === 'STRING' ? 0 : c.type === 'INTEGER' ? 1 : 2));
    return new KeyIds(format.hashSize, format.nullableStartIndex, types);
  }

  /** Writes the components of `key` into `fills[1..]` at `row`; false (nothing written) where the plan must read the key. */
  fill(fills: readonly ColumnFill[], row: number, key: Buffer): boolean {
    const present = this.check(key);
    if (present < 0) return false;
    const { types, starts } = this;
    for (let i = 0; i < types.length; i++) {
      const fill = fills[1 + i]!;
      if (i >= present) fill.set(row, null);
      else if (types[i] === 0) (fill as BytesFill).copy(row, key, starts[i]!, this.ends[i]!);
      else {
        // The first (or only) word with its sign bit flipped back: an INTEGER's value, a LONG's high word.
        const at = starts[i]!;
        const first = (readU32BE(key, at) ^ 0x80000000) >>> 0;
        if (types[i] === 1) (fill as FixedFill).setWords(row, 0, first);
        else (fill as FixedFill).setWords(row, first, readU32BE(key, at + 4));
      }
    }
    return true;
  }

  /** The number of components `key` holds, their spans set; -1 where the plan must read it. */
  private check(key: Uint8Array): number {
    const { types, starts, ends } = this;
    const n = key.length;
    let pos = this.hashSize;
    if (n < pos) return -1;
    let i = 0;
    for (; i < types.length && pos < n; i++) {
      starts[i] = pos;
      if (types[i] === 0) {
        while (pos < n && key[pos] !== 0) if (key[pos++]! > 0x7f) return -1;
        if (pos >= n) return -1; // no terminator
        ends[i] = pos++;
      } else {
        pos += types[i] === 1 ? 4 : 8;
        if (pos > n) return -1;
      }
    }
    return pos === n && i >= this.required ? i : -1;
  }
}

/**
 * Batches of one column plan (a layout at a number of versions), filled as above a row at a time:
 * a row's objects are garbage once its values are in the columns (held until their batch was
 * encoded, 8,192 rows' objects outlived the young generation: garbage collection was 28% of a
 * scan thread's time).
 */
export class ArrowBatchFill {
  private readonly plan: LayoutColumns;
  private readonly schema: Arrow.Schema;
  private readonly struct: Arrow.Struct;
  private readonly values: unknown[];
  private fills: ColumnFill[] | undefined;
  /** The index of the first data column (after row_key and the id components). */
  private readonly firstData: number;
  private readonly keyIds: KeyIds | undefined;
  /** Rows in the batch being filled. */
  rows = 0;

  /**
   * Whether batches of `schema` are filled here: only flat columns (strings, bytes, numbers,
   * booleans). Lists, maps, structs and unions are ArrowColumns' alone (its builders, some of its
   * own), and a table with one of them has its batches made by ArrowColumns.
   */
  static fills(schema: Arrow.Schema): boolean {
    return schema.fields.every((f) => fillOf(f.type, 0) !== undefined);
  }

  /** `plan` and `schema`: ArrowColumns' (shared by every part of a scan); `capacity`: rows a batch holds at most. */
  constructor(
    plan: LayoutColumns,
    schema: Arrow.Schema,
    private readonly capacity: number,
  ) {
    this.plan = plan;
    this.schema = schema;
    if (!ArrowBatchFill.fills(this.schema)) throw new Error('ArrowBatchFill: the schema has a column that is not flat');
    this.struct = new arrow.Struct(this.schema.fields);
    this.values = new Array(this.schema.fields.length);
    this.firstData = 1 + this.plan.idColumns.length;
    this.keyIds = KeyIds.of(plan.keyFormat);
  }

  /** The fills of a new batch: row_key, the id components, then the plan's data columns. */
  private newFills(rows: number): ColumnFill[] {
    return this.schema.fields.map((f, i) => fillOf(f.type, rows, this.plan.columns[i - this.firstData])!);
  }

  /** Adds a row to the batch being filled (at most `capacity`). */
  add(row: RowOut): void {
    const fills = (this.fills ??= this.newFills(this.capacity));
    const values = this.values;
    const r = this.rows++;
    this.plan.rowValues(row, values);
    for (let i = 0; i < fills.length; i++) fills[i]!.set(r, values[i]);
  }

  /**
   * Adds a row of stored cells: data column `c` (of the plan's `columns`) holds the JSON text
   * `v[starts[c], ends[c])`, or null where `starts[c]` is -1. The same values as add() given the
   * row's cells (their newest versions), without a row, a cell or a string a value.
   */
  addStored(rowKey: Buffer, v: Buffer, starts: Int32Array, ends: Int32Array): void {
    const fills = (this.fills ??= this.newFills(this.capacity));
    const values = this.values;
    const r = this.rows++;
    // row_key (Binary, the plan's first column) copied from the key without a view of it.
    (fills[0] as BytesFill).copy(r, rowKey, 0, rowKey.length);
    const first = this.firstData;
    if (this.keyIds === undefined || !this.keyIds.fill(fills, r, rowKey)) {
      this.plan.idValues(rowKey, values, 1);
      for (let i = 1; i < first; i++) fills[i]!.set(r, values[i]);
    }
    for (let i = first; i < fills.length; i++) {
      const start = starts[i - first]!;
      if (start < 0) fills[i]!.set(r, null);
      else fills[i]!.setJson(r, v, start, ends[i - first]!);
    }
  }

  /** The batch of the rows added since the last one (possibly none); the next row starts a new one. */
  take(): Arrow.RecordBatch {
    const fills = this.fills ?? this.newFills(0);
    const length = this.rows;
    const children = fills.map((f) => f.finish(length));
    this.fills = undefined;
    this.rows = 0;
    return new arrow.RecordBatch(this.schema, arrow.makeData({ type: this.struct, length, nullCount: 0, children }));
  }
}
