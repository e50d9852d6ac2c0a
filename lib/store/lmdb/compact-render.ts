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
import type { ReadSpec, TableLayout, Timestamp } from '../../model/types.js';
import { docColumn, DocColumns, type CellRun, type DocColumn, type RowDocumentWriter } from '../../rows/row-document.js';
import { CellPicker } from '../cell-picker.js';
import { COLUMN_HEAD_BYTES, COUNTER_BIT, decodeCompactRow, HEADER_BYTES, readTimestamp, readU16, readU32 } from './compact-row.js';
import { RowShape, ShapeBudget, type ShapeSlots } from './row-shape.js';
import { newestSuffices, rangeEndOf, StoredColumnIndex, type StoredColumn, type StoredFamily } from './stored-columns.js';

type ColumnEntry = StoredColumn<DocColumn>;

/**
 * A shape of stored rows (row-shape.ts) whose every column the read returns (slot i: the i-th
 * column), where fits() puts them, and the document glue of its cells.
 */
interface ShapedRun {
  readonly shape: RowShape;
  readonly cells: ShapeSlots;
  readonly run: CellRun;
}

export class CompactRenderer {
  private readonly minTs: Timestamp;
  /** The time range's exclusive end; Infinity when the read is unbounded. */
  private readonly maxTs: Timestamp;
  private readonly picker: CellPicker;
  private readonly index: StoredColumnIndex<DocColumn>;
  private readonly docColumns = new DocColumns();
  private shaped: ShapedRun | undefined;
  private readonly budget = new ShapeBudget();
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
    const shaped = this.shaped;
    if (shaped !== undefined && n === shaped.shape.n && shaped.shape.fits(v, this.maxTs)) {
      this.budget.used();
      const { cells } = shaped;
      out.cellsOfRun(shaped.run, v, shaped.shape.lastView, cells.starts, cells.ends, cells.stamps);
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
    if (seen.length === n && n > 0 && this.budget.learning) this.learnShape(out, v, seen);
  }

  /** Keeps the shape of a row whose columns the read all returned (a table's next rows mostly share it). */
  private learnShape(out: RowDocumentWriter, v: Buffer, columns: readonly ColumnEntry[]): void {
    // A time range starting past 2^53 (a bigint) fits no row of safe timestamps: Infinity.
    let keepFrom = typeof this.minTs === 'number' ? this.minTs : Infinity;
    for (const c of columns) keepFrom = Math.max(keepFrom, c.family.plan!.expiredBefore);
    const n = columns.length;
    const cells: ShapeSlots = { starts: new Int32Array(n), ends: new Int32Array(n), stamps: new Float64Array(n), schemaIds: new Int32Array(n) };
    const shape = new RowShape(
      v,
      Int32Array.from(columns, (_, i) => i),
      keepFrom,
      cells,
    );
    this.budget.learnt();
    this.shaped = {
      shape,
      cells,
      run: out.cellRun(
        columns.map((c) => c.data),
        columns.map((_, i) => shape.schemaId(i)),
      ),
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
