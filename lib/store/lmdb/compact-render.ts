/**
 * Renders a compact row (compact-row.ts) through the row document writer
 * (lib/rows/row-document.ts): the fused loop's filter and serialize stages for rows stored whole.
 * The same cells through the reference pipeline's stages (lib/rows/stages/) give the same bytes
 * (test/store/fused-equivalence.test.ts). Two paths:
 *
 *  1. newest versions: the answer is at most the newest version of each column (no older versions
 *     stored, or `versions=1` and no newest version at or past the time range's end). Each column
 *     record's names are compared as bytes with the columns met before (a table's rows mostly
 *     repeat one column order), so a column's filter decision and its document glue are worked out
 *     once per scan, and its value is copied as stored.
 *  2. every version: the row is decoded and its cells go through a CellPicker (the filter stage's
 *     own rule); rows still in format 1 take this path too.
 */
import { UNSAFE_HIGH_WORD } from '../../model/cells/timestamp.js';
import type { ReadSpec, TableLayout, Timestamp } from '../../model/types.js';
import { docColumn, DocColumns, type CellRun, type DocColumn, type RowDocumentWriter } from '../../rows/row-document.js';
import { CellPicker } from '../cell-picker.js';
import { COLUMN_HEAD_BYTES, COUNTER_BIT, decodeCompactRow, HEADER_BYTES, readTimestamp, readU16, readU32 } from './compact-row.js';
import { newestSuffices, rangeEndOf, StoredColumnIndex, type StoredColumn, type StoredFamily } from './stored-columns.js';

type ColumnEntry = StoredColumn<DocColumn>;

/**
 * The columns of the rows the renderer last saw whole: each column's head words (name lengths,
 * schema word), names and document glue, so a row of the same shape is checked by comparing bytes
 * and written in one run (RowDocumentWriter.cellsOfRun).
 */
interface RowShape {
  readonly n: number;
  /** Per column: the u32 of its name lengths and its schema word, as stored. */
  readonly heads: Uint32Array;
  /** The columns' stored name bytes, one after another. */
  readonly names: Buffer;
  /** Newest versions older than this leave a column out (time range start, TTLs): not this shape. */
  readonly keepFrom: number;
  readonly run: CellRun;
  /** The fitted row's value spans and timestamps (filled by fits()). */
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly stamps: Float64Array;
}

const TWO_32 = 0x1_0000_0000;

export class CompactRenderer {
  private readonly minTs: Timestamp;
  /** The time range's exclusive end; Infinity when the read is unbounded. */
  private readonly maxTs: Timestamp;
  private readonly picker: CellPicker;
  private readonly index: StoredColumnIndex<DocColumn>;
  private readonly docColumns = new DocColumns();
  /**
   * A DataView of the last stored row fitted, whose u32 fields fits() reads as words: one load
   * instead of readU32's four bytes shifted together (a bench row rendered in 338 ns against 370,
   * 100,000 rows alternated in one process). The scan threads read every row in lmdb-js's one
   * read buffer, so the view is made once; written inline, as a helper function it was slower (the
   * fused loop is one inlining tree, and TurboFan's budget for it is spent).
   */
  private view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
  private viewOf: Buffer | undefined;
  private shape: RowShape | undefined;
  /** Shapes learnt, and rows written by one: a table whose rows rarely repeat a shape stops learning. */
  private shapes = 0;
  private shapeRows = 0;
  /** The columns the row being rendered returned, in order. */
  private readonly seen: ColumnEntry[] = [];

  constructor(
    layout: TableLayout,
    private readonly read: ReadSpec,
    now: number,
  ) {
    this.picker = new CellPicker(layout, read, now);
    this.index = new StoredColumnIndex(this.picker, docColumn);
    this.minTs = read.minTimestamp;
    this.maxTs = rangeEndOf(read);
  }

  /**
   * Writes the cells of the compact row in `v` (an LMDB value, possibly a view of lmdb-js's read
   * buffer) into the row `out` has begun.
   */
  render(out: RowDocumentWriter, v: Buffer): void {
    if (newestSuffices(v, this.read, this.maxTs)) this.renderNewest(out, v);
    else this.renderVersions(out, v);
  }

  /** Path 1: each column's newest version, when the read keeps it. */
  private renderNewest(out: RowDocumentWriter, v: Buffer): void {
    const n = readU16(v, 2);
    const shape = this.shape;
    if (shape !== undefined && n === shape.n && this.fits(shape, v)) {
      this.shapeRows++;
      // fits() made this.view the view of v.
      out.cellsOfRun(shape.run, v, this.view, shape.starts, shape.ends, shape.stamps);
      return;
    }
    const seen = this.seen;
    seen.length = 0;
    let p = HEADER_BYTES;
    let family: StoredFamily<DocColumn> | undefined;
    for (let i = 0; i < n; i++) {
      const famBytes = readU16(v, p);
      const qualBytes = readU16(v, p + 2);
      const valueBytes = readU32(v, p + 16);
      const names = p + COLUMN_HEAD_BYTES;
      if (famBytes > 0) family = this.index.familyOf(v, names, names + famBytes);
      const qualStart = names + famBytes;
      const valueStart = qualStart + qualBytes;
      const head = p;
      p = valueStart + valueBytes;
      const plan = family!.plan;
      if (plan === null) continue;
      const column = this.index.columnOf(family!, v, qualStart, valueStart);
      if (!column.kept) continue;
      const timestamp = readTimestamp(v, head + 8);
      if (timestamp < plan.expiredBefore || timestamp < this.minTs || timestamp >= this.maxTs) continue;
      out.cellBytes(column.data, timestamp, v, valueStart, p, readU32(v, head + 4) & ~COUNTER_BIT);
      seen.push(column);
    }
    if (seen.length === n && n > 0 && this.shapes <= this.shapeRows / 4 + 16) this.learnShape(out, v, seen);
  }

  /**
   * Whether the row in `v` has the shape's columns (names and schema words as bytes) with every
   * newest version a safe integer inside the read's time range and TTL; fills the shape's value
   * spans and timestamps when it does.
   */
  private fits(shape: RowShape, v: Buffer): boolean {
    const { heads, names, starts, ends, stamps, keepFrom } = shape;
    const maxTs = this.maxTs;
    let view = this.view;
    if (this.viewOf !== v) {
      view = this.view = new DataView(v.buffer, v.byteOffset, v.byteLength);
      this.viewOf = v;
    }
    let p = HEADER_BYTES;
    let at = 0;
    for (let i = 0; i < shape.n; i++) {
      const lengths = view.getUint32(p, true);
      if (lengths !== heads[2 * i] || view.getUint32(p + 4, true) !== heads[2 * i + 1]) return false;
      const nameStart = p + COLUMN_HEAD_BYTES;
      const valueStart = nameStart + (lengths & 0xffff) + (lengths >>> 16);
      for (let j = nameStart; j < valueStart; j++) if (v[j] !== names[at++]) return false;
      starts[i] = valueStart;
      const high = view.getUint32(p + 8, true);
      const timestamp = high * TWO_32 + view.getUint32(p + 12, true);
      if (high >= UNSAFE_HIGH_WORD || timestamp < keepFrom || timestamp >= maxTs) return false;
      stamps[i] = timestamp;
      p = valueStart + view.getUint32(p + 16, true);
      ends[i] = p;
    }
    return true;
  }

  /** Keeps the shape of a row whose columns the read all returned (a table's next rows mostly share it). */
  private learnShape(out: RowDocumentWriter, v: Buffer, columns: readonly ColumnEntry[]): void {
    const n = columns.length;
    const heads = new Uint32Array(2 * n);
    const nameParts: Buffer[] = [];
    const schemaIds: number[] = [];
    // A time range starting past 2^53 (a bigint) fits no row of safe timestamps: Infinity.
    let keepFrom = typeof this.minTs === 'number' ? this.minTs : Infinity;
    let p = HEADER_BYTES;
    for (let i = 0; i < n; i++) {
      const lengths = readU32(v, p);
      heads[2 * i] = lengths;
      heads[2 * i + 1] = readU32(v, p + 4);
      schemaIds.push(heads[2 * i + 1]! & ~COUNTER_BIT);
      const nameStart = p + COLUMN_HEAD_BYTES;
      const valueStart = nameStart + (lengths & 0xffff) + (lengths >>> 16);
      nameParts.push(v.subarray(nameStart, valueStart));
      keepFrom = Math.max(keepFrom, columns[i]!.family.plan!.expiredBefore);
      p = valueStart + readU32(v, p + 16);
    }
    this.shapes++;
    this.shape = {
      n,
      heads,
      names: Buffer.concat(nameParts),
      keepFrom,
      run: out.cellRun(
        columns.map((c) => c.data),
        schemaIds,
      ),
      starts: new Int32Array(n),
      ends: new Int32Array(n),
      stamps: new Float64Array(n),
    };
  }

  /** Path 2: every version, through the CellPicker. */
  private renderVersions(out: RowDocumentWriter, v: Buffer): void {
    const picker = this.picker;
    picker.beginRow();
    for (const c of decodeCompactRow(v).columns) {
      for (const version of c.versions) {
        if (!picker.keep(c.family, c.qualifier, version.timestamp)) continue;
        out.cellText(this.docColumns.of(c.family, c.qualifier), version.timestamp, version.json, version.schemaId);
      }
    }
  }
}
