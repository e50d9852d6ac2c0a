/**
 * The LMDB store's rows as RowOut objects: the store scan iterator's half of the reference
 * pipeline (lib/rows/stages/pipeline.ts). A ScanCursor (or a scan worker's walk) hands it stored
 * rows through the RowVisitor calls; it decodes their cells and keeps those the read selects
 * (CellPicker, the filter stage's rule), so a row with no selected cell is dropped.
 *
 * Store.scan() collects batches with it on the main thread; a scan worker collects rows with it
 * for the formats encoded from cells there (avro-chunk.ts), so both give the same rows.
 */
import type { CellOut, ReadSpec, RowOut, TableLayout } from '../../model/types.js';
import { CellPicker } from '../cell-picker.js';
import { decodeCell } from '../cell-value.js';
import { parseCellTail } from './cell-key.js';
import { decodeCompactRow } from './compact-row.js';
import { NameCache } from './name-cache.js';
import { rowKeyOf, type RowVisitor } from './scan-cursor.js';

export class RowCollector implements RowVisitor {
  private readonly picker: CellPicker;
  private readonly names = new NameCache();
  private rowKey: Buffer = Buffer.alloc(0);
  private cells: CellOut[] = [];

  /**
   * `onRow` gets each row with at least one selected cell. `copyKeys`: the keys and values handed
   * in are views of a buffer the next read overwrites (a scan worker reads in place), so a row
   * key is copied and a value is read only up to the end given.
   */
  constructor(
    layout: TableLayout,
    read: ReadSpec,
    private readonly onRow: (row: RowOut) => void,
    now: number = Date.now(),
    private readonly copyKeys = false,
  ) {
    this.picker = new CellPicker(layout, read, now);
  }

  compactRow(key: Buffer, value: Buffer, _keepEmpty: boolean, escaped: boolean): boolean {
    const picker = this.picker;
    picker.beginRow();
    const kept: CellOut[] = [];
    // The columns walked here rather than through RowModel.cells(): a generator's steps were 5% of
    // a scan thread's Avro export.
    for (const { family, qualifier, versions } of decodeCompactRow(value, this.names).columns) {
      for (const v of versions) {
        if (picker.keep(family, qualifier, v.timestamp)) kept.push({ family, qualifier, timestamp: v.timestamp, schemaId: v.schemaId, json: v.json });
      }
    }
    if (kept.length === 0) return false;
    let rowKey = escaped ? rowKeyOf(key, key.length) : key;
    // rowKeyOf gives a new Buffer where it unescaped (a key holding 00), else a view of `key`:
    // copied only then (a copy a row was 3% of a scan thread's Avro export).
    if (this.copyKeys && rowKey.buffer === key.buffer) rowKey = Buffer.from(rowKey);
    this.onRow({ rowKey, cells: kept });
    return true;
  }

  beginRow(rowKey: Buffer): void {
    this.rowKey = this.copyKeys ? Buffer.from(rowKey) : rowKey;
    this.cells = [];
    this.picker.beginRow();
  }

  cell(key: Buffer, rowEnd: number, value: Buffer, valueEnd: number): void {
    const tail = parseCellTail(key, rowEnd);
    if (!this.picker.keep(tail.family, tail.qualifier, tail.timestamp)) return;
    // Cut at valueEnd always: a scan thread's value is lmdb-js's read buffer, whose length says 18
    // where the value's bytes are 18 and the buffer megabytes.
    this.cells.push(decodeCell(tail.family, tail.qualifier, tail.timestamp, value.subarray(0, valueEnd)));
  }

  endRow(): boolean {
    if (this.cells.length === 0) return false;
    this.onRow({ rowKey: this.rowKey, cells: this.cells });
    return true;
  }
}
